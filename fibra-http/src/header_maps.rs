//! A spare [`HeaderMap`] per OS thread, so that a response's header map is
//! allocated once per thread rather than once per response.
//!
//! A `HeaderMap` allocates its table on its first insert (and frees it when
//! dropped): for a small response, such as `Response::text`'s, two mallocs
//! and two frees, more than half of what building it cost. A new
//! [`Response`](crate::Response) takes the spare map, and the connection
//! gives it back, emptied, once the response's head is written. A handler
//! may park between the two (a response made, then a sleep): another green
//! thread of the OS thread then finds no spare and makes a new map, and of
//! the two maps given back the last one is kept.

use http::HeaderMap;
use std::cell::Cell;

/// A map that has grown past this many entries is dropped rather than kept,
/// so that one large response does not pin its table for good.
const KEEP_UP_TO: usize = 64;

thread_local! {
    static SPARE: Cell<Option<HeaderMap>> = const { Cell::new(None) };
}

/// An empty map: the spare one if there is one, else a new one.
#[inline]
pub(crate) fn take() -> HeaderMap {
    SPARE
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps `map`, emptied, for the next [`take`] on this thread (in place of
/// any kept before), unless it has grown large.
pub(crate) fn give_back(mut map: HeaderMap) {
    if map.capacity() > KEEP_UP_TO {
        return;
    }
    map.clear();
    // During the thread's exit the map is just dropped.
    let _ = SPARE.try_with(|spare| spare.set(Some(map)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::{CONTENT_TYPE, HeaderValue};

    #[test]
    fn a_map_given_back_comes_back_empty_with_its_table() {
        let mut map = take();
        map.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        let capacity = map.capacity();
        give_back(map);
        let again = take();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), capacity);
        // Taken: the next one is new.
        assert_eq!(take().capacity(), 0);
    }

    #[test]
    fn a_large_map_is_not_kept() {
        let _ = take();
        let mut map = HeaderMap::new();
        for n in 0..=KEEP_UP_TO {
            let name: http::HeaderName = format!("x-{n}").parse().unwrap();
            map.append(name, HeaderValue::from_static("1"));
        }
        give_back(map);
        assert_eq!(take().capacity(), 0);
    }
}

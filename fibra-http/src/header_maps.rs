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
//!
//! A map given back that holds only a `Content-Type` (a `Response::text`'s,
//! `html`'s or `json`'s) is kept with it, and the next such response
//! overwrites its value: emptying the map and inserting the field again
//! would cost more than the rest of building the response.

use http::HeaderMap;
use http::header::{CONTENT_TYPE, HeaderValue};
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
    let mut map = spare();
    if !map.is_empty() {
        map.clear();
    }
    map
}

/// A map holding only `content-type: value`: the spare one if there is one,
/// else a new one.
#[inline]
pub(crate) fn take_typed(value: HeaderValue) -> HeaderMap {
    let mut map = spare();
    match map.iter_mut().next() {
        // Only a content type (see `give_back`): it becomes this one.
        Some((name, kept)) => {
            debug_assert_eq!(name, CONTENT_TYPE);
            *kept = value;
        }
        None => {
            map.append(CONTENT_TYPE, value);
        }
    }
    map
}

/// The spare map, empty or holding only a content type; else a new one.
#[inline]
fn spare() -> HeaderMap {
    SPARE
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps `map` for the next [`take`] or [`take_typed`] on this thread (in
/// place of any kept before), unless it has grown large: emptied, unless
/// all it holds is one content type.
pub(crate) fn give_back(mut map: HeaderMap) {
    if map.capacity() > KEEP_UP_TO {
        return;
    }
    let lone_type = map.len() == 1 && map.keys().next() == Some(&CONTENT_TYPE);
    if !lone_type {
        map.clear();
    }
    // During the thread's exit the map is just dropped.
    let _ = SPARE.try_with(|spare| spare.set(Some(map)));
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_kept_content_type_is_overwritten_or_dropped() {
        let text = HeaderValue::from_static("text/plain");
        let json = HeaderValue::from_static("application/json");
        give_back(take_typed(text.clone()));
        let typed = take_typed(json.clone());
        assert_eq!(typed.len(), 1);
        assert_eq!(typed.get(CONTENT_TYPE), Some(&json));
        give_back(typed);
        assert!(take().is_empty());
        // A map with more than a content type comes back empty.
        let mut map = take_typed(text.clone());
        map.append(http::header::SERVER, HeaderValue::from_static("fibra"));
        give_back(map);
        let typed = take_typed(json.clone());
        assert_eq!(typed.len(), 1);
        assert_eq!(typed.get(CONTENT_TYPE), Some(&json));
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

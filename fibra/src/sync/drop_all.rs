//! Dropping what a container held, when the user's destructors may panic.

use std::panic::{self, AssertUnwindSafe};

/// Drops every item of `items`, even when some destructors panic: each panic
/// is caught, the items after it are still dropped, and then the first panic
/// goes on (the panic hook has printed each one where it happened).
///
/// A `Vec` or a `VecDeque` drops the rest of its items during the unwind of
/// the first panic, and a second one then aborts the process ("panic in a
/// destructor during cleanup"). The messages a channel or a Ractor's mailbox
/// drops when nobody can receive them any more are the user's, any number of
/// them may panic, and the process must not end for it.
pub(crate) fn drop_all<T>(items: impl IntoIterator<Item = T>) {
    let mut first = None;
    for item in items {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| drop(item))) {
            first.get_or_insert(payload);
        }
    }
    if let Some(payload) = first {
        panic::resume_unwind(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct Bomb<'a> {
        panics: bool,
        dropped: &'a Cell<usize>,
    }

    impl Drop for Bomb<'_> {
        fn drop(&mut self) {
            self.dropped.set(self.dropped.get() + 1);
            if self.panics {
                panic!("boom {}", self.dropped.get());
            }
        }
    }

    #[test]
    fn every_item_is_dropped_and_the_first_panic_goes_on() {
        let dropped = Cell::new(0);
        let items: Vec<Bomb<'_>> = (0..5)
            .map(|i| Bomb {
                panics: i % 2 == 1,
                dropped: &dropped,
            })
            .collect();
        let payload = panic::catch_unwind(AssertUnwindSafe(|| drop_all(items))).unwrap_err();
        assert_eq!(dropped.get(), 5);
        assert_eq!(payload.downcast_ref::<String>().unwrap(), "boom 2");
    }
}

//! Who waits for a Ractor's next event — its next offer, its end — all woken
//! at once when it comes.
//!
//! A waiting thread adds itself and waits. A waiting future is polled and
//! dropped at its executor's will, so it keeps a [`Registration`]: polled
//! again, it updates its entry in place; dropped, it removes it. A future in a
//! `select!` loop, polled or remade a thousand times before the event, then
//! holds one entry, not a thousand, and each poll or drop costs O(1).

use crate::runtime::waiter::Waiter;
use slab::Slab;
use std::task::Waker;

#[derive(Default)]
pub(super) struct Waiters {
    entries: Slab<Waiter>,
    /// Bumped each time the entries are taken to be woken: a registration made
    /// in an earlier round is gone, and its key may be another's now.
    round: u64,
}

/// A future's entry in [`Waiters`], valid until the next wake.
#[derive(Clone, Copy, Debug)]
pub(super) struct Registration {
    key: usize,
    round: u64,
}

/// Waiters taken out to be woken, once the lock that guarded them is released.
pub(super) struct Woken(Slab<Waiter>);

impl Waiters {
    /// Adds the calling thread (green or not), to be woken at the next event.
    pub(super) fn add_current(&mut self) {
        self.entries.insert(Waiter::current());
    }

    /// Makes sure the task of `waker` is woken at the next event: updates the
    /// future's entry if it still has one, else adds one and records it in
    /// `registration`.
    pub(super) fn register(&mut self, registration: &mut Option<Registration>, waker: &Waker) {
        if let Some(current) = registration.filter(|r| r.round == self.round) {
            match &mut self.entries[current.key] {
                Waiter::Task(registered) => registered.clone_from(waker),
                _ => unreachable!("fibra: a future's registration names a thread's entry"),
            }
            return;
        }
        let key = self.entries.insert(Waiter::Task(waker.clone()));
        *registration = Some(Registration {
            key,
            round: self.round,
        });
    }

    /// Removes a dropped future's entry, if the event has not taken it already.
    pub(super) fn remove(&mut self, registration: Registration) {
        if registration.round == self.round {
            self.entries.remove(registration.key);
        }
    }

    /// Takes every entry out, to be woken after the lock is released.
    pub(super) fn take(&mut self) -> Woken {
        self.round += 1;
        Woken(std::mem::take(&mut self.entries))
    }
}

impl Woken {
    pub(super) fn wake(&self) {
        self.0.iter().for_each(|(_, waiter)| waiter.wake());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn a_future_polled_again_keeps_one_entry_with_its_latest_waker() {
        let mut waiters = Waiters::default();
        let (first, first_waker) = counting();
        let (second, second_waker) = counting();
        let mut registration = None;
        waiters.register(&mut registration, &first_waker);
        waiters.register(&mut registration, &first_waker);
        waiters.register(&mut registration, &second_waker);
        assert_eq!(waiters.entries.len(), 1);
        waiters.take().wake();
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
        assert_eq!(second.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_removed_entry_is_not_woken_and_a_stale_removal_does_nothing() {
        let mut waiters = Waiters::default();
        let (dropped, dropped_waker) = counting();
        let (kept, kept_waker) = counting();
        let mut gone = None;
        waiters.register(&mut gone, &dropped_waker);
        waiters.remove(gone.unwrap());
        let mut stays = None;
        waiters.register(&mut stays, &kept_waker); // may reuse the removed key
        waiters.take().wake();
        assert_eq!(dropped.0.load(Ordering::SeqCst), 0);
        assert_eq!(kept.0.load(Ordering::SeqCst), 1);

        // After a wake the old registration is stale: it neither removes the
        // new round's entry that reuses its key, nor updates it.
        let mut next = None;
        waiters.register(&mut next, &dropped_waker);
        waiters.remove(stays.unwrap());
        waiters.register(&mut stays, &kept_waker);
        assert_eq!(waiters.entries.len(), 2);
        waiters.take().wake();
        assert_eq!(dropped.0.load(Ordering::SeqCst), 1);
        assert_eq!(kept.0.load(Ordering::SeqCst), 2);
    }
}

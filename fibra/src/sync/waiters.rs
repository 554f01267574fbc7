//! Who waits for an event that wakes every waiter at once: a Ractor's next
//! offer or its end, a [`watch`](crate::sync::watch) channel's next value.
//! (Here, beside `watch`, so that `ractor` builds on `sync` and not both ways.)
//!
//! A waiter may look many times before the event (a thread woken
//! spuriously, a future polled again) and may stop waiting without it (a
//! `select` that took from another Ractor, a future dropped at its executor's
//! will, a thread that unwinds), so it keeps a [`Place`], which holds its
//! [`Registration`]: looking again, it keeps or updates its entry in place;
//! leaving, it removes it. A
//! future in a `select!` loop, polled or remade a thousand times before the
//! event, then holds one entry, not a thousand; a `select` over a Ractor that
//! offers nothing leaves no entry behind; each look or removal costs O(1).

use crate::runtime::waiter::Waiter;
use slab::Slab;
use std::ops::Deref;
use std::task::Waker;

#[derive(Default)]
pub(crate) struct Waiters {
    entries: Slab<Waiter>,
    /// Bumped each time the entries are taken to be woken: a registration made
    /// in an earlier round is gone, and its key may be another's now.
    round: u64,
}

/// A future's entry in [`Waiters`], valid until the next wake.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Registration {
    key: usize,
    round: u64,
}

/// What keeps [`Waiters`] behind its lock: an outbox (its takers), an outcome
/// (its joiners).
pub(crate) trait Watched {
    /// Removes the entry of a waiter that stops waiting, if the event has not
    /// taken it already.
    fn forget(&self, registration: Registration);
}

/// A waiter's place among the [`Waiters`] of what `P` points to, from its
/// first look until it stops waiting: however many times it looks (a thread
/// woken spuriously, a future polled again) it holds at most one entry, and
/// dropped — it has its outcome, or gave up, or unwinds — it removes the
/// entry that the event has not taken yet. So a Ractor that offers nothing,
/// or never ends, keeps no entry of a waiter that went away.
pub(crate) struct Place<P: Deref<Target: Watched>> {
    watched: P,
    registration: Option<Registration>,
}

impl<P: Deref<Target: Watched>> Place<P> {
    pub(crate) fn new(watched: P) -> Place<P> {
        Place {
            watched,
            registration: None,
        }
    }

    pub(crate) fn watched(&self) -> &P::Target {
        &self.watched
    }

    /// Looks for the outcome with `look`, which registers the waiter with the
    /// registration it is given (kept from the last look, or made) when there
    /// is none yet.
    pub(crate) fn look<T>(
        &mut self,
        look: impl FnOnce(&P::Target, &mut Option<Registration>) -> Option<T>,
    ) -> Option<T> {
        let outcome = look(&self.watched, &mut self.registration);
        if outcome.is_some() {
            // The event that made an outcome possible took the entries
            // registered before it, this one among them: none is left.
            self.registration = None;
        }
        outcome
    }
}

impl<P: Deref<Target: Watched>> Drop for Place<P> {
    fn drop(&mut self) {
        if let Some(registration) = self.registration {
            self.watched.forget(registration);
        }
    }
}

/// Waiters taken out to be woken, once the lock that guarded them is released.
pub(crate) struct Woken(Slab<Waiter>);

impl Waiters {
    /// Makes sure the calling thread (green or not) is woken at the next
    /// event: keeps its entry if `registration` still names one, else adds
    /// one and records it there. A thread that waits on several Ractors at
    /// once (`select`) keeps one entry in each, and removes those left when
    /// it stops waiting.
    pub(crate) fn register_current(&mut self, registration: &mut Option<Registration>) {
        self.entry(registration, Waiter::current);
    }

    /// Makes sure the task of `waker` is woken at the next event: updates the
    /// future's entry if it still has one, else adds one and records it in
    /// `registration`.
    pub(crate) fn register(&mut self, registration: &mut Option<Registration>, waker: &Waker) {
        match self.entry(registration, || Waiter::Task(waker.clone())) {
            Waiter::Task(registered) => registered.clone_from(waker),
            _ => unreachable!("fibra: a future's registration names a thread's entry"),
        }
    }

    /// The entry `registration` names if it is of this round, else a new one
    /// made by `make`, recorded in `registration`.
    fn entry(
        &mut self,
        registration: &mut Option<Registration>,
        make: impl FnOnce() -> Waiter,
    ) -> &mut Waiter {
        let key = match registration.filter(|r| r.round == self.round) {
            Some(current) => current.key,
            None => {
                let key = self.entries.insert(make());
                *registration = Some(Registration {
                    key,
                    round: self.round,
                });
                key
            }
        };
        &mut self.entries[key]
    }

    /// Removes a dropped future's entry, if the event has not taken it already.
    pub(crate) fn remove(&mut self, registration: Registration) {
        if registration.round == self.round {
            self.entries.remove(registration.key);
        }
    }

    /// How many entries wait for the next event.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Takes every entry out, to be woken after the lock is released.
    pub(crate) fn take(&mut self) -> Woken {
        self.round += 1;
        Woken(std::mem::take(&mut self.entries))
    }
}

impl Woken {
    pub(crate) fn wake(&self) {
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

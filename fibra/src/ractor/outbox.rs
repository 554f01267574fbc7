//! A Ractor's outgoing port (Ruby's `Ractor.yield` / `Ractor#take`): a
//! rendezvous. The Ractor offers one value and waits until a taker has it; a
//! taker waits until a value is offered. Any number of threads may take, from
//! anywhere; each value goes to exactly one of them.

use super::error::{Closed, TakeError};
use crate::runtime::WaitReason;
use crate::runtime::waiter::{self, Waiter};
use crate::sync::waiters::{Place, Registration, Waiters, Watched};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::Waker;

pub(super) struct Outbox<T> {
    state: Mutex<State<T>>,
}

struct State<T> {
    offered: Option<T>,
    /// Set when the port closes; the error takers get from then on.
    closed: Option<TakeError>,
    /// The Ractor's thread, while it waits for its offer to be taken.
    yielder: Option<Waiter>,
    /// Threads and tasks waiting for an offer (woken all at once when one
    /// comes).
    takers: Waiters,
}

impl<T> Outbox<T> {
    pub(super) fn new() -> Outbox<T> {
        Outbox {
            state: Mutex::new(State {
                offered: None,
                closed: None,
                yielder: None,
                takers: Waiters::default(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Offers `value` and waits until it is taken; hands it back if the port is
    /// (or becomes, while waiting) closed.
    pub(super) fn offer(&self, value: T) -> Result<(), Closed<T>> {
        let takers = {
            let mut state = self.lock();
            if state.closed.is_some() {
                return Err(Closed(value));
            }
            state.offered = Some(value);
            state.takers.take()
        };
        takers.wake();
        loop {
            {
                let mut state = self.lock();
                if state.offered.is_none() {
                    return Ok(());
                }
                if state.closed.is_some() {
                    return Err(Closed(state.offered.take().expect("checked just above")));
                }
                state.yielder = Some(Waiter::current());
            }
            waiter::wait(WaitReason::RactorYield);
        }
    }

    /// Takes the offered value if there is one: `None` if nothing is offered and
    /// the port is open, after `register` has registered the caller to be
    /// woken at the next offer (or close). Taking is all or nothing, under the
    /// lock: a caller that gives up after `None` has taken nothing. A closed
    /// port gives its error even while a value is on offer: that value goes
    /// back to the yielder.
    fn try_take(&self, register: impl FnOnce(&mut Waiters)) -> Option<Result<T, TakeError>> {
        let (value, yielder) = {
            let mut state = self.lock();
            if let Some(err) = &state.closed {
                return Some(Err(err.clone()));
            }
            match state.offered.take() {
                Some(value) => (value, state.yielder.take()),
                None => {
                    register(&mut state.takers);
                    return None;
                }
            }
        };
        if let Some(yielder) = yielder {
            yielder.wake();
        }
        Some(Ok(value))
    }

    /// Waits for a value and takes it.
    pub(super) fn take(&self) -> Result<T, TakeError> {
        let mut taker = Taker::new(self);
        loop {
            if let Some(outcome) = taker.try_take() {
                return outcome;
            }
            waiter::wait(WaitReason::RactorTake);
        }
    }

    /// How many takers wait for the next offer.
    #[cfg(test)]
    pub(super) fn takers(&self) -> usize {
        self.lock().takers.len()
    }

    /// Closes the port with the error takers will get: a value on offer is
    /// handed back to the yielder, which is woken. Returns whether it was open.
    pub(super) fn close(&self, reason: TakeError) -> bool {
        let (was_open, yielder, takers) = {
            let mut state = self.lock();
            let was_open = state.closed.is_none();
            if was_open {
                state.closed = Some(reason);
            }
            (was_open, state.yielder.take(), state.takers.take())
        };
        yielder.iter().for_each(Waiter::wake);
        takers.wake();
        was_open
    }
}

impl<T> Watched for Outbox<T> {
    fn forget(&self, registration: Registration) {
        self.lock().takers.remove(registration);
    }
}

/// A thread's or future's place among an outbox's takers (see [`Place`]).
pub(super) struct Taker<'a, T>(Place<&'a Outbox<T>>);

impl<'a, T> Taker<'a, T> {
    pub(super) fn new(outbox: &'a Outbox<T>) -> Taker<'a, T> {
        Taker(Place::new(outbox))
    }

    /// Takes the offered value, or registers the calling thread (green or
    /// not) to be woken at the next offer or close.
    pub(super) fn try_take(&mut self) -> Option<Result<T, TakeError>> {
        self.0.look(|outbox, registration| {
            outbox.try_take(|takers| takers.register_current(registration))
        })
    }

    /// Takes the offered value, or registers `waker`'s task to be woken at
    /// the next offer or close.
    pub(super) fn poll_take(&mut self, waker: &Waker) -> Option<Result<T, TakeError>> {
        self.0.look(|outbox, registration| {
            outbox.try_take(|takers| takers.register(registration, waker))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    /// Ruby's test_ractor: `take` after `close_outgoing` raises ClosedError
    /// even while the Ractor offers a value; the value goes back to it.
    #[test]
    fn a_take_after_close_fails_even_while_a_value_is_offered() {
        let outbox = Arc::new(Outbox::new());
        let yielder = thread::spawn({
            let outbox = outbox.clone();
            move || outbox.offer("offered")
        });
        // The yielder waits with its value on offer.
        while outbox.lock().yielder.is_none() {
            thread::yield_now();
        }
        assert!(outbox.lock().offered.is_some());
        assert!(outbox.close(TakeError::Closed));
        assert_eq!(outbox.take(), Err(TakeError::Closed));
        assert_eq!(yielder.join().unwrap(), Err(Closed("offered")));
    }
}

//! A Ractor's final value and who waits for it: what its body returned (or
//! how it failed), recorded once when the body ends, taken once by a join
//! ([`Ractor::join`](super::Ractor::join), or `.await` on the Ractor).

use super::census;
use super::error::RemoteError;
use crate::runtime::WaitReason;
use crate::runtime::waiter;
use crate::sync::waiters::{Place, Registration, Waiters, Watched};
use std::sync::{Mutex, PoisonError};

/// The final value of a Ractor, and who waits for it.
pub(super) struct Outcome<R> {
    state: Mutex<OutcomeState<R>>,
}

pub(super) struct OutcomeState<R> {
    pub(super) finished: bool,
    value: Option<Result<R, RemoteError>>,
    joiners: Waiters,
}

impl<R> Outcome<R> {
    pub(super) fn new() -> Outcome<R> {
        Outcome {
            state: Mutex::new(OutcomeState {
                finished: false,
                value: None,
                joiners: Waiters::default(),
            }),
        }
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, OutcomeState<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn finish(&self, value: Result<R, RemoteError>) {
        let joiners = {
            let mut state = self.lock();
            state.finished = true;
            state.value = Some(value);
            state.joiners.take()
        };
        joiners.wake();
    }

    pub(super) fn wait(&self) -> Result<R, RemoteError> {
        let mut joiner = Place::new(self);
        loop {
            if let Some(outcome) = joiner.look(|outcome, registration| {
                outcome.try_join(|joiners| joiners.register_current(registration))
            }) {
                return outcome;
            }
            waiter::wait(WaitReason::RactorJoin);
        }
    }

    /// The final value if the body has finished (or `AlreadyJoined` if another
    /// joiner took it); else `None`, after `register` has registered the
    /// caller to be woken when it finishes.
    pub(super) fn try_join(
        &self,
        register: impl FnOnce(&mut Waiters),
    ) -> Option<Result<R, RemoteError>> {
        let mut state = self.lock();
        if state.finished {
            return Some(
                state
                    .value
                    .take()
                    .unwrap_or(Err(RemoteError::AlreadyJoined)),
            );
        }
        register(&mut state.joiners);
        None
    }
}

impl<R> Watched for Outcome<R> {
    fn forget(&self, registration: Registration) {
        self.lock().joiners.remove(registration);
    }
}

impl<R: Send> census::Progress for Outcome<R> {
    fn progress(&self) -> census::Stage {
        let state = self.lock();
        match (state.finished, state.value.is_some()) {
            (false, _) => census::Stage::Running,
            (true, true) => census::Stage::Finished,
            (true, false) => census::Stage::Joined,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ractor::{Ractor, quiet_one};

    /// How many joiners wait for `ractor`'s end.
    fn joiners<In, Out, R>(ractor: &Ractor<In, Out, R>) -> usize {
        ractor.outcome.lock().joiners.len()
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn a_join_that_unwinds_leaves_no_joiner_behind() {
        let quiet = quiet_one();
        let left = crate::run({
            let quiet = quiet.clone();
            move || {
                let joins: Vec<_> = (0..3)
                    .map(|_| {
                        let quiet = quiet.clone();
                        crate::spawn(move || quiet.join())
                    })
                    .collect();
                crate::runtime::yield_now(); // they all wait now
                assert_eq!(joiners(&quiet), 3);
                for join in joins {
                    join.cancel();
                    assert!(join.join().is_err(), "the join was cancelled");
                }
                joiners(&quiet)
            }
        });
        assert_eq!(left, 0, "each cancelled join removed its entry");
        quiet.close_incoming();
        assert!(quiet.join().is_ok());
    }
}

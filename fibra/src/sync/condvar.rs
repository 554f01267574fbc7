//! Condition variables for green threads.

use super::mutex::MutexGuard;
use super::waitlist::{Sleeper, WaitList};
use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use crate::time::deadline_after;
use std::cell::RefCell;
use std::fmt;
use std::time::{Duration, Instant};

/// A condition variable for the green threads of one runtime (the counterpart
/// of [`std::sync::Condvar`], used with a fibra [`Mutex`](super::Mutex)): a
/// thread waits, with the mutex unlocked, until another notifies it.
///
/// Waiters are notified in the order they started to wait. A waiter wakes only
/// when notified (or when its timeout passes): there are no spurious wake-ups.
/// Still, another thread may have changed the data between the notification and
/// the moment the waiter has the lock again, so check the condition in a loop,
/// or use [`wait_while`](Condvar::wait_while).
///
/// If a notified waiter is [cancelled](crate::JoinHandle::cancel) before it
/// returns from `wait`, its notification passes to the next waiter, so a
/// `notify_one` is never swallowed.
///
/// ```
/// use fibra::sync::{Condvar, Mutex};
/// use std::rc::Rc;
///
/// fibra::run(|| {
///     let pair = Rc::new((Mutex::new(false), Condvar::new()));
///     let pair2 = pair.clone();
///     fibra::spawn(move || {
///         let (ready, cvar) = &*pair2;
///         *ready.lock() = true;
///         cvar.notify_one();
///     });
///     let (ready, cvar) = &*pair;
///     let ready = cvar.wait_while(ready.lock(), |ready| !*ready);
///     assert!(*ready);
/// });
/// ```
#[derive(Default)]
pub struct Condvar {
    waiters: RefCell<WaitList<Waiter>>,
}

struct Waiter {
    sleeper: Sleeper,
    notified: bool,
}

impl Condvar {
    /// A condition variable with no waiter.
    pub const fn new() -> Condvar {
        Condvar {
            waiters: RefCell::new(WaitList::new()),
        }
    }

    /// Unlocks the guard's mutex, parks the calling green thread until it is
    /// notified, then locks the mutex again and returns its guard.
    ///
    /// # Panics
    ///
    /// Outside a green thread. Unwinds if the calling thread is cancelled; the
    /// mutex is then unlocked.
    #[track_caller]
    pub fn wait<'a, T: ?Sized>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.wait_until(guard, None).0
    }

    /// Waits while `condition` holds: returns, with the mutex locked, the
    /// first time it is false (at once if it is false already).
    #[track_caller]
    pub fn wait_while<'a, T: ?Sized>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: impl FnMut(&mut T) -> bool,
    ) -> MutexGuard<'a, T> {
        while condition(&mut guard) {
            guard = self.wait(guard);
        }
        guard
    }

    /// Like [`wait`](Condvar::wait), but gives up once `timeout` has passed.
    /// Returns the guard and whether the wait timed out (`false`: it was
    /// notified).
    ///
    /// ```
    /// use fibra::sync::{Condvar, Mutex};
    /// use std::time::Duration;
    ///
    /// fibra::run(|| {
    ///     let (m, cv) = (Mutex::new(()), Condvar::new());
    ///     let (_guard, timed_out) = cv.wait_timeout(m.lock(), Duration::from_millis(5));
    ///     assert!(timed_out); // nobody notified
    /// });
    /// ```
    #[track_caller]
    pub fn wait_timeout<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> (MutexGuard<'a, T>, bool) {
        self.wait_until(guard, Some(deadline_after(Instant::now(), timeout)))
    }

    /// Waits while `condition` holds, for at most `timeout` in all. Returns the
    /// guard and whether it timed out with the condition still true.
    #[track_caller]
    pub fn wait_timeout_while<'a, T: ?Sized>(
        &self,
        mut guard: MutexGuard<'a, T>,
        timeout: Duration,
        mut condition: impl FnMut(&mut T) -> bool,
    ) -> (MutexGuard<'a, T>, bool) {
        let deadline = deadline_after(Instant::now(), timeout);
        while condition(&mut guard) {
            let timed_out;
            (guard, timed_out) = self.wait_until(guard, Some(deadline));
            if timed_out {
                let still = condition(&mut guard);
                return (guard, still);
            }
        }
        (guard, false)
    }

    /// Wakes the longest-waiting green thread, if any waits.
    pub fn notify_one(&self) {
        let mut waiters = self.waiters.borrow_mut();
        if let Some(key) = waiters.pop_front() {
            let waiter = waiters.get_mut(key);
            waiter.notified = true;
            waiter.sleeper.wake();
        }
    }

    /// Wakes every waiting green thread.
    pub fn notify_all(&self) {
        let mut waiters = self.waiters.borrow_mut();
        while let Some(key) = waiters.pop_front() {
            let waiter = waiters.get_mut(key);
            waiter.notified = true;
            waiter.sleeper.wake();
        }
    }

    #[track_caller]
    fn wait_until<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        deadline: Option<Instant>,
    ) -> (MutexGuard<'a, T>, bool) {
        let scheduler = scheduler::current_for("fibra::sync::Condvar::wait");
        let mutex = guard.mutex();
        let key = self.waiters.borrow_mut().push_back(Waiter {
            sleeper: Sleeper::running(&scheduler),
            notified: false,
        });
        let mut waiting = Waiting {
            condvar: self,
            state: State::Queued(key),
        };
        drop(guard);
        let timer = deadline.map(|deadline| scheduler.arm_timer(deadline));
        loop {
            if self.waiters.borrow().get(key).notified {
                break;
            }
            if let Some(deadline) = deadline
                && Instant::now() >= deadline
            {
                break;
            }
            scheduler.park_on(WaitReason::Condvar);
        }
        // The wait is over: its timer goes before the lock is waited for.
        drop(timer);
        // A notification that comes with the timeout wins over it.
        let notified = self.waiters.borrow_mut().remove(key).notified;
        waiting.state = if notified {
            State::Notified
        } else {
            State::Done
        };
        let guard = mutex.lock();
        waiting.state = State::Done;
        (guard, !notified)
    }
}

/// Where a waiter is; if it unwinds (is cancelled) before `wait` returns, its
/// place is removed and a notification it consumed passes to the next waiter.
struct Waiting<'a> {
    condvar: &'a Condvar,
    state: State,
}

enum State {
    Queued(usize),
    Notified,
    Done,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let notified = match self.state {
            State::Queued(key) => self.condvar.waiters.borrow_mut().remove(key).notified,
            State::Notified => true,
            State::Done => false,
        };
        if notified {
            self.condvar.notify_one();
        }
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condvar").finish_non_exhaustive()
    }
}

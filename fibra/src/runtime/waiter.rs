//! Waiting for another OS thread, from a green thread or from a plain OS
//! thread alike. Ractor mailboxes are filled and emptied by threads of
//! different workers (and by threads outside any runtime, such as `main`), so
//! whoever waits must be wakeable from anywhere: a green thread through its
//! [`Unparker`], an OS thread through `std::thread::Thread::unpark`, and a
//! task of any async executor (awaiting a Ractor) through its [`Waker`].

use super::remote::Unparker;
use super::scheduler::{self, Scheduler};
use super::wait::WaitReason;
use crate::sync_prims::{self, thread};
use std::rc::Rc;
use std::task::Waker;
use std::time::Instant;

/// Wakes one waiting thread, green or not, or an async task. `Send` and `Sync`.
#[derive(Clone, Debug)]
pub(crate) enum Waiter {
    Green(Unparker),
    Os(thread::Thread),
    Task(Waker),
}

impl Waiter {
    /// The calling thread: the running green thread if there is one, else the
    /// OS thread.
    pub(crate) fn current() -> Waiter {
        Caller::get().waiter()
    }

    /// Whether this waiter wakes the calling thread: a wait site that waits
    /// again and again (a mailbox) keeps its waiter rather than make one each
    /// time, which would touch a reference count other cores touch too.
    pub(crate) fn is_current(&self) -> bool {
        Caller::get().is(self)
    }

    pub(crate) fn wake(&self) {
        match self {
            // A thread of the runtime running here goes straight into its
            // run queue (a `Queue` between two green threads of one runtime);
            // one of another runtime through that runtime's remote queue.
            Waiter::Green(unparker) => {
                if !scheduler::wake_if_local(unparker) {
                    unparker.unpark();
                }
            }
            Waiter::Os(thread) => thread.unpark(),
            Waiter::Task(waker) => waker.wake_by_ref(),
        }
    }
}

/// Who calls: the running green thread of this OS thread's runtime, or the
/// OS thread itself. A wait site that asks several questions of the caller
/// in one wait (a mailbox's receive: may it spin, is its waiter still the
/// caller's, then park it) looks the runtime up once for all of them.
pub(crate) enum Caller {
    Green(Rc<Scheduler>),
    Os,
}

impl Caller {
    /// The calling thread.
    pub(crate) fn get() -> Caller {
        match scheduler::try_current() {
            Some(scheduler) if scheduler.is_running_a_thread() => Caller::Green(scheduler),
            _ => Caller::Os,
        }
    }

    /// Wakes the caller.
    pub(crate) fn waiter(&self) -> Waiter {
        match self {
            Caller::Green(scheduler) => Waiter::Green(scheduler.unparker(scheduler.running())),
            Caller::Os => Waiter::Os(thread::current()),
        }
    }

    /// Whether `waiter` wakes the caller (see [`Waiter::is_current`]).
    pub(crate) fn is(&self, waiter: &Waiter) -> bool {
        match (waiter, self) {
            (Waiter::Green(unparker), Caller::Green(scheduler)) => {
                scheduler.unparks_running(unparker)
            }
            (Waiter::Os(os), Caller::Os) => os.id() == thread::current().id(),
            _ => false,
        }
    }

    /// [`wait`]s: parks the caller until a [`Waiter`] for it wakes it, or
    /// spuriously.
    pub(crate) fn wait(&self, reason: WaitReason) {
        match self {
            Caller::Green(scheduler) => scheduler.park_on(reason),
            Caller::Os => thread::park(),
        }
    }
}

/// Blocks the calling thread until a [`Waiter`] for it wakes it, or
/// spuriously: parks the running green thread (waiting for `reason`, as a
/// dump shows it), or else the OS thread.
pub(crate) fn wait(reason: WaitReason) {
    Caller::get().wait(reason);
}

/// Waits as [`wait`] does, until `ready` returns true (it is asked first, then
/// after each wake, spurious ones included) or `deadline` passes; returns
/// whether `ready` did. A green thread arms one timer for the whole wait
/// (dropped with it, on every path out, unwinding included); an OS thread
/// parks with a timeout. `ready` is asked once more after a wake at the
/// deadline, so an outcome that came with the deadline is not missed.
pub(crate) fn wait_until(
    reason: WaitReason,
    deadline: Option<Instant>,
    mut ready: impl FnMut() -> bool,
) -> bool {
    if ready() {
        return true;
    }
    let passed = |now: Instant| deadline.is_some_and(|deadline| now >= deadline);
    match scheduler::try_current() {
        Some(scheduler) if scheduler.is_running_a_thread() => {
            let _timer = deadline.map(|deadline| scheduler.arm_timer(deadline));
            loop {
                if passed(Instant::now()) {
                    return false;
                }
                scheduler.park_on(reason);
                if ready() {
                    return true;
                }
            }
        }
        _ => loop {
            match deadline {
                None => thread::park(),
                Some(deadline) => {
                    let now = Instant::now();
                    if passed(now) {
                        return false;
                    }
                    sync_prims::park_timeout(deadline - now);
                }
            }
            if ready() {
                return true;
            }
        },
    }
}

//! The unwinds a green thread is owed: its cancel ([`Cancelled`]), or the
//! expiry of the outermost `timeout` deadline it has passed
//! ([`Expired`](crate::time::Expired)), delivered at a park — never while its
//! OS thread is unwinding, nor while it is shielded (then they are owed, and
//! delivered at its first park after) — and, under `panic = "abort"`, the
//! abandonment of a cancelled thread instead.

use super::Scheduler;
use super::current::try_current;
use crate::runtime::task::{Cancel, Code, State, Task, TaskId};
use std::panic;
use std::time::Instant;

/// The panic payload that unwinds a cancelled green thread
/// ([`JoinHandle::cancel`](crate::runtime::JoinHandle::cancel), the end of
/// [`run`](crate::runtime::run)).
///
/// Code that catches panics with [`std::panic::catch_unwind`] inside a green
/// thread — a server isolating its handlers, say — must let this one go on, or
/// the thread would outlive its cancellation; and so the expiry of a
/// [`timeout`](crate::time::timeout) ([`Expired`](crate::time::Expired)), or
/// the work would outlive its limit:
///
/// ```
/// use std::panic::{self, AssertUnwindSafe};
///
/// fn isolate(work: impl FnOnce()) -> Result<(), String> {
///     panic::catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
///         if payload.is::<fibra::runtime::Cancelled>() || payload.is::<fibra::time::Expired>() {
///             panic::resume_unwind(payload);
///         }
///         "the work panicked".to_string()
///     })
/// }
/// # fibra::run(|| assert!(isolate(|| panic!("boom")).is_err()));
/// ```
#[derive(Debug)]
pub struct Cancelled;

/// Whether a thread cancelled before it ever ran (its `cancel` is
/// `Requested`) starts [`Started::Cancelled`]: it drops its code unrun and
/// ends cancelled, the cancel delivered — as a [`Handle::spawn`] thread cancelled before its runtime
/// started it never starts. Not while its OS thread is unwinding (another
/// green thread parked in the middle of an unwind: see
/// [`interrupt`](Scheduler::interrupt)): then it starts, and is cancelled at
/// its first park after, as a running thread is. (Under `panic = "abort"` a
/// thread cancelled before it ran was abandoned at once.)
///
/// [`Handle::spawn`]: crate::runtime::Handle::spawn
#[cold]
pub(super) fn cancelled_before_start(entry: &mut Task) -> bool {
    if std::thread::panicking() {
        return false;
    }
    entry.cancel = Cancel::Delivered;
    true
}

impl Scheduler {
    /// Cancels `task`: it unwinds the next time it runs (under `panic =
    /// "abort"`, it is abandoned: see the module docs). A finished task, or one
    /// cancelled before, is ignored. Returns whether the task is gone now (only
    /// an abandoned one is; one that unwinds goes when it has).
    pub(crate) fn cancel(&self, task: TaskId) -> bool {
        let mut tasks = self.tasks.borrow_mut();
        let Some(entry) = tasks
            .get_mut(task.index)
            .filter(|t| t.serial == task.serial && t.cancel == Cancel::No)
        else {
            return false;
        };
        entry.cancel = Cancel::Requested;
        if cfg!(panic = "abort") {
            // A running thread is abandoned where it next parks (`wake` then
            // ignores it); any other at once.
            if entry.state == State::Running {
                return false;
            }
            let abandoned = tasks.remove(task.index);
            drop(tasks);
            // Its waits will never end: their timers go now.
            self.timers.borrow_mut().remove_all_of(task);
            if abandoned.has_options {
                self.forget_options(abandoned.serial);
            }
            abandon(abandoned);
            return true;
        }
        drop(tasks);
        self.wake(task);
        false
    }

    /// Starts the unwind that the running thread owes, if any (its cancel,
    /// or a passed deadline): what its [`park_uninterruptible`](Self::park_uninterruptible)s held back.
    pub(crate) fn unwind_if_owed(&self) {
        let task = self.running();
        if self.may_owe_unwind(task) {
            self.interrupt(task);
        }
    }

    /// Whether the running `task` may owe an unwind: it was cancelled, or it
    /// is inside a `timeout` (whose deadline may have passed). The fast path
    /// of every park: two flags.
    #[inline(always)]
    pub(super) fn may_owe_unwind(&self, task: TaskId) -> bool {
        self.may_owe_unwind_given(self.tasks.borrow()[task.index].cancel)
    }

    /// [`may_owe_unwind`](Self::may_owe_unwind), for a caller that holds
    /// the running thread's entry and has read its `cancel`.
    #[inline(always)]
    pub(super) fn may_owe_unwind_given(&self, cancel: Cancel) -> bool {
        (cancel == Cancel::Requested && !cfg!(panic = "abort"))
            || !self.deadlines.borrow().is_empty()
    }

    /// Starts the unwind the running `task` owes, if any: its cancel, else
    /// the expiry of the outermost of its deadlines that has passed.
    ///
    /// Not while its OS thread is unwinding: a park made then may be in a
    /// destructor that runs during an unwind, and an unwind out of it would
    /// abort the process ("panic in a destructor during cleanup"). A thread is
    /// never handed a second unwind; the destructors that run during one may
    /// wait and complete. std counts panics per OS thread, not per stack, so
    /// `thread::panicking()` is also true while *another* green thread of
    /// this runtime is parked in the middle of its own unwind (or while the
    /// OS thread that called `run` unwinds): fibra cannot tell those apart
    /// (std keeps the count private), so such a thread waits for its unwind
    /// too. Either way the thread is listed in `owed` and woken once its OS
    /// thread no longer unwinds (`wake_owed`), and its unwind starts at that
    /// park — or never, if the unwind in flight was its own and ends it.
    ///
    /// Nor while the thread is shielded (`shield`): its cancel or deadline
    /// stays as it is, and is delivered at its first park after.
    #[cold]
    #[inline(never)]
    pub(super) fn interrupt(&self, task: TaskId) {
        if self.tasks.borrow()[task.index].shielded > 0 {
            return;
        }
        let cancelled =
            self.tasks.borrow()[task.index].cancel == Cancel::Requested && !cfg!(panic = "abort");
        let expired = if cancelled {
            None
        } else {
            match self.deadlines.borrow().expired(task, Instant::now) {
                Some(expired) => Some(expired),
                None => return,
            }
        };
        if std::thread::panicking() {
            self.owed.borrow_mut().insert(task);
            return;
        }
        match expired {
            None => self.deliver_cancel(task),
            Some(expired) => panic::resume_unwind(Box::new(expired)),
        }
    }

    /// Wakes the threads owed an unwind that they could not take (see
    /// `interrupt`), once their OS thread no longer unwinds.
    #[cold]
    pub(super) fn wake_owed(&self) {
        if std::thread::panicking() {
            return;
        }
        let owed = std::mem::take(&mut *self.owed.borrow_mut());
        owed.into_iter().for_each(|task| self.wake(task));
    }

    /// Starts the running thread's `Cancelled` unwind (once: see [`Cancel`]).
    fn deliver_cancel(&self, task: TaskId) -> ! {
        self.tasks.borrow_mut()[task.index].cancel = Cancel::Delivered;
        panic::resume_unwind(Box::new(Cancelled));
    }

    /// Puts `at` in force as the running thread's innermost deadline (see
    /// [`time::timeout`](crate::time::timeout)), until the returned guard is
    /// dropped. `None` where no deadline can be enforced: under `panic =
    /// "abort"` (nothing can unwind), and on the stack of a fiber that the
    /// thread resumed (nothing there can park).
    pub(crate) fn start_deadline(&self, at: Instant) -> Option<Deadline> {
        if cfg!(panic = "abort") {
            return None;
        }
        if !self.on_own_stack() {
            return None;
        }
        let task = self.running();
        let id = self.deadlines.borrow_mut().push(task, at);
        Some(Deadline { task, id })
    }

    /// Takes deadline `id` of `task` out of force.
    pub(in crate::runtime) fn end_deadline(&self, task: TaskId, id: u64) {
        let stale = self.deadlines.borrow_mut().remove(task, id);
        if let Some(key) = stale {
            self.timers.borrow_mut().remove(key);
        }
    }

    /// Arms a wake-up of the running `task`, about to park, at its nearest
    /// deadline, unless one is armed for it already (see `Deadlines::arm`).
    /// The one place a deadline becomes a timer.
    #[cold]
    pub(super) fn arm_deadline(&self, task: TaskId) {
        let stale = self
            .deadlines
            .borrow_mut()
            .arm(task, |at| self.timers.borrow_mut().insert(at, task));
        if let Some(key) = stale {
            self.timers.borrow_mut().remove(key);
        }
    }
}

/// A deadline of the running green thread, in force until this is dropped
/// (see `Scheduler::start_deadline`).
pub(crate) struct Deadline {
    task: TaskId,
    id: u64,
}

impl Deadline {
    /// Names this deadline in the [`Expired`](crate::time::Expired) payload that its expiry unwinds
    /// with.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        // Its runtime may be gone (a thread unwound as its runtime is
        // dropped): then so are its deadlines.
        if let Some(scheduler) = try_current() {
            scheduler.end_deadline(self.task, self.id);
        }
    }
}

/// Leaves a green thread where it is, for good: its fiber (stack and all) is
/// leaked rather than unwound, so nothing on it runs again — for `panic =
/// "abort"`, where nothing can unwind, and for threads that cannot end at
/// shutdown. A thread that never started just drops its closure.
pub(super) fn abandon(task: Task) {
    // Its green-local values are its too: leaked with its stack.
    std::mem::forget(task.locals);
    match task.code {
        Code::Started(fiber) => std::mem::forget(fiber),
        Code::Unstarted(body) => drop(body),
    }
}

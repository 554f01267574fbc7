//! Parking and waking: a green thread suspends itself here (a park, a
//! yield, a sleep), and is made runnable again by id; a wake that comes while
//! it runs is remembered, so it never sleeps through one. Also the timers a
//! wait arms, and the marks a thread puts on its own stack (it lends memory
//! there, or is shielded from unwinds), which the compaction and cancellation
//! read.

use super::Scheduler;
use crate::runtime::counters::Counter;
use crate::runtime::remote::Unparker;
use crate::runtime::task::{Cancel, State, Task, TaskId};
use crate::runtime::timers::ArmedTimer;
use crate::runtime::wait::WaitReason;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

impl Scheduler {
    /// Makes `task` runnable if it is parked; if it is running, its next park
    /// returns at once. A finished task is ignored.
    pub(crate) fn wake(&self, task: TaskId) {
        self.try_wake(task);
    }

    /// [`wake`](Self::wake)s `task`, and says whether it will run again (not
    /// if it is finished or abandoned): the reactor then hands a socket's
    /// readiness to the next waiter instead.
    pub(crate) fn try_wake(&self, task: TaskId) -> bool {
        self.wake_counted(task, &self.monitor.counters.local_wakes)
    }

    /// [`try_wake`](Self::try_wake), counting in `wakes` the wake of a
    /// parked thread.
    #[inline(always)]
    pub(super) fn wake_counted(&self, task: TaskId, wakes: &Counter) -> bool {
        let mut tasks = self.tasks.borrow_mut();
        let Some(entry) = tasks
            .get_mut(task.index)
            .filter(|t| t.serial == task.serial)
        else {
            return false;
        };
        match entry.state {
            // An abandoned thread (`panic = "abort"`) never runs again.
            _ if cfg!(panic = "abort") && entry.cancel != Cancel::No => return false,
            State::Parked => {
                entry.state = State::Runnable;
                self.queue.borrow_mut().push_back(task);
                wakes.add(1);
            }
            State::Running => entry.notified = true,
            State::Runnable => {}
        }
        true
    }

    /// Parks the running green thread until it is woken; `wait` says what it
    /// waits for, for dumps (a single store: it costs the park nothing more).
    ///
    /// # Panics
    ///
    /// Unwinds with [`Cancelled`] if the thread is cancelled; panics if called
    /// from a fiber that the green thread resumed (it cannot suspend the thread
    /// from another stack).
    pub(crate) fn park_on(&self, wait: WaitReason) {
        self.suspend_running(State::Parked, wait, true);
    }

    /// Parks the running green thread like [`park_on`](Self::park_on), but
    /// never unwinds it: a cancel or a passed deadline stays owed until
    /// [`unwind_if_owed`](Self::unwind_if_owed). For a thread whose stack
    /// work on another OS thread borrows (`hop`), which must not be unwound
    /// before that work has ended.
    pub(crate) fn park_uninterruptible(&self, wait: WaitReason) {
        self.suspend_running(State::Parked, wait, false);
    }

    /// Puts the running green thread at the back of the run queue.
    pub(crate) fn yield_now(&self) {
        self.suspend_running(State::Runnable, WaitReason::Park, true);
    }

    /// Suspends the running thread in `state`. What it waits for (`wait`,
    /// unused for a yield) and since when stay here, on its stack, and are only
    /// read by a dump (which has the thread tell them): parking stores nothing
    /// more than it did without dumps. An `interruptible` park delivers the
    /// unwind the thread owes, and arms its deadline; any other leaves both.
    fn suspend_running(&self, state: State, wait: WaitReason, interruptible: bool) {
        let since = self.clock.get();
        let task = self.running();
        let fiber = {
            let mut tasks = self.tasks.borrow_mut();
            let mut entry = &mut tasks[task.index];
            // `may_owe_unwind`, read in the one look at the task the park
            // takes anyway.
            if interruptible && self.may_owe_unwind_given(entry.cancel) {
                drop(tasks);
                self.interrupt(task);
                tasks = self.tasks.borrow_mut();
                entry = &mut tasks[task.index];
            }
            if state == State::Parked && std::mem::take(&mut entry.notified) {
                return;
            }
            if interruptible && state == State::Parked && !self.deadlines.borrow().is_empty() {
                self.arm_deadline(task);
            }
            entry.state = state;
            if state == State::Runnable {
                self.queue.borrow_mut().push_back(task);
                self.yielded.set(true);
                self.monitor.counters.yields.add(1);
            } else {
                self.monitor.counters.parks.add(1);
            }
            if state == State::Parked && self.compact_after.is_some() {
                entry.parks = entry.parks.wrapping_add(1);
                // A thread that lends part of its stack (see `lend`) is
                // never compacted: its park is not even queued.
                if entry.lending == 0 {
                    self.queue_cold(task, since, entry.parks);
                }
            }
            entry.code.fiber().clone()
        };
        // tokio's current runtime, entered for a poll under
        // `fibra::tokio::block_on`, is the running thread's alone: off the
        // OS thread while the others run, back when this one runs again (or
        // unwinds).
        #[cfg(feature = "tokio")]
        let _tokio = crate::tokio::leave();
        if fiber.suspend(()).is_err() {
            self.tasks.borrow_mut()[task.index].state = State::Running;
            panic!(
                "fibra: a green thread can only block (park, sleep, IO, join, ...) on its own stack, \
                 not from inside a fiber it resumed"
            );
        }
        // Resumed by a dump to say where it waits, not woken: trace this
        // stack, from here, and suspend again.
        while self.tracing.get() {
            self.tell_dump(&fiber, wait, since);
            // Cannot fail: it did just above, on this same stack.
            let _ = fiber.suspend(());
        }
        drop(fiber);
        if interruptible && self.may_owe_unwind(task) {
            self.interrupt(task);
        }
    }

    /// Whether the caller runs on the running green thread's own stack, not
    /// on the stack of a fiber that the thread resumed (nothing there can
    /// park, and that fiber may be dropped or leaked while the thread goes
    /// on).
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    pub(crate) fn on_own_stack(&self) -> bool {
        let task = self.running();
        // The address of a local says which stack this code runs on (this
        // frame is on the caller's stack).
        let local = 0u8;
        let here = std::ptr::from_ref(&local) as usize;
        self.tasks.borrow()[task.index]
            .code
            .fiber()
            .stack_range()
            .contains(&here)
    }

    /// Whether the caller can park the running green thread: a green thread
    /// runs, and this code runs on its own stack.
    pub(crate) fn can_park_here(&self) -> bool {
        self.is_running_a_thread() && self.on_own_stack()
    }

    /// Whether `unparker` wakes the green thread running now (so that a wait
    /// site may keep the one it has instead of making another).
    pub(crate) fn unparks_running(&self, unparker: &Unparker) -> bool {
        self.running.get() == Some(unparker.task) && Arc::ptr_eq(&unparker.remote, &self.remote)
    }

    /// Parks the running green thread until `deadline`.
    pub(crate) fn sleep_until(&self, deadline: Instant) {
        if Instant::now() >= deadline {
            return;
        }
        let _timer = self.arm_timer(deadline);
        // The timer fires only once `deadline` has passed (`expire` compares
        // with a clock read no later than this one): one timer serves every
        // spurious wake-up before it.
        while Instant::now() < deadline {
            self.park_on(WaitReason::Sleep { deadline });
        }
    }

    /// Wakes the running green thread at `deadline` (or soon after), unless
    /// the returned timer is dropped before: a wait with a time limit arms
    /// one before it parks and keeps it until it ends, so that the timer goes
    /// with the wait on every path out of it (see `timers`).
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    pub(crate) fn arm_timer(&self, deadline: Instant) -> ArmedTimer<'_> {
        let key = self.timers.borrow_mut().insert(deadline, self.running());
        ArmedTimer {
            timers: &self.timers,
            key,
        }
    }

    /// How many entries the timers hold, armed or disarmed and not yet
    /// dropped (see `runtime::timer_entries`).
    pub(crate) fn timer_entries(&self) -> usize {
        self.timers.borrow().entries()
    }

    /// Marks the running green thread as lending memory of its stack to
    /// something that may read or write it while the thread is parked (a
    /// future pinned there by `block_on`, which its waker's source may touch
    /// from another OS thread), until the guard is dropped: meanwhile none of
    /// its parks is compacted. Frames nest; each counts.
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    pub(crate) fn lend(self: &Rc<Self>) -> Mark {
        self.mark(|task| &mut task.lending)
    }

    /// Shields the running green thread from unwinds until the guard is
    /// dropped: meanwhile its parks deliver no cancel and no expired
    /// deadline (they stay owed, for its first park after). For a wait that
    /// must complete whatever comes — `scope`'s for its threads, once it
    /// has caught an unwind that it will resume when they have ended.
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    pub(crate) fn shield(self: &Rc<Self>) -> Mark {
        self.mark(|task| &mut task.shielded)
    }

    /// Counts one more of `count` on the running thread, until the guard is
    /// dropped.
    fn mark(self: &Rc<Self>, count: fn(&mut Task) -> &mut u32) -> Mark {
        let task = self.running();
        *count(&mut self.tasks.borrow_mut()[task.index]) += 1;
        Mark {
            scheduler: Rc::downgrade(self),
            task,
            count,
        }
    }
}

/// A frame of a green thread's stack that lends memory there (see
/// `Scheduler::lend`), or that shields the thread from unwinds (see
/// `Scheduler::shield`): one count of its task's, taken back when this is
/// dropped. It names its thread, so it takes back the right one's count
/// wherever it is dropped; it does not keep the runtime alive (a thread
/// abandoned in `block_on` leaks it with its stack).
pub(crate) struct Mark {
    scheduler: std::rc::Weak<Scheduler>,
    task: TaskId,
    count: fn(&mut Task) -> &mut u32,
}

impl Drop for Mark {
    fn drop(&mut self) {
        let Some(scheduler) = self.scheduler.upgrade() else {
            return;
        };
        let mut tasks = scheduler.tasks.borrow_mut();
        if let Some(entry) = tasks
            .get_mut(self.task.index)
            .filter(|t| t.serial == self.task.serial)
        {
            *(self.count)(entry) -= 1;
        }
    }
}

//! The deadlines of the [`timeout`](crate::time::timeout)s a green thread is
//! inside: a stack per thread, outermost first, kept by the scheduler so that
//! every park of the thread sees them (the nearest is armed as a timer while it
//! parks, and a passed one unwinds the work from there).
//!
//! The records live here, on the heap, not on the thread's stack: the
//! scheduler reads them at a park and a compacted stack is never read.

use super::scheduler;
use super::task::TaskId;
use std::any::Any;
use std::collections::HashMap;
use std::time::Instant;

/// The panic payload that unwinds the work of a
/// [`timeout`](crate::time::timeout) whose deadline passed, from the wait
/// where the work was. It names that `timeout`, so that the `timeout`s nested
/// inside it let it go on to the one it is for, which returns
/// [`Elapsed`](crate::time::Elapsed).
///
/// Code that catches panics with [`std::panic::catch_unwind`] inside a
/// `timeout` must let this one go on, as it must let
/// [`Cancelled`](crate::runtime::Cancelled) go on (see there): else the work
/// runs on past its limit, until its next wait ends it again.
#[derive(Debug)]
pub struct Expired(u64);

impl Expired {
    /// Whether `payload` is the expiry of the deadline `id`.
    pub(crate) fn is_of(payload: &(dyn Any + Send), id: u64) -> bool {
        payload.downcast_ref::<Expired>().is_some_and(|e| e.0 == id)
    }
}

/// The deadlines of every green thread that is inside a `timeout`.
#[derive(Default)]
pub(super) struct Deadlines {
    /// Per thread that has any (so that `is_empty` says whether a park need
    /// look at all).
    by_thread: HashMap<TaskId, Stack>,
    next_id: u64,
}

/// One thread's deadlines.
#[derive(Default)]
struct Stack {
    /// (deadline, id), outermost first.
    deadlines: Vec<(Instant, u64)>,
    /// The deadline a timer is armed for, if one is: a park before it passes
    /// need not arm another, so a thread that waits a million times inside one
    /// `timeout` leaves one timer, not a million (see `arm`).
    armed: Option<Instant>,
}

impl Deadlines {
    pub(super) fn is_empty(&self) -> bool {
        self.by_thread.is_empty()
    }

    /// Adds `at` as `task`'s innermost deadline; returns its id.
    pub(super) fn push(&mut self, task: TaskId, at: Instant) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.by_thread
            .entry(task)
            .or_default()
            .deadlines
            .push((at, id));
        id
    }

    /// Removes deadline `id` of `task` (the innermost, unless a fiber that the
    /// thread resumed left a `timeout` suspended: any is found by its id).
    pub(super) fn remove(&mut self, task: TaskId, id: u64) {
        let Some(stack) = self.by_thread.get_mut(&task) else {
            return;
        };
        if let Some(at) = stack.deadlines.iter().rposition(|&(_, i)| i == id) {
            stack.deadlines.remove(at);
        }
        if stack.deadlines.is_empty() {
            self.by_thread.remove(&task);
        }
    }

    /// The outermost of `task`'s deadlines that has passed at `now`: unwinding
    /// to it ends every `timeout` inside it too, so it is the one to expire
    /// (an inner deadline further off must not mask an outer one). The clock
    /// is read only for a thread that has deadlines (while one thread is
    /// inside a `timeout`, every park of the others asks too).
    pub(super) fn expired(&self, task: TaskId, now: impl FnOnce() -> Instant) -> Option<Expired> {
        let stack = self.by_thread.get(&task)?;
        let now = now();
        stack
            .deadlines
            .iter()
            .find(|&&(at, _)| at <= now)
            .map(|&(_, id)| Expired(id))
    }

    /// Records a timer as armed for the nearest deadline of `task`, about to
    /// park at `now`, and returns that deadline for the caller to arm — or
    /// `None` if none is to be armed: it has passed (it is due now, not
    /// later), or the timer armed for it is still pending (a timer fires at
    /// its deadline or after, so one armed for a deadline not yet passed has
    /// not fired).
    pub(super) fn arm(&mut self, task: TaskId, now: impl FnOnce() -> Instant) -> Option<Instant> {
        let stack = self.by_thread.get_mut(&task)?;
        let nearest = stack.deadlines.iter().map(|&(at, _)| at).min()?;
        if stack.armed == Some(nearest) || nearest <= now() {
            return None;
        }
        stack.armed = Some(nearest);
        Some(nearest)
    }
}

/// A deadline of the running green thread, in force until this is dropped
/// (see `Scheduler::start_deadline`).
pub(crate) struct Deadline {
    task: TaskId,
    id: u64,
}

impl Deadline {
    pub(super) fn new(task: TaskId, id: u64) -> Deadline {
        Deadline { task, id }
    }

    /// Names this deadline in the [`Expired`] payload that its expiry unwinds
    /// with.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        // Its runtime may be gone (a thread unwound as its runtime is
        // dropped): then so are its deadlines.
        if let Some(scheduler) = scheduler::try_current() {
            scheduler.end_deadline(self.task, self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const TASK: TaskId = TaskId {
        index: 0,
        serial: 1,
    };

    #[test]
    fn the_outermost_passed_deadline_expires_and_the_nearest_is_armed_once() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut deadlines = Deadlines::default();
        assert!(deadlines.is_empty());
        let outer = deadlines.push(TASK, ms(30));
        let inner = deadlines.push(TASK, ms(10));
        // An inner deadline further off does not mask the outer one.
        let innermost = deadlines.push(TASK, ms(50));
        assert_eq!(deadlines.arm(TASK, || t0), Some(ms(10)));
        assert_eq!(deadlines.arm(TASK, || t0), None, "armed already");
        assert!(deadlines.expired(TASK, || ms(5)).is_none());
        let expired = deadlines.expired(TASK, || ms(10)).unwrap();
        assert!(Expired::is_of(&expired, inner));
        let expired = deadlines.expired(TASK, || ms(60)).unwrap();
        assert!(
            Expired::is_of(&expired, outer),
            "the outermost of those passed"
        );
        deadlines.remove(TASK, innermost);
        deadlines.remove(TASK, inner);
        // Past its deadline, nothing is armed: it is due now.
        assert_eq!(deadlines.arm(TASK, || ms(40)), None);
        assert_eq!(deadlines.arm(TASK, || t0), Some(ms(30)));
        deadlines.remove(TASK, outer);
        assert!(deadlines.is_empty());
    }
}

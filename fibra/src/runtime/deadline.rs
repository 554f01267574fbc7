//! The deadlines of the [`timeout`](crate::time::timeout)s a green thread is
//! inside: a stack per thread, outermost first, kept by the scheduler so that
//! every park of the thread sees them (the nearest is armed as a timer while it
//! parks, and a passed one unwinds the work from there).
//!
//! The records live here, on the heap, not on the thread's stack: the
//! scheduler reads them at a park and a compacted stack is never read.

use super::task::TaskId;
use super::timers::TimerKey;
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
    /// The deadline a timer is armed for, and that timer, if one is: a park
    /// before it passes need not arm another, so a thread that waits a
    /// million times inside one `timeout` arms one timer, not a million (see
    /// `arm`); and it is disarmed when its deadline goes out of force (see
    /// `remove`), so a `timeout` whose work finished leaves no timer behind.
    armed: Option<(Instant, TimerKey)>,
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
    /// Returns the timer to disarm, if one was armed for a deadline that is
    /// no longer the nearest in force.
    #[must_use = "the timer returned is to be disarmed"]
    pub(super) fn remove(&mut self, task: TaskId, id: u64) -> Option<TimerKey> {
        let stack = self.by_thread.get_mut(&task)?;
        if let Some(at) = stack.deadlines.iter().rposition(|&(_, i)| i == id) {
            stack.deadlines.remove(at);
        }
        let nearest = stack.nearest();
        let stale = match stack.armed {
            Some((armed, key)) if nearest != Some(armed) => {
                stack.armed = None;
                Some(key)
            }
            _ => None,
        };
        if stack.deadlines.is_empty() {
            self.by_thread.remove(&task);
        }
        stale
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

    /// Arms a timer (with `insert`) for the nearest deadline of `task`, about
    /// to park, unless one is armed for it already (once armed, it fires or is
    /// disarmed with its deadline). One that has passed is armed too: it may
    /// have passed since the park looked for an expired deadline (a moment
    /// earlier), and its timer, due at once, then wakes the thread to find it
    /// — not arming it would leave the park waiting for whatever else wakes
    /// it (seen under valgrind, where the moment is long).
    /// Returns the timer to disarm, if one was armed for another deadline (a
    /// later one, before an inner `timeout` with a nearer one began).
    #[must_use = "the timer returned is to be disarmed"]
    pub(super) fn arm(
        &mut self,
        task: TaskId,
        insert: impl FnOnce(Instant) -> TimerKey,
    ) -> Option<TimerKey> {
        let stack = self.by_thread.get_mut(&task)?;
        let nearest = stack.nearest()?;
        if stack.armed.is_some_and(|(armed, _)| armed == nearest) {
            return None;
        }
        let before = stack.armed.replace((nearest, insert(nearest)));
        before.map(|(_, key)| key)
    }
}

impl Stack {
    fn nearest(&self) -> Option<Instant> {
        self.deadlines.iter().map(|&(at, _)| at).min()
    }
}

#[cfg(test)]
mod tests {
    use super::super::timers::Timers;
    use super::*;
    use std::time::Duration;

    const TASK: TaskId = TaskId {
        index: 0,
        serial: 1,
    };

    /// Arms `TASK`'s nearest deadline, recording what is armed.
    fn arm(
        deadlines: &mut Deadlines,
        timers: &mut Timers,
        armed: &mut Vec<Instant>,
    ) -> Option<TimerKey> {
        deadlines.arm(TASK, |at| {
            armed.push(at);
            timers.insert(at, TASK)
        })
    }

    #[test]
    fn the_outermost_passed_deadline_expires_and_the_nearest_is_armed_once() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut timers = Timers::default();
        let mut armed = Vec::new();
        let mut deadlines = Deadlines::default();
        assert!(deadlines.is_empty());
        let outer = deadlines.push(TASK, ms(30));
        assert_eq!(arm(&mut deadlines, &mut timers, &mut armed), None);
        let inner = deadlines.push(TASK, ms(10));
        // An inner deadline further off does not mask the outer one.
        let innermost = deadlines.push(TASK, ms(50));
        // The nearer inner deadline is armed, and the outer's timer is
        // handed back to be disarmed.
        let stale = arm(&mut deadlines, &mut timers, &mut armed);
        assert!(stale.is_some());
        assert_eq!(deadlines.arm(TASK, |_| unreachable!("armed already")), None);
        assert_eq!(armed, [ms(30), ms(10)]);
        assert!(deadlines.expired(TASK, || ms(5)).is_none());
        let expired = deadlines.expired(TASK, || ms(10)).unwrap();
        assert!(Expired::is_of(&expired, inner));
        let expired = deadlines.expired(TASK, || ms(60)).unwrap();
        assert!(
            Expired::is_of(&expired, outer),
            "the outermost of those passed"
        );
        assert_eq!(deadlines.remove(TASK, innermost), None, "not the armed one");
        assert!(
            deadlines.remove(TASK, inner).is_some(),
            "its timer goes with it"
        );
        // The outer one is armed again, passed or not: its timer is due at
        // once if it has passed.
        assert_eq!(arm(&mut deadlines, &mut timers, &mut armed), None);
        assert_eq!(armed, [ms(30), ms(10), ms(30)]);
        assert!(deadlines.remove(TASK, outer).is_some());
        assert!(deadlines.is_empty());
    }
}

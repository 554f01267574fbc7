//! Deadlock detection: every green thread is parked and nothing can wake one
//! (no timer, no socket, no `Unparker` held by another OS thread). The loop
//! asks this when it runs out of ready threads; `run` then panics with the
//! dump.

use super::Scheduler;
use crate::runtime::task::TaskId;

impl Scheduler {
    /// Whether no `Unparker` is left outside and none of those dropped left a
    /// wake-up behind (then, with no timer or socket to wait for, no thread can
    /// ever run again).
    /// (A runtime asleep when the last `Unparker` goes is woken to ask
    /// again: see `Outside`.)
    pub(super) fn nobody_else_can_wake(&self, buffer: &mut Vec<TaskId>) -> bool {
        if self.remote.held_outside() {
            return false;
        }
        // Every unpark the dropped `Unparker`s made is visible now.
        self.take_remote_wakes(buffer);
        self.queue.borrow().is_empty()
    }
}

/// Every green thread is parked and nothing can wake one.
#[derive(Debug)]
pub(in crate::runtime) struct Deadlock {
    pub(in crate::runtime) parked: usize,
}

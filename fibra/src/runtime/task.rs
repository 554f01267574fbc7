//! A green thread as the scheduler sees it: its fiber, where it is in its life,
//! and whether a wake-up arrived while it was running.

use crate::Fiber;
use std::fmt;
use std::rc::Rc;

/// Names a green thread of one runtime. The serial number makes an id that
/// outlives its thread harmless: the slot may be reused, the serial is not.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TaskId {
    pub(super) index: usize,
    pub(super) serial: u64,
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "green thread #{}", self.serial)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// In the run queue.
    Runnable,
    /// Its fiber is running (or has resumed a fiber of its own).
    Running,
    /// Suspended until a wake-up.
    Parked,
}

pub(super) struct Task {
    pub(super) serial: u64,
    /// Shared so that the scheduler can resume it, and the thread park itself,
    /// without keeping the task table borrowed.
    pub(super) fiber: Rc<Fiber>,
    pub(super) state: State,
    /// A wake-up that came while the thread was running: its next park returns
    /// at once instead of sleeping through it.
    pub(super) notified: bool,
    /// Set by a cancellation: the thread unwinds at its next park.
    pub(super) cancelled: bool,
}

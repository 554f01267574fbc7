//! What a runtime tells a [`dump`](super::dump()) about itself: its part (a
//! [`Section`]), made by the runtime on its own OS thread (its threads, what
//! each is doing, its stack as return addresses; the Ractors it hosts), for
//! the dumping thread to symbolize and print. The scheduler makes it
//! (`Scheduler::section`); the dump asks for it through the runtime's
//! [`Monitor`](super::registry::Monitor) and reads it.

use super::wait::WaitReason;
use std::sync::Arc;
use std::time::Duration;

/// What a green thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// It is running: it took the dump, or the dump was taken from a fiber it
    /// resumed.
    Running,
    /// It is in the run queue (it yielded, or was woken).
    Ready,
    /// It was spawned and has not run yet.
    NotStarted,
    /// It is parked, waiting for `reason`, for `waited` so far (measured from
    /// the end of its runtime's round of threads before it parked, so
    /// slightly long).
    Parked {
        /// What it waits for.
        reason: WaitReason,
        /// For how long.
        waited: Duration,
    },
}

/// A runtime's description of its green threads, before symbolization.
pub(crate) struct Section {
    pub(crate) threads: Vec<RawThread>,
    pub(crate) ractors: Vec<RawRactor>,
}

/// Lists the Ractors a runtime hosts, for its part of a dump (see
/// [`describe_ractors_with`](super::describe_ractors_with)).
pub(crate) type DescribeRactors = fn() -> Vec<RawRactor>;

/// A Ractor as the worker it lives on describes it.
pub(crate) struct RawRactor {
    pub(crate) id: u64,
    pub(crate) worker: usize,
    /// Its body's green thread (`None` while it waits to be started).
    pub(crate) thread: Option<u64>,
    pub(crate) queued: usize,
    pub(crate) finished: bool,
}

/// A green thread as its runtime describes it: its backtrace as return
/// addresses (symbolized by the dumping thread, once per address).
pub(crate) struct RawThread {
    pub(crate) id: u64,
    pub(crate) name: Option<Arc<str>>,
    pub(crate) state: ThreadState,
    pub(crate) stack: Vec<usize>,
    pub(crate) compacted: Option<usize>,
}

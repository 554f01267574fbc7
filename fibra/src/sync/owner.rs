//! Who is running: the identity a lock records to tell its holder.

use crate::runtime::scheduler::{self, RuntimeId};
use crate::runtime::task::TaskId;

/// The green thread running now, or the code of this OS thread outside any
/// green thread (before or after a runtime, or its own loop). A primitive here
/// is `!Send`, so every caller of one is on the same OS thread, and these
/// identities tell them all apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    /// A green thread of a runtime (its id is unique only within it).
    Green(RuntimeId, TaskId),
    /// This OS thread, outside any green thread.
    Outside,
}

impl Owner {
    /// Whoever calls.
    #[inline]
    pub(super) fn current() -> Owner {
        match scheduler::running_thread() {
            Some((runtime, thread)) => Owner::Green(runtime, thread),
            None => Owner::Outside,
        }
    }
}

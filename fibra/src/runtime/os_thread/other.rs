//! What a runtime's OS thread is doing, on systems where fibra cannot tell
//! (it reads `/proc` on Linux): the stall line and a dump then say nothing
//! more than who runs.

/// An OS thread of this process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OsThread;

impl OsThread {
    /// The calling OS thread.
    pub(crate) fn current() -> OsThread {
        OsThread
    }

    /// What the thread is doing now: unknown here.
    pub(crate) fn doing(&self) -> Option<String> {
        None
    }
}

//! Why a fiber could not be resumed.

use std::fmt;

/// Why [`Fiber::resume`](super::Fiber::resume) or
/// [`Yielder::transfer`](super::Yielder::transfer) did not run the fiber.
///
/// Nothing ran: the value that was to be sent is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FiberError {
    /// The fiber has returned or panicked (Ruby: "dead fiber called";
    /// Lua: "cannot resume dead coroutine").
    Dead,
    /// The fiber is running: it is the current fiber, or it resumed the fiber that
    /// is running now (Ruby: "attempt to resume the current fiber"; Lua: "cannot
    /// resume non-suspended coroutine").
    Running,
    /// [`Fiber::suspend`](super::Fiber::suspend) was called from outside the
    /// fiber, or from another fiber that it resumed.
    NotInside,
}

impl fmt::Display for FiberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FiberError::Dead => "cannot resume a dead fiber: it has returned or panicked",
            FiberError::Running => {
                "cannot resume a running fiber: it is the current fiber or is waiting on it"
            }
            FiberError::NotInside => {
                "a fiber can only be suspended from code running on its own stack"
            }
        })
    }
}

impl std::error::Error for FiberError {}

//! Why a fiber could not be resumed.

use std::fmt;

/// Why [`Fiber::resume`](super::Fiber::resume),
/// [`Yielder::transfer`](super::Yielder::transfer) or
/// [`Fiber::suspend`](super::Fiber::suspend) did not switch. The fiber module's
/// docs give the outcome of every operation in every state.
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
    /// `resume` of a fiber that is suspended in a transfer: only a transfer
    /// continues it (Ruby: "attempt to resume a transferring fiber").
    Transferring,
    /// `transfer` to a fiber that is suspended in `suspend`: only a `resume`
    /// continues it (Ruby: "attempt to transfer to a yielding fiber").
    Yielding,
    /// `transfer` from a fiber that is being dropped: it must unwind to its end
    /// before anything else runs on its behalf.
    Dropping,
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
            FiberError::Transferring => {
                "cannot resume a fiber suspended in a transfer: transfer to it instead"
            }
            FiberError::Yielding => {
                "cannot transfer to a fiber suspended by suspend: resume it instead"
            }
            FiberError::Dropping => "a fiber that is being dropped cannot transfer",
        })
    }
}

impl std::error::Error for FiberError {}

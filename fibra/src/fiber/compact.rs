//! What the scheduler asks of a fiber's stack: where it lies (whether the
//! caller runs on it, a stack trace, the overflow handler's label), and, for
//! a suspended fiber, its used part copied to the heap while the fiber is
//! parked (compaction).

use super::Fiber;
use super::context::State;
use std::ptr::NonNull;

impl<I, Y, R> Fiber<I, Y, R> {
    /// The addresses of the fiber's stack (the guard page excluded).
    pub(crate) fn stack_range(&self) -> std::ops::Range<usize> {
        let top = self.stack.top() as usize;
        top - self.stack.size()..top
    }

    /// Copies the used part of this fiber's stack (its saved stack pointer to
    /// its top) to the heap, if the fiber is suspended in `suspend`; `None`
    /// (and nothing done) in any other state. Adding the [`Compacted`] to a
    /// [`GiveBack`] gives the stack's pages back; dropping it puts the bytes
    /// back.
    ///
    /// # Safety
    ///
    /// Until the returned value is dropped, nothing may touch this fiber or
    /// read or write its stack: no method of it (its header is among the
    /// moved bytes), no switch into it, and no pointer into its stack that
    /// code outside the fiber holds. The fiber must outlive the returned
    /// value.
    ///
    /// [`Compacted`]: crate::stack::Compacted
    /// [`GiveBack`]: crate::stack::GiveBack
    pub(crate) unsafe fn compact(&self) -> Option<crate::stack::Compacted> {
        if self.header().state() != State::Yielded {
            return None;
        }
        let sp = NonNull::new(self.header().own())?;
        let top = NonNull::new(self.stack.top())?;
        // A fiber `Yielded` is suspended at `own`, every frame of it above
        // that (it suspended by calling the switch); `[own, top)` is its
        // stack's used part, page-aligned at the top.
        // SAFETY: the caller keeps everyone off it, and the fiber (and so the
        // stack's mapping) alive, until the `Compacted` is dropped.
        Some(unsafe { crate::stack::Compacted::new(sp, top) })
    }
}

//! Where a parked green thread waits: the return addresses on its stack.
//!
//! Another OS thread cannot read a parked thread's stack safely (its runtime
//! may resume it at any moment), and `std`'s backtrace walks only the calling
//! stack. So a runtime, asked for a dump, resumes each of its parked threads
//! for an instant on its own OS thread; the thread, back in its park site,
//! sees that it was resumed to be traced (not woken), calls [`capture`] on its
//! own stack and suspends again (`Scheduler::suspend_running`). The walk is
//! the ordinary unwinder's, through the DWARF CFI the compiler emits for every
//! function (no frame pointers needed), so it is as complete as a panic's
//! backtrace; it stops where the walk leaves the thread's own stack.

use std::ops::Range;

/// The most frames kept of one stack (the innermost ones).
const MAX_FRAMES: usize = 64;

/// The room the walk needs below the caller on the stack: it measured 3.4 KiB
/// in a debug build (the unwinder's context and frame state, the FDE lookup).
/// A thread parked with less room left is not traced, rather than overflow
/// its stack, and its backtrace stays empty.
pub(crate) const ROOM: usize = 8 * 1024;

/// Appends to `into` the instruction pointers of the calling stack, innermost
/// first, as long as the frames lie in `stack` (the thread's own stack); does
/// nothing if less than [`ROOM`] is left on it.
#[inline(never)]
pub(super) fn capture(stack: Range<usize>, into: &mut Vec<usize>) {
    let marker = 0u8;
    let here = std::hint::black_box(&marker) as *const u8 as usize;
    if !stack.contains(&here) || here - stack.start < ROOM {
        return;
    }
    backtrace::trace(|frame| {
        let sp = frame.sp() as usize;
        if !stack.contains(&sp) || into.len() >= MAX_FRAMES {
            return false;
        }
        into.push(frame.ip() as usize);
        true
    });
}

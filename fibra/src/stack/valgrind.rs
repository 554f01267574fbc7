//! Telling valgrind where fiber stacks are.
//!
//! Valgrind's memcheck takes a stack-pointer move of less than 2 MB for a frame
//! being pushed or popped, and marks the memory in between accordingly; fiber
//! stacks carved from one chunk lie closer than that, so every switch between them
//! would look like a huge frame and poison the other stacks. A registered stack
//! makes a move into it a stack switch. Outside valgrind each request costs a few
//! instructions, and it is made once per stack carved, never per switch.

use crate::arch::valgrind_request;

const RUNNING_ON_VALGRIND: usize = 0x1001;
const STACK_REGISTER: usize = 0x1501;
const STACK_DEREGISTER: usize = 0x1502;

/// Whether this process runs under valgrind.
pub(super) fn running() -> bool {
    // Miri cannot run the request's inline assembly, and is not valgrind.
    !cfg!(miri) && valgrind_request(0, &[RUNNING_ON_VALGRIND, 0, 0, 0, 0, 0]) != 0
}

/// Registers `[bottom, top)` as a stack; returns the id to deregister it with.
pub(super) fn register(bottom: usize, top: usize) -> usize {
    valgrind_request(0, &[STACK_REGISTER, bottom, top, 0, 0, 0])
}

pub(super) fn deregister(id: usize) {
    valgrind_request(0, &[STACK_DEREGISTER, id, 0, 0, 0, 0]);
}

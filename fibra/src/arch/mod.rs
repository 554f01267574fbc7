//! The context switch and the stack bootstrap: the only code that knows the CPU.
//!
//! Each architecture lives in a file of its own and offers the same three items:
//!
//! - `StackPointer`: the saved stack pointer of a suspended context. Everything
//!   else a suspended context needs (its resume address and the callee-saved
//!   registers that cannot be declared clobbered) is stored on its own stack,
//!   just below that pointer.
//! - `switch_call`, `switch_return`, `switch_jump`: save the running context and
//!   resume another one, carrying one pointer across (a pointer, not an
//!   integer, so that what it points to keeps its provenance: `fiber::message`). A fiber is entered
//!   with a call and comes back with a return, so the processor's return-address
//!   predictor follows the switches; a transfer is a jump. None makes a system call
//!   or touches the signal mask: that is the point of fibra (EXPERIMENTS.md, E2).
//! - `init_stack`: lay out a fresh stack so that the first switch to it calls an
//!   entry function, with call-frame information that lets an unwinder walk from the
//!   fiber out into whoever resumed it.
//! - `valgrind_request`: a valgrind client request, so that valgrind can be told
//!   where fiber stacks are (its magic instruction sequence is per CPU).
//!
//! Two files provide them: `x86_64.rs` (System V) and `aarch64.rs` (AAPCS64). To
//! port fibra to another CPU, add a file beside them that provides these items.

// The System V ABI of x86_64 is the same on Linux and macOS, and AAPCS64 differs
// between them only in x18 (reserved on Apple targets; `arch/aarch64.rs` never
// touches it). Neither file names a symbol in its assembly, so Apple's leading
// underscore on symbol names does not arise: the bootstrap is reached through a
// function pointer, and local labels are numeric.
#[cfg(all(target_arch = "x86_64", any(target_os = "linux", target_os = "macos")))]
mod x86_64;
#[cfg(all(target_arch = "x86_64", any(target_os = "linux", target_os = "macos")))]
pub(crate) use x86_64::{
    StackPointer, init_stack, switch_call, switch_jump, switch_return, valgrind_request,
};

#[cfg(all(target_arch = "aarch64", any(target_os = "linux", target_os = "macos")))]
mod aarch64;
#[cfg(all(target_arch = "aarch64", any(target_os = "linux", target_os = "macos")))]
pub(crate) use aarch64::{
    StackPointer, init_stack, switch_call, switch_jump, switch_return, valgrind_request,
};

#[cfg(not(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    any(target_os = "linux", target_os = "macos")
)))]
compile_error!(
    "fibra supports x86_64 and aarch64, on Linux and macOS: add an arch/<cpu>.rs beside \
     arch/x86_64.rs, and the OS's calls in stack/"
);

/// The entry function a fresh stack calls on its first switch: it receives the pointer
/// passed to that switch and the `data` pointer given to `init_stack`, and must never
/// return (it leaves by switching away for the last time).
pub(crate) type Entry = unsafe extern "C" fn(message: *mut u8, data: *mut u8) -> !;

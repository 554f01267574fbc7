//! x86_64, System V ABI (Linux).
//!
//! # What a switch saves
//!
//! The ABI makes rbx, rbp, r12–r15 and rsp callee-saved, plus the control bits of
//! MXCSR and the x87 control word. [`switch`] is inline assembly rather than a called
//! function: it declares r12–r15 and every caller-saved register clobbered, so the
//! compiler saves around the switch only the registers that hold a live value at that
//! point — often none. rbx and rbp cannot be declared clobbered (LLVM reserves them),
//! so the switch pushes them itself, together with the resume address.
//!
//! MXCSR and the x87 control word are *not* saved. Rust code always runs in the
//! default floating-point environment: the language offers no way to change the
//! rounding mode or exception masks, LLVM compiles every function assuming the
//! defaults, and assembly or foreign code that changes them must restore them before
//! Rust code runs again. So every context that can be switched from or to holds the
//! default control words, and restoring them would restore the value already there.
//! Saving them costs `stmxcsr`/`fnstcw` and the slow `ldmxcsr`/`fldcw` on every
//! switch — about 40 % more per switch on the machines fibra is measured on
//! (`fibra-bench e1`, the two floors).
//!
//! # Layout of a suspended context
//!
//! ```text
//! higher addresses
//!   rbp
//!   rbx
//!   resume address   <- StackPointer
//! ```
//!
//! The switch returns with `pop` + `jmp` rather than `ret`: a `ret` into another
//! stack always misses in the return-stack buffer, while the indirect jump is
//! predicted from its own history (EXPERIMENTS.md measured 1.4e8 against 3.4e8
//! switches/s for a called switch).

use super::Entry;
use core::arch::{asm, naked_asm};

/// The saved stack pointer of a suspended context (see the module docs for what
/// lies at and above it).
pub(crate) type StackPointer = *mut u8;

/// Suspends the running context, saving its stack pointer in `*save`, and resumes
/// the context suspended at `to`, handing it `message`. Returns the message passed
/// by whichever context later switches back to this one.
///
/// # Safety
///
/// `to` must be a context suspended by `switch` or prepared by [`init_stack`], and
/// not resumed since; `save` must be valid for a write and stay so until the saved
/// context is resumed. The caller must make sure that whatever the other context
/// does with `message` is sound.
#[inline(always)]
pub(crate) unsafe fn switch(save: *mut StackPointer, to: StackPointer, message: usize) -> usize {
    let received: usize;
    // SAFETY: the caller guarantees that `to` is a suspended context and `save` is
    // writable. The block pushes rbp, rbx and the resume address (label 2) on the
    // current stack, stores the stack pointer in `*save` and jumps into the other
    // context; when a later switch comes back to label 2, the stack pointer is the
    // one stored here, so the pops restore rbx and rbp and leave rsp exactly as it
    // was on entry. Every other register the ABI makes callee-saved, and every
    // caller-saved one, is declared clobbered, so the compiler keeps nothing in
    // them across the block. rax is a non-late output so that neither input is
    // given rax, which the block uses as scratch before reading them.
    unsafe {
        asm!(
            "push rbp",
            "push rbx",
            "lea rax, [rip + 2f]",
            "push rax",
            "mov [{save}], rsp",
            "mov rsp, {to}",
            "pop rax",
            "jmp rax",
            "2:",
            "pop rbx",
            "pop rbp",
            save = in(reg) save,
            to = in(reg) to,
            inout("rdi") message => received,
            out("rax") _,
            out("r12") _,
            out("r13") _,
            out("r14") _,
            out("r15") _,
            clobber_abi("C"),
        );
    }
    received
}

/// Prepares the stack whose highest usable address is `top` so that the first
/// [`switch`] to the returned stack pointer calls `entry(message, data)` on it.
///
/// `data` must point to a word that holds, while the fiber runs, the stack pointer
/// of the context that resumed it: the unwind information of the bootstrap frame
/// reads it there to continue a backtrace into the resumer.
///
/// # Safety
///
/// `top` must be 16-byte aligned, with at least 32 writable bytes below it that
/// nothing else uses.
pub(crate) unsafe fn init_stack(top: *mut u8, entry: Entry, data: *mut u8) -> StackPointer {
    debug_assert_eq!(top as usize % 16, 0);
    // The frame [fiber_start, entry, data] sits just below `top`, starting 8 bytes
    // off a 16-byte boundary: after the switch pops `fiber_start`, rsp is 16-byte
    // aligned, which is what the ABI wants at the `call` in `fiber_start`.
    let sp = top.wrapping_sub(24).cast::<usize>();
    // SAFETY: the caller guarantees 32 writable bytes below `top`; the three words
    // written are in [top - 24, top).
    unsafe {
        sp.write(fiber_start as *const () as usize);
        sp.add(1).write(entry as usize);
        sp.add(2).write(data as usize);
    }
    sp.cast()
}

/// The bottom frame of every fiber: the first switch into a fresh stack lands here
/// with rsp pointing at `[entry, data]` and the switch's message in rdi.
///
/// Its call-frame information says where the caller's frame is: the canonical frame
/// address is the resumer's saved stack pointer (read through `data`, see
/// [`init_stack`]) plus the 24 bytes [`switch`] pushed, and the return address, rbx
/// and rbp are the three words that [`switch`] pushed there. A debugger or a
/// backtrace therefore walks from a fiber's frames straight into the `resume` (or
/// `transfer`) call that is running it.
#[unsafe(naked)]
unsafe extern "C" fn fiber_start() -> ! {
    naked_asm!(
        ".cfi_startproc",
        // DW_CFA_def_cfa_expression, 6 bytes: DW_OP_breg7 (rsp) +8 (the address of
        // `data`), DW_OP_deref (data), DW_OP_deref (the resumer's stack pointer),
        // DW_OP_plus_uconst 24.
        ".cfi_escape 0x0f, 0x06, 0x77, 0x08, 0x06, 0x06, 0x23, 0x18",
        ".cfi_offset rip, -24",
        ".cfi_offset rbx, -16",
        ".cfi_offset rbp, -8",
        "mov rsi, [rsp + 8]",
        "call [rsp]",
        // The entry never returns; the trap keeps the return address inside this
        // function so that unwinders find this frame's information.
        "ud2",
        ".cfi_endproc",
    )
}

/// Makes a valgrind client request (`request` and up to five arguments in `args`)
/// and returns valgrind's answer, or `default` when the program does not run under
/// valgrind — then the sequence is a few rotates of rdi by 128 bits in all and an
/// exchange of rbx with itself, which change nothing.
pub(crate) fn valgrind_request(default: usize, args: &[usize; 6]) -> usize {
    let answer: usize;
    // SAFETY: the sequence leaves every register as it found it (rdi rotates by a
    // full 2 × 64 bits, `xchg rbx, rbx` swaps rbx with itself) except rdx, which
    // is declared; valgrind, when present, reads `args` (valid for the call) and
    // writes only rdx.
    unsafe {
        asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") default => answer,
            in("rdi") 0usize,
            options(nostack, preserves_flags),
        );
    }
    answer
}

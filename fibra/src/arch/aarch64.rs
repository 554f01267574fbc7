//! aarch64, AAPCS64 (Linux, and Apple's variant of it on macOS).
//!
//! # What a switch saves
//!
//! The ABI makes x19–x28, the frame pointer x29, the link register x30, sp and the
//! low 64 bits of v8–v15 (d8–d15) callee-saved, plus the control bits of FPCR.
//! As on x86_64, each switch is inline assembly rather than a called function, so
//! that the compiler saves around it only what is live:
//!
//! - x20–x28 are declared clobbered by name, and `clobber_abi("C")` declares every
//!   caller-saved register plus x30 and *all* of v0–v31 clobbered (Rust cannot say
//!   "only the high halves of v8–v15"). So d8–d15 are saved by the compiler, and
//!   only where a floating-point value is live across the switch — the fiber test
//!   `callee_saved_fp_registers_survive_switches` keeps sixteen of them live.
//! - x19 and x29 cannot be declared clobbered (LLVM reserves x19 as its base
//!   pointer and x29 as the frame pointer), so the switch stores them itself,
//!   together with the resume address.
//! - x30 needs no slot of its own: every switch is a branch, and the resume address
//!   *is* the switcher's x30 (see below).
//! - x18 is the platform register. On Apple targets it is reserved (the kernel may
//!   change it at any moment, and nothing may use it): the switch never touches it,
//!   and `clobber_abi("C")` leaves it out there. On Linux it is an ordinary
//!   caller-saved register, and `clobber_abi("C")` declares it clobbered.
//!
//! FPCR is *not* saved, for the reason x86_64 does not save MXCSR: Rust code always
//! runs with the default rounding mode and exception traps, so every context that
//! can be switched holds the same FPCR, and `msr fpcr` is a serialising write.
//!
//! # Layout of a suspended context
//!
//! sp must stay 16-byte aligned whenever it is used to address memory, so the
//! three words take a 32-byte record:
//!
//! ```text
//! higher addresses
//!   x29
//!   x19
//!   (unused)
//!   resume address   <- StackPointer
//! ```
//!
//! # The three switches
//!
//! As on x86_64, a fiber is entered the way a function is called and leaves the way
//! it returns, so that the return-address predictor follows the switches:
//! [`switch_call`] stores x19 and x29 in a record and does `blr` through the
//! resume address of the target, which leaves its own return address in x30 and
//! pushes it on the predictor's stack; [`switch_return`] loads the caller's x30
//! from the caller's record and does `ret`, which pops it. [`switch_jump`] (a
//! transfer between fibers) puts its own resume address in x30 and does `br`, so
//! the target returns to the caller that entered the chain.
//!
//! Every resume point runs the same five instructions (`resume_point!`): the
//! switcher branched to it on its own stack, with its resume address in x30, the
//! place to save its stack pointer in x1 and this context's stack pointer in x2.
//! The resume point stores x30 into the switcher's record (so a `blr`'s return
//! address lands where `switch_return` will load it), stores the switcher's sp at
//! `[x1]`, restores x19 and x29 from its own record and drops the record. A
//! switcher therefore writes two words of its record and the resumed side the
//! third, which spares `switch_call` an `adr` and a store.
//!
//! The carried message travels in x0 (the first argument register, which is where
//! the bootstrap's entry function wants it), and the stack pointer that a
//! returning context was suspended at comes back in x1.

use super::Entry;
use core::arch::{asm, naked_asm};

/// The saved stack pointer of a suspended context (see the module docs for what
/// lies at and above it).
pub(crate) type StackPointer = *mut u8;

/// `asm!` with what every switch declares clobbered besides its own operands:
/// the callee-saved registers LLVM lets it name (x20–x28) and every caller-saved
/// one (with x30 and v0–v31), so that the compiler keeps nothing live in them
/// across the switch.
macro_rules! switch_asm {
    ($($operands:tt)*) => {
        asm!(
            $($operands)*
            out("x20") _,
            out("x21") _,
            out("x22") _,
            out("x23") _,
            out("x24") _,
            out("x25") _,
            out("x26") _,
            out("x27") _,
            out("x28") _,
            clobber_abi("C"),
        )
    };
}

/// The code every resume point runs: the switcher left its own stack pointer in
/// sp, its resume address in x30, where to save its stack pointer in x1 and this
/// context's saved stack pointer in x2. Complete the switcher's record, save its
/// stack pointer, restore x19 and x29, drop this context's record.
macro_rules! resume_point {
    () => {
        concat!(
            "2:\n",
            "str x30, [sp]\n",
            "mov x9, sp\n",
            "str x9, [x1]\n",
            "ldp x19, x29, [x2, #16]\n",
            "add sp, x2, #32\n"
        )
    };
}

/// Runs the context suspended at `to` as a call: `*link` receives this context's
/// stack pointer, and the context comes back here with [`switch_return`] (or
/// passes that duty on with [`switch_jump`]). Returns the message it comes back
/// with, and the stack pointer at which the context that came back is now
/// suspended (the caller may keep it to resume that context without reading
/// memory that context just wrote).
///
/// # Safety
///
/// `to` must be a context suspended by a switch of this module or prepared by
/// [`init_stack`], not resumed since; `link` must be writable and read back by
/// the code that eventually returns here. The caller must make sure that whatever
/// the other side does with `message` is sound.
#[inline(always)]
pub(crate) unsafe fn switch_call(
    link: *mut StackPointer,
    to: StackPointer,
    message: *mut u8,
) -> (*mut u8, StackPointer) {
    let received: *mut u8;
    let suspended: StackPointer;
    // The record below sp gets x19 and x29 here and the return address of the
    // `blr` from the resume point it branches to, which also stores sp at `*link`:
    // the layout `switch_return` and the unwind information of `fiber_start`
    // expect. The other side comes back with a `ret` on this stack, sp at the
    // record, and x1 holding its own stack pointer; the record is restored and
    // dropped, leaving sp as it was. Everything else is declared clobbered.
    // SAFETY: the caller guarantees that `to` is a suspended context, whose resume
    // address is the word at `to`; the block leaves the stack as it found it.
    unsafe {
        switch_asm!(
            "sub sp, sp, #32",
            "stp x19, x29, [sp, #16]",
            "ldr x9, [x2]",
            "blr x9",
            "ldp x19, x29, [sp, #16]",
            "add sp, sp, #32",
            inout("x1") link => suspended,
            inout("x2") to => _,
            inout("x0") message => received,
            out("x9") _,
        );
    }
    (received, suspended)
}

/// Suspends the running context, saving its stack pointer in `*save` (and
/// handing it to the caller in x1), and returns to the context that
/// [`switch_call`]ed it, whose stack pointer is `link`.
/// Returns the message passed by whichever context later resumes this one.
///
/// # Safety
///
/// `link` must be the stack pointer a `switch_call` saved (directly, or copied by
/// the caller when control was passed on with [`switch_jump`]), and that call must
/// not have returned yet; `save` must stay writable until this context resumes.
#[inline(always)]
pub(crate) unsafe fn switch_return(
    save: *mut StackPointer,
    link: StackPointer,
    message: *mut u8,
) -> *mut u8 {
    let received: *mut u8;
    // Writes a whole record (x19, x29 and the resume address, label 2) so that
    // the layout at `*save` is the suspended-context layout; it does not branch to
    // a resume point, so it writes the resume address itself. `ret` with the x30
    // that the pending `switch_call`'s resume point stored in that call's record
    // lands just after its `blr`, which then restores its own x19 and x29.
    // Resuming here goes through the resume point. x1, x2 and x9 are early
    // outputs, so neither `save` nor `link` is given one of them; `link` may be
    // x30, which is why sp is moved before x30 is loaded.
    // SAFETY: the caller guarantees `link` is a pending `switch_call`'s context.
    unsafe {
        switch_asm!(
            "sub sp, sp, #32",
            "stp x19, x29, [sp, #16]",
            "adr x9, 2f",
            "str x9, [sp]",
            "mov x1, sp",
            "str x1, [{save}]",
            "mov sp, {link}",
            "ldr x30, [sp]",
            "ret",
            resume_point!(),
            save = in(reg) save,
            link = in(reg) link,
            inout("x0") message => received,
            out("x1") _,
            out("x2") _,
            out("x9") _,
        );
    }
    received
}

/// Suspends the running context, saving its stack pointer in `*save`, and runs
/// the context suspended at `to` in its place: a jump, not a call, so `to`
/// returns to whatever this context would have returned to (the caller copies
/// the link). Returns the message passed by whichever context later resumes this
/// one.
///
/// # Safety
///
/// As for [`switch_call`], and `save` must stay writable until this context
/// resumes.
#[inline(always)]
pub(crate) unsafe fn switch_jump(
    save: *mut StackPointer,
    to: StackPointer,
    message: *mut u8,
) -> *mut u8 {
    let received: *mut u8;
    // Stores x19 and x29 and branches with the resume address in x30, so that
    // the resume point of `to` completes this context's record and stores its
    // stack pointer at `save` (x1) before taking `to` (x2) as its stack.
    // SAFETY: the caller guarantees `to` is a suspended context, not resumed since.
    unsafe {
        switch_asm!(
            "sub sp, sp, #32",
            "stp x19, x29, [sp, #16]",
            "ldr x9, [x2]",
            "adr x30, 2f",
            "br x9",
            resume_point!(),
            inout("x1") save => _,
            inout("x2") to => _,
            inout("x0") message => received,
            out("x9") _,
        );
    }
    received
}

/// Prepares the stack whose highest usable address is `top` so that the first
/// switch to the returned stack pointer calls `entry(message, data)` on it.
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
    // The record [fiber_start, entry, data, 0] fills the 32 bytes below `top`, in
    // the suspended-context layout (the resume address first). `fiber_start`
    // keeps the upper half, [data, 0], as the bottom of the fiber's stack: sp
    // stays 16-byte aligned, and `data` stays where its unwind information
    // reads it.
    let sp = top.wrapping_sub(32).cast::<usize>();
    // SAFETY: the caller guarantees 32 writable bytes below `top`; the four words
    // written are in [top - 32, top).
    unsafe {
        sp.write(fiber_start as *const () as usize);
        sp.add(1).write(entry as usize);
        sp.add(2).write(data as usize);
        sp.add(3).write(0);
    }
    sp.cast()
}

/// The bottom frame of every fiber: the first switch into a fresh stack branches
/// here like to any resume point (the switcher's resume address in x30, where to
/// save its stack pointer in x1, the fresh record in x2, the message in x0).
///
/// It completes the switcher's record and saves its stack pointer, as a resume
/// point does, then calls `entry(message, data)` with sp at `data`. It clears x29
/// first, so that a walker that follows frame pointers stops at the fiber's
/// bottom instead of following a stale pointer into a stack that has moved on.
///
/// Its call-frame information says where the caller's frame is: the canonical
/// frame address is the resumer's saved stack pointer (read through `data`, see
/// [`init_stack`]) plus its 32-byte record, and the return address (x30), x19 and
/// x29 are the words of that record. A debugger or a backtrace therefore walks
/// from a fiber's frames straight into the `resume` (or `transfer`) call that is
/// running it. On Apple targets the assembler cannot express this in compact
/// unwind information and keeps it as DWARF, which Apple's unwinder reads too.
#[unsafe(naked)]
unsafe extern "C" fn fiber_start() -> ! {
    naked_asm!(
        ".cfi_startproc",
        // DW_CFA_def_cfa_expression, 6 bytes: DW_OP_breg31 (sp) +0 (the address of
        // `data`), DW_OP_deref (data), DW_OP_deref (the resumer's stack pointer),
        // DW_OP_plus_uconst 32.
        ".cfi_escape 0x0f, 0x06, 0x8f, 0x00, 0x06, 0x06, 0x23, 0x20",
        ".cfi_offset x30, -32",
        ".cfi_offset x19, -16",
        ".cfi_offset x29, -8",
        "str x30, [sp]",
        "mov x9, sp",
        "str x9, [x1]",
        "ldp x9, x1, [x2, #8]",
        "add sp, x2, #16",
        "mov x29, xzr",
        "blr x9",
        // The entry never returns; the trap keeps the return address inside this
        // function so that unwinders find this frame's information.
        "brk #0x1",
        ".cfi_endproc",
    )
}

/// Makes a valgrind client request (`request` and up to five arguments in `args`)
/// and returns valgrind's answer, or `default` when the program does not run under
/// valgrind — then the sequence is four rotates of x12 by 128 bits in all and an
/// `orr` of x10 with itself, which change nothing.
///
/// This is valgrind's aarch64 Linux sequence (valgrind.h): the address of the
/// arguments in x4, the default in and the answer out of x3. Valgrind does not run
/// on macOS for Apple Silicon; there the sequence is the same no-op, and the
/// answer is always `default`.
pub(crate) fn valgrind_request(default: usize, args: &[usize; 6]) -> usize {
    let answer: usize;
    // The sequence leaves every register as it found it (x12 rotates by a full
    // 2 × 64 bits, `orr x10, x10, x10` writes x10 with its own value) except x3,
    // which is declared. Neither instruction writes the flags, but valgrind.h
    // declares "cc", so the block does not claim `preserves_flags` either.
    // SAFETY: valgrind, when present, reads `args` (valid for the call) and
    // writes only x3.
    unsafe {
        asm!(
            "ror x12, x12, #3",
            "ror x12, x12, #13",
            "ror x12, x12, #51",
            "ror x12, x12, #61",
            "orr x10, x10, x10",
            in("x4") args.as_ptr(),
            inout("x3") default => answer,
            options(nostack),
        );
    }
    answer
}

//! x86_64, System V ABI (Linux).
//!
//! # What a switch saves
//!
//! The ABI makes rbx, rbp, r12–r15 and rsp callee-saved, plus the control bits of
//! MXCSR and the x87 control word. Each switch is inline assembly rather than a
//! called function: it declares r12–r15 and every caller-saved register clobbered, so the
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
//! # The three switches
//!
//! A fiber is entered the way a function is called, and leaves the way it
//! returns, so that the processor predicts both: [`switch_call`] pushes rbp and
//! rbx and does `call [to]` — an indirect call through the resume address at the
//! top of the fiber's stack, which pushes the caller's return address in the
//! layout above; [`switch_return`] saves the fiber's state and `ret`s on the
//! caller's stack, which the return-stack buffer predicts because the `call`
//! pushed it. [`switch_jump`] (a transfer between fibers) jumps through the
//! target's resume address, so the target returns to the caller that entered the
//! chain. Every resume point runs the same four instructions (`resume_point!`): it
//! stores the switcher's stack pointer where rsi says, takes its own stack from
//! rdx, and pops rbx and rbp.
//!
//! On the machines fibra is measured on, a switch that ended in `pop` + `jmp`
//! everywhere cost 3.2 ns; entering with `call` and leaving with `ret` brought it
//! to 1.9 ns, and handing the suspended stack pointer back in a register (so that
//! `Fiber` keeps it and reaches the fiber's stack with one load instead of two)
//! to 1.1 ns (`fibra-bench e1` measures it against corosensei and the floors).

use super::Entry;
use core::arch::{asm, naked_asm};

/// The saved stack pointer of a suspended context (see the module docs for what
/// lies at and above it).
pub(crate) type StackPointer = *mut u8;

/// `asm!` with what every switch declares clobbered besides its own operands:
/// the callee-saved registers LLVM lets it name (r12–r15) and every caller-saved
/// one, so that the compiler keeps nothing live in them across the switch.
macro_rules! switch_asm {
    ($($operands:tt)*) => {
        asm!(
            $($operands)*
            out("r12") _,
            out("r13") _,
            out("r14") _,
            out("r15") _,
            clobber_abi("C"),
        )
    };
}

/// The code every resume point runs: the switcher left its own stack pointer in
/// rsp, where to save it in rsi, and this context's saved stack pointer in rdx.
/// Save the switcher's, step over the resume address, restore rbx and rbp.
macro_rules! resume_point {
    () => {
        concat!(
            "2:\n",
            "mov [rsi], rsp\n",
            "lea rsp, [rdx + 8]\n",
            "pop rbx\n",
            "pop rbp\n"
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
    // The call pushes the return address below rbx and rbp, which is the layout
    // `switch_return` and the unwind information of `fiber_start` expect at
    // `*link`; the resume point stores rsp there. When the other side returns (a
    // `ret` on this stack), rsp is back at the return address's slot + 8, so the
    // pops restore rbx and rbp and leave rsp as it was, and rsi holds the
    // returning side's stack pointer. Everything else is declared clobbered.
    // SAFETY: the caller guarantees that `to` is a suspended context, whose resume
    // address is the word at `to`; the block leaves the stack as it found it.
    unsafe {
        switch_asm!(
            "push rbp",
            "push rbx",
            "call [rdx]",
            "pop rbx",
            "pop rbp",
            inout("rsi") link => suspended,
            inout("rdx") to => _,
            inout("rdi") message => received,
        );
    }
    (received, suspended)
}

/// Suspends the running context, saving its stack pointer in `*save` (and
/// handing it to the caller in rsi), and returns to the context that
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
    // Pushes rbp, rbx and the resume address (label 2) so that the layout at
    // `*save` is the suspended-context layout; `ret` on the linked stack pops the
    // return address of the pending `switch_call`, which then restores its own
    // rbx and rbp. Resuming here goes through the resume point.
    // SAFETY: the caller guarantees `link` is a pending `switch_call`'s context.
    unsafe {
        switch_asm!(
            "push rbp",
            "push rbx",
            "lea rax, [rip + 2f]",
            "push rax",
            "mov [{save}], rsp",
            "mov rsi, rsp",
            "mov rsp, {link}",
            "ret",
            resume_point!(),
            save = in(reg) save,
            link = in(reg) link,
            inout("rdi") message => received,
            out("rax") _,
            out("rsi") _,
            out("rdx") _,
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
    // Pushes rbp, rbx and the resume address so that this context is suspended
    // in the usual layout; the resume point of `to` stores this stack pointer at
    // `save` (rsi) and takes `to` (rdx) as its stack.
    // SAFETY: the caller guarantees `to` is a suspended context, not resumed since.
    unsafe {
        switch_asm!(
            "push rbp",
            "push rbx",
            "lea rax, [rip + 2f]",
            "push rax",
            "jmp [rdx]",
            resume_point!(),
            inout("rsi") save => _,
            inout("rdx") to => _,
            inout("rdi") message => received,
            out("rax") _,
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
        "mov [rsi], rsp",
        "lea rsp, [rdx + 8]",
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
    // The sequence leaves every register as it found it (rdi rotates by a full
    // 2 × 64 bits, `xchg rbx, rbx` swaps rbx with itself) except rdx, which is
    // declared, and the flags: `rol` writes CF and leaves OF undefined, so the
    // block does not claim `preserves_flags` (valgrind.h declares "cc" too).
    // SAFETY: valgrind, when present, reads `args` (valid for the call) and
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
            options(nostack),
        );
    }
    answer
}

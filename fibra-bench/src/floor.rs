//! The physical floor for E1: the cheapest *called* context switch there is, in
//! bare assembly, to tell how close a runtime's switch comes to what the CPU
//! allows.
//!
//! The switch is a naked function that pushes the six callee-saved general
//! registers (rbx, rbp, r12–r15), stores rsp, loads the other context's rsp, pops
//! its registers and returns to it with `pop` + `jmp` rather than `ret`: a `ret`
//! into another stack always misses in the return-stack buffer (EXPERIMENTS.md
//! measured 1.4e8 against 3.4e8 switches/s), while the indirect jump is predicted
//! from its own history.
//!
//! Two floors, because runtimes differ in what they save: [`Floor::Gpr`] saves
//! the registers above only; [`Floor::GprControl`] also saves and restores MXCSR
//! and the x87 control word, as boost.context does. A runtime should be compared
//! with the floor that saves the same state.
//!
//! A suspended context's stack, from its saved stack pointer upwards:
//! `[control words (GprControl only)] r15 r14 r13 r12 rbx rbp return-address`.

use std::arch::naked_asm;
use std::time::{Duration, Instant};

/// The saved stack pointer of a suspended context.
type Sp = *mut u8;

/// Which state the switch saves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Floor {
    /// rbx, rbp, r12–r15 and rsp.
    Gpr,
    /// Those, plus MXCSR and the x87 control word.
    GprControl,
}

impl Floor {
    /// E1 resume/yield: main switches to the first context and back, then to the
    /// second and back, `n` times (4·n switches). Returns the time taken.
    pub fn resume_yield(self, n: u64) -> Duration {
        match self {
            Floor::Gpr => resume_yield::<Gpr>(n),
            Floor::GprControl => resume_yield::<GprControl>(n),
        }
    }

    /// E1 transfer: two contexts switch straight to each other, `n` switches in
    /// all, counting main's switch into the first and the last one back to main.
    /// Returns the time taken.
    pub fn transfer(self, n: u64) -> Duration {
        match self {
            Floor::Gpr => transfer::<Gpr>(n),
            Floor::GprControl => transfer::<GprControl>(n),
        }
    }
}

/// One kind of switch: the naked function and the frame it expects.
trait Switch {
    /// Whether the frame holds the MXCSR/x87 control-word slot.
    const CONTROL_WORDS: bool;

    /// Saves the running context's stack pointer in `*save` and resumes the
    /// context suspended at `to`; returns when some context switches back.
    ///
    /// # Safety
    ///
    /// `to` must be a context suspended by this switch or prepared by [`init`] for
    /// it, and not resumed since; `save` must be valid for writes.
    unsafe fn switch(save: *mut Sp, to: Sp);
}

struct Gpr;
struct GprControl;

impl Switch for Gpr {
    const CONTROL_WORDS: bool = false;

    #[inline(always)]
    unsafe fn switch(save: *mut Sp, to: Sp) {
        // SAFETY: forwarded from this function's own contract.
        unsafe { switch_gpr(save, to) }
    }
}

impl Switch for GprControl {
    const CONTROL_WORDS: bool = true;

    #[inline(always)]
    unsafe fn switch(save: *mut Sp, to: Sp) {
        // SAFETY: forwarded from this function's own contract.
        unsafe { switch_gpr_control(save, to) }
    }
}

/// The switch that saves the callee-saved general registers only. rcx is
/// caller-saved, so it is free to carry the return address to the `jmp`.
#[unsafe(naked)]
unsafe extern "C" fn switch_gpr(save: *mut Sp, to: Sp) {
    naked_asm!(
        "push rbp",
        "push rbx",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "mov [rdi], rsp",
        "mov rsp, rsi",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbx",
        "pop rbp",
        "pop rcx",
        "jmp rcx",
    )
}

/// The switch that also saves MXCSR (at `[rsp]`) and the x87 control word (at
/// `[rsp + 4]`) in one 8-byte slot below the registers.
#[unsafe(naked)]
unsafe extern "C" fn switch_gpr_control(save: *mut Sp, to: Sp) {
    naked_asm!(
        "push rbp",
        "push rbx",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "sub rsp, 8",
        "stmxcsr [rsp]",
        "fnstcw [rsp + 4]",
        "mov [rdi], rsp",
        "mov rsp, rsi",
        "ldmxcsr [rsp]",
        "fldcw [rsp + 4]",
        "add rsp, 8",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbx",
        "pop rbp",
        "pop rcx",
        "jmp rcx",
    )
}

/// Where a fresh context starts: the first switch into it "returns" here with
/// rsp 16-byte aligned, the entry function in r13 and its argument in r12. The
/// `call` leaves rsp as the ABI wants at a function's entry; the entry never
/// returns.
#[unsafe(naked)]
unsafe extern "C" fn start() -> ! {
    naked_asm!("mov rdi, r12", "call r13", "ud2")
}

/// The body of a context: never returns, since nothing is below it to return to.
type Entry = extern "C" fn(*mut Shared) -> !;

/// The state the contexts of one run share, reached through a raw pointer by all
/// of them (each one runs only while the others are suspended).
struct Shared {
    main: Sp,
    contexts: [Sp; 2],
    /// Transfer only: switches made so far, and how many to make.
    count: u64,
    n: u64,
}

/// The running context's MXCSR (low half) and x87 control word (high half), as
/// the slot below the registers holds them. A new context starts with its
/// creator's, as with boost.context: MXCSR also holds sticky exception flags, and
/// a `ldmxcsr` that changes the register's value is many times slower than one
/// that does not, so contexts that started from fixed defaults would make the
/// floor measure that instead of a switch.
fn current_control() -> usize {
    let mut slot = 0usize;
    // SAFETY: the two stores write 4 and 2 bytes into `slot`, which is 8 bytes
    // long; nothing else is touched.
    unsafe {
        std::arch::asm!(
            "stmxcsr [{0}]",
            "fnstcw [{0} + 4]",
            in(reg) &raw mut slot,
            options(nostack, preserves_flags),
        );
    }
    slot
}

/// A context's stack: plain heap memory, 16-byte aligned.
struct Stack(Box<[Chunk]>);

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Chunk([u8; 16]);

impl Stack {
    const BYTES: usize = 64 * 1024;

    fn new() -> Self {
        Stack(vec![Chunk([0; 16]); Self::BYTES / 16].into_boxed_slice())
    }

    /// One past the highest byte: 16-byte aligned, since every chunk is.
    fn top(&mut self) -> *mut u8 {
        self.0.as_mut_ptr_range().end.cast()
    }
}

/// Prepares `stack` so that the first `S::switch` to the returned stack pointer
/// calls `entry(shared)` on it.
fn init<S: Switch>(stack: &mut Stack, entry: Entry, shared: *mut Shared) -> Sp {
    let mut frame = vec![
        0,
        0,
        entry as usize,
        shared as usize,
        0,
        0,
        start as *const () as usize,
    ];
    if S::CONTROL_WORDS {
        frame.insert(0, current_control());
    }
    // The return address sits in the highest word, so after the switch pops it
    // rsp is `top`, which is 16-byte aligned, as `start` needs.
    let sp = stack.top().wrapping_sub(frame.len() * 8).cast::<usize>();
    // SAFETY: the frame (at most 8 words) lies inside the 64 KiB stack, just below
    // its top, and `sp` is 8-byte aligned because `top` is 16-byte aligned.
    unsafe { sp.copy_from_nonoverlapping(frame.as_ptr(), frame.len()) };
    sp.cast()
}

/// The contexts of the resume/yield variant: switch back to main at once, forever.
extern "C" fn yielder<S: Switch, const I: usize>(shared: *mut Shared) -> ! {
    loop {
        // SAFETY: `shared` outlives every switch into this context (it is freed
        // only after the timed loop, when no context will run again); main is
        // suspended, since main is the one that switched here.
        unsafe { S::switch(&raw mut (*shared).contexts[I], (*shared).main) }
    }
}

/// The contexts of the transfer variant: count the next switch and make it, to
/// the other context, or to main if it is the last.
extern "C" fn passer<S: Switch, const I: usize>(shared: *mut Shared) -> ! {
    loop {
        // SAFETY: as in `yielder`; only the running context touches `shared`, and
        // the target (the other context or main) is suspended, since main waits
        // for the last switch and the other context switched here.
        unsafe {
            (*shared).count += 1;
            let to = if (*shared).count == (*shared).n {
                (*shared).main
            } else {
                (*shared).contexts[1 - I]
            };
            S::switch(&raw mut (*shared).contexts[I], to);
        }
    }
}

/// Runs `timed` on two fresh contexts with the entries `entries`, then frees
/// them. The contexts are left suspended for good: their stacks hold nothing that
/// needs dropping.
fn with_contexts<S: Switch>(
    entries: [Entry; 2],
    n: u64,
    timed: impl FnOnce(*mut Shared) -> Duration,
) -> Duration {
    let mut stacks = [Stack::new(), Stack::new()];
    let shared = Box::into_raw(Box::new(Shared {
        main: std::ptr::null_mut(),
        contexts: [std::ptr::null_mut(); 2],
        count: 0,
        n,
    }));
    for (i, (stack, entry)) in stacks.iter_mut().zip(entries).enumerate() {
        let sp = init::<S>(stack, entry, shared);
        // SAFETY: `shared` came from `Box::into_raw` above and no context runs yet.
        unsafe { (*shared).contexts[i] = sp };
    }
    let elapsed = timed(shared);
    // SAFETY: every context is suspended and none is resumed again, so nothing
    // uses `shared` (or the stacks, dropped after it) any more.
    drop(unsafe { Box::from_raw(shared) });
    elapsed
}

fn resume_yield<S: Switch>(n: u64) -> Duration {
    with_contexts::<S>([yielder::<S, 0>, yielder::<S, 1>], n, |shared| {
        let start = Instant::now();
        for _ in 0..n {
            // SAFETY: both contexts were prepared by `init` for `S` and each one
            // suspends itself back to main before main switches again; `shared`
            // is live (see `with_contexts`).
            unsafe {
                S::switch(&raw mut (*shared).main, (*shared).contexts[0]);
                S::switch(&raw mut (*shared).main, (*shared).contexts[1]);
            }
        }
        start.elapsed()
    })
}

fn transfer<S: Switch>(n: u64) -> Duration {
    assert!(
        n >= 2,
        "transfer counts the switches into and out of the pair"
    );
    with_contexts::<S>([passer::<S, 0>, passer::<S, 1>], n, |shared| {
        let start = Instant::now();
        // SAFETY: the first context was prepared by `init` for `S`; the contexts
        // pass control between themselves and switch back to main at the n-th
        // switch; `shared` is live (see `with_contexts`).
        let count = unsafe {
            (*shared).count = 1;
            S::switch(&raw mut (*shared).main, (*shared).contexts[0]);
            (*shared).count
        };
        let elapsed = start.elapsed();
        assert_eq!(count, n);
        elapsed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_floors_run_both_variants() {
        for floor in [Floor::Gpr, Floor::GprControl] {
            floor.resume_yield(1000);
            floor.transfer(1000);
            floor.transfer(2);
        }
    }
}

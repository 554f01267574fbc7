//! Fibers: stackful coroutines on the current OS thread.
//!
//! A [`Fiber<I, Y, R>`] runs a closure on a stack of its own. [`Fiber::resume`]
//! sends it a value of type `I` and runs it until it suspends with a value of type
//! `Y` ([`Yielder::suspend`], Ruby's `Fiber.yield`) or returns one of type `R`;
//! [`Step`] tells the two apart. Inside the fiber, `suspend` returns the value of
//! the next `resume`. The first `resume`'s value is the closure's second argument.
//!
//! ```
//! use fibra::{Fiber, Step};
//!
//! // Adds up what it is sent, reporting the running total, until it is sent 0.
//! let adder = Fiber::new(|yielder, mut n: u32| {
//!     let mut total = 0;
//!     while n != 0 {
//!         total += n;
//!         n = yielder.suspend(total);
//!     }
//!     format!("total {total}")
//! });
//! assert_eq!(adder.resume(2).unwrap(), Step::Yield(2));
//! assert_eq!(adder.resume(3).unwrap(), Step::Yield(5));
//! assert_eq!(adder.resume(0).unwrap(), Step::Return("total 5".to_string()));
//! assert!(!adder.is_alive());
//! assert!(adder.resume(1).is_err()); // dead: an error, never undefined behaviour
//! ```
//!
//! # Symmetric transfer
//!
//! [`Yielder::transfer`] hands control from the running fiber straight to another
//! one, in one switch, without going back through the resumer (Ruby's
//! `Fiber#transfer`). The fiber it goes to inherits the resumer: when any fiber of
//! the chain suspends or returns, the `resume` call that started the chain
//! returns that [`Step`]. Fibers that transfer to one another share their three
//! types.
//!
//! ```
//! use fibra::{Fiber, Step};
//! use std::rc::Rc;
//! use std::cell::OnceCell;
//!
//! // Two fibers hand a counter back and forth until it reaches 10.
//! let pong: Rc<OnceCell<Fiber<u32, (), u32>>> = Rc::new(OnceCell::new());
//! let to_pong = Rc::clone(&pong);
//! let ping = Rc::new(Fiber::new(move |y, mut n: u32| {
//!     while n < 10 {
//!         n = y.transfer(to_pong.get().unwrap(), n + 1).unwrap();
//!     }
//!     n
//! }));
//! let to_ping = Rc::downgrade(&ping);
//! pong.set(Fiber::new(move |y, mut n: u32| loop {
//!     n = y.transfer(&to_ping.upgrade().unwrap(), n + 1).unwrap();
//! }))
//! .ok();
//! assert_eq!(ping.resume(0).unwrap(), Step::Return(10));
//! ```
//!
//! # Every operation in every state
//!
//! A fiber is in one of the states of [`Status`]; one more, *being dropped*, is
//! a fiber that `Drop` is unwinding (its `status()` says `Running`). Each
//! operation has one outcome in each state. "Err" names the [`FiberError`]
//! returned, after which nothing has run and the value sent is dropped.
//!
//! | the target is … | `resume` | `transfer` to it | `drop` (last handle) | `suspend` from inside it |
//! |---|---|---|---|---|
//! | `Created` | runs the closure | runs the closure | drops the closure, which never runs | — |
//! | `Suspended` (in `suspend`) | continues it | Err `Yielding` | unwinds its stack, then frees it | — |
//! | `Transferred` (in `transfer`) | Err `Transferring` | continues it | unwinds its stack, then frees it | — |
//! | `Running`, the current fiber | Err `Running` | Err `Running` | leaks it, with a line on stderr (below) | suspends to its resumer |
//! | `Running`, waiting on a fiber it resumed | Err `Running` | Err `Running` | leaks it, with a line on stderr (below) | Err `NotInside` (from the fiber it resumed) |
//! | being dropped | Err `Running` | Err `Running` | — | unwinds again, or aborts (below) |
//! | `Dead` | Err `Dead` | Err `Dead` | frees it | — |
//!
//! And from inside a fiber that is being dropped, `transfer` to any fiber is
//! Err `Dropping`: its stack must be unwound to the end before it is reused, and
//! a fiber that left would leave that unwind unfinished.
//!
//! These follow Ruby's `FiberError` where Ruby defines the case: "attempt to
//! resume a transferring fiber" (`Transferring`), "attempt to transfer to a
//! yielding fiber" (`Yielding`), "dead fiber called" (`Dead`), "attempt to resume
//! the current fiber" and "attempt to resume a resumed fiber (double resume)"
//! (both `Running`). fibra differs in four places, each for a reason:
//!
//! - A fiber that was transferred to may `suspend`: it hands its value to the
//!   `resume` that started the chain (Ruby raises "attempt to yield on a not
//!   resumed fiber"). The chain has exactly one resumer, so the value has one
//!   place to go.
//! - A fiber that was transferred to and *returns* (or panics) ends the chain
//!   too: its value comes out of that same `resume`, as `Step::Return`. Ruby
//!   goes back to the fiber that transferred (`test_terminate_transferred_fiber`
//!   in Ruby's `test_fiber.rb`). That fiber is suspended in its `transfer`
//!   and stays `Transferred`, so only another `transfer` continues it: one rule
//!   for every way out of a chain (suspend, return, panic), and a typed return
//!   value that has exactly one place to go — the transferring fiber waits for
//!   an `I`, not for the other fiber's `R`.
//! - `transfer` to the current fiber is Err `Running` (Ruby returns the value at
//!   once): a typed fiber would have to send itself an `I` and receive it as
//!   the same `I`, which is a no-op the caller can write without a switch.
//! - Dropping a suspended fiber unwinds it (Ruby never runs a garbage fiber's
//!   `ensure` blocks): in Rust, destructors are how resources come back.
//!
//! `tests/fiber_model.rs` checks this table by machine: a reference model of the
//! state machine, driven by thousands of seeded random operation sequences over
//! a handful of fibers, against the real fibers.
//!
//! # Panics, drops and errors
//!
//! - A panic inside a fiber ends it and continues in whoever resumed it: `resume`
//!   re-raises it with [`std::panic::resume_unwind`]. The fiber is then dead.
//! - Dropping a suspended fiber unwinds its stack, so the destructors of
//!   everything on it run, as if the pending `suspend` (or `transfer`) had
//!   panicked; the unwinding is silent (no panic message). Its stack goes back to
//!   the pool only once the fiber is dead. While it unwinds:
//!   - it may resume other fibers, which run and come back as usual;
//!   - `transfer` returns Err `Dropping`;
//!   - if it catches the unwind and calls `suspend`, that `suspend` unwinds
//!     again at once, until the fiber ends; if it catches it and returns, it
//!     ends there;
//!   - a `suspend` made *during* the unwind (by a destructor) cannot unwind
//!     again — a panic out of a destructor that runs during unwinding aborts in
//!     Rust — so fibra aborts the process with a message that says so, as Rust
//!     does for a destructor that panics during unwinding (if the code that
//!     dropped the fiber was itself unwinding, fibra cannot tell such a
//!     `suspend` from one after a caught unwind: it unwinds again, and from a
//!     destructor Rust aborts with its own message);
//!   - a new panic (not the forced unwind) that ends it continues in the code
//!     that dropped it, once its stack is back in the pool.
//! - Dropping the last handle of a running fiber leaks the fiber: its stack is
//!   in use (the fiber runs on it, or waits on it for a fiber it resumed), so it
//!   is neither freed nor unwound; the fiber runs on and, once it suspends, can
//!   never be resumed. fibra says so on stderr. Safe code reaches this by
//!   dropping an `Rc` of a fiber from inside it, or when fiber A transfers to
//!   B, B resumes C, C transfers back to A, and A drops B's last handle.
//! - A stack overflow inside a fiber hits a guard page and aborts the process with
//!   the message "fiber stack overflow", as Rust does for threads.
//!
//! # Under `panic = "abort"`
//!
//! A suspended fiber cannot be unwound when panics abort. Dropping one then
//! *leaks* it, as [`std::mem::forget`] would: its stack stays reserved and the
//! values on it are never dropped, and nothing aborts. A fiber that never ran is
//! dropped as usual (its closure is dropped), and so is a dead one. A
//! [`Generator`](crate::Generator) dropped before its end is leaked the same way.
//!
//! # Why fibers are neither `Send` nor `Sync`
//!
//! A suspended fiber's stack may hold values tied to its OS thread: a
//! `MutexGuard` (which must be unlocked by the thread that locked it), an `Rc`
//! shared with the thread's other fibers, references into thread-locals. Moving
//! the fiber to another thread would move those values too, unchecked by the
//! compiler, which cannot see into a suspended stack. So a fiber never changes
//! thread, and the types say so. Ractors are how work moves between threads.
//!
//! ```compile_fail
//! let fiber: fibra::Fiber = fibra::Fiber::new(|_, ()| ());
//! std::thread::spawn(move || fiber.resume(())); // error: `Fiber` cannot be sent between threads
//! ```

// The files: the `Fiber` handle, resuming and suspending it, is here;
// making one with a chosen stack in builder.rs; dropping one (unwinding a
// suspended fiber before its stack goes back) in drop.rs; what the scheduler
// asks of a fiber's stack (its range, compaction) in compact.rs; the running
// fiber's side, `Yielder` (suspend, transfer), in yielder.rs; the switch into
// and out of a fiber, its header and its first entry, in context.rs; what
// crosses a switch in message.rs; `Step`, `Status` and `FiberError` in
// step.rs, status.rs and error.rs.

mod builder;
mod compact;
mod context;
mod drop;
mod error;
mod message;
mod status;
mod step;
mod yielder;

pub use crate::stack::{DEFAULT_STACK_SIZE, MIN_STACK_SIZE};
pub use builder::Builder;
pub use error::FiberError;
pub use status::Status;
pub use step::Step;
pub use yielder::Yielder;

use crate::arch::StackPointer;
use crate::stack::Stack;
use context::{Header, State};
use message::{Inbound, Outbound, PanicSlot};
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic;
use std::ptr::NonNull;

/// A stackful coroutine. See the [module documentation](self).
///
/// `I` is what [`resume`](Fiber::resume) sends in, `Y` what the fiber suspends
/// with, `R` what its closure returns. Every method takes `&self`, so a fiber can
/// be shared (for example in an `Rc`) between fibers that transfer to each other.
pub struct Fiber<I = (), Y = (), R = ()> {
    header: NonNull<Header>,
    /// Where the fiber is suspended, kept here as well as in its header so that
    /// `resume` reaches the fiber's stack with one load instead of two (the
    /// difference is a third of the cost of a switch; without this copy,
    /// `resume` ran 2 instructions fewer per switch, 19 against 21 by
    /// cachegrind, yet took 3.7 ns a switch against 2.2 ns, user time, best of
    /// 9 on a loaded 2-core VM: the load lies on the chain of dependent loads
    /// that a switch is). Null when this copy is out of date — after a transfer
    /// into the fiber, which then suspends to a resumer other than this
    /// handle's — and the header must be read.
    ///
    /// It is only read by `resume`, so only for a `Created` or `Suspended`
    /// fiber, and for those it is null or current: a fiber reaches `Suspended`
    /// only by `suspend`, which returns to the `enter` of a `resume`; that
    /// `resume`'s `run` stores the stack pointer it comes back with when it is
    /// this fiber's, and a fiber entered any other way was entered by a transfer,
    /// which nulls this copy (`forget_sp`). A `Transferred` fiber's copy may be
    /// stale, which is why `resume` refuses it and `transfer` and `drop` read the
    /// header.
    sp: Cell<StackPointer>,
    /// Given back to this thread's pool by `Drop` once the fiber is dead, and
    /// never before (under `panic = "abort"` a suspended fiber's is leaked).
    stack: ManuallyDrop<Stack>,
    // Invariant in the three types, and neither Send nor Sync (module docs).
    _types: PhantomData<*mut (I, Y, R)>,
}

impl<I, Y, R> Fiber<I, Y, R> {
    /// Makes a fiber that will run `body` on a stack of [`DEFAULT_STACK_SIZE`]
    /// bytes. Nothing runs until the first [`resume`](Fiber::resume), whose value
    /// becomes `body`'s second argument.
    ///
    /// # Panics
    ///
    /// If no stack can be had (the address space or the kernel's map count is
    /// exhausted). [`Builder::build`] returns that error instead.
    pub fn new<F>(body: F) -> Self
    where
        F: FnOnce(&Yielder<I, Y, R>, I) -> R + 'static,
    {
        Builder::new().build(body).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Runs the fiber until it suspends or returns, sending it `input`.
    ///
    /// # Errors
    ///
    /// [`FiberError::Dead`] if it has returned or panicked, [`FiberError::Running`]
    /// if it is running (this is called from inside it, or from a fiber it
    /// resumed), [`FiberError::Transferring`] if it is suspended in a transfer.
    /// Nothing is run and `input` is dropped.
    ///
    /// # Panics
    ///
    /// If the fiber panics, the panic continues here, in the resumer.
    #[inline(always)]
    pub fn resume(&self, input: I) -> Result<Step<Y, R>, FiberError> {
        if !matches!(self.header().state(), State::Created | State::Yielded) {
            return Err(refused_resume(self.header()));
        }
        match self.run(self.saved_sp(), Inbound::Resume(input), State::Running) {
            Outbound::Yield(value) => Ok(Step::Yield(value)),
            Outbound::Return(value) => Ok(Step::Return(value)),
            Outbound::Panicked => continue_panic(),
            Outbound::Unwound => came_back_unwound(),
        }
    }

    /// Enters the fiber, suspended at `sp` (it must be Created, Suspended or
    /// Transferred), to run in state `running`, and keeps the stack pointer it
    /// comes back suspended at.
    #[inline(always)]
    fn run(&self, sp: StackPointer, message: Inbound<I>, running: State) -> Outbound<Y, R> {
        // SAFETY: the callers checked that the fiber is Created, Yielded or
        // Transferred, at `sp`; it was prepared with these types (this value's
        // own).
        let (outcome, suspended) = unsafe { self.header().enter::<I, Y, R>(sp, message, running) };
        // The stack pointer that came back is this fiber's if it lies on this
        // fiber's stack; otherwise the fiber transferred away and another one
        // came back, and this fiber's is in its header. Keeping whatever came
        // back would be unsound: A transfers to B, B resumes C, C transfers
        // to A, A suspends (to B: A is Yielded, its kept pointer forgotten),
        // B suspends to here — and A's next resume would enter B's stack.
        let bottom = self.stack.top() as usize - self.stack.size();
        if (suspended as usize).wrapping_sub(bottom) < self.stack.size() {
            self.sp.set(suspended);
        } else {
            // Read in line: a call here would make the compiler keep the
            // message that came back in a register the call leaves alone, a
            // move on every resume.
            self.sp.set(self.header().own());
        }
        outcome
    }

    /// Where the fiber is suspended.
    #[inline(always)]
    fn saved_sp(&self) -> StackPointer {
        let sp = self.sp.get();
        if sp.is_null() { self.header_sp() } else { sp }
    }

    #[cold]
    #[inline(never)]
    fn header_sp(&self) -> StackPointer {
        self.header().own()
    }

    /// Marks the kept stack pointer out of date: the fiber is being transferred
    /// to, and will next suspend to a resumer other than this handle's.
    pub(super) fn forget_sp(&self) {
        self.sp.set(std::ptr::null_mut());
    }

    /// Suspends this fiber from inside it, like [`Yielder::suspend`], for code
    /// that holds the fiber's handle but not its yielder (a scheduler that parks
    /// the green thread it is running, for example).
    ///
    /// # Errors
    ///
    /// [`FiberError::NotInside`] unless the caller runs on this fiber's own stack
    /// — not from outside it, and not from another fiber it resumed. Nothing is
    /// suspended and `value` is dropped.
    ///
    /// ```
    /// use fibra::{Fiber, FiberError, Step};
    /// use std::{cell::OnceCell, rc::Rc};
    ///
    /// let cell: Rc<OnceCell<Fiber<(), u8, ()>>> = Rc::new(OnceCell::new());
    /// let inner = Rc::downgrade(&cell);
    /// cell.set(Fiber::new(move |_, ()| {
    ///     let this = inner.upgrade().unwrap();
    ///     this.get().unwrap().suspend(7).unwrap();
    /// }))
    /// .ok();
    /// let fiber = cell.get().unwrap();
    /// assert_eq!(fiber.resume(()).unwrap(), Step::Yield(7));
    /// assert_eq!(fiber.suspend(8), Err(FiberError::NotInside)); // not from outside
    /// ```
    pub fn suspend(&self, value: Y) -> Result<I, FiberError> {
        // A local's address is on the stack the caller runs on. If that is this
        // fiber's stack, this fiber is the innermost running context: a fiber it
        // resumed would run on a stack of its own.
        let marker = 0u8;
        let here = std::hint::black_box(&marker) as *const u8 as usize;
        let top = self.stack.top() as usize;
        let inside = matches!(self.header().state(), State::Running | State::Unwinding);
        if !inside || !(top - self.stack.size()..top).contains(&here) {
            return Err(FiberError::NotInside);
        }
        Ok(Yielder::<I, Y, R>::new(self.header).suspend(value))
    }

    /// Where the fiber is in its life.
    pub fn status(&self) -> Status {
        self.header().state().status()
    }

    /// Whether the fiber can still run: it has not returned or panicked (Ruby's
    /// `Fiber#alive?`).
    pub fn is_alive(&self) -> bool {
        self.status() != Status::Dead
    }

    fn header(&self) -> &Header {
        // SAFETY: the header lives at the top of `_stack`, which this value owns
        // for its whole life.
        unsafe { self.header.as_ref() }
    }
}

/// Why `resume` refuses the fiber of `header` (not Created or Suspended). Out
/// of line, so that `resume`'s hot path stays small enough to inline; it reads
/// the state again, so that the hot path compares it in memory and keeps
/// nothing.
#[cold]
#[inline(never)]
fn refused_resume(header: &Header) -> FiberError {
    match header.state() {
        State::Transferred => FiberError::Transferring,
        State::Dead => FiberError::Dead,
        _ => FiberError::Running,
    }
}

/// Continues, in the resumer, the panic that ended the fiber it resumed.
#[cold]
#[inline(never)]
fn continue_panic() -> ! {
    panic::resume_unwind(PanicSlot::take())
}

/// Only a fiber being dropped unwinds to its end, and nothing can resume one
/// (or be transferred to from one).
#[cold]
#[inline(never)]
fn came_back_unwound() -> ! {
    unreachable!("fibra: a resumed fiber came back unwound")
}

impl<I, Y, R> fmt::Debug for Fiber<I, Y, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fiber")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl<I, Y, R> Fiber<I, Y, R> {
    /// A fiber that will run `body` on `stack`: for a caller that takes the
    /// stack itself, to handle its failure apart (the scheduler reports it to
    /// the green thread that needed it).
    pub(crate) fn on_stack<F>(stack: Stack, body: F) -> Self
    where
        F: FnOnce(&Yielder<I, Y, R>, I) -> R + 'static,
    {
        let (header, sp) = context::prepare(&stack, body);
        Fiber {
            header,
            sp: Cell::new(sp),
            stack: ManuallyDrop::new(stack),
            _types: PhantomData,
        }
    }
}

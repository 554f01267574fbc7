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
//! # Panics, drops and errors
//!
//! - A panic inside a fiber ends it and continues in whoever resumed it: `resume`
//!   re-raises it with [`std::panic::resume_unwind`]. The fiber is then dead.
//! - Resuming a dead fiber, or one that is running (the current fiber, or one that
//!   has resumed the current fiber), returns a [`FiberError`].
//! - Dropping a suspended fiber unwinds its stack, so the destructors of
//!   everything on it run, as if the pending `suspend` had panicked (the unwinding
//!   is silent: no panic message). A fiber that catches that unwind and suspends
//!   again is unwound again, until it ends: its stack is not reused before. Dropping a running fiber (possible only by dropping
//!   the last `Rc` of a fiber from inside it) aborts the process with a message:
//!   its stack is in use and can neither be freed nor unwound.
//! - A stack overflow inside a fiber hits a guard page and aborts the process with
//!   the message "fiber stack overflow", as Rust does for threads.
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

mod context;
mod error;
mod message;
mod yielder;

pub use crate::stack::{DEFAULT_STACK_SIZE, MIN_STACK_SIZE};
pub use error::FiberError;
pub use yielder::Yielder;

use crate::arch::StackPointer;
use crate::stack::Stack;
use context::Header;
use message::{ForcedUnwind, Inbound, Outbound};
use std::cell::Cell;
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::panic;
use std::ptr::NonNull;

/// How a `resume` (or `transfer`) came back: the fiber suspended with a value, or
/// returned one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step<Y, R> {
    /// The fiber called [`Yielder::suspend`] with this value and can be resumed.
    Yield(Y),
    /// The fiber's closure returned this value; the fiber is dead.
    Return(R),
}

impl<Y, R> Step<Y, R> {
    /// The suspended value, if the fiber suspended.
    pub fn yielded(self) -> Option<Y> {
        match self {
            Step::Yield(y) => Some(y),
            Step::Return(_) => None,
        }
    }

    /// The returned value, if the fiber returned.
    pub fn returned(self) -> Option<R> {
        match self {
            Step::Yield(_) => None,
            Step::Return(r) => Some(r),
        }
    }
}

/// Where a fiber is in its life (Ruby's `Fiber#alive?`, Lua's `coroutine.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Made and not yet resumed (Lua: "suspended").
    Created,
    /// Suspended in [`Yielder::suspend`] or [`Yielder::transfer`] (Lua: "suspended").
    Suspended,
    /// Running, or suspended while a fiber it resumed runs (Lua: "running" or
    /// "normal").
    Running,
    /// Returned or panicked (Lua: "dead").
    Dead,
}

/// A stackful coroutine. See the [module documentation](self).
///
/// `I` is what [`resume`](Fiber::resume) sends in, `Y` what the fiber suspends
/// with, `R` what its closure returns. Every method takes `&self`, so a fiber can
/// be shared (for example in an `Rc`) between fibers that transfer to each other.
pub struct Fiber<I = (), Y = (), R = ()> {
    header: NonNull<Header>,
    /// Where the fiber is suspended, kept here as well as in its header so that
    /// `resume` reaches the fiber's stack with one load instead of two (the
    /// difference is a third of the cost of a switch). Null when this copy is
    /// out of date — after a transfer into the fiber, which then suspends to a
    /// resumer other than this handle's — and the header must be read.
    sp: Cell<StackPointer>,
    // Dropped after `Drop::drop` has unwound the fiber: the stack goes back to
    // this thread's pool.
    stack: Stack,
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
    /// resumed). Nothing is run and `input` is dropped.
    ///
    /// # Panics
    ///
    /// If the fiber panics, the panic continues here, in the resumer.
    pub fn resume(&self, input: I) -> Result<Step<Y, R>, FiberError> {
        let header = self.header();
        match header.state() {
            Status::Created | Status::Suspended => {}
            Status::Running => return Err(FiberError::Running),
            Status::Dead => return Err(FiberError::Dead),
        }
        match self.run(Inbound::Resume(input)) {
            Outbound::Yield(value) => Ok(Step::Yield(value)),
            Outbound::Return(value) => Ok(Step::Return(value)),
            Outbound::Panicked => panic::resume_unwind(context::take_panic()),
        }
    }

    /// Enters the fiber, which must be Created or Suspended, and keeps the stack
    /// pointer it comes back suspended at.
    fn run(&self, message: Inbound<I>) -> Outbound<Y, R> {
        // SAFETY: the callers checked that the fiber is Created or Suspended, at
        // `saved_sp`; it was prepared with these types (this value's own).
        let (outcome, suspended) =
            unsafe { self.header().enter::<I, Y, R>(self.saved_sp(), message) };
        // The stack pointer that came back is this fiber's if it lies on this
        // fiber's stack; otherwise the fiber transferred away and another one
        // came back, and this fiber's is in its header.
        let bottom = self.stack.top() as usize - self.stack.size();
        if (suspended as usize).wrapping_sub(bottom) < self.stack.size() {
            self.sp.set(suspended);
        } else {
            self.sp.set(self.header_sp());
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
        if self.status() != Status::Running || !(top - self.stack.size()..top).contains(&here) {
            return Err(FiberError::NotInside);
        }
        Ok(Yielder::<I, Y, R>::new(self.header).suspend(value))
    }

    /// Where the fiber is in its life.
    pub fn status(&self) -> Status {
        self.header().state()
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

impl<I, Y, R> Drop for Fiber<I, Y, R> {
    fn drop(&mut self) {
        let header = self.header();
        match header.state() {
            Status::Dead => {}
            Status::Running => {
                eprintln!(
                    "fibra: a running fiber was dropped (its last handle was dropped from inside it, \
                     or from a fiber it resumed); its stack is in use, so the process aborts"
                );
                std::process::abort();
            }
            Status::Created | Status::Suspended => loop {
                match self.run(Inbound::Unwind) {
                    Outbound::Panicked => {
                        let payload = context::take_panic();
                        // A destructor on the fiber's stack panicked, or the body
                        // caught the unwind and panicked anew: that panic
                        // continues here.
                        if !payload.is::<ForcedUnwind>() {
                            panic::resume_unwind(payload);
                        }
                        break;
                    }
                    // The body caught the unwind and returned.
                    Outbound::Return(_) => break,
                    // The body caught the unwind and suspended again: unwind
                    // again. Its stack may not be reused before it has ended.
                    Outbound::Yield(_) => {}
                }
            },
        }
    }
}

impl<I, Y, R> fmt::Debug for Fiber<I, Y, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fiber")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

/// Makes fibers with chosen settings.
///
/// ```
/// use fibra::fiber::{Builder, Step};
///
/// // Deep recursion wants a larger stack than the default.
/// fn depth(n: u64) -> u64 { if n == 0 { 0 } else { 1 + std::hint::black_box(depth(n - 1)) } }
/// let fiber = Builder::new()
///     .stack_size(8 << 20)
///     .build(|_, n: u64| depth(n))
///     .expect("a stack");
/// assert_eq!(fiber.resume(100_000).unwrap(), Step::<(), u64>::Return(100_000));
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    stack_size: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with the default settings.
    pub fn new() -> Builder {
        Builder {
            stack_size: DEFAULT_STACK_SIZE,
        }
    }

    /// The usable stack size in bytes, rounded up to whole pages and to at least
    /// [`MIN_STACK_SIZE`]. Stack memory is reserved, not committed: only the pages
    /// a fiber touches cost memory.
    pub fn stack_size(mut self, bytes: usize) -> Builder {
        self.stack_size = bytes;
        self
    }

    /// Makes a fiber that will run `body` (see [`Fiber::new`]).
    ///
    /// # Errors
    ///
    /// If no stack can be had, or if the closure's captures are too large for the
    /// stack (more than about half of it).
    pub fn build<F, I, Y, R>(self, body: F) -> io::Result<Fiber<I, Y, R>>
    where
        F: FnOnce(&Yielder<I, Y, R>, I) -> R + 'static,
    {
        Fiber::on_stack(Stack::new(self.stack_size)?, body)
    }
}

impl<I, Y, R> Fiber<I, Y, R> {
    /// A fiber that will run `body` on `stack`: for a caller that takes the
    /// stack itself, to handle its failure apart (the scheduler reports it to
    /// the green thread that needed it).
    ///
    /// # Errors
    ///
    /// If the closure's captures are too large for the stack.
    pub(crate) fn on_stack<F>(stack: Stack, body: F) -> io::Result<Self>
    where
        F: FnOnce(&Yielder<I, Y, R>, I) -> R + 'static,
    {
        let (header, sp) = context::prepare(&stack, body)?;
        Ok(Fiber {
            header,
            sp: Cell::new(sp),
            stack,
            _types: PhantomData,
        })
    }
}

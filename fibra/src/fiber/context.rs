//! The fiber core: the control block at the top of a fiber's stack, the entry
//! function that runs the closure, and the three ways control moves — into a
//! fiber (`enter`, a call), back out to its resumer (`leave`, a return) and
//! sideways to another fiber (`pass`, a jump).
//!
//! Both sides of every switch agree on the message types because a [`Fiber<I, Y, R>`]
//! and the [`Yielder<I, Y, R>`] its body receives carry the same three types, and
//! `transfer` only goes to a fiber of the same types.
//!
//! [`Fiber<I, Y, R>`]: super::Fiber
//! [`Yielder<I, Y, R>`]: super::Yielder

use super::message::{self, Carrier, ForcedUnwind, Inbound, Outbound, PanicSlot};
use super::{Status, Yielder};
use crate::arch::{self, StackPointer};
use crate::stack::Stack;
use std::cell::Cell;
use std::mem::{self, ManuallyDrop};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

/// The fiber's control block, at the top of its own stack.
#[repr(C)]
pub(super) struct Header {
    /// While the fiber runs: the stack pointer of the context it returns to when
    /// it suspends. It must be the first field: the unwind information of
    /// `arch::init_stack` reads it there to walk into the resumer.
    parent: Cell<StackPointer>,
    /// While the fiber is suspended: its own stack pointer.
    own: Cell<StackPointer>,
    state: Cell<State>,
    /// While it is being dropped: whether the code that dropped it was already
    /// unwinding, so that `thread::panicking()` says nothing about the fiber.
    dropped_while_panicking: Cell<bool>,
}

/// Where a fiber is in its life: [`Status`] with the distinctions that the
/// fiber's own code needs (the table in the [module docs](super) gives every
/// operation's outcome in each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
///
/// The order makes each check one comparison: `resume` takes `Yielded` or
/// `Created`, `transfer` takes `Created` or `Transferred`.
#[repr(u8)]
pub(super) enum State {
    /// Suspended in `suspend`: continued by a `resume`.
    Yielded,
    /// Made, never run.
    Created,
    /// Suspended in `transfer`: continued by a `transfer`.
    Transferred,
    /// Running, or waiting on a fiber it resumed.
    Running,
    /// Running while it is being dropped: it unwinds, and may neither suspend nor
    /// transfer.
    Unwinding,
    /// Returned, panicked or unwound.
    Dead,
}

impl State {
    pub(super) fn status(self) -> Status {
        match self {
            State::Created => Status::Created,
            State::Yielded => Status::Suspended,
            State::Transferred => Status::Transferred,
            State::Running | State::Unwinding => Status::Running,
            State::Dead => Status::Dead,
        }
    }
}

/// Room kept below the closure for the entry function's own frames.
const ENTRY_FRAME_ROOM: usize = 4096;

/// The largest closure kept on the fiber's own stack; a larger one is boxed.
///
/// Calling a `FnOnce` closure moves it into the call, and an unoptimised build
/// makes a copy or two of it on the way (into `catch_unwind`, into the call), so
/// a closure kept on the stack costs a few times its size there: a 80 KiB
/// capture overflowed a 256 KiB stack in a debug build. A boxed
/// `dyn FnOnce` is called in place, through its pointer, with no copy. Small
/// closures — a green thread's is a boxed closure already, 16 bytes — stay on
/// the stack and cost no allocation.
const INLINE_CLOSURE_MAX: usize = 1024;

/// A fiber's body once it is boxed (see [`INLINE_CLOSURE_MAX`]).
type BoxedBody<'a, I, Y, R> = Box<dyn FnOnce(&Yielder<I, Y, R>, I) -> R + 'a>;

fn align_down(addr: usize, align: usize) -> usize {
    addr & !(align - 1)
}

/// Where the header goes: at the top of the stack.
fn header_below(top: *mut u8) -> *mut Header {
    align_down(top as usize - mem::size_of::<Header>(), 16) as *mut Header
}

/// Where the closure goes: just below the header.
fn closure_below<F>(header: *mut Header) -> *mut F {
    align_down(
        header as usize - mem::size_of::<F>(),
        mem::align_of::<F>().max(16),
    ) as *mut F
}

/// Writes the header and `body` (or, if it is large, a box of it) at the top of
/// `stack` and prepares the stack so that the first `enter` runs `body`. Returns
/// the header and the stack pointer of the fresh context.
pub(super) fn prepare<F, I, Y, R>(stack: &Stack, body: F) -> (NonNull<Header>, StackPointer)
where
    F: FnOnce(&Yielder<I, Y, R>, I) -> R + 'static,
{
    if mem::size_of::<F>() > INLINE_CLOSURE_MAX || mem::align_of::<F>() > 16 {
        place::<BoxedBody<'static, I, Y, R>, I, Y, R>(stack, Box::new(body))
    } else {
        place::<F, I, Y, R>(stack, body)
    }
}

/// [`prepare`] for a closure small enough to live on the stack.
fn place<F, I, Y, R>(stack: &Stack, body: F) -> (NonNull<Header>, StackPointer)
where
    F: FnOnce(&Yielder<I, Y, R>, I) -> R,
{
    debug_assert!(mem::size_of::<F>() <= INLINE_CLOSURE_MAX && mem::align_of::<F>() <= 16);
    let header = header_below(stack.top());
    let closure = closure_below::<F>(header);
    // The header (a few words), the closure (at most `INLINE_CLOSURE_MAX`) and
    // the entry room fit in `MIN_STACK_SIZE` many times over.
    debug_assert!(stack.top() as usize - closure as usize + ENTRY_FRAME_ROOM <= stack.size());
    // `header_below` and `closure_below` place them inside the stack's usable
    // memory, aligned (`prepare` boxes a closure aligned to more than 16) and not
    // overlapping;
    // `init_stack` gets a 16-byte-aligned top with the entry room below it.
    // SAFETY: the stack is fresh from the pool, so nothing else uses that memory.
    unsafe {
        closure.write(body);
        let frame_top = align_down(closure as usize, 16) as *mut u8;
        let sp = arch::init_stack(frame_top, entry::<F, I, Y, R>, header.cast());
        header.write(Header {
            parent: Cell::new(ptr::null_mut()),
            own: Cell::new(sp),
            state: Cell::new(State::Created),
            dropped_while_panicking: Cell::new(false),
        });
        (NonNull::new_unchecked(header), sp)
    }
}

/// The first frame on a fiber's stack (called by the bootstrap frame of
/// `arch::init_stack`): runs the closure and sends back what it returned or the
/// panic it raised, then leaves for good.
unsafe extern "C" fn entry<F, I, Y, R>(carrier: Carrier, data: *mut u8) -> !
where
    F: FnOnce(&Yielder<I, Y, R>, I) -> R,
{
    // SAFETY: `prepare` passed the header as `data` and wrote the closure at
    // `closure_below`; this is the first and only time it is read. The first
    // message was sent by `enter` with the fiber's own `Inbound<I>` type.
    let (header, body, first) = unsafe {
        let header = data.cast::<Header>();
        (
            &*header,
            closure_below::<F>(header).read(),
            message::receive::<Inbound<I>>(carrier),
        )
    };
    let ended = |payload: Box<dyn std::any::Any + Send>| {
        if payload.is::<ForcedUnwind>() {
            Outbound::Unwound
        } else {
            PanicSlot::put(payload);
            Outbound::Panicked
        }
    };
    let outcome = match first {
        Inbound::Resume(input) => {
            let yielder = Yielder::new(NonNull::from(header));
            panic::catch_unwind(AssertUnwindSafe(move || body(&yielder, input)))
                .map_or_else(ended, Outbound::<Y, R>::Return)
        }
        // Dropped before it ever ran: drop the closure, which is all it holds.
        // No unwinding is needed, so this works under `panic = "abort"` too.
        Inbound::Unwind => match panic::catch_unwind(AssertUnwindSafe(move || drop(body))) {
            Ok(()) => Outbound::Unwound,
            Err(payload) => ended(payload),
        },
    };
    header.state.set(State::Dead);
    let outcome = ManuallyDrop::new(outcome);
    // The parent is the context that entered this fiber (or the one that entered
    // the fiber that transferred here), suspended in `enter` and reading an
    // `Outbound<Y, R>`.
    // SAFETY: nothing resumes a dead fiber (every way in checks the state), so
    // the switch never returns.
    unsafe {
        arch::switch_return(
            header.own.as_ptr(),
            header.parent.get(),
            message::send(&outcome),
        );
    }
    unreachable_abort()
}

fn unreachable_abort() -> ! {
    eprintln!("fibra: a dead fiber was resumed; this is a bug in fibra");
    std::process::abort()
}

impl Header {
    pub(super) fn state(&self) -> State {
        self.state.get()
    }

    pub(super) fn set_dropped_while_panicking(&self, panicking: bool) {
        self.dropped_while_panicking.set(panicking);
    }

    pub(super) fn dropped_while_panicking(&self) -> bool {
        self.dropped_while_panicking.get()
    }

    /// The fiber's stack pointer while it is suspended; always current.
    pub(super) fn own(&self) -> StackPointer {
        self.own.get()
    }

    /// Runs this fiber, suspended at `sp`, from the current context until it
    /// suspends, returns or panics; it runs in state `running` (`Running`, or
    /// `Unwinding` when it is being dropped). Returns what came back (from this
    /// fiber, or from the fiber it transferred to) and the stack pointer at which
    /// the fiber that came back is now suspended.
    ///
    /// # Safety
    ///
    /// The fiber must be `Created`, `Yielded` or `Transferred` at `sp`, and `I`,
    /// `Y`, `R` must be the types it was prepared with.
    pub(super) unsafe fn enter<I, Y, R>(
        &self,
        sp: StackPointer,
        message: Inbound<I>,
        running: State,
    ) -> (Outbound<Y, R>, StackPointer) {
        self.state.set(running);
        let message = ManuallyDrop::new(message);
        // SAFETY: the fiber is suspended at `sp`; the resumer's stack pointer is
        // saved in `parent`, where the fiber's `leave` (or the final switch of
        // `entry`) finds it. The reply is an `Outbound<Y, R>` (same types).
        unsafe {
            let (reply, suspended) =
                arch::switch_call(self.parent.as_ptr(), sp, message::send(&message));
            (message::receive(reply), suspended)
        }
    }

    /// Suspends the running fiber (whose header this is) and returns to its
    /// resumer with `message`; returns what the next `enter` sends.
    ///
    /// # Safety
    ///
    /// Must be called on this fiber's own stack while it runs, with the types
    /// it was prepared with. While it is being dropped (`Unwinding`), its
    /// resumer is the dropper's `Fiber::unwind`, which takes the message and
    /// sends `Unwind` back.
    pub(super) unsafe fn leave<I, Y, R>(&self, message: Outbound<Y, R>) -> Inbound<I> {
        self.state.set(State::Yielded);
        let message = ManuallyDrop::new(message);
        // SAFETY: the fiber runs, so `parent` holds the resumer (its dropper's
        // `unwind` while it is being dropped), suspended in `enter` and reading
        // an `Outbound<Y, R>`; whoever switches back here sends an `Inbound<I>`.
        unsafe {
            let got = arch::switch_return(
                self.own.as_ptr(),
                self.parent.get(),
                message::send(&message),
            );
            message::receive(got)
        }
    }

    /// Suspends the running fiber (whose header this is) and runs `target` in one
    /// switch; `target` inherits this fiber's resumer. Returns what the next
    /// `pass` into this fiber sends (or `Unwind`, from the `enter` of a drop).
    ///
    /// # Safety
    ///
    /// Must be called on this fiber's own stack while it runs (`Running`);
    /// `target` must be another fiber, `Created` or `Transferred`, prepared with
    /// the same types.
    pub(super) unsafe fn pass<I>(&self, target: &Header, message: Inbound<I>) -> Inbound<I> {
        target.parent.set(self.parent.get());
        self.state.set(State::Transferred);
        target.state.set(State::Running);
        let message = ManuallyDrop::new(message);
        // SAFETY: `target.own` is a suspended context that reads an `Inbound<I>`
        // (same types); it returns to the resumer this fiber had, which is
        // suspended in `enter` and expects the shared `Outbound` type.
        unsafe {
            let got =
                arch::switch_jump(self.own.as_ptr(), target.own.get(), message::send(&message));
            message::receive(got)
        }
    }
}

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

use super::message::{self, ForcedUnwind, Inbound, Outbound};
use super::{Status, Yielder};
use crate::arch::{self, StackPointer};
use crate::stack::Stack;
use std::any::Any;
use std::cell::Cell;
use std::io;
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
    state: Cell<Status>,
}

thread_local! {
    /// The payload of the panic that just ended a fiber of this thread, between
    /// the fiber's last switch and its resumer taking it. It is not kept in the
    /// fiber's header because after a transfer the resumer may not know which
    /// fiber ended.
    static PANIC_IN_FLIGHT: Cell<Option<Box<dyn Any + Send>>> = const { Cell::new(None) };
}

/// The payload of the panic that a fiber just reported with `Outbound::Panicked`.
pub(super) fn take_panic() -> Box<dyn Any + Send> {
    PANIC_IN_FLIGHT
        .take()
        .expect("a fiber that reports a panic has stored its payload")
}

/// Room kept below the closure for the entry function's own frames.
const ENTRY_FRAME_ROOM: usize = 4096;

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

/// Writes the header and `body` at the top of `stack` and prepares the stack so
/// that the first `enter` runs `body`. Returns the header and the stack pointer
/// of the fresh context.
pub(super) fn prepare<F, I, Y, R>(
    stack: &Stack,
    body: F,
) -> io::Result<(NonNull<Header>, StackPointer)>
where
    F: FnOnce(&Yielder<I, Y, R>, I) -> R + 'static,
{
    let header = header_below(stack.top());
    let closure = closure_below::<F>(header);
    let used = stack.top() as usize - closure as usize + ENTRY_FRAME_ROOM;
    if used > stack.size() / 2 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "fibra: the fiber's closure takes {} bytes, too many for a {}-byte stack; \
                 box what it captures or choose a larger stack",
                mem::size_of::<F>(),
                stack.size()
            ),
        ));
    }
    // `header_below` and `closure_below` place them inside the stack's usable
    // memory, aligned and not overlapping (checked just above to leave room below
    // them); `init_stack` gets a 16-byte-aligned top with the entry room below it.
    // SAFETY: the stack is fresh from the pool, so nothing else uses that memory.
    unsafe {
        closure.write(body);
        let frame_top = align_down(closure as usize, 16) as *mut u8;
        let sp = arch::init_stack(frame_top, entry::<F, I, Y, R>, header.cast());
        header.write(Header {
            parent: Cell::new(ptr::null_mut()),
            own: Cell::new(sp),
            state: Cell::new(Status::Created),
        });
        Ok((NonNull::new_unchecked(header), sp))
    }
}

/// The first frame on a fiber's stack (called by the bootstrap frame of
/// `arch::init_stack`): runs the closure and sends back what it returned or the
/// panic it raised, then leaves for good.
unsafe extern "C" fn entry<F, I, Y, R>(word: usize, data: *mut u8) -> !
where
    F: FnOnce(&Yielder<I, Y, R>, I) -> R + 'static,
{
    // SAFETY: `prepare` passed the header as `data` and wrote the closure at
    // `closure_below`; this is the first and only time it is read. The first
    // message was sent by `enter` with the fiber's own `Inbound<I>` type.
    let (header, body, first) = unsafe {
        let header = data.cast::<Header>();
        (
            &*header,
            closure_below::<F>(header).read(),
            message::receive::<Inbound<I>>(word),
        )
    };
    let outcome = match first {
        Inbound::Resume(input) => {
            let yielder = Yielder::new(NonNull::from(header));
            panic::catch_unwind(AssertUnwindSafe(move || body(&yielder, input)))
        }
        // Dropped before it ever ran: drop the closure, which is all it holds.
        Inbound::Unwind => panic::catch_unwind(AssertUnwindSafe(move || drop(body)))
            .and_then(|()| Err(Box::new(ForcedUnwind) as _)),
    };
    let outcome = match outcome {
        Ok(value) => Outbound::<Y, R>::Return(value),
        Err(payload) => {
            PANIC_IN_FLIGHT.set(Some(payload));
            Outbound::Panicked
        }
    };
    header.state.set(Status::Dead);
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
    pub(super) fn state(&self) -> Status {
        self.state.get()
    }

    /// The fiber's stack pointer while it is suspended; always current.
    pub(super) fn own(&self) -> StackPointer {
        self.own.get()
    }

    /// Runs this fiber, suspended at `sp`, from the current context until it
    /// suspends, returns or panics. Returns what came back (from this fiber, or
    /// from the fiber it transferred to) and the stack pointer at which the fiber
    /// that came back is now suspended.
    ///
    /// # Safety
    ///
    /// The fiber must be `Created` or `Suspended` at `sp`, and `I`, `Y`, `R` must
    /// be the types it was prepared with.
    pub(super) unsafe fn enter<I, Y, R>(
        &self,
        sp: StackPointer,
        message: Inbound<I>,
    ) -> (Outbound<Y, R>, StackPointer) {
        self.state.set(Status::Running);
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
    /// resumer with `message`; returns what the next `enter` or `pass` sends.
    ///
    /// # Safety
    ///
    /// Must be called on this fiber's own stack while it runs, with the types it
    /// was prepared with.
    pub(super) unsafe fn leave<I, Y, R>(&self, message: Outbound<Y, R>) -> Inbound<I> {
        self.state.set(Status::Suspended);
        let message = ManuallyDrop::new(message);
        // SAFETY: the fiber runs, so `parent` holds the resumer, suspended in
        // `enter` and reading an `Outbound<Y, R>`; whoever switches back here
        // sends an `Inbound<I>`.
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
    /// `enter` or `pass` into this fiber sends.
    ///
    /// # Safety
    ///
    /// Must be called on this fiber's own stack while it runs; `target` must be
    /// another fiber, `Created` or `Suspended`, prepared with the same types.
    pub(super) unsafe fn pass<I>(&self, target: &Header, message: Inbound<I>) -> Inbound<I> {
        target.parent.set(self.parent.get());
        self.state.set(Status::Suspended);
        target.state.set(Status::Running);
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

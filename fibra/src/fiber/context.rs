//! The fiber core: what lies at the top of a fiber's stack, the messages that
//! cross a switch, and the three ways control moves — into a fiber (`enter`), back
//! out to its resumer (`leave`) and sideways to another fiber (`pass`).
//!
//! A switch carries one word: the address of a message on the sender's stack. The
//! receiver moves the message out with `ptr::read` before doing anything else, and
//! the sender keeps it in a `ManuallyDrop`, so every message is moved exactly once
//! and nothing is copied through the heap. The sender is suspended while the
//! receiver reads, so the message is still there.
//!
//! Both sides of every switch agree on the message types because a [`Fiber<I, Y, R>`]
//! and the [`Yielder<I, Y, R>`] its body receives carry the same three types, and
//! `transfer` only goes to a fiber of the same types.
//!
//! [`Fiber<I, Y, R>`]: super::Fiber
//! [`Yielder<I, Y, R>`]: super::Yielder

use super::{Status, Yielder};
use crate::arch::{self, StackPointer};
use crate::stack::Stack;
use std::any::Any;
use std::cell::Cell;
use std::io;
use std::mem::{self, ManuallyDrop};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

/// What a resumer sends into a fiber.
pub(super) enum Inbound<I> {
    /// Go on (or start) with this value.
    Resume(I),
    /// The fiber is being dropped: unwind its stack.
    Unwind,
}

/// What a fiber sends back to its resumer.
pub(super) enum Outbound<Y, R> {
    Yield(Y),
    Return(R),
    Panic(Box<dyn Any + Send>),
}

/// The panic payload that unwinds a suspended fiber being dropped. It is thrown
/// with `resume_unwind`, so the panic hook does not print it.
pub(super) struct ForcedUnwind;

/// Raises [`ForcedUnwind`] in the current fiber.
pub(super) fn forced_unwind() -> ! {
    panic::resume_unwind(Box::new(ForcedUnwind))
}

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
    /// Set when the fiber is being dropped; a suspend after that unwinds again.
    unwinding: Cell<bool>,
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
/// that the first `enter` runs `body`.
pub(super) fn prepare<F, I, Y, R>(stack: &Stack, body: F) -> io::Result<NonNull<Header>>
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
    // SAFETY: `header_below` and `closure_below` place them inside the stack's usable
    // memory, suitably aligned and not overlapping (checked just above to leave
    // room below them); the stack is fresh from the pool, so nothing else uses it.
    // `init_stack` gets a 16-byte-aligned top with the entry room below it.
    unsafe {
        closure.write(body);
        let frame_top = align_down(closure as usize, 16) as *mut u8;
        let sp = arch::init_stack(frame_top, entry::<F, I, Y, R>, header.cast());
        header.write(Header {
            parent: Cell::new(ptr::null_mut()),
            own: Cell::new(sp),
            state: Cell::new(Status::Created),
            unwinding: Cell::new(false),
        });
        Ok(NonNull::new_unchecked(header))
    }
}

/// The first frame on a fiber's stack (called by the bootstrap frame of
/// `arch::init_stack`): runs the closure and sends back what it returned or the
/// panic it raised, then leaves for good.
unsafe extern "C" fn entry<F, I, Y, R>(message: usize, data: *mut u8) -> !
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
            ptr::read(message as *const Inbound<I>),
        )
    };
    let outcome = match first {
        Inbound::Resume(input) => {
            let yielder = Yielder::new(NonNull::from(header));
            match panic::catch_unwind(AssertUnwindSafe(move || body(&yielder, input))) {
                Ok(value) => Outbound::Return(value),
                Err(payload) => Outbound::Panic(payload),
            }
        }
        // Dropped before it ever ran: drop the closure, which is all it holds.
        Inbound::Unwind => match panic::catch_unwind(AssertUnwindSafe(move || drop(body))) {
            Ok(()) => Outbound::Panic(Box::new(ForcedUnwind)),
            Err(payload) => Outbound::Panic(payload),
        },
    };
    header.state.set(Status::Dead);
    let outcome = ManuallyDrop::new(outcome);
    // SAFETY: the parent is the context that entered this fiber, suspended in
    // `enter`, which reads the `Outbound<Y, R>` sent here. Nothing resumes a dead
    // fiber (every way in checks the state), so the switch never returns.
    unsafe {
        arch::switch(
            header.own.as_ptr(),
            header.parent.get(),
            &*outcome as *const Outbound<Y, R> as usize,
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

    pub(super) fn is_unwinding(&self) -> bool {
        self.unwinding.get()
    }

    pub(super) fn set_unwinding(&self) {
        self.unwinding.set(true);
    }

    /// Runs this fiber from the current context until it suspends, returns or
    /// panics, and returns what it sent back (or what the fiber it transferred to
    /// sent back).
    ///
    /// # Safety
    ///
    /// The fiber must be `Created` or `Suspended`, and `I`, `Y`, `R` must be the
    /// types it was prepared with.
    pub(super) unsafe fn enter<I, Y, R>(&self, message: Inbound<I>) -> Outbound<Y, R> {
        self.state.set(Status::Running);
        let message = ManuallyDrop::new(message);
        // SAFETY: a Created or Suspended fiber's `own` is a suspended context; the
        // resumer's stack pointer is saved in `parent`, where the fiber's `leave`
        // (or the final switch of `entry`) finds it. The reply is an
        // `Outbound<Y, R>` on the other stack, moved out at once.
        unsafe {
            let reply = arch::switch(
                self.parent.as_ptr(),
                self.own.get(),
                &*message as *const Inbound<I> as usize,
            );
            ptr::read(reply as *const Outbound<Y, R>)
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
        // SAFETY: the fiber runs, so `parent` holds the suspended resumer, which
        // reads an `Outbound<Y, R>`; whoever switches back here sends an
        // `Inbound<I>`.
        unsafe {
            let got = arch::switch(
                self.own.as_ptr(),
                self.parent.get(),
                &*message as *const Outbound<Y, R> as usize,
            );
            ptr::read(got as *const Inbound<I>)
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
            let got = arch::switch(
                self.own.as_ptr(),
                target.own.get(),
                &*message as *const Inbound<I> as usize,
            );
            ptr::read(got as *const Inbound<I>)
        }
    }
}

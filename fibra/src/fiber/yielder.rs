//! The running fiber's side: suspend to the resumer, or transfer to another fiber.

use super::context::{Header, State};
use super::message::{Inbound, Outbound, forced_unwind};
use super::{Fiber, FiberError};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The handle a fiber's closure receives to suspend itself or pass control on.
///
/// It is lent to the closure for the fiber's whole run and cannot leave it (the
/// closure gets a reference with a lifetime of its own), so it always refers to
/// the fiber that is running it.
pub struct Yielder<I, Y, R> {
    header: NonNull<Header>,
    _types: PhantomData<*mut (I, Y, R)>,
}

impl<I, Y, R> Yielder<I, Y, R> {
    pub(super) fn new(header: NonNull<Header>) -> Self {
        Yielder {
            header,
            _types: PhantomData,
        }
    }

    fn header(&self) -> &Header {
        // SAFETY: a yielder exists only on its fiber's stack, below the header,
        // for as long as the fiber runs.
        unsafe { self.header.as_ref() }
    }

    /// Suspends this fiber, handing `value` to its resumer (whose `resume` returns
    /// [`Step::Yield`](super::Step::Yield)), and returns the value of the next
    /// `resume` — Ruby's `Fiber.yield`, Lua's `coroutine.yield`.
    ///
    /// If the fiber is dropped while suspended here, this call unwinds instead of
    /// returning, so that the destructors of the fiber's stack run. Called while
    /// the fiber is being dropped, it does not suspend: it unwinds again at once,
    /// or, from a destructor running during that unwind, aborts the process
    /// (see the [module docs](super), "Panics, drops and errors").
    #[inline]
    pub fn suspend(&self, value: Y) -> I {
        let header = self.header();
        // No check for a fiber being dropped on this path: its dropper takes the
        // value and sends the unwind straight back (`Fiber::unwind`), which lands
        // in the `Unwind` arm below — one branch that every suspend makes anyway.
        // SAFETY: we are on this fiber's stack while it runs (a yielder never
        // leaves its fiber), and the types are the fiber's own.
        match unsafe { header.leave::<I, Y, R>(Outbound::Yield(value)) } {
            Inbound::Resume(input) => input,
            Inbound::Unwind => unwind_again(header),
        }
    }

    /// Suspends this fiber and runs `to` in its place, in one switch — Ruby's
    /// `Fiber#transfer`. `to` starts (with `value` as its closure's argument) or
    /// continues (its pending `suspend` or `transfer` returns `value`), and
    /// inherits this fiber's resumer. This call returns when this fiber is resumed
    /// or transferred to again, with the value sent then.
    ///
    /// # Errors
    ///
    /// [`FiberError::Running`] if `to` is this fiber or one waiting on it,
    /// [`FiberError::Yielding`] if `to` is suspended in `suspend` (resume it
    /// instead), [`FiberError::Dead`] if `to` has finished,
    /// [`FiberError::Dropping`] if this fiber is being dropped. Nothing switches.
    #[inline]
    pub fn transfer(&self, to: &Fiber<I, Y, R>, value: I) -> Result<I, FiberError> {
        let header = self.header();
        if header.state() == State::Unwinding {
            return Err(FiberError::Dropping);
        }
        let target = to.header();
        let state = target.state();
        if !matches!(state, State::Created | State::Transferred) {
            return Err(refused_transfer(state));
        }
        to.forget_sp();
        // SAFETY: we are on this fiber's stack while it runs (Running: not being
        // dropped); `target` is another fiber (this one is Running, `target` is
        // not), Created or Transferred, of the same types.
        match unsafe { header.pass::<I>(target, Inbound::Resume(value)) } {
            Inbound::Resume(input) => Ok(input),
            Inbound::Unwind => forced_unwind(),
        }
    }
}

/// What `suspend` does when the fiber is being dropped: it unwinds (again) at
/// once — the first time for a fiber suspended before the drop, again for one
/// that suspends while it unwinds. Unless this thread is unwinding and was not
/// when the drop began — then the unwind in flight is the fiber's own, the
/// caller is a destructor it runs, and a panic out of it would make Rust abort
/// with a message that does not say why: say why, and abort. (When the dropper
/// was itself unwinding, the two cannot be told apart: the fiber unwinds again,
/// and if that is from such a destructor, Rust aborts with its own message.)
#[cold]
fn unwind_again(header: &Header) -> ! {
    if std::thread::panicking() && !header.dropped_while_panicking() {
        eprintln!(
            "fibra: a fiber suspended while it was being dropped and unwound (a destructor \
             called suspend); it can neither suspend nor unwind again, so the process aborts"
        );
        std::process::abort();
    }
    forced_unwind()
}

/// Why `transfer` refuses a target in `state` (not Created or Transferred). Out
/// of line, so that `transfer`'s hot path stays small.
#[cold]
#[inline(never)]
fn refused_transfer(state: State) -> FiberError {
    match state {
        State::Yielded => FiberError::Yielding,
        State::Dead => FiberError::Dead,
        _ => FiberError::Running,
    }
}

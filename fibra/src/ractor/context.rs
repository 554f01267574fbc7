//! [`Context`], what a Ractor's body holds: its own ports, seen from inside —
//! receiving from the incoming one, yielding to the outgoing one, closing
//! either. It is the incoming port's one receiver.

use super::error::{Closed, TakeError};
use super::ports::Ports;
use std::marker::PhantomData;
use std::sync::Arc;

/// What a Ractor's body receives: its own ports.
///
/// The body is lent it (`&Context`) for as long as it runs. It is neither
/// `Send` nor `Sync`: the incoming port has one receiver, the body's own
/// green thread, which is what lets a message arrive without a lock.
///
/// ```compile_fail
/// // A Context cannot be shared with another thread.
/// let r = fibra::ractor::Ractor::new(|ctx: &fibra::ractor::Context<u8>| {
///     std::thread::scope(|s| {
///         s.spawn(|| ctx.receive());
///     });
/// });
/// ```
pub struct Context<In, Out = ()> {
    pub(super) ports: Arc<Ports<In, Out>>,
    /// Neither `Send` nor `Sync` (see above).
    pub(super) _one_receiver: PhantomData<*const ()>,
}

impl<In, Out> Context<In, Out> {
    /// Waits for the next message (Ruby's `Ractor.receive`).
    ///
    /// # Errors
    ///
    /// [`Closed`] once the incoming port is closed and every message sent
    /// before has been received.
    pub fn receive(&self) -> Result<In, Closed> {
        // SAFETY: the mailbox's single consumer is whoever holds this Context,
        // which cannot leave the body's OS thread (not `Send` nor `Sync`), and
        // whose calls there never overlap (see `mailbox`'s module docs).
        unsafe { self.ports.incoming.receive() }
    }

    /// The next message if one has arrived, without waiting.
    ///
    /// # Errors
    ///
    /// [`Closed`] if the port is closed and drained.
    pub fn try_receive(&self) -> Result<Option<In>, Closed> {
        // SAFETY: as in `receive`.
        unsafe { self.ports.incoming.try_receive() }
    }

    /// Offers `value` to takers and waits until one has taken it (Ruby's
    /// `Ractor.yield`).
    ///
    /// # Errors
    ///
    /// The value comes back in [`Closed`] if the outgoing port is closed
    /// (before or while waiting).
    pub fn yield_value(&self, value: Out) -> Result<(), Closed<Out>> {
        self.ports.outgoing.offer(value)
    }

    /// Closes this Ractor's incoming port (see
    /// [`Ractor::close_incoming`](super::Ractor::close_incoming)).
    pub fn close_incoming(&self) -> bool {
        self.ports.incoming.close()
    }

    /// Closes this Ractor's outgoing port (see
    /// [`Ractor::close_outgoing`](super::Ractor::close_outgoing)).
    pub fn close_outgoing(&self) -> bool {
        self.ports.outgoing.close(TakeError::Closed)
    }
}

impl<In, Out> Drop for Context<In, Out> {
    fn drop(&mut self) {
        // SAFETY: as in `receive`; this is the Context's last use.
        unsafe { self.ports.incoming.forget_receiver() };
    }
}

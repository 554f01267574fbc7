//! [`Ractor`], the handle on a running Ractor: what any thread that holds
//! one may do with it — send to it, take what it yields, join it, close its
//! ports.

use super::context::Context;
use super::error::{RemoteError, SendError, TakeError};
use super::outcome::Outcome;
use super::pool;
use super::ports::Ports;
use std::fmt;
use std::sync::Arc;

/// A Ractor: a handle on an actor running on a worker of a [`Pool`](super::Pool).
///
/// `In` is what it receives, `Out` what it yields to takers, `R` what its body
/// returns. Handles are cheap to clone and may be sent to and shared between
/// threads and other Ractors.
pub struct Ractor<In, Out = (), R = ()> {
    pub(super) ports: Arc<Ports<In, Out>>,
    pub(super) outcome: Arc<Outcome<R>>,
    pub(super) id: u64,
    /// Where it runs, for [`Pool::spawn_near`](super::Pool::spawn_near).
    pub(super) home: pool::Home,
}

impl<In, Out, R> Ractor<In, Out, R>
where
    In: Send + 'static,
    Out: Send + 'static,
    R: Send + 'static,
{
    /// Starts a Ractor running `body` on the process-wide pool (one worker per
    /// core, started on first use).
    pub fn new<F>(body: F) -> Self
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
    {
        pool::global().spawn(body)
    }
}

impl<In, Out, R> Ractor<In, Out, R> {
    /// Queues `message` in the Ractor's incoming port (Ruby's `Ractor#send`).
    /// It never waits (the port has no bound), so async code calls it as it is.
    ///
    /// # Errors
    ///
    /// The message comes back in a [`SendError`] if the port is closed.
    pub fn send(&self, message: In) -> Result<(), SendError<In>> {
        self.ports.incoming.send(message)
    }

    /// Waits for the Ractor to offer a value with [`Context::yield_value`] and
    /// takes it (Ruby's `Ractor#take`).
    ///
    /// # Errors
    ///
    /// [`TakeError`] at once if the outgoing port is closed or the Ractor has
    /// finished (with the panic message if it panicked).
    pub fn take(&self) -> Result<Out, TakeError> {
        self.ports.outgoing.take()
    }

    /// Waits for the Ractor's body to finish and returns what it returned
    /// (Ruby's `Ractor#value`).
    ///
    /// # Errors
    ///
    /// [`RemoteError`] if it panicked (with the payload) or was cancelled, or if
    /// another handle already took the value.
    pub fn join(self) -> Result<R, RemoteError> {
        self.outcome.wait()
    }

    /// Whether the body has finished.
    pub fn is_finished(&self) -> bool {
        self.outcome.lock().finished
    }

    /// Closes the incoming port: sends fail from now on, and the body's
    /// `receive` fails once it has drained what was sent before. Returns whether
    /// the port was open.
    pub fn close_incoming(&self) -> bool {
        self.ports.incoming.close()
    }

    /// Closes the outgoing port: takers and the body's `yield_value` fail from
    /// now on. A value the body offers at that moment is not taken: its
    /// `yield_value` returns it in [`Closed`](super::Closed) (as Ruby's
    /// `take` raises `ClosedError` after `close_outgoing` even while the
    /// Ractor yields). Returns whether the port was open.
    pub fn close_outgoing(&self) -> bool {
        self.ports.outgoing.close(TakeError::Closed)
    }

    /// A number that names this Ractor for the life of the process.
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl<In, Out, R> Clone for Ractor<In, Out, R> {
    fn clone(&self) -> Self {
        Ractor {
            ports: self.ports.clone(),
            outcome: self.outcome.clone(),
            id: self.id,
            home: self.home,
        }
    }
}

impl<In, Out, R> fmt::Debug for Ractor<In, Out, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ractor")
            .field("id", &self.id)
            .field("finished", &self.is_finished())
            .finish()
    }
}

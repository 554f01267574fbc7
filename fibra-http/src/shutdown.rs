//! The graceful shutdown's signal: the flag a [`ShutdownHandle`] sets from any
//! thread, which the server's accepting loops and its connections read, and
//! the green thread that waits for it.

use fibra::runtime::Unparker;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// What a [`ShutdownHandle`] shares with the running server.
#[derive(Debug, Default)]
pub(crate) struct Control {
    pub(crate) stopping: AtomicBool,
    /// The green thread that waits for the shutdown, once it waits.
    waiter: Mutex<Option<Unparker>>,
}

/// Stops a [`Server`](crate::Server) from any thread: it stops accepting, closes the
/// connections idle between requests and those upgraded to another protocol
/// (see [`Request::upgrade`](crate::Request::upgrade)), lets the requests in flight finish
/// (their responses say `Connection: close`) within the grace period (see
/// [`Builder::grace_period`](crate::Builder::grace_period)), closes what is left, and then `serve`
/// returns.
#[derive(Clone, Debug)]
pub struct ShutdownHandle(pub(crate) Arc<Control>);

impl ShutdownHandle {
    /// Starts the graceful shutdown (again: no effect).
    pub fn shutdown(&self) {
        self.0.stopping.store(true, Ordering::SeqCst);
        let waiter = self.0.waiter.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(waiter) = waiter.as_ref() {
            waiter.unpark();
        }
    }

    /// Whether a graceful shutdown has been started.
    pub fn is_shutting_down(&self) -> bool {
        self.0.stopping.load(Ordering::SeqCst)
    }
}

/// Parks the calling green thread until the server is told to shut down.
pub(crate) fn wait_for_shutdown(control: &Control) {
    *control
        .waiter
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(fibra::runtime::current().unparker());
    while !control.stopping.load(Ordering::SeqCst) {
        fibra::runtime::park();
    }
}

//! Errands.
//!
//! What another OS thread asks of the runtime itself — to start a green
//! thread ([`Handle::spawn`](super::Handle::spawn)), to cancel one
//! ([`RemoteJoinHandle::cancel`](super::RemoteJoinHandle::cancel)) — is an
//! *errand*: a closure queued under a lock beside the ring, announced by a
//! wake of its own in the ring (`TaskId::ERRANDS`), so that it reaches a
//! sleeping or spinning runtime exactly as an unpark does, and the runtime's
//! loop runs it on its own OS thread. The queue is pushed to under its lock
//! before the wake is, so the runtime that takes the wake finds the errand
//! when it takes the queue under that lock. When the runtime ends it closes
//! the queue: an errand sent after that is handed back, and those still
//! queued are dropped — nothing is left queued where nobody will run it.

use super::Remote;
use crate::runtime::task::TaskId;
use std::sync::PoisonError;

/// Work for the runtime's loop, from another OS thread: it runs on the
/// runtime's OS thread, between green threads, where that runtime is the
/// current one (`scheduler::current()` is it; see the module docs).
pub(in crate::runtime) type Errand = Box<dyn FnOnce() + Send>;

#[derive(Default)]
pub(super) struct Errands {
    queue: Vec<Errand>,
    /// The runtime is ending: it takes no more.
    closed: bool,
}

impl Remote {
    /// Queues `errand` for the runtime's loop and wakes the runtime as an
    /// unpark does (see the module docs); hands it back if the runtime is
    /// ending or has ended.
    pub(in crate::runtime) fn send_errand(&self, errand: Errand) -> Result<(), Errand> {
        {
            let mut errands = self.errands.lock().unwrap_or_else(PoisonError::into_inner);
            if errands.closed {
                return Err(errand);
            }
            errands.queue.push(errand);
        }
        self.push(TaskId::ERRANDS);
        Ok(())
    }

    /// The errands queued since the last call (the runtime's own thread,
    /// when it finds `TaskId::ERRANDS` among its wakes).
    pub(in crate::runtime) fn take_errands(&self) -> Vec<Errand> {
        let mut errands = self.errands.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut errands.queue)
    }

    /// The runtime is ending: from now on an errand is handed back to its
    /// sender. Returns those still queued, for the caller to drop once the
    /// lock is released (an errand holds a closure of the program's, whose
    /// drop may do anything, send an errand included).
    #[must_use = "the errands returned are to be dropped outside the lock"]
    pub(in crate::runtime) fn close_errands(&self) -> Vec<Errand> {
        let mut errands = self.errands.lock().unwrap_or_else(PoisonError::into_inner);
        errands.closed = true;
        std::mem::take(&mut errands.queue)
    }
}

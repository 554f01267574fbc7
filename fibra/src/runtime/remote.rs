//! Waking a green thread from another OS thread.
//!
//! Other threads cannot touch a runtime's run queue (it is not shared), so an
//! [`Unparker`] puts the thread's id in a small locked list and wakes the
//! runtime's poller; the runtime moves the ids to its run queue the next time
//! round its loop. The lock is held for a push or a swap, never across a switch.

use super::task::TaskId;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

pub(super) struct Remote {
    woken: Mutex<Vec<TaskId>>,
    waker: mio::Waker,
}

impl Remote {
    pub(super) fn new(waker: mio::Waker) -> Remote {
        Remote {
            woken: Mutex::new(Vec::new()),
            waker,
        }
    }

    /// The ids woken since the last call, oldest first.
    pub(super) fn take(&self, into: &mut Vec<TaskId>) {
        into.append(&mut self.woken.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// Wakes one parked green thread from any OS thread (the counterpart of
/// [`std::thread::Thread::unpark`]): the thread's next or pending
/// [`park`](super::park) returns. Cloneable, `Send` and `Sync`.
///
/// Get one with [`Thread::unparker`](super::Thread::unparker). Unparking a
/// thread that has finished, or whose runtime has ended, does nothing.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
///
/// fibra::run(|| {
///     let done = Arc::new(AtomicBool::new(false));
///     let unparker = fibra::runtime::current().unparker();
///     let flag = done.clone();
///     std::thread::spawn(move || {
///         flag.store(true, Ordering::Release);
///         unparker.unpark();
///     });
///     while !done.load(Ordering::Acquire) {
///         fibra::runtime::park(); // only this green thread waits; the OS thread is free
///     }
/// });
/// ```
#[derive(Clone)]
pub struct Unparker {
    pub(super) remote: Arc<Remote>,
    pub(super) task: TaskId,
}

impl Unparker {
    /// Makes the green thread runnable if it is parked, or makes its next
    /// [`park`](super::park) return at once if it is not.
    pub fn unpark(&self) {
        self.remote
            .woken
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.task);
        // Failure means the runtime's poller is gone: nobody is left to wake.
        let _ = self.remote.waker.wake();
    }
}

impl fmt::Debug for Unparker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unparker")
            .field("thread", &self.task)
            .finish()
    }
}

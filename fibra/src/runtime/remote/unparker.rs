//! [`Unparker`], what wakes a green thread from another OS thread, and the
//! count of the references to a runtime's remote queue held outside its loop
//! ([`Outside`]): while one is held a runtime with nothing else to wait for
//! sleeps rather than report a deadlock, so the drop of the last one must
//! wake it (a Dekker pair like the unpark's: see `sleep.rs`).

use super::Remote;
use crate::runtime::task::TaskId;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Wakes one parked green thread from any OS thread (the counterpart of
/// [`std::thread::Thread::unpark`]): the thread's next or pending
/// [`park`](crate::runtime::park) returns. Cloneable, `Send` and `Sync`.
///
/// Get one with [`Thread::unparker`](crate::runtime::Thread::unparker). Unparking a
/// thread that has finished, or whose runtime has ended, does nothing (and
/// keeps no memory: an `Unparker` may outlive its runtime).
/// Unparking takes no lock, and makes a system call only when the thread's
/// runtime is asleep with nothing else to do.
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
    pub(in crate::runtime) remote: Outside,
    pub(in crate::runtime) task: TaskId,
}

/// A reference to a runtime's remote queue from outside its loop — what an
/// [`Unparker`] holds — counted in [`Remote::held_outside`]: while one is
/// left, a runtime with nothing else to wait for sleeps rather than report a
/// deadlock, since the holder may unpark a thread.
///
/// So dropping the last one must wake a runtime asleep for that reason, or
/// it would sleep for ever. Its drop is the other half of a Dekker pair like
/// the unpark's (see `sleep.rs`): it decrements the count, then a
/// sequentially consistent fence, then reads `sleeping`, and writes the
/// eventfd only if it is set; the runtime sets `sleeping`, then its fence,
/// then reads the count (`prepare_to_sleep`), and sleeps only if an
/// `Outside` is left. Only the last drop of all, and only while the runtime
/// sleeps, costs a system call; every other drop is the decrement alone.
pub(in crate::runtime) struct Outside(Arc<Remote>);

impl Outside {
    pub(in crate::runtime) fn new(remote: &Arc<Remote>) -> Outside {
        // Relaxed, as `Arc::clone`: a count of zero matters only to the
        // runtime, and only its own OS thread makes the first one.
        remote.outside.fetch_add(1, Ordering::Relaxed);
        Outside(remote.clone())
    }
}

impl Clone for Outside {
    fn clone(&self) -> Outside {
        Outside::new(&self.0)
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        // Release: the unparks made through this one are seen by the
        // runtime that sees the count (`held_outside`'s acquire).
        if self.0.outside.fetch_sub(1, Ordering::Release) == 1 {
            self.0.wake_if_sleeping();
        }
    }
}

impl Deref for Outside {
    type Target = Arc<Remote>;

    fn deref(&self) -> &Arc<Remote> {
        &self.0
    }
}

impl Unparker {
    /// Makes the green thread runnable if it is parked, or makes its next
    /// [`park`](crate::runtime::park) return at once if it is not.
    pub fn unpark(&self) {
        self.remote.push(self.task);
    }
}

impl fmt::Debug for Unparker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unparker")
            .field("thread", &self.task)
            .finish()
    }
}

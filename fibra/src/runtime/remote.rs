//! Waking a green thread from another OS thread.
//!
//! Other threads cannot touch a runtime's run queue (it is not shared), so an
//! [`Unparker`] puts the thread's id in a small locked list; the runtime moves
//! the ids to its run queue the next time round its loop. The lock is held for a
//! push or a swap, never across a switch.
//!
//! Waking the runtime's poller costs a system call on each side (an eventfd
//! write, an epoll return), so it is done only when the runtime is asleep in the
//! poller: `pending` and `sleeping` form a Dekker pair — the unparker publishes
//! its wake then reads `sleeping`, the runtime publishes `sleeping` then reads
//! `pending`, all sequentially consistent — so at least one of them sees the
//! other and no wake is lost. Before sleeping, an idle runtime spins for a few
//! microseconds on `pending` (see the scheduler), which is what makes a
//! message between Ractors on two cores cheap.

use super::task::TaskId;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

pub(super) struct Remote {
    woken: Mutex<Vec<TaskId>>,
    waker: mio::Waker,
    /// Set by every unpark, cleared when the runtime takes the ids.
    pending: AtomicBool,
    /// Set while the runtime sleeps in its poller (or is about to).
    sleeping: AtomicBool,
}

impl Remote {
    pub(super) fn new(waker: mio::Waker) -> Remote {
        Remote {
            woken: Mutex::new(Vec::new()),
            waker,
            pending: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
        }
    }

    /// The ids woken since the last call, oldest first.
    pub(super) fn take(&self, into: &mut Vec<TaskId>) {
        if self.pending.swap(false, SeqCst) {
            into.append(&mut self.woken.lock().unwrap_or_else(PoisonError::into_inner));
        }
    }

    /// Spins for up to `limit` waiting for an unpark; returns whether one came.
    pub(super) fn spin(&self, limit: Duration) -> bool {
        let start = Instant::now();
        loop {
            for _ in 0..64 {
                if self.pending.load(SeqCst) {
                    return true;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= limit {
                return false;
            }
        }
    }

    /// Announces that the runtime is about to sleep in its poller; returns false
    /// (and stays awake) if an unpark is already pending.
    pub(super) fn prepare_to_sleep(&self) -> bool {
        self.sleeping.store(true, SeqCst);
        if self.pending.load(SeqCst) {
            self.sleeping.store(false, SeqCst);
            return false;
        }
        true
    }

    pub(super) fn woke_up(&self) {
        self.sleeping.store(false, SeqCst);
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
        let remote = &self.remote;
        remote
            .woken
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.task);
        remote.pending.store(true, SeqCst);
        if remote.sleeping.load(SeqCst) {
            // Failure means the runtime's poller is gone: nobody is left to wake.
            let _ = remote.waker.wake();
        }
    }
}

impl fmt::Debug for Unparker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unparker")
            .field("thread", &self.task)
            .finish()
    }
}

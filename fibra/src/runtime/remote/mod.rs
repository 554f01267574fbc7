//! Waking a green thread from another OS thread.
//!
//! Other threads cannot touch a runtime's run queue (it is not shared), so an
//! [`Unparker`] puts the thread's id in the runtime's *remote queue*; the
//! runtime moves the ids to its run queue the next time round its loop.
//!
//! # The remote queue
//!
//! A lock-free ring (`ring.rs`): an unpark takes one read-modify-write on its
//! tail and one store in a slot, and the runtime's "is anything pending?" is
//! a load of the slot at its head — the very cache line the producer wrote —
//! so an idle runtime that spins for a wake spins on the line the wake
//! arrives in. When the ring is full (more wakes than it has slots between two
//! turns of the loop) ids go to a locked overflow list instead, so no wake is
//! ever dropped — each thread at most once, so that the list is bounded by
//! the threads woken, however fast another OS thread unparks. Once the
//! runtime has ended, nobody takes wakes any more: those the ring cannot
//! hold are dropped, not listed (an `Unparker` may outlive its runtime).
//!
//! # Where each part is
//!
//! - `mod.rs` (here): the queue of wakes (the ring and its overflow list).
//! - `sleep.rs`: how the runtime sleeps in its poller without losing a wake.
//! - `errands.rs`: work that other OS threads ask of the runtime's loop.
//! - `unparker.rs`: [`Unparker`], and the count of those held, whose last
//!   drop wakes a runtime that waits for nothing else.
//! - `model_check.rs`: the model checker's view of all of it (loom).

mod errands;
#[cfg(fibra_loom)]
pub(crate) mod model_check;
mod sleep;
#[cfg(all(test, not(fibra_loom)))]
mod tests;
mod unparker;

pub(in crate::runtime) use errands::Errand;
pub(in crate::runtime) use unparker::Outside;
pub use unparker::Unparker;

use super::ring::Ring;
use super::task::TaskId;
use crate::sync_prims::{AtomicBool, AtomicUsize, Mutex};
use crossbeam_utils::CachePadded;
use errands::Errands;
use std::collections::HashSet;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;

pub(super) struct Remote {
    ring: Ring<TaskId>,
    /// Ids that found the ring full, whether there are any, and whether the
    /// runtime has ended.
    overflow: Mutex<Overflow>,
    overflowed: AtomicBool,
    /// How many [`Outside`] references there are (the `Unparker`s): none
    /// left, with nothing else to wait for, is a deadlock. A line of its
    /// own: other OS threads write it as they clone and drop `Unparker`s,
    /// and the runtime's spin for a wake reads `overflowed`.
    outside: CachePadded<AtomicUsize>,
    /// Set while the runtime sleeps in its poller (or is about to). Written
    /// only around a sleep, so awake, it is a line every core keeps shared.
    sleeping: CachePadded<AtomicBool>,
    waker: Waker,
    /// The errands other OS threads queued (see `errands.rs`).
    errands: Mutex<Errands>,
}

/// The wakes that found the ring full, each thread once: a thread woken
/// twice before the runtime takes its wakes runs once either way (it is
/// parked or ready then, never running: the runtime takes wakes from its own
/// loop), so a second id would only cost memory — and a loop that unparks
/// one thread faster than its runtime takes wakes would grow the list
/// without bound. Bounded by the threads that were woken, then.
#[derive(Default)]
struct Overflow {
    ids: Vec<TaskId>,
    queued: HashSet<TaskId>,
    /// The runtime has ended: wakes are dropped, not queued (nobody would
    /// ever take them).
    ended: bool,
}

/// What the runtime's poller is woken with: the eventfd (for the model
/// checker, a flag that its model of a sleep waits on).
#[cfg(not(fibra_loom))]
type Waker = mio::Waker;

#[cfg(fibra_loom)]
type Waker = model_check::Poller;

impl Remote {
    #[cfg(not(fibra_loom))]
    pub(super) fn new(waker: mio::Waker) -> Remote {
        Remote::with_waker(waker)
    }

    /// (Never called under the model checker: it builds no runtime.)
    #[cfg(fibra_loom)]
    pub(super) fn new(_: mio::Waker) -> Remote {
        Remote::with_waker(Waker::default())
    }

    fn with_waker(waker: Waker) -> Remote {
        Remote {
            ring: Ring::new(),
            overflow: Mutex::new(Overflow::default()),
            overflowed: AtomicBool::new(false),
            outside: CachePadded::new(AtomicUsize::new(0)),
            sleeping: CachePadded::new(AtomicBool::new(false)),
            waker,
            errands: Mutex::new(Errands::default()),
        }
    }

    /// Queues `task` (from any thread); then wakes the poller if the runtime
    /// sleeps there (see `sleep.rs` for why no wake is lost). Once the
    /// runtime has ended, the wake is dropped instead (but for what fits in
    /// the ring: a wake that finds room there costs no look at whether the
    /// runtime has ended, and a full ring is not memory that grows).
    pub(super) fn push(&self, task: TaskId) {
        if !self.ring.push(task) {
            let mut overflow = self.overflow.lock().unwrap_or_else(PoisonError::into_inner);
            if overflow.ended {
                return;
            }
            if overflow.queued.insert(task) {
                overflow.ids.push(task);
            }
            // Under the lock, as the runtime's clearing: so the flag is set
            // whenever the list holds an id.
            self.overflowed.store(true, Ordering::Release);
        }
        self.wake_if_sleeping();
    }

    /// Whether an unpark is waiting to be taken (consumer only).
    pub(super) fn pending(&self) -> bool {
        self.ring.is_ready() || self.overflowed.load(Ordering::Acquire)
    }

    /// The ids woken since the last call (the runtime's own thread only).
    pub(super) fn take(&self, into: &mut Vec<TaskId>) {
        self.ring.pop_all(into);
        // A load, and the clearing under the lock, where the producers set
        // it: a swap here against their store let the model checker lose a
        // wake (`unparks_from_two_threads`: an id left in the list with the
        // flag cleared). That is loom's known fault with a store concurrent
        // with a swap (tokio-rs/loom#254), not a C11 outcome, but this way
        // has no such pair, and the runtime's take makes no read-modify-write.
        if self.overflowed.load(Ordering::Acquire) {
            let mut overflow = self.overflow.lock().unwrap_or_else(PoisonError::into_inner);
            self.overflowed.store(false, Ordering::Relaxed);
            overflow.queued.clear();
            into.append(&mut overflow.ids);
        }
    }

    /// Whether an [`Unparker`] is left anywhere (then it may wake a thread).
    /// If not, every unpark the dropped ones made is visible to [`take`](Self::take)
    /// (their drops' release pairs with this acquire).
    pub(super) fn held_outside(&self) -> bool {
        self.outside.load(Ordering::Acquire) != 0
    }

    /// The runtime has ended: from now on a wake that finds the ring full is
    /// dropped, and those queued are freed.
    pub(super) fn end(&self) {
        let mut overflow = self.overflow.lock().unwrap_or_else(PoisonError::into_inner);
        overflow.ended = true;
        overflow.ids = Vec::new();
        overflow.queued = HashSet::new();
    }
}

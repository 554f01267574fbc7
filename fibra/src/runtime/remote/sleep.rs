//! Sleeping without losing a wake.
//!
//! Waking the runtime's poller costs a system call on each side (an eventfd
//! write, an epoll return), so it is done only when the runtime is asleep in
//! the poller. `sleeping` and the queue form a Dekker pair:
//!
//! - the producer publishes its id, then a sequentially consistent fence, then
//!   reads `sleeping`, and writes the eventfd only if it is set;
//! - the runtime sets `sleeping`, then a sequentially consistent fence, then
//!   looks at the queue, and sleeps only if it is empty.
//!
//! The two fences are ordered one way or the other in the single total order
//! of sequentially consistent operations: if the producer's comes first, the
//! runtime's look at the queue (after its fence) sees the id; if the runtime's
//! comes first, the producer's read of `sleeping` (after its fence) sees
//! `true` and the eventfd is written. Either way the wake is not lost. A
//! runtime that is awake never has `sleeping` set, so producers only read
//! that line (it stays shared in every cache) and write no eventfd: waking an
//! awake runtime costs no system call and no lock. `tests/cross_thread.rs`
//! (`sleeping_receivers_never_miss_a_wake`) drives this hard.
//!
//! Before sleeping, an idle runtime spins for a few microseconds on the head
//! slot (see the scheduler's loop), so that a wake from another core costs no system
//! call. A green thread that waits for a Ractor message spins first, in its
//! own `receive` (`spin.rs`), so that between two chatty Ractors no wake is
//! needed at all; it stops as soon as this ring has a wake for another thread.

use super::Remote;
use crate::sync_prims::fence;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl Remote {
    /// Writes the eventfd if the runtime sleeps in its poller; after a
    /// change the runtime must see (the producer's half of the Dekker pair).
    pub(super) fn wake_if_sleeping(&self) {
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) {
            // Failure means the runtime's poller is gone: nobody is left to wake.
            let _ = self.waker.wake();
        }
    }

    /// Spins for up to `limit` waiting for an unpark; returns whether one came.
    pub(in crate::runtime) fn spin(&self, limit: Duration) -> bool {
        let start = Instant::now();
        loop {
            for _ in 0..64 {
                if self.pending() {
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
    /// (and stays awake) if an unpark is already pending — or, where
    /// `until_unheld` (the runtime found an `Unparker` held, and has nothing
    /// else to wait for), if none is held any more: the loop must go round
    /// and report the deadlock rather than sleep through it.
    pub(in crate::runtime) fn prepare_to_sleep(&self, until_unheld: bool) -> bool {
        // The runtime's half of the Dekker pair (see the module docs).
        self.sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.pending() || (until_unheld && !self.held_outside()) {
            self.sleeping.store(false, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// The runtime is back from its poller: producers need not write the
    /// eventfd any more. (It takes the queue after this, so an id pushed
    /// meanwhile is not left behind.)
    pub(in crate::runtime) fn woke_up(&self) {
        self.sleeping.store(false, Ordering::Relaxed);
    }
}

//! The counters a runtime keeps of its own work (spawns, parks, wakes, passes
//! of its loop, time asleep, and gauges of its threads and timers): written
//! by the runtime's own OS thread as it works, with relaxed stores and no
//! read-modify-write, and read from any OS thread. They sit in the runtime's
//! [`Monitor`](super::registry::Monitor); [`metrics`](super::metrics())
//! makes a snapshot of them for users.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

/// The counters a runtime writes and other OS threads read (see
/// `metrics.rs`).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(super) spawns: Counter,
    pub(super) parks: Counter,
    pub(super) yields: Counter,
    pub(super) local_wakes: Counter,
    pub(super) remote_wakes: Counter,
    pub(super) passes: Counter,
    pub(super) reactor_events: Counter,
    /// Nanoseconds asleep in the poller.
    pub(super) idle_nanos: Counter,
    /// Gauges, set at each pass of the loop.
    pub(super) alive: Counter,
    pub(super) ready: Counter,
    pub(super) timers_armed: Counter,
}

/// One counter with one writer, the runtime's OS thread.
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`. Only the runtime's own OS thread calls it (the single
    /// writer: a load and a store, no read-modify-write).
    #[inline(always)]
    pub(super) fn add(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }

    /// Sets it to `n` (a gauge), from the runtime's own OS thread.
    #[inline(always)]
    pub(super) fn set(&self, n: u64) {
        self.0.store(n, Relaxed);
    }

    pub(super) fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

//! The atomics, lock, cell, spin and OS thread park of fibra's cross-thread
//! wake paths — the runtime's remote ring and queue (`runtime/ring.rs`,
//! `runtime/remote/`), and through them `block_on`'s waker; a Ractor
//! mailbox's wake (`ractor/mailbox/`, `runtime/waiter.rs`); the
//! cross-thread [`Queue`](crate::sync::Queue), `oneshot` and `watch`
//! (`sync/queue/`, `sync/oneshot.rs`, `sync/watch.rs`) — in one place,
//! so that the model
//! checker can swap them: built with `--cfg fibra_loom`, they are
//! [loom](https://docs.rs/loom)'s, and the model-check tests (`model_check`
//! modules beside the code, run by `scripts/model-check.sh`) explore every
//! interleaving of that code, the real code, under the C11 memory model.
//!
//! In an ordinary build they are std's (and crossbeam's `Backoff`), re-exported,
//! and the cell's two accessors are inlined calls of a closure on
//! `UnsafeCell::get`: the production paths are unchanged.

#[cfg(not(fibra_loom))]
pub(crate) use crossbeam_utils::Backoff;
#[cfg(fibra_loom)]
pub(crate) use loom::sync::Mutex;
#[cfg(fibra_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, fence};
#[cfg(fibra_loom)]
pub(crate) use loom::sync::{RwLock, RwLockReadGuard};
#[cfg(fibra_loom)]
pub(crate) use loom::thread;
#[cfg(not(fibra_loom))]
pub(crate) use std::sync::Mutex;
#[cfg(not(fibra_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, fence};
#[cfg(not(fibra_loom))]
pub(crate) use std::sync::{RwLock, RwLockReadGuard};
#[cfg(not(fibra_loom))]
pub(crate) use std::thread;

/// Blocks the calling OS thread until it is unparked, `timeout` has passed,
/// or spuriously (`std::thread::park_timeout`).
#[cfg(not(fibra_loom))]
pub(crate) fn park_timeout(timeout: std::time::Duration) {
    std::thread::park_timeout(timeout);
}

/// loom has no clock, so a timed park is a spurious wake-up (a yield), which
/// every caller allows for; the model tests wait without deadlines.
#[cfg(fibra_loom)]
pub(crate) fn park_timeout(_: std::time::Duration) {
    loom::thread::yield_now();
}

/// crossbeam's `Backoff` for the model checker: a wait for another thread's
/// few stores must let loom schedule that thread (a spin would explore
/// itself for ever).
#[cfg(fibra_loom)]
pub(crate) struct Backoff;

#[cfg(fibra_loom)]
impl Backoff {
    pub(crate) fn new() -> Backoff {
        Backoff
    }

    pub(crate) fn spin(&self) {
        loom::thread::yield_now();
    }

    pub(crate) fn snooze(&self) {
        loom::thread::yield_now();
    }
}

/// `std::cell::UnsafeCell` with loom's accessors: loom checks that a write
/// through `with_mut` never overlaps another access, which is what the
/// lock-free structures' `SAFETY` comments claim.
#[cfg(fibra_loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `std::cell::UnsafeCell` with loom's accessors (see the module docs).
#[cfg(not(fibra_loom))]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(fibra_loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Calls `f` with a pointer for reading the value.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Calls `f` with a pointer for writing the value.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

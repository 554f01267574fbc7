//! A ticker green thread, for tests that show that a wait parks only the green
//! thread that waits: the ticker sleeps a millisecond between ticks, and its
//! count can be read from any OS thread. A peer on another OS thread that
//! answers only once the ticker has ticked [`TICKS`] times proves that the
//! runtime went on running green threads while the work waited; if the wait
//! held the runtime's OS thread, the answer would never come, and the test
//! fails (after a generous bound) instead of timing anything.

#![allow(dead_code, reason = "each test binary uses part of it")]

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many ticks a peer waits for before it answers.
pub const TICKS: u64 = 10;

/// A green thread that ticks until stopped.
pub struct Ticker {
    ticks: Arc<AtomicU64>,
    stop: Rc<Cell<bool>>,
    thread: fibra::JoinHandle<()>,
}

impl Ticker {
    /// Starts ticking in the calling runtime.
    pub fn start() -> Ticker {
        let ticks = Arc::new(AtomicU64::new(0));
        let stop = Rc::new(Cell::new(false));
        let thread = fibra::spawn({
            let (ticks, stop) = (ticks.clone(), stop.clone());
            move || {
                while !stop.get() {
                    fibra::time::sleep(Duration::from_millis(1));
                    ticks.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        Ticker {
            ticks,
            stop,
            thread,
        }
    }

    /// The count, to hand to another OS thread.
    pub fn counter(&self) -> Arc<AtomicU64> {
        self.ticks.clone()
    }

    /// The ticks so far.
    pub fn count(&self) -> u64 {
        self.ticks.load(Ordering::SeqCst)
    }

    /// Stops the ticker and returns its count.
    pub fn stop(self) -> u64 {
        self.stop.set(true);
        self.thread.join().unwrap();
        self.ticks.load(Ordering::SeqCst)
    }
}

/// Waits, on a plain OS thread, until `ticks` has reached `at_least`.
///
/// # Panics
///
/// After a minute without: the runtime is stalled.
pub fn wait_for_ticks(ticks: &AtomicU64, at_least: u64) {
    let give_up = Instant::now() + Duration::from_secs(60);
    while ticks.load(Ordering::SeqCst) < at_least {
        assert!(
            Instant::now() < give_up,
            "the ticker stopped at {} ticks: the runtime is stalled",
            ticks.load(Ordering::SeqCst)
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

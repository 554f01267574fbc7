//! E1 on the `corosensei` crate: the fastest stackful-coroutine crate measured so
//! far (EXPERIMENTS.md), and the bar for fibra's resume/yield. It has no symmetric
//! transfer.

use corosensei::{Coroutine, Yielder};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Resumes two coroutines that suspend at once, in turn, `n` times.
pub fn resume_yield(n: u64) -> Duration {
    let new = || {
        Coroutine::<(), (), ()>::new(|y: &Yielder<(), ()>, ()| {
            loop {
                y.suspend(())
            }
        })
    };
    let (mut c1, mut c2) = (new(), new());
    let start = Instant::now();
    for _ in 0..n {
        black_box(c1.resume(()));
        black_box(c2.resume(()));
    }
    start.elapsed()
}

//! The hardware's floor for a round trip between two cores: two OS threads
//! bouncing a number through one atomic, each spinning until the other's
//! write arrives. No queue, no sleep, no wake-up: a round trip is the cache
//! line holding the number moving to the other core and back, which is what
//! any message between two cores costs at the least.
//!
//! On a quiet machine with two cores the other's write arrives within a few
//! hundred spins. Where the two threads share one core (a one-core machine,
//! or one preempted by other load), spinning only burns the time slice the
//! other thread needs, so after [`SPINS`] spins a waiter yields its core.

use super::RoundTrips;
use crate::latency::Sampler;
use crate::measure::Timed;
use std::hint::spin_loop;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::Instant;

/// Spins before a waiter yields its core (~50 µs here): never reached while
/// both threads run.
const SPINS: u32 = 1 << 14;

/// Tells pong to end; odd, like every number ping writes, and never one of
/// them (ping writes 1, 3, … 2n − 1).
const STOP: u64 = u64::MAX;

/// `n` round trips: ping writes an odd number, pong spins until it sees it and
/// writes it plus one, ping spins until it sees that.
pub fn pingpong(n: u64) -> Result<RoundTrips, String> {
    let ball = Arc::new(AtomicU64::new(0));
    let pong = {
        let ball = Arc::clone(&ball);
        thread::spawn(move || {
            let mut next = 1;
            loop {
                let seen = wait_for(&ball, |v| v == next || v == STOP);
                if seen == STOP {
                    break;
                }
                ball.store(seen + 1, Ordering::Release);
                next += 2;
            }
        })
    };
    let mut sampler = Sampler::new(n);
    let start = Instant::now();
    for i in 0..n {
        sampler.time(|| {
            ball.store(2 * i + 1, Ordering::Release);
            wait_for(&ball, |v| v == 2 * i + 2);
        });
    }
    let elapsed = start.elapsed();
    ball.store(STOP, Ordering::Release);
    pong.join().map_err(|_| "pong panicked")?;
    Ok(RoundTrips {
        timed: Timed::new(n, elapsed),
        latency: sampler.percentiles(),
    })
}

/// Spins until `ball` holds a number `wanted` accepts, yielding the core
/// every [`SPINS`] spins; returns it.
#[inline(always)]
fn wait_for(ball: &AtomicU64, wanted: impl Fn(u64) -> bool) -> u64 {
    let mut spins = 0;
    loop {
        let v = ball.load(Ordering::Acquire);
        if wanted(v) {
            return v;
        }
        spins += 1;
        if spins == SPINS {
            spins = 0;
            thread::yield_now();
        } else {
            spin_loop();
        }
    }
}

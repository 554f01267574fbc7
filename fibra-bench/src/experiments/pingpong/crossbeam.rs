//! Ping-pong on crossbeam-channel: two OS threads.

use super::RoundTrips;
use crate::latency::Sampler;
use crate::measure::Timed;
use crossbeam_channel::unbounded;
use std::thread;
use std::time::Instant;

/// `n` round trips between this thread and another over two unbounded
/// channels, like a Ractor's mailbox. (Zero-capacity ones, like Go's
/// unbuffered channels, were slower here: each send then waits for the
/// receiver, a second sleep and wake-up per message.)
pub fn pingpong(n: u64) -> Result<RoundTrips, String> {
    let (to_pong, balls) = unbounded::<u64>();
    let (to_ping, replies) = unbounded::<u64>();
    let pong = thread::spawn(move || {
        for ball in balls {
            if to_ping.send(ball + 1).is_err() {
                break;
            }
        }
    });
    let mut sampler = Sampler::new(n);
    let start = Instant::now();
    let mut ball = 0;
    for _ in 0..n {
        ball = sampler.time(|| {
            to_pong.send(ball).map_err(|_| "pong hung up")?;
            replies.recv().map_err(|_| "pong hung up")
        })?;
    }
    let elapsed = start.elapsed();
    drop(to_pong);
    pong.join().map_err(|_| "pong panicked")?;
    assert_eq!(ball, n, "every ball came back");
    Ok(RoundTrips {
        timed: Timed::new(n, elapsed),
        latency: sampler.percentiles(),
    })
}

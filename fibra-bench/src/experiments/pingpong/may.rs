//! Ping-pong on the `may` crate, in a process of its own
//! ([`crate::experiments::may_child`] says why): `fibra-bench --child
//! ractor-pingpong <N>`, printing the ping-pong line of peers/README.md. Two
//! coroutines and two `may::sync::mpsc` channels (unbounded, as a Ractor's
//! mailbox) on two worker threads; like the Go peer, an untimed round of N/10
//! round trips first, and every 16th round trip timed alone for the
//! percentiles.

use crate::experiments::may_child;
use crate::latency::{Percentiles, Sampler};
use crate::peers::protocol::count;
use may::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

pub fn main(args: &[String]) -> Result<(), String> {
    let usage = "usage: fibra-bench --child ractor-pingpong <N>   (N >= 1)";
    let [n] = args else {
        return Err(usage.into());
    };
    let n = count(n).filter(|&n| n >= 1).ok_or(usage)?;
    may_child::start(2);
    let (to_pong, balls) = channel::<u64>();
    let (to_ping, replies) = channel::<u64>();
    let pong = may_child::spawn(move || {
        while let Ok(ball) = balls.recv() {
            if to_ping.send(ball + 1).is_err() {
                break;
            }
        }
    });
    let ping = may_child::spawn(move || {
        play(&to_pong, &replies, n / 10, &mut Sampler::new(n / 10))?;
        let mut sampler = Sampler::new(n);
        let start = Instant::now();
        let last = play(&to_pong, &replies, n, &mut sampler)?;
        let elapsed = start.elapsed();
        if last != n {
            return Err(format!("the last ball came back as {last}, not {n}"));
        }
        Ok((elapsed, sampler.percentiles()))
    });
    let (elapsed, latency): (Duration, Percentiles) =
        ping.join().map_err(|_| "ping panicked")??;
    pong.join().map_err(|_| "pong panicked")?;
    println!(
        "round_trips={n} ns={} p50_ns={} p99_ns={}",
        elapsed.as_nanos(),
        latency.p50_ns,
        latency.p99_ns
    );
    Ok(())
}

/// Makes `n` round trips, timing those `sampler` samples; returns the last
/// number back.
fn play(
    to_pong: &Sender<u64>,
    replies: &Receiver<u64>,
    n: u64,
    sampler: &mut Sampler,
) -> Result<u64, String> {
    let mut ball = 0;
    for _ in 0..n {
        ball = sampler.time(|| {
            to_pong.send(ball).map_err(|_| "pong hung up")?;
            replies.recv().map_err(|_| "pong hung up")
        })?;
    }
    Ok(ball)
}

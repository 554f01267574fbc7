//! Ping-pong on fibra: two Ractors on the two workers of a pool of their own.

use super::RoundTrips;
use crate::latency::{Percentiles, Sampler};
use crate::measure::Timed;
use fibra::ractor::{Context, Pool, Ractor};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

/// What pong is sent: first a handle on ping, to reply to; then the balls.
enum ToPong {
    ReplyTo(Ractor<u64, (), (Duration, Percentiles, ThreadId)>),
    Ball(u64),
}

/// `n` round trips by push messaging both ways: ping sends a ball to pong,
/// pong sends it back, plus one, to the handle on ping it was sent first.
/// Each body runs on a worker of its own (checked). (Send and take — pong
/// offering each reply with `yield_value` — measured 5–15 % slower here: a
/// rendezvous wakes the other worker three times per round trip, not twice.)
pub fn push(n: u64) -> Result<RoundTrips, String> {
    let pool = Pool::new(2);
    // Placed on the least loaded worker: pong on one, ping on the other.
    let pong: Ractor<ToPong, (), ThreadId> = pool.spawn(|ctx: &Context<ToPong>| {
        let Ok(ToPong::ReplyTo(ping)) = ctx.receive() else {
            panic!("pong's first message names ping");
        };
        while let Ok(ToPong::Ball(ball)) = ctx.receive() {
            if ping.send(ball + 1).is_err() {
                break;
            }
        }
        thread::current().id()
    });
    let to_pong = pong.clone();
    let ping = pool.spawn(move |ctx: &Context<u64>| {
        let mut ball = ctx.receive().expect("main's start signal");
        let mut sampler = Sampler::new(n);
        let start = Instant::now();
        for _ in 0..n {
            let back = sampler.time(|| {
                to_pong.send(ToPong::Ball(ball)).ok()?;
                Some(ctx.receive().expect("pong replies while it has balls"))
            });
            let Some(back) = back else { break };
            ball = back;
        }
        let elapsed = start.elapsed();
        to_pong.close_incoming();
        assert_eq!(ball, n, "every ball came back");
        (elapsed, sampler.percentiles(), thread::current().id())
    });
    pong.send(ToPong::ReplyTo(ping.clone()))
        .map_err(|_| "pong ended early")?;
    ping.send(0).map_err(|_| "ping ended early")?;
    let (elapsed, latency, ping_thread) = ping.join().map_err(|e| format!("ping: {e}"))?;
    let pong_thread = pong.join().map_err(|e| format!("pong: {e}"))?;
    placed_apart(ping_thread, pong_thread)?;
    Ok(RoundTrips {
        timed: Timed::new(n, elapsed),
        latency,
    })
}

fn placed_apart(ping: ThreadId, pong: ThreadId) -> Result<(), String> {
    if ping == pong {
        return Err("ping and pong ran on the same worker".into());
    }
    Ok(())
}

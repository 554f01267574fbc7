//! Ping-pong on fibra: two Ractors of a pool of two workers, on the two
//! workers or (`Pool::spawn_near`) on one.

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

/// `n` round trips by push messaging both ways, ping and pong each on a
/// worker of its own (see [`exchange`]).
pub fn push(n: u64) -> Result<RoundTrips, String> {
    exchange(n, Placement::Apart)
}

/// `n` round trips by push messaging both ways, ping placed near pong (on
/// its worker, so the two share one OS thread; see [`exchange`]).
pub fn push_near(n: u64) -> Result<RoundTrips, String> {
    exchange(n, Placement::Near)
}

/// Where ping goes.
#[derive(Clone, Copy, PartialEq)]
enum Placement {
    /// The least loaded worker: the one pong is not on.
    Apart,
    /// Pong's worker (`Pool::spawn_near`).
    Near,
}

/// `n` round trips by push messaging both ways: ping sends a ball to pong,
/// pong sends it back, plus one, to the handle on ping it was sent first.
/// The two bodies run on the workers `placement` says (checked). (Send and
/// take — pong offering each reply with `yield_value` — measured 5–15 %
/// slower apart: a rendezvous wakes the other worker three times per round
/// trip, not twice.)
fn exchange(n: u64, placement: Placement) -> Result<RoundTrips, String> {
    let pool = Pool::new(2);
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
    let ping_body = move |ctx: &Context<u64>| {
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
    };
    let ping = match placement {
        Placement::Apart => pool.spawn(ping_body),
        Placement::Near => pool.spawn_near(&pong, ping_body),
    };
    pong.send(ToPong::ReplyTo(ping.clone()))
        .map_err(|_| "pong ended early")?;
    ping.send(0).map_err(|_| "ping ended early")?;
    let (elapsed, latency, ping_thread) = ping.join().map_err(|e| format!("ping: {e}"))?;
    let pong_thread = pong.join().map_err(|e| format!("pong: {e}"))?;
    placed(placement, ping_thread, pong_thread)?;
    Ok(RoundTrips {
        timed: Timed::new(n, elapsed),
        latency,
    })
}

fn placed(placement: Placement, ping: ThreadId, pong: ThreadId) -> Result<(), String> {
    match (placement, ping == pong) {
        (Placement::Apart, true) => Err("ping and pong ran on the same worker".into()),
        (Placement::Near, false) => Err("ping and pong ran on different workers".into()),
        _ => Ok(()),
    }
}

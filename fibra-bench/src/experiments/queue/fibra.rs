//! The queue's runs on fibra: green threads of two runtimes, or of a runtime
//! and a plain OS thread, talking through `fibra::sync::Queue`.

use super::fanin_timed;
use crate::experiments::fanin::Size;
use crate::experiments::pingpong::RoundTrips;
use crate::latency::Sampler;
use crate::measure::Timed;
use fibra::sync::Queue;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

/// `n` round trips: a green thread of a runtime on this OS thread pushes a
/// ball into one queue and pops the reply from the other; a green thread of
/// a runtime on another OS thread sends each ball back, plus one.
pub fn pingpong_between_runtimes(n: u64) -> Result<RoundTrips, String> {
    pingpong(n, |pong| {
        thread::spawn(move || fibra::run(pong));
    })
}

/// As [`pingpong_between_runtimes`], with a plain OS thread (which blocks in
/// its pops) sending the balls back.
pub fn pingpong_with_an_os_thread(n: u64) -> Result<RoundTrips, String> {
    pingpong(n, |pong| {
        thread::spawn(pong);
    })
}

/// Ping-pong with ping on a runtime on this OS thread and pong started by
/// `start_pong` on another OS thread.
fn pingpong(
    n: u64,
    start_pong: impl FnOnce(Box<dyn FnOnce() + Send>),
) -> Result<RoundTrips, String> {
    let (balls, replies) = (Queue::<u64>::new(), Queue::<u64>::new());
    let (to_pong, from_pong) = (balls.clone(), replies.clone());
    start_pong(Box::new(move || {
        for ball in &balls {
            if replies.push(ball + 1).is_err() {
                break;
            }
        }
        replies.close();
    }));
    let (elapsed, latency, ball) = fibra::run(move || {
        let mut sampler = Sampler::new(n);
        let start = Instant::now();
        let mut ball = 0;
        for _ in 0..n {
            let back = sampler.time(|| {
                to_pong.push(ball).ok()?;
                from_pong.pop()
            });
            let Some(back) = back else { break };
            ball = back;
        }
        let elapsed = start.elapsed();
        to_pong.close();
        // Pong's close: it is done with the queues.
        while from_pong.pop().is_some() {}
        (elapsed, sampler.percentiles(), ball)
    });
    if ball != n {
        return Err(format!("{ball} balls came back, not {n}"));
    }
    Ok(RoundTrips {
        timed: Timed::new(n, elapsed),
        latency,
    })
}

/// `size.senders` green threads of a runtime on this OS thread push their
/// numbers into one queue that a green thread of a runtime on another OS
/// thread pops; the clock runs at the receiver, from the start (both sides
/// meet at a barrier) to the last message.
pub fn fanin_between_runtimes(size: Size) -> Result<Timed, String> {
    fanin(size, |receive| thread::spawn(move || fibra::run(receive)))
}

/// As [`fanin_between_runtimes`], with a plain OS thread (which blocks in
/// its pops) receiving.
pub fn fanin_to_an_os_thread(size: Size) -> Result<Timed, String> {
    fanin(size, thread::spawn)
}

type Receive = Box<dyn FnOnce() -> (u64, Duration) + Send>;

fn fanin(
    size: Size,
    start_receiver: impl FnOnce(Receive) -> thread::JoinHandle<(u64, Duration)>,
) -> Result<Timed, String> {
    let (each, total) = (size.each(), size.total());
    let queue = Queue::<u64>::new();
    let start = Arc::new(Barrier::new(2));
    let receiver = {
        let (queue, start) = (queue.clone(), start.clone());
        start_receiver(Box::new(move || {
            start.wait();
            let clock = Instant::now();
            let sum = (0..total).map_while(|_| queue.pop()).sum();
            (sum, clock.elapsed())
        }))
    };
    fibra::run(move || {
        let senders: Vec<_> = (0..size.senders)
            .map(|_| {
                let queue = queue.clone();
                fibra::spawn(move || {
                    for i in 0..each {
                        queue.push(i).expect("the queue stays open");
                    }
                })
            })
            .collect();
        // The senders run once this green thread parks in their joins.
        start.wait();
        senders.into_iter().for_each(|s| s.join().unwrap());
    });
    let (sum, elapsed) = receiver.join().map_err(|_| "the receiver panicked")?;
    fanin_timed(size, sum, elapsed)
}

//! Placing a Ractor beside another: `Pool::spawn_near`, `Pool::spawn_here`
//! and their process-wide-pool forms put it on the same worker, so the two
//! share one OS thread.

#[path = "support/without_hanging.rs"]
mod without_hanging;

use fibra::ractor::{Context, Pool, Ractor};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{self, ThreadId};
use std::time::Duration;
use without_hanging::without_hanging;

/// A Ractor that waits for one message, then reports its OS thread.
fn waits_then_reports(ctx: &Context<()>) -> ThreadId {
    let _ = ctx.receive();
    thread::current().id()
}

#[test]
fn a_ractor_spawned_near_another_runs_on_its_os_thread() {
    let pool = Pool::new(2);
    for _ in 0..4 {
        let first: Ractor<(), (), ThreadId> = pool.spawn(waits_then_reports);
        let second: Ractor<(), (), ThreadId> = pool.spawn_near(&first, waits_then_reports);
        first.send(()).unwrap();
        second.send(()).unwrap();
        assert_eq!(first.join().unwrap(), second.join().unwrap());
    }
}

/// What pong gets: first the handle to reply to, then the balls.
enum ToPong {
    ReplyTo(Ractor<u64, (), (u64, ThreadId)>),
    Ball(u64),
}

/// A pair on one worker takes turns: each send wakes the other on the same
/// OS thread (the receiver, its worker busy with the sender, parks rather
/// than spins), and every ball comes back.
#[test]
fn a_pair_on_one_worker_plays_ping_pong() {
    let pool = Pool::new(2);
    let rounds: u64 = 10_000;
    let pong: Ractor<ToPong, (), ThreadId> = pool.spawn(|ctx: &Context<ToPong>| {
        let Ok(ToPong::ReplyTo(ping)) = ctx.receive() else {
            panic!("pong's first message names ping");
        };
        while let Ok(ToPong::Ball(ball)) = ctx.receive() {
            ping.send(ball + 1).unwrap();
        }
        thread::current().id()
    });
    let to_pong = pong.clone();
    let ping = pool.spawn_near(&pong, move |ctx: &Context<u64>| {
        let mut ball = ctx.receive().unwrap();
        for _ in 0..rounds {
            to_pong.send(ToPong::Ball(ball)).unwrap();
            ball = ctx.receive().unwrap();
        }
        to_pong.close_incoming();
        (ball, thread::current().id())
    });
    pong.send(ToPong::ReplyTo(ping.clone())).unwrap();
    ping.send(0).unwrap();
    let (ball, ping_thread) = ping.join().unwrap();
    assert_eq!(ball, rounds);
    assert_eq!(ping_thread, pong.join().unwrap());
}

/// What stops the pair in [`a_busy_pair_still_lets_remote_wakes_and_timers_in`].
#[derive(Clone, Copy, Debug)]
enum Stopper {
    /// A message from another OS thread to a Ractor of the pair's worker:
    /// a wake through that worker's remote ring.
    Message,
    /// A timer of the pair's worker.
    Timer,
}

/// A pair on one worker that keeps waking each other never leaves their
/// worker's run queue empty; a third Ractor there, woken by a message from
/// another OS thread or by its timer, still gets its turn (the loop takes
/// remote wakes and expires timers at least every 64 switches) and stops
/// the pair.
#[test]
fn a_busy_pair_still_lets_remote_wakes_and_timers_in() {
    for stopper in [Stopper::Message, Stopper::Timer] {
        without_hanging(&format!("the pair, stopped by {stopper:?}"), move || {
            let pool = Pool::new(2);
            let stop = Arc::new(AtomicBool::new(false));
            let played = Arc::new(AtomicU64::new(0));
            let pong: Ractor<ToPong, (), ThreadId> = pool.spawn(|ctx: &Context<ToPong>| {
                let Ok(ToPong::ReplyTo(ping)) = ctx.receive() else {
                    panic!("pong's first message names ping");
                };
                while let Ok(ToPong::Ball(ball)) = ctx.receive() {
                    ping.send(ball + 1).unwrap();
                }
                thread::current().id()
            });
            let to_pong = pong.clone();
            let (ping_stop, ping_played) = (stop.clone(), played.clone());
            let ping = pool.spawn_near(&pong, move |ctx: &Context<u64>| {
                let mut ball = ctx.receive().unwrap();
                while !ping_stop.load(Ordering::Acquire) {
                    to_pong.send(ToPong::Ball(ball)).unwrap();
                    ball = ctx.receive().unwrap();
                    ping_played.store(ball, Ordering::Release);
                }
                to_pong.close_incoming();
                (ball, thread::current().id())
            });
            let (third_stop, third_played) = (stop.clone(), played.clone());
            let third: Ractor<(), (), ThreadId> =
                pool.spawn_near(&pong, move |ctx: &Context<()>| {
                    match stopper {
                        Stopper::Message => ctx.receive().unwrap(),
                        Stopper::Timer => {
                            while third_played.load(Ordering::Acquire) < 1_000 {
                                fibra::time::sleep(Duration::from_millis(1));
                            }
                            // Armed while the pair plays, which it does until
                            // this timer has fired.
                            fibra::time::sleep(Duration::from_millis(1));
                        }
                    }
                    third_stop.store(true, Ordering::Release);
                    thread::current().id()
                });
            pong.send(ToPong::ReplyTo(ping.clone())).unwrap();
            ping.send(0).unwrap();
            if let Stopper::Message = stopper {
                // The pair well under way (its worker's queue never empty
                // since) before the message is sent.
                while played.load(Ordering::Acquire) < 1_000 {
                    thread::yield_now();
                }
                third.send(()).unwrap();
            }
            let (ball, ping_thread) = ping.join().unwrap();
            assert!(ball >= 1_000);
            assert_eq!(ping_thread, pong.join().unwrap());
            assert_eq!(ping_thread, third.join().unwrap());
        });
    }
}

/// Ractors placed near one count on its worker: the next one placed by
/// load goes to the other worker.
#[test]
fn ractors_placed_near_count_on_their_worker() {
    let pool = Pool::new(2);
    let first: Ractor<(), (), ThreadId> = pool.spawn(waits_then_reports);
    let near: Vec<Ractor<(), (), ThreadId>> = (0..3)
        .map(|_| pool.spawn_near(&first, waits_then_reports))
        .collect();
    let by_load: Ractor<(), (), ThreadId> = pool.spawn(waits_then_reports);
    for r in near.iter().chain([&first, &by_load]) {
        r.send(()).unwrap();
    }
    let first = first.join().unwrap();
    for r in near {
        assert_eq!(r.join().unwrap(), first);
    }
    assert_ne!(by_load.join().unwrap(), first);
}

/// Near a Ractor of another pool: placed by load on this pool.
#[test]
fn near_a_ractor_of_another_pool_places_by_load() {
    let (here, there) = (Pool::new(1), Pool::new(1));
    let other: Ractor<(), (), ThreadId> = there.spawn(waits_then_reports);
    let placed: Ractor<(), (), ThreadId> = here.spawn_near(&other, waits_then_reports);
    let local: Ractor<(), (), ThreadId> = here.spawn(waits_then_reports);
    for r in [&other, &placed, &local] {
        r.send(()).unwrap();
    }
    let placed = placed.join().unwrap();
    assert_eq!(placed, local.join().unwrap());
    assert_ne!(placed, other.join().unwrap());
}

#[test]
fn a_ractor_spawned_here_shares_its_creators_os_thread() {
    let pool = Arc::new(Pool::new(2));
    for _ in 0..4 {
        let same_pool = pool.clone();
        let creator = pool.spawn(move |_: &Context<()>| {
            let helper: Ractor<(), (), ThreadId> = same_pool.spawn_here(waits_then_reports);
            helper.send(()).unwrap();
            (thread::current().id(), helper.join().unwrap())
        });
        let (creator, helper) = creator.join().unwrap();
        assert_eq!(creator, helper);
    }
    // From outside the pool: placed by load, and it runs.
    let outside: Ractor<(), (), ThreadId> = pool.spawn_here(waits_then_reports);
    outside.send(()).unwrap();
    assert_ne!(outside.join().unwrap(), thread::current().id());
}

/// The process-wide pool's forms place the same way.
#[test]
fn the_process_wide_pool_places_near_and_here() {
    let first: Ractor<(), (), ThreadId> = Ractor::new(waits_then_reports);
    let near: Ractor<(), (), ThreadId> = Ractor::new_near(&first, waits_then_reports);
    let creator = Ractor::new(|_: &Context<()>| {
        let helper: Ractor<(), (), ThreadId> = Ractor::new_here(waits_then_reports);
        helper.send(()).unwrap();
        (thread::current().id(), helper.join().unwrap())
    });
    first.send(()).unwrap();
    near.send(()).unwrap();
    assert_eq!(first.join().unwrap(), near.join().unwrap());
    let (creator, helper) = creator.join().unwrap();
    assert_eq!(creator, helper);
}

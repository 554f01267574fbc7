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

/// Lets each of `waiting` (Ractors that run [`waits_then_reports`]) go, and
/// returns their OS threads in order.
fn threads_of<const N: usize>(waiting: [Ractor<(), (), ThreadId>; N]) -> [ThreadId; N] {
    for ractor in &waiting {
        ractor.send(()).unwrap();
    }
    waiting.map(|ractor| ractor.join().unwrap())
}

#[test]
fn a_ractor_spawned_near_another_runs_on_its_os_thread() {
    let pool = Pool::new(2);
    for _ in 0..4 {
        let first = pool.spawn(waits_then_reports);
        let second = pool.spawn_near(&first, waits_then_reports);
        let [first, second] = threads_of([first, second]);
        assert_eq!(first, second);
    }
}

/// Ping: it returns its last ball and its OS thread.
type Ping = Ractor<u64, (), (u64, ThreadId)>;
/// Pong: it sends each ball back one higher until its mailbox closes, then
/// returns its OS thread.
type Pong = Ractor<ToPong, (), ThreadId>;

/// What pong gets: first the handle to reply to, then the balls.
enum ToPong {
    ReplyTo(Ping),
    Ball(u64),
}

/// Starts a ping-pong pair on one worker of `pool`: pong placed by load,
/// ping near it. Ping serves ball 0, and plays on while `keep_playing(ball)`
/// says so; then it closes pong's mailbox, and both end.
fn ping_pong(
    pool: &Pool,
    mut keep_playing: impl FnMut(u64) -> bool + Send + 'static,
) -> (Ping, Pong) {
    let pong: Pong = pool.spawn(|ctx: &Context<ToPong>| {
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
        while keep_playing(ball) {
            to_pong.send(ToPong::Ball(ball)).unwrap();
            ball = ctx.receive().unwrap();
        }
        to_pong.close_incoming();
        (ball, thread::current().id())
    });
    pong.send(ToPong::ReplyTo(ping.clone())).unwrap();
    ping.send(0).unwrap();
    (ping, pong)
}

/// A pair on one worker takes turns: each send wakes the other on the same
/// OS thread (the receiver, its worker busy with the sender, parks rather
/// than spins), and every ball comes back.
#[test]
fn a_pair_on_one_worker_plays_ping_pong() {
    let pool = Pool::new(2);
    let rounds: u64 = 10_000;
    let (ping, pong) = ping_pong(&pool, move |ball| ball < rounds);
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
            let (ping_stop, ping_played) = (stop.clone(), played.clone());
            let (ping, pong) = ping_pong(&pool, move |ball| {
                ping_played.store(ball, Ordering::Release);
                !ping_stop.load(Ordering::Acquire)
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
    let first = pool.spawn(waits_then_reports);
    let near: [_; 3] = std::array::from_fn(|_| pool.spawn_near(&first, waits_then_reports));
    let by_load = pool.spawn(waits_then_reports);
    let [first, by_load] = threads_of([first, by_load]);
    for near in threads_of(near) {
        assert_eq!(near, first);
    }
    assert_ne!(by_load, first);
}

/// Near a Ractor of another pool: placed by load on this pool.
#[test]
fn near_a_ractor_of_another_pool_places_by_load() {
    let (here, there) = (Pool::new(1), Pool::new(1));
    let other = there.spawn(waits_then_reports);
    let placed = here.spawn_near(&other, waits_then_reports);
    let local = here.spawn(waits_then_reports);
    let [other, placed, local] = threads_of([other, placed, local]);
    assert_eq!(placed, local);
    assert_ne!(placed, other);
}

#[test]
fn a_ractor_spawned_here_shares_its_creators_os_thread() {
    let pool = Arc::new(Pool::new(2));
    for _ in 0..4 {
        let same_pool = pool.clone();
        let creator = pool.spawn(move |_: &Context<()>| {
            let [helper] = threads_of([same_pool.spawn_here(waits_then_reports)]);
            (thread::current().id(), helper)
        });
        let (creator, helper) = creator.join().unwrap();
        assert_eq!(creator, helper);
    }
    // From outside the pool: placed by load, and it runs.
    let [outside] = threads_of([pool.spawn_here(waits_then_reports)]);
    assert_ne!(outside, thread::current().id());
}

/// The process-wide pool's forms place the same way.
#[test]
fn the_process_wide_pool_places_near_and_here() {
    let first = Ractor::new(waits_then_reports);
    let near = Ractor::new_near(&first, waits_then_reports);
    let creator = Ractor::new(|_: &Context<()>| {
        let [helper] = threads_of([Ractor::new_here(waits_then_reports)]);
        (thread::current().id(), helper)
    });
    let [first, near] = threads_of([first, near]);
    assert_eq!(first, near);
    let (creator, helper) = creator.join().unwrap();
    assert_eq!(creator, helper);
}

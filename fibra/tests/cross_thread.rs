//! The code that crosses OS threads: `Unparker` (other OS threads wake green
//! threads) and `blocking` (green threads hand work to a pool of OS threads).
//! These tests exist for their own sake and to give ThreadSanitizer
//! (`scripts/tsan.sh`) something to watch: many threads at once, every one
//! of them touching shared state.

#[path = "support/without_hanging.rs"]
mod hang;

use fibra::runtime::{self, Unparker};
use fibra::{blocking, spawn};
use hang::without_hanging;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::thread;
use std::time::Duration;

const GREEN: usize = 200;
const OS_THREADS: usize = 8;

#[test]
fn many_os_threads_unpark_green_threads_at_once() {
    let woken = fibra::run(|| {
        // Each green thread waits for its own flag; OS threads set the flags
        // and unpark, all at once, and also unpark everyone spuriously.
        let flags: Arc<Vec<AtomicBool>> =
            Arc::new((0..GREEN).map(|_| AtomicBool::new(false)).collect());
        let (unparkers_tx, unparkers_rx) = mpsc::channel::<(usize, Unparker)>();
        let greens: Vec<_> = (0..GREEN)
            .map(|i| {
                let (flags, unparkers_tx) = (flags.clone(), unparkers_tx.clone());
                spawn(move || {
                    unparkers_tx
                        .send((i, runtime::current().unparker()))
                        .unwrap();
                    let mut parks = 0usize;
                    while !flags[i].load(Ordering::Acquire) {
                        runtime::park();
                        parks += 1;
                    }
                    parks
                })
            })
            .collect();
        drop(unparkers_tx);
        // Let every green thread register before the OS threads start.
        runtime::yield_now();
        let unparkers: Vec<(usize, Unparker)> = unparkers_rx.try_iter().collect();
        assert_eq!(unparkers.len(), GREEN);
        let unparkers = Arc::new(unparkers);
        let start = Arc::new(Barrier::new(OS_THREADS));
        let os: Vec<_> = (0..OS_THREADS)
            .map(|t| {
                let (flags, unparkers, start) = (flags.clone(), unparkers.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    for (i, unparker) in unparkers.iter() {
                        // A spurious wake-up for everyone...
                        unparker.unpark();
                        // ...and the real one for this OS thread's share.
                        if i % OS_THREADS == t {
                            flags[*i].store(true, Ordering::Release);
                            unparker.unpark();
                        }
                    }
                })
            })
            .collect();
        let parks: usize = greens.into_iter().map(|h| h.join().unwrap()).sum();
        // The green threads ran while the OS threads worked: join them from a
        // blocking task so this runtime's OS thread never blocks.
        blocking(move || os.into_iter().for_each(|t| t.join().unwrap()));
        parks
    });
    assert!(woken >= GREEN, "every green thread parked at least once");
}

#[test]
fn green_threads_of_two_runtimes_wake_each_other() {
    // Runtime A and runtime B, each on its own OS thread, play ping-pong:
    // a green thread of one sets a counter and unparks a green thread of the
    // other.
    const ROUNDS: usize = 1000;
    let counter = Arc::new(AtomicUsize::new(0));
    let (a_tx, a_rx) = mpsc::channel::<Unparker>();
    let (b_tx, b_rx) = mpsc::channel::<Unparker>();
    let player = |me: usize, mine: mpsc::Sender<Unparker>, theirs: mpsc::Receiver<Unparker>| {
        let counter = counter.clone();
        thread::spawn(move || {
            fibra::run(move || {
                mine.send(runtime::current().unparker()).unwrap();
                let other = blocking(move || theirs.recv().unwrap());
                loop {
                    let n = counter.load(Ordering::Acquire);
                    if n >= 2 * ROUNDS {
                        other.unpark();
                        return;
                    }
                    if n % 2 == me {
                        counter.store(n + 1, Ordering::Release);
                        other.unpark();
                    } else {
                        runtime::park();
                    }
                }
            })
        })
    };
    let a = player(0, a_tx, b_rx);
    let b = player(1, b_tx, a_rx);
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(counter.load(Ordering::Acquire), 2 * ROUNDS);
}

#[test]
fn unparking_after_the_runtime_ended_is_harmless() {
    let unparker = fibra::run(|| runtime::current().unparker());
    thread::spawn(move || unparker.unpark()).join().unwrap();
}

/// The last `Unparker` held by another OS thread is dropped (without
/// unparking) while the runtime sleeps, waiting for it: nothing can wake the
/// parked thread any more, and `run` reports the deadlock instead of sleeping
/// for ever. (The delays only make it likely that the runtime is asleep by
/// then; the outcome is the same whichever comes first.)
#[test]
fn dropping_the_last_unparker_while_the_runtime_sleeps_reports_the_deadlock() {
    for delay_ms in [0, 1, 20] {
        let message = without_hanging("a deadlock after the last Unparker's drop", move || {
            let outcome = std::panic::catch_unwind(|| {
                fibra::run(move || {
                    let unparker = runtime::current().unparker();
                    let also = unparker.clone();
                    thread::spawn(move || {
                        thread::sleep(Duration::from_millis(delay_ms));
                        drop(also);
                        thread::sleep(Duration::from_millis(delay_ms));
                        drop(unparker);
                    });
                    runtime::park();
                })
            });
            let payload = outcome.expect_err("nothing unparked the thread");
            payload.downcast::<String>().map(|s| *s).unwrap_or_default()
        });
        assert!(message.contains("deadlock"), "{message}");
    }
}

/// An `Unparker` whose runtime has ended does nothing, however often it is
/// used, and a `block_on` waker likewise (what they would have queued is
/// dropped: the remote queue's unit tests check that nothing is kept).
#[test]
fn wakes_after_the_runtime_ended_do_nothing() {
    let (unparker, waker) = fibra::run(|| {
        let waker = fibra::block_on(std::future::poll_fn(|cx| {
            std::task::Poll::Ready(cx.waker().clone())
        }));
        (runtime::current().unparker(), waker)
    });
    thread::spawn(move || {
        for _ in 0..10_000 {
            unparker.unpark();
            waker.wake_by_ref();
        }
    })
    .join()
    .unwrap();
    // A later runtime on this OS thread is not disturbed by them.
    assert_eq!(fibra::run(|| 7), 7);
}

#[test]
fn many_green_threads_call_blocking_at_once() {
    let total = fibra::run(|| {
        let running = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..GREEN)
            .map(|i| {
                let running = running.clone();
                spawn(move || {
                    blocking(move || {
                        running.fetch_add(1, Ordering::AcqRel);
                        thread::sleep(Duration::from_millis(1));
                        running.fetch_sub(1, Ordering::AcqRel);
                        i * 2
                    })
                })
            })
            .collect();
        let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(running.load(Ordering::Acquire), 0);
        total
    });
    assert_eq!(total, (0..GREEN).map(|i| i * 2).sum::<usize>());
}

#[test]
fn blocking_from_several_runtimes_at_once() {
    let runtimes: Vec<_> = (0..4)
        .map(|r| {
            thread::spawn(move || {
                fibra::run(move || {
                    let handles: Vec<_> = (0..50)
                        .map(|i| spawn(move || blocking(move || r * 1000 + i)))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap())
                        .sum::<usize>()
                })
            })
        })
        .collect();
    for (r, t) in runtimes.into_iter().enumerate() {
        assert_eq!(
            t.join().unwrap(),
            (0..50).map(|i| r * 1000 + i).sum::<usize>()
        );
    }
}

#[test]
fn a_panic_in_blocking_work_reaches_the_caller() {
    fibra::run(|| {
        let handles: Vec<_> = (0..20)
            .map(|i| {
                spawn(move || {
                    blocking(move || {
                        if i % 2 == 0 {
                            panic!("blocking work {i} failed");
                        }
                        i
                    })
                })
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            match h.join() {
                Ok(v) => assert_eq!((i % 2, v), (1, i)),
                Err(err) => {
                    assert_eq!(i % 2, 0);
                    assert_eq!(
                        err.to_string(),
                        format!("green thread panicked: blocking work {i} failed")
                    );
                }
            }
        }
    });
}

/// Many senders — OS threads and Ractors on other workers — and receiving
/// Ractors that keep falling asleep: senders pause now and then for longer
/// than an idle worker spins, so each receiver's worker goes to sleep in its
/// poller again and again, and each wake must cross the sleeping/pending
/// handshake of `runtime/remote/sleep.rs` and the WAITING/WAKING one of the
/// mailbox. A lost wake would hang a receiver; a watchdog turns that into a
/// failure. Every message sent is received exactly once.
#[test]
fn sleeping_receivers_never_miss_a_wake() {
    use fibra::ractor::{Context, Pool, Ractor};

    const RECEIVERS: usize = 4;
    const OS_SENDERS: usize = 4;
    const RACTOR_SENDERS: usize = 2;
    const EACH: u64 = 2_000;
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        thread::spawn(move || {
            for _ in 0..1200 {
                if done.load(Ordering::Acquire) {
                    return;
                }
                thread::sleep(Duration::from_millis(100));
            }
            eprintln!("sleeping_receivers_never_miss_a_wake: a receiver never woke");
            std::process::abort();
        })
    };
    let pool = Pool::new(3);
    let receivers: Vec<Ractor<u64, (), (u64, u64)>> = (0..RECEIVERS)
        .map(|_| {
            pool.spawn(|ctx: &Context<u64>| {
                let (mut count, mut sum) = (0, 0);
                while let Ok(n) = ctx.receive() {
                    count += 1;
                    sum += n;
                }
                (count, sum)
            })
        })
        .collect();
    // Pauses of 0 to 60 µs, more than the ~20 µs a worker spins.
    let pause = |i: u64, who: u64| {
        if (i * 7 + who).is_multiple_of(5) {
            thread::sleep(Duration::from_micros((i * 13 + who * 31) % 60));
        }
    };
    let os_senders: Vec<_> = (0..OS_SENDERS as u64)
        .map(|who| {
            let receivers = receivers.clone();
            thread::spawn(move || {
                for i in 0..EACH {
                    receivers.iter().for_each(|r| r.send(i).unwrap());
                    pause(i, who);
                }
            })
        })
        .collect();
    let ractor_senders: Vec<Ractor<(), (), ()>> = (0..RACTOR_SENDERS as u64)
        .map(|who| {
            let receivers = receivers.clone();
            pool.spawn(move |_: &Context<()>| {
                for i in 0..EACH {
                    receivers.iter().for_each(|r| r.send(i).unwrap());
                    if (i * 3 + who).is_multiple_of(7) {
                        fibra::time::sleep(Duration::from_micros(40));
                    }
                }
            })
        })
        .collect();
    os_senders.into_iter().for_each(|t| t.join().unwrap());
    ractor_senders.into_iter().for_each(|r| r.join().unwrap());
    let senders = (OS_SENDERS + RACTOR_SENDERS) as u64;
    for receiver in receivers {
        receiver.close_incoming();
        let (count, sum) = receiver.join().unwrap();
        assert_eq!(count, senders * EACH);
        assert_eq!(sum, senders * EACH * (EACH - 1) / 2);
    }
    done.store(true, Ordering::Release);
    watchdog.join().unwrap();
}

/// Ping-pong between Ractors on two workers, with pong pausing now and then
/// so that ping's worker goes to sleep: every round trip completes.
#[test]
fn ping_pong_between_workers_survives_sleeps() {
    use fibra::ractor::{Context, Pool, Ractor};

    enum ToPong {
        ReplyTo(Ractor<u64, (), u64>),
        Ball(u64),
    }
    const ROUND_TRIPS: u64 = 5_000;
    let pool = Pool::new(2);
    let pong: Ractor<ToPong> = pool.spawn(|ctx: &Context<ToPong>| {
        let Ok(ToPong::ReplyTo(ping)) = ctx.receive() else {
            panic!("pong's first message names ping");
        };
        while let Ok(ToPong::Ball(n)) = ctx.receive() {
            if n.is_multiple_of(97) {
                fibra::time::sleep(Duration::from_micros(50));
            }
            if ping.send(n + 1).is_err() {
                break;
            }
        }
    });
    let to_pong = pong.clone();
    let ping: Ractor<u64, (), u64> = pool.spawn(move |ctx: &Context<u64>| {
        let mut ball = ctx.receive().unwrap();
        for _ in 0..ROUND_TRIPS {
            to_pong.send(ToPong::Ball(ball)).unwrap();
            ball = ctx.receive().unwrap();
        }
        to_pong.close_incoming();
        ball
    });
    assert!(pong.send(ToPong::ReplyTo(ping.clone())).is_ok());
    ping.send(0).unwrap();
    assert_eq!(ping.join().unwrap(), ROUND_TRIPS);
    pong.join().unwrap();
}

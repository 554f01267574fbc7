//! What a user of Ractors sees: ordered, lossless messaging across cores,
//! rendezvous yield/take, select, every closed-port and finished-Ractor case as
//! an error, remote panics, many Ractors, and the end of a pool.

#[path = "support/crowd.rs"]
mod crowd;

use fibra::ractor::{Closed, Context, Pool, Ractor, RemoteError, SendError, TakeError, select};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Counts the drops of its clones.
struct Dropped(Arc<AtomicUsize>);
impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn messages_from_one_sender_arrive_in_order() {
    let summer = Ractor::new(|ctx: &Context<u64>| {
        let mut last = None;
        let mut count = 0u64;
        while let Ok(n) = ctx.receive() {
            assert!(
                last.is_none_or(|l| n == l + 1),
                "out of order: {n} after {last:?}"
            );
            last = Some(n);
            count += 1;
        }
        count
    });
    for n in 0..100_000 {
        summer.send(n).unwrap();
    }
    summer.close_incoming();
    assert_eq!(summer.join().unwrap(), 100_000);
}

#[test]
fn eight_senders_times_a_hundred_thousand_messages_lose_nothing() {
    const SENDERS: u64 = 8;
    const EACH: u64 = 100_000;
    let sink = Ractor::new(|ctx: &Context<(u64, u64)>| {
        let mut next = vec![0u64; SENDERS as usize];
        let mut total = 0u64;
        while let Ok((sender, n)) = ctx.receive() {
            assert_eq!(n, next[sender as usize], "sender {sender} out of order");
            next[sender as usize] += 1;
            total += 1;
        }
        (total, next)
    });
    // Half the senders are OS threads, half are Ractors.
    let mut os_threads = Vec::new();
    let mut ractors = Vec::new();
    for sender in 0..SENDERS {
        let sink = sink.clone();
        let send_all = move || (0..EACH).for_each(|n| sink.send((sender, n)).unwrap());
        if sender % 2 == 0 {
            os_threads.push(std::thread::spawn(send_all));
        } else {
            ractors.push(Ractor::new(move |_: &Context<()>| send_all()));
        }
    }
    os_threads.into_iter().for_each(|t| t.join().unwrap());
    ractors.into_iter().for_each(|r| r.join().unwrap());
    sink.close_incoming();
    let (total, next) = sink.join().unwrap();
    assert_eq!(total, SENDERS * EACH);
    assert!(next.iter().all(|&n| n == EACH));
}

#[test]
fn yield_waits_for_a_taker() {
    let passed = Arc::new(AtomicUsize::new(0));
    let p = passed.clone();
    let producer = Ractor::new(move |ctx: &Context<(), u32>| {
        for v in 1..=3 {
            ctx.yield_value(v).unwrap();
            p.fetch_add(1, Ordering::SeqCst);
        }
    });
    // The first yield cannot complete before a take.
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(passed.load(Ordering::SeqCst), 0);
    assert_eq!(producer.take(), Ok(1));
    assert_eq!(producer.take(), Ok(2));
    assert_eq!(producer.take(), Ok(3));
    producer.clone().join().unwrap();
    assert_eq!(passed.load(Ordering::SeqCst), 3);
    // Finished: takes fail at once.
    assert_eq!(producer.take(), Err(TakeError::Closed));
}

#[test]
fn each_value_goes_to_exactly_one_of_many_takers() {
    let producer = Ractor::new(|ctx: &Context<(), u32>| {
        for v in 0..1000 {
            ctx.yield_value(v).unwrap();
        }
    });
    let takers: Vec<_> = (0..4)
        .map(|_| {
            let producer = producer.clone();
            std::thread::spawn(move || {
                std::iter::from_fn(|| producer.take().ok()).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all: Vec<u32> = takers.into_iter().flat_map(|t| t.join().unwrap()).collect();
    all.sort();
    assert_eq!(all, (0..1000).collect::<Vec<_>>());
}

#[test]
fn select_takes_from_whichever_is_ready() {
    let quiet = Ractor::new(|ctx: &Context<(), u32>| {
        let _ = ctx.receive();
    });
    let talkers: Vec<_> = (0..3)
        .map(|i| Ractor::new(move |ctx: &Context<(), u32>| ctx.yield_value(i).unwrap()))
        .collect();
    // Each round selects over the quiet one and the talkers not yet heard
    // (a talker that has been heard finishes, and select would report that).
    let mut seen = HashSet::new();
    for _ in 0..3 {
        let unheard: Vec<&Ractor<(), u32>> = talkers
            .iter()
            .enumerate()
            .filter(|(i, _)| !seen.contains(i))
            .map(|(_, r)| r)
            .collect();
        let ractors: Vec<&Ractor<(), u32>> = std::iter::once(&quiet).chain(unheard).collect();
        let (index, value) = select(&ractors);
        assert_ne!(index, 0, "the quiet one offered nothing");
        let value = value.unwrap() as usize;
        assert!(seen.insert(value), "talker {value} was heard twice");
    }
    assert_eq!(seen.len(), 3);
    quiet.close_incoming();
    // Now every talker has finished: select reports a closed one.
    let ractors: Vec<&Ractor<(), u32>> = talkers.iter().collect();
    let (_, outcome) = select(&ractors);
    assert_eq!(outcome, Err(TakeError::Closed));
}

#[test]
fn closed_ports_and_finished_ractors_return_errors_at_once() {
    // Send to a closed incoming port: the message comes back.
    let r = Ractor::new(|ctx: &Context<String>| ctx.receive().map_err(|Closed(())| "closed"));
    assert!(r.close_incoming());
    assert!(
        !r.close_incoming(),
        "closing twice reports it was already closed"
    );
    assert_eq!(
        r.send("lost?".to_string()),
        Err(SendError("lost?".to_string()))
    );
    assert_eq!(r.join().unwrap(), Err("closed"));

    // Messages sent before the close are still received.
    let r = Ractor::new(|ctx: &Context<u8>| {
        let mut got = Vec::new();
        while let Ok(m) = ctx.receive() {
            got.push(m);
        }
        got
    });
    r.send(1).unwrap();
    r.send(2).unwrap();
    r.close_incoming();
    assert_eq!(r.join().unwrap(), [1, 2]);

    // Yield into a closed outgoing port: the value comes back.
    let r = Ractor::new(|ctx: &Context<(), &str>| {
        ctx.receive().unwrap();
        ctx.yield_value("late")
    });
    r.close_outgoing();
    assert_eq!(r.take(), Err(TakeError::Closed));
    r.send(()).unwrap();
    assert_eq!(r.join().unwrap(), Err(Closed("late")));

    // A finished Ractor: sends and takes fail, join gives the value once.
    let r = Ractor::new(|_: &Context<u8, u8>| 7);
    let other = r.clone();
    assert_eq!(r.clone().join().unwrap(), 7);
    assert_eq!(other.send(1), Err(SendError(1)));
    assert_eq!(other.take(), Err(TakeError::Closed));
    assert!(matches!(other.join(), Err(RemoteError::AlreadyJoined)));
}

/// Ruby's test_ractor: after `close_outgoing`, `take` raises ClosedError even
/// if the Ractor was offering a value, and the value goes back to the Ractor.
#[test]
fn a_take_after_close_outgoing_fails_even_while_a_value_is_offered() {
    for round in 0..20 {
        let offering = Arc::new(AtomicBool::new(false));
        let r = Ractor::new({
            let offering = offering.clone();
            move |ctx: &Context<(), u32>| {
                offering.store(true, Ordering::SeqCst);
                ctx.yield_value(round)
            }
        });
        // Most rounds close while the value is on offer, some just before:
        // the outcome is the same either way.
        while !offering.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(1));
        assert!(r.close_outgoing());
        assert_eq!(r.take(), Err(TakeError::Closed), "round {round}");
        assert_eq!(r.join().unwrap(), Err(Closed(round)), "round {round}");
    }
}

#[test]
fn a_panic_reaches_the_joiner_and_the_taker() {
    let r = Ractor::new(|ctx: &Context<(), u8>| {
        ctx.yield_value(1).unwrap();
        panic!("ractor failed");
    });
    assert_eq!(r.take(), Ok(1));
    assert_eq!(
        r.take(),
        Err(TakeError::Panicked("ractor failed".to_string()))
    );
    let err = r.join().unwrap_err();
    assert_eq!(err.message(), Some("ractor failed"));
    assert_eq!(err.to_string(), "the Ractor panicked: ractor failed");
}

#[test]
fn ractors_run_in_parallel_on_every_worker() {
    // Two Ractors that each spin until the other has started: on one worker
    // (one OS thread, cooperative) neither would ever see the other.
    let pool = Pool::new(2);
    let flags = [
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    ];
    let spinners: Vec<_> = (0..2)
        .map(|i| {
            let (mine, theirs) = (flags[i].clone(), flags[1 - i].clone());
            pool.spawn(move |_: &Context<()>| {
                mine.store(true, Ordering::SeqCst);
                let until = Instant::now() + Duration::from_secs(60);
                while !theirs.load(Ordering::SeqCst) && Instant::now() < until {
                    std::hint::spin_loop();
                }
                theirs.load(Ordering::SeqCst)
            })
        })
        .collect();
    assert!(spinners.into_iter().all(|r| r.join().unwrap()));
}

#[test]
fn a_ractors_green_threads_stay_on_its_worker() {
    let r = Ractor::new(|_: &Context<()>| {
        let home = std::thread::current().id();
        let threads: Vec<_> = (0..10)
            .map(|_| {
                fibra::spawn(|| {
                    fibra::time::sleep(Duration::from_millis(1));
                    std::thread::current().id()
                })
            })
            .collect();
        threads.into_iter().all(|t| t.join().unwrap() == home)
    });
    assert!(r.join().unwrap());
}

#[test]
fn a_hundred_thousand_ractors_complete() {
    // All of them wait at once, each on its own stack: under qemu-user fewer
    // (see `crowd_size`).
    let n = crowd::crowd_size(100_000) as u64;
    let pool = Pool::new(2);
    let ractors: Vec<Ractor<u64, (), u64>> = (0..n)
        .map(|_| pool.spawn(|ctx: &Context<u64>| ctx.receive().unwrap() + 1))
        .collect();
    for (i, r) in ractors.iter().enumerate() {
        r.send(i as u64).unwrap();
    }
    let total: u64 = ractors.into_iter().map(|r| r.join().unwrap()).sum();
    assert_eq!(total, n * (n + 1) / 2);
}

#[test]
fn dropping_a_pool_ends_its_ractors_and_unwinds_them() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let pool = Pool::new(2);
    let waiting: Vec<Ractor<(), u8>> = (0..10)
        .map(|_| {
            let guard = Dropped(dropped.clone());
            pool.spawn(move |ctx: &Context<(), u8>| {
                let _guard = guard;
                let _ = ctx.receive(); // waits forever
            })
        })
        .collect();
    drop(pool);
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        10,
        "every Ractor's destructors ran"
    );
    for r in waiting {
        assert_eq!(r.take(), Err(TakeError::Cancelled));
        assert_eq!(r.send(()), Err(SendError(())));
        assert!(matches!(r.join(), Err(RemoteError::Cancelled)));
    }
}

#[test]
fn green_threads_and_os_threads_wait_on_ractors_alike() {
    let echo = Ractor::new(|ctx: &Context<u32, u32>| {
        while let Ok(n) = ctx.receive() {
            if ctx.yield_value(n).is_err() {
                break;
            }
        }
    });
    // From a green thread of a runtime on this OS thread: only the green thread
    // waits, so a sibling runs meanwhile.
    let e = echo.clone();
    let (from_green, sibling_ran) = fibra::run(move || {
        let ran = std::rc::Rc::new(std::cell::Cell::new(false));
        let r = ran.clone();
        let sibling = fibra::spawn(move || r.set(true));
        e.send(5).unwrap();
        let got = e.take().unwrap();
        sibling.join().unwrap();
        (got, ran.get())
    });
    assert_eq!((from_green, sibling_ran), (5, true));
    // From this plain OS thread.
    echo.send(6).unwrap();
    assert_eq!(echo.take(), Ok(6));
    echo.close_incoming();
    echo.join().unwrap();
}

/// A Ractor that waits in `receive` (spinning for a message while its worker
/// has nothing else to run) does not keep a green thread of its own worker
/// from running once another OS thread wakes it: here the message comes only
/// after that thread has run, round after round.
#[test]
fn a_receiving_ractor_lets_a_woken_thread_of_its_worker_run() {
    const ROUNDS: usize = 200;
    let (unparkers, unparker) = std::sync::mpsc::channel();
    let (runs, ran) = std::sync::mpsc::channel();
    let r = Ractor::new(move |ctx: &Context<usize>| {
        let helper = fibra::spawn(move || {
            unparkers
                .send(fibra::runtime::current().unparker())
                .unwrap();
            let mut round = 0;
            while round < ROUNDS {
                fibra::runtime::park();
                runs.send(round).unwrap();
                round += 1;
            }
        });
        let received: Vec<usize> = (0..ROUNDS).map(|_| ctx.receive().unwrap()).collect();
        helper.join().unwrap();
        received
    });
    let unparker: fibra::runtime::Unparker = unparker.recv().unwrap();
    for round in 0..ROUNDS {
        unparker.unpark();
        // A spurious return from `park` may make the helper run early, never
        // late: only its report of this round counts.
        assert_eq!(ran.recv().unwrap(), round);
        r.send(round).unwrap();
    }
    assert_eq!(r.join().unwrap(), (0..ROUNDS).collect::<Vec<_>>());
}

/// A pool whose runtime cannot start (here: a stack size no OS can reserve)
/// refuses to be made, with the runtime's reason, instead of taking Ractors
/// that would never run.
#[test]
fn a_pool_whose_runtime_cannot_start_says_why() {
    let builder = fibra::runtime::Builder::new().stack_size(usize::MAX / 2);
    let panic = std::panic::catch_unwind(|| Pool::with_runtime(2, builder)).unwrap_err();
    let message = panic.downcast_ref::<String>().expect("a formatted message");
    assert!(
        message.contains("cannot start worker 0 of a Ractor pool"),
        "{message}"
    );
    assert!(message.contains("stack"), "{message}");
}

/// Two pools' workers have the same index and OS thread name: a dump groups
/// Ractors by the worker's OS thread, so those of two pools are never taken
/// for one group (which made `a_dump_keeps_no_ractors_messages_alive` fail
/// when another test's pool had finished Ractors on its worker 0).
#[test]
fn a_dump_tells_the_workers_of_two_pools_apart() {
    let (first, second) = (Pool::new(1), Pool::new(1));
    let a = first.spawn(|_: &Context<()>| {});
    let b = second.spawn(|_: &Context<()>| {});
    while !a.is_finished() || !b.is_finished() {
        std::thread::yield_now();
    }
    let dump = fibra::runtime::dump().to_string();
    for ractor in [&a, &b] {
        let line = format!("Ractor #{} on worker 0", ractor.id());
        assert!(dump.contains(&line), "no line {line:?} in\n{dump}");
    }
}

/// A dump takes references to each Ractor's ports to read them, and drops
/// them on a green thread of the Ractor's worker (never inside its answer,
/// where a message's panicking destructor would end the worker): that
/// thread runs at once, even on an idle worker, so a message still queued
/// when the last handle goes is dropped then, not at the worker's next event.
#[test]
fn a_dump_keeps_no_ractors_messages_alive() {
    let pool = Pool::new(1);
    let dropped = Arc::new(AtomicUsize::new(0));
    // Both messages are queued before the Ractor receives: a Ractor that
    // received the first and finished would refuse the second.
    let both_sent = Arc::new(std::sync::Barrier::new(2));
    let r = pool.spawn({
        let both_sent = both_sent.clone();
        move |ctx: &Context<Dropped>| {
            both_sent.wait();
            let _ = ctx.receive();
        }
    });
    r.send(Dropped(dropped.clone())).unwrap();
    r.send(Dropped(dropped.clone())).unwrap(); // never received
    both_sent.wait();
    while !r.is_finished() {
        std::thread::yield_now();
    }
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    let dump = fibra::runtime::dump().to_string();
    assert!(dump.contains("mailbox 1 message"), "{dump}");
    drop(r);
    // A bounded wait for the outcome (the worker is idle: nothing else
    // would wake it), not a measured time.
    let deadline = Instant::now() + Duration::from_secs(60);
    while dropped.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(dropped.load(Ordering::SeqCst), 2, "the queued message");
}

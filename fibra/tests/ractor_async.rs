//! Awaiting Ractors from async code: tokio tasks await CPU work done on
//! Ractors while tokio's threads stay free; pending futures dropped lose
//! nothing; a panicked Ractor's error reaches the awaiting task.

use fibra::ractor::{Context, Ractor, RemoteError, TakeError};
use std::future::{Future, IntoFuture};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::Duration;

#[path = "support/without_hanging.rs"]
mod hang;
use hang::without_hanging;

fn tokio_runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_time()
        .build()
        .unwrap()
}

/// Some CPU work with a result to check.
fn collatz_steps(mut n: u64) -> u64 {
    let mut steps = 0;
    while n != 1 {
        n = if n.is_multiple_of(2) {
            n / 2
        } else {
            3 * n + 1
        };
        steps += 1;
    }
    steps
}

/// The Collatz steps of the `SPAN` numbers from `from` on.
fn sum_of_collatz_steps(from: u64) -> u64 {
    (from..from + SPAN).map(collatz_steps).sum()
}

/// Enough numbers for some work each, few enough for valgrind.
const SPAN: u64 = 200;

/// A hundred tasks on a two-thread tokio runtime each await a Ractor that
/// holds its result until a tokio interval task, once it has ticked three
/// times, tells it to finish: if awaiting blocked tokio's threads, the
/// interval could not tick and nothing would end.
#[test]
fn a_hundred_tokio_tasks_await_ractors_while_tokio_keeps_ticking() {
    const TASKS: u64 = 100;
    const TICKS: usize = 3;
    let (results, ticks) = without_hanging("tokio tasks awaiting Ractors", || {
        let runtime = tokio_runtime(2);
        runtime.block_on(async {
            // Ractors waiting for the ticker's word to hand over their result.
            let held: Arc<Mutex<Vec<Ractor<(), (), u64>>>> = Arc::default();
            let ticks = Arc::new(AtomicUsize::new(0));
            let ticker = tokio::spawn({
                let (held, ticks) = (held.clone(), ticks.clone());
                async move {
                    let mut interval = tokio::time::interval(Duration::from_millis(1));
                    loop {
                        interval.tick().await;
                        if ticks.fetch_add(1, Ordering::SeqCst) + 1 >= TICKS {
                            for ractor in held.lock().unwrap().drain(..) {
                                ractor.send(()).unwrap();
                            }
                        }
                    }
                }
            });
            let tasks: Vec<_> = (0..TASKS)
                .map(|i| {
                    let held = held.clone();
                    tokio::spawn(async move {
                        let worker = Ractor::new(move |ctx: &Context<()>| {
                            let sum = sum_of_collatz_steps(1 + i * SPAN);
                            ctx.receive().unwrap();
                            sum
                        });
                        held.lock().unwrap().push(worker.clone());
                        worker.await
                    })
                })
                .collect();
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await.unwrap().unwrap());
            }
            ticker.abort();
            (results, ticks.load(Ordering::SeqCst))
        })
    });
    let expected: Vec<u64> = (0..TASKS)
        .map(|i| sum_of_collatz_steps(1 + i * SPAN))
        .collect();
    assert_eq!(results, expected);
    assert!(ticks >= TICKS, "{ticks} ticks");
}

#[test]
fn tokio_tasks_take_what_a_ractor_yields() {
    let taken = without_hanging("tokio tasks taking", || {
        tokio_runtime(2).block_on(async {
            let producer = Ractor::new(|ctx: &Context<(), u64>| {
                for n in 0..1_000 {
                    ctx.yield_value(n).unwrap();
                }
            });
            // Four tasks share the values: each goes to exactly one of them.
            let takers: Vec<_> = (0..4)
                .map(|_| {
                    let producer = producer.clone();
                    tokio::spawn(async move {
                        let mut taken = Vec::new();
                        while let Ok(n) = producer.take_async().await {
                            taken.push(n);
                        }
                        taken
                    })
                })
                .collect();
            let mut all = Vec::new();
            for taker in takers {
                all.extend(taker.await.unwrap());
            }
            producer.await.unwrap();
            all
        })
    });
    let mut taken = taken;
    taken.sort_unstable();
    assert_eq!(taken, (0..1_000).collect::<Vec<_>>());
}

#[test]
fn awaiting_a_panicked_ractor_gives_the_remote_error() {
    let (taken, joined) = without_hanging("awaiting a panicked Ractor", || {
        tokio_runtime(1).block_on(async {
            let ractor = Ractor::new(|ctx: &Context<(), u32>| {
                let _ = ctx.receive();
                panic!("the work failed");
            });
            let taker = tokio::spawn({
                let ractor = ractor.clone();
                async move { ractor.take_async().await }
            });
            ractor.close_incoming();
            (taker.await.unwrap(), ractor.await)
        })
    });
    assert_eq!(taken, Err(TakeError::Panicked("the work failed".into())));
    match joined {
        Err(err @ RemoteError::Panicked(_)) => assert_eq!(err.message(), Some("the work failed")),
        other => panic!("expected the panic, got {other:?}"),
    }
}

/// Counts the wakes it gets.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl CountingWaker {
    fn wakes(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// The rendezvous value a dropped `Take` was woken for stays on offer, and the
/// next taker gets it.
#[test]
fn a_pending_take_dropped_after_its_wake_leaves_the_offer() {
    let ractor = Ractor::new(|ctx: &Context<(), &str>| {
        ctx.receive().unwrap();
        ctx.yield_value("kept").unwrap();
        "offer taken"
    });
    let counter = Arc::new(CountingWaker::default());
    let waker = Waker::from(counter.clone());
    {
        let mut take = pin!(ractor.take_async());
        assert!(
            take.as_mut()
                .poll(&mut TaskContext::from_waker(&waker))
                .is_pending()
        );
        ractor.send(()).unwrap(); // the Ractor offers, and wakes the take
        while counter.wakes() == 0 {
            std::thread::yield_now();
        }
    } // dropped without being polled again
    assert_eq!(ractor.take(), Ok("kept"));
    assert_eq!(ractor.join().unwrap(), "offer taken");
}

/// Polling a pending future again (as a `select!` loop does) before it is
/// woken registers it once: one offer, one wake.
#[test]
fn a_take_polled_many_times_is_woken_once() {
    let ractor = Ractor::new(|ctx: &Context<(), u8>| {
        ctx.receive().unwrap();
        ctx.yield_value(1).unwrap();
    });
    let counter = Arc::new(CountingWaker::default());
    let waker = Waker::from(counter.clone());
    let mut take = pin!(ractor.take_async());
    for _ in 0..100 {
        assert!(
            take.as_mut()
                .poll(&mut TaskContext::from_waker(&waker))
                .is_pending()
        );
    }
    ractor.send(()).unwrap();
    // Wait for the wake, as an executor would, before polling again: a poll
    // made while the offer is being made could take the value before the
    // Ractor gets to waking anyone, and then nobody needs waking.
    while counter.wakes() == 0 {
        std::thread::yield_now();
    }
    let value = take.as_mut().poll(&mut TaskContext::from_waker(&waker));
    assert_eq!(value, Poll::Ready(Ok(1)));
    assert_eq!(counter.wakes(), 1);
    ractor.clone().join().unwrap(); // (`take` still borrows `ractor`)
}

/// A `select!` loop remakes its take future each time round; the ones it
/// dropped leave no entry behind, so the offer wakes only the live one.
#[test]
fn dropped_pending_takes_leave_no_entry_behind() {
    let ractor = Ractor::new(|ctx: &Context<(), u8>| {
        ctx.receive().unwrap();
        ctx.yield_value(7).unwrap();
    });
    let dropped = Arc::new(CountingWaker::default());
    for _ in 0..100 {
        let mut take = pin!(ractor.take_async());
        let waker = Waker::from(dropped.clone());
        assert!(
            take.as_mut()
                .poll(&mut TaskContext::from_waker(&waker))
                .is_pending()
        );
    }
    let live = Arc::new(CountingWaker::default());
    let waker = Waker::from(live.clone());
    let mut take = pin!(ractor.take_async());
    assert!(
        take.as_mut()
            .poll(&mut TaskContext::from_waker(&waker))
            .is_pending()
    );
    ractor.send(()).unwrap();
    while live.wakes() == 0 {
        std::thread::yield_now();
    }
    assert_eq!(
        take.as_mut().poll(&mut TaskContext::from_waker(&waker)),
        Poll::Ready(Ok(7))
    );
    ractor.clone().join().unwrap(); // (`take` still borrows `ractor`)
    assert_eq!(dropped.wakes(), 0);
}

/// A dropped pending join leaves the final value for another handle.
#[test]
fn a_pending_join_dropped_leaves_the_value() {
    let ractor = Ractor::new(|ctx: &Context<()>| {
        ctx.receive().unwrap();
        42
    });
    let other = ractor.clone();
    {
        let mut join = pin!(ractor.into_future());
        assert!(
            join.as_mut()
                .poll(&mut TaskContext::from_waker(Waker::noop()))
                .is_pending()
        );
    }
    other.send(()).unwrap();
    assert_eq!(fibra::block_on(other.into_future()).unwrap(), 42);
}

/// A join future dropped while pending is not woken when the Ractor ends.
#[test]
fn a_dropped_pending_join_is_not_woken() {
    let ractor = Ractor::new(|ctx: &Context<()>| ctx.receive().unwrap());
    let other = ractor.clone();
    let dropped = Arc::new(CountingWaker::default());
    {
        let mut join = pin!(ractor.into_future());
        let waker = Waker::from(dropped.clone());
        assert!(
            join.as_mut()
                .poll(&mut TaskContext::from_waker(&waker))
                .is_pending()
        );
    }
    other.send(()).unwrap();
    other.join().unwrap();
    assert_eq!(dropped.wakes(), 0);
}

#[test]
fn the_futures_are_send() {
    fn send<T: Send>(_: &T) {}
    let ractor = Ractor::new(|_: &Context<(), u8>| 1u8);
    send(&ractor.take_async());
    send(&ractor.into_future());
}

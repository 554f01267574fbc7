//! `sync::Queue` and `sync::SizedQueue`: Ruby's `Thread::Queue` behaviours
//! (after `test_thread_queue.rb`: close, push after close, pop draining then
//! reporting the close, `num_waiting`, `clear`, `max=`, pop with a timeout),
//! and the queue between any threads — plain OS threads, `blocking` jobs,
//! two runtimes, a Ractor — with cancelled waiters losing nothing and many
//! producers and consumers losing and duplicating nothing. Run under
//! ThreadSanitizer too (`scripts/tsan.sh --test queue`).

#[path = "support/without_hanging.rs"]
mod hang;

use fibra::ractor::{Context, Ractor};
use fibra::runtime::{self, JoinError, RuntimeState, ThreadState, WaitReason, yield_now};
use fibra::sync::{
    PopTimeoutError, PushError, PushTimeoutError, Queue, SizedQueue, TryPopError, TryPushError,
    oneshot,
};
use fibra::time::{sleep, timeout};
use fibra::{JoinHandle, blocking, spawn};
use hang::without_hanging;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

/// Lets every runnable green thread run until all have parked or finished.
fn settle() {
    for _ in 0..8 {
        yield_now();
    }
}

fn is_cancelled<T>(handle: JoinHandle<T>) -> bool {
    matches!(handle.join(), Err(JoinError::Cancelled))
}

/// A green thread that pops once from `queue`.
fn popper<T: 'static>(queue: &Queue<T>) -> JoinHandle<Option<T>> {
    let queue = queue.clone();
    spawn(move || queue.pop())
}

// ------------------------------------------------------------ Ruby's tests

#[test]
fn push_after_close_fails_and_pop_drains_then_reports_the_close() {
    let queue = Queue::new();
    queue.push(1).unwrap();
    queue.push(2).unwrap();
    assert!(!queue.is_closed());
    queue.close();
    assert!(queue.is_closed());
    assert_eq!(queue.push(3), Err(PushError(3)));
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.pop(), Some(1));
    assert_eq!(queue.try_pop(), Ok(2));
    assert_eq!(queue.pop(), None);
    assert_eq!(queue.try_pop(), Err(TryPopError::Closed));
    assert_eq!(
        queue.pop_timeout(Duration::from_secs(60)),
        Err(PopTimeoutError::Closed)
    );
    // Closing again changes nothing.
    queue.close();
    assert!(queue.is_closed() && queue.is_empty());
}

#[test]
fn close_wakes_every_waiting_popper_and_pusher() {
    fibra::run(|| {
        let queue = Queue::<u8>::new();
        let poppers: Vec<_> = (0..3).map(|_| popper(&queue)).collect();
        let sized = SizedQueue::new(1);
        sized.push(0).unwrap();
        let pushers: Vec<_> = (1..=2)
            .map(|n| {
                let sized = sized.clone();
                spawn(move || sized.push(n))
            })
            .collect();
        settle();
        assert_eq!(queue.num_waiting(), 3);
        assert_eq!(sized.num_waiting(), 2);
        queue.close();
        sized.close();
        for p in poppers {
            assert_eq!(p.join().unwrap(), None);
        }
        let refused: Vec<_> = pushers.into_iter().map(|p| p.join().unwrap()).collect();
        assert_eq!(refused, [Err(PushError(1)), Err(PushError(2))]);
        assert_eq!(queue.num_waiting() + sized.num_waiting(), 0);
        // What the sized queue held before the close is still there.
        assert_eq!(sized.iter().collect::<Vec<_>>(), [0]);
    });
}

#[test]
fn num_waiting_counts_the_threads_that_wait_each_way() {
    fibra::run(|| {
        let queue = Queue::<u8>::new();
        assert_eq!(queue.num_waiting(), 0);
        let a = popper(&queue);
        let b = popper(&queue);
        settle();
        assert_eq!(queue.num_waiting(), 2);
        queue.push(1).unwrap();
        assert_eq!(queue.num_waiting(), 1, "the first popper was served");
        b.cancel();
        assert!(is_cancelled(b));
        assert_eq!(queue.num_waiting(), 0);
        assert_eq!(a.join().unwrap(), Some(1));

        let sized = SizedQueue::new(1);
        sized.push(1).unwrap();
        let pusher = {
            let sized = sized.clone();
            spawn(move || sized.push(2))
        };
        settle();
        assert_eq!(sized.num_waiting(), 1);
        assert_eq!(sized.pop(), Some(1));
        assert_eq!(sized.num_waiting(), 0);
        pusher.join().unwrap().unwrap();
    });
}

#[test]
fn clear_empties_the_queue_and_lets_waiting_pushers_in() {
    fibra::run(|| {
        let queue = Queue::new();
        (0..5).for_each(|n| queue.push(n).unwrap());
        queue.clear();
        assert!(queue.is_empty());
        assert_eq!(queue.try_pop(), Err(TryPopError::Empty));

        let sized = SizedQueue::new(2);
        sized.push(1).unwrap();
        sized.push(2).unwrap();
        let pushers: Vec<_> = (3..=5)
            .map(|n| {
                let sized = sized.clone();
                spawn(move || sized.push(n))
            })
            .collect();
        settle();
        sized.clear();
        // Room for two: the first two waiting pushers moved in, in order.
        assert_eq!(sized.len(), 2);
        assert_eq!(sized.num_waiting(), 1);
        assert_eq!(sized.pop(), Some(3));
        assert_eq!(sized.pop(), Some(4));
        assert_eq!(sized.pop(), Some(5));
        pushers.into_iter().for_each(|p| p.join().unwrap().unwrap());
    });
}

#[test]
fn raising_max_lets_waiting_pushers_in_and_lowering_it_keeps_the_items() {
    fibra::run(|| {
        let sized = SizedQueue::new(1);
        assert_eq!(sized.max(), 1);
        sized.push(0).unwrap();
        let pushers: Vec<_> = (1..=3)
            .map(|n| {
                let sized = sized.clone();
                spawn(move || sized.push(n))
            })
            .collect();
        settle();
        assert_eq!(sized.num_waiting(), 3);
        sized.set_max(3);
        assert_eq!(sized.max(), 3);
        assert_eq!(sized.len(), 3, "two pushers moved in at once");
        assert_eq!(sized.num_waiting(), 1);
        sized.set_max(1);
        assert_eq!(sized.len(), 3, "lowering the max drops nothing");
        assert_eq!(sized.try_push(9), Err(TryPushError::Full(9)));
        assert_eq!(sized.pop(), Some(0));
        assert_eq!(sized.pop(), Some(1));
        assert_eq!(sized.num_waiting(), 1, "still no room under max 1");
        assert_eq!(sized.pop(), Some(2));
        assert_eq!(sized.len(), 1, "room at last: the last pusher moved in");
        assert_eq!(sized.pop(), Some(3));
        pushers.into_iter().for_each(|p| p.join().unwrap().unwrap());
    });
}

#[test]
#[should_panic = "a SizedQueue's max must be at least 1"]
fn a_sized_queue_of_zero_is_refused() {
    let _ = SizedQueue::<u8>::new(0);
}

#[test]
fn pop_and_push_with_a_timeout_time_out_or_complete() {
    // On a green thread, and on a plain OS thread (which blocks).
    let check = || {
        let queue = Queue::<u8>::new();
        assert_eq!(
            queue.pop_timeout(Duration::from_millis(5)),
            Err(PopTimeoutError::Timeout)
        );
        assert_eq!(
            queue.pop_timeout(Duration::ZERO),
            Err(PopTimeoutError::Timeout)
        );
        queue.push(1).unwrap();
        assert_eq!(queue.pop_timeout(Duration::ZERO), Ok(1));
        let sized = SizedQueue::new(1);
        sized.push_timeout(1, Duration::ZERO).unwrap();
        assert_eq!(
            sized.push_timeout(2, Duration::from_millis(5)),
            Err(PushTimeoutError::Timeout(2))
        );
        sized.close();
        assert_eq!(
            sized.push_timeout(3, Duration::from_secs(60)),
            Err(PushTimeoutError::Closed(3))
        );
        assert_eq!(sized.try_push(4), Err(TryPushError::Closed(4)));
        assert_eq!(queue.num_waiting() + sized.num_waiting(), 0);
    };
    check();
    fibra::run(check);
}

#[test]
fn a_pop_with_a_timeout_takes_an_item_pushed_while_it_waits() {
    without_hanging("pop_timeout", || {
        let queue = Queue::new();
        let feeder = queue.clone();
        let os = thread::spawn(move || {
            while feeder.num_waiting() == 0 {
                thread::yield_now();
            }
            feeder.push("from an OS thread").unwrap();
        });
        let got = fibra::run(move || queue.pop_timeout(Duration::from_secs(60)));
        os.join().unwrap();
        assert_eq!(got, Ok("from an OS thread"));
    });
}

#[test]
fn iterators_pop_until_the_close() {
    let queue = Queue::new();
    (1..=3).for_each(|n| queue.push(n).unwrap());
    queue.close();
    assert_eq!((&queue).into_iter().take(1).collect::<Vec<_>>(), [1]);
    assert_eq!(queue.into_iter().collect::<Vec<_>>(), [2, 3]);
    let sized = SizedQueue::new(5);
    sized.push('a').unwrap();
    sized.close();
    let mut all = Vec::new();
    for c in &sized {
        all.push(c);
    }
    all.extend(sized);
    assert_eq!(all, ['a']);
}

#[test]
fn debug_and_errors_say_what_happened() {
    let queue = Queue::new();
    queue.push(1).unwrap();
    assert_eq!(
        format!("{queue:?}"),
        "Queue { len: 1, closed: false, num_waiting: 0 }"
    );
    let sized = SizedQueue::<u8>::new(4);
    sized.close();
    assert_eq!(
        format!("{sized:?}"),
        "SizedQueue { max: 4, len: 0, closed: true, num_waiting: 0 }"
    );
    assert_eq!(PushError(1).to_string(), "pushing to a closed queue");
    assert_eq!(format!("{:?}", PushError(1)), "PushError(..)");
    assert_eq!(TryPushError::Full(1).to_string(), "pushing to a full queue");
    assert_eq!(
        TryPopError::Closed.to_string(),
        "popping from a closed, empty queue"
    );
    assert_eq!(
        PopTimeoutError::Timeout.to_string(),
        "timed out popping from a queue that stayed empty"
    );
    assert_eq!(
        PushTimeoutError::Timeout(1).into_inner(),
        1,
        "every push error gives the item back"
    );
}

#[test]
fn a_dump_names_a_queue_wait() {
    fibra::run(|| {
        let queue = Queue::<u8>::new();
        let waiting = {
            let queue = queue.clone();
            runtime::ThreadBuilder::new()
                .name("popper")
                .spawn(move || queue.pop())
                .unwrap()
        };
        settle();
        let dump = runtime::dump();
        let here = thread::current().id();
        let mine = dump
            .runtimes
            .iter()
            .find(|r| r.os_thread_id == here)
            .unwrap();
        let RuntimeState::Threads(threads) = &mine.state else {
            panic!("this runtime answers: {dump}");
        };
        let popper = threads
            .iter()
            .find(|t| t.name.as_deref() == Some("popper"))
            .unwrap();
        assert!(
            matches!(
                popper.state,
                ThreadState::Parked {
                    reason: WaitReason::QueuePop,
                    ..
                }
            ),
            "{dump}"
        );
        assert!(
            dump.to_string().contains("queue pop (queue empty)"),
            "{dump}"
        );
        queue.close();
        assert_eq!(waiting.join().unwrap(), None);
    });
}

// ------------------------------------------------------- between threads

/// A green thread that ticks (sleeps a millisecond, counts) until told to
/// stop: while it ticks, its runtime is not blocked.
fn ticker(ticks: &Arc<AtomicUsize>, stop: &Arc<AtomicBool>) -> JoinHandle<()> {
    let (ticks, stop) = (ticks.clone(), stop.clone());
    spawn(move || {
        while !stop.load(Ordering::Acquire) {
            sleep(Duration::from_millis(1));
            ticks.fetch_add(1, Ordering::AcqRel);
        }
    })
}

/// Pushes `items`, each only once the ticker has ticked since the last: the
/// items come only while the runtime that pops them keeps running (a pop that
/// blocked its OS thread would stop the ticker, and so the feed: a hang).
fn feed_between_ticks(queue: &Queue<usize>, ticks: &AtomicUsize, items: std::ops::Range<usize>) {
    let mut last = ticks.load(Ordering::Acquire);
    for item in items {
        loop {
            let now = ticks.load(Ordering::Acquire);
            if now > last {
                last = now;
                break;
            }
            thread::sleep(Duration::from_micros(200));
        }
        queue.push(item).unwrap();
    }
}

#[test]
fn an_os_thread_and_a_blocking_job_feed_a_green_thread_while_a_ticker_ticks() {
    const EACH: usize = 20;
    let (ticked, got) = without_hanging("fed while ticking", || {
        fibra::run(|| {
            let queue = Queue::new();
            let ticks = Arc::new(AtomicUsize::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            let ticking = ticker(&ticks, &stop);
            let os = {
                let (queue, ticks) = (queue.clone(), ticks.clone());
                thread::spawn(move || feed_between_ticks(&queue, &ticks, 0..EACH))
            };
            let job = {
                let (queue, ticks) = (queue.clone(), ticks.clone());
                spawn(move || blocking(move || feed_between_ticks(&queue, &ticks, EACH..2 * EACH)))
            };
            let mut got: Vec<usize> = (0..2 * EACH).map(|_| queue.pop().unwrap()).collect();
            stop.store(true, Ordering::Release);
            ticking.join().unwrap();
            job.join().unwrap();
            blocking(move || os.join().unwrap());
            got.sort_unstable();
            (ticks.load(Ordering::Acquire), got)
        })
    });
    assert_eq!(got, (0..2 * EACH).collect::<Vec<_>>());
    assert!(
        ticked >= EACH,
        "the ticker ticked before each of the OS thread's pushes: {ticked}"
    );
}

#[test]
fn two_runtimes_play_ping_pong_through_queues_and_answer_with_a_oneshot() {
    const ROUNDS: u64 = 1000;
    let total = without_hanging("two runtimes", || {
        let (pings, pongs) = (Queue::new(), SizedQueue::new(1));
        let (answer_tx, answer_rx) = oneshot::channel();
        let other = {
            let (pings, pongs) = (pings.clone(), pongs.clone());
            thread::spawn(move || {
                fibra::run(move || {
                    let mut served = 0;
                    for ball in &pings {
                        pongs.push(ball + 1).unwrap();
                        served += 1;
                    }
                    answer_tx.send(served).unwrap();
                })
            })
        };
        let total = fibra::run(move || {
            let mut ball = 0;
            for _ in 0..ROUNDS {
                pings.push(ball).unwrap();
                ball = pongs.pop().unwrap();
            }
            pings.close();
            assert_eq!(answer_rx.recv(), Ok(ROUNDS));
            ball
        });
        other.join().unwrap();
        total
    });
    assert_eq!(total, ROUNDS);
}

#[test]
fn a_ractor_body_and_its_green_threads_push_into_a_queue() {
    let queue = Queue::new();
    let into = queue.clone();
    let ractor = Ractor::new(move |_: &Context<()>| {
        let helper = {
            let into = into.clone();
            spawn(move || (100..200).for_each(|n| into.push(n).unwrap()))
        };
        (0..100).for_each(|n| into.push(n).unwrap());
        helper.join().unwrap();
        into.close();
    });
    // The main OS thread, outside any runtime, blocks in pop.
    let mut got: Vec<u32> = without_hanging("from a Ractor", move || queue.iter().collect());
    ractor.join().unwrap();
    got.sort_unstable();
    assert_eq!(got, (0..200).collect::<Vec<_>>());
}

// ------------------------------------------------------- cancelled waiters

#[test]
fn a_cancelled_popper_loses_no_item() {
    fibra::run(|| {
        let queue = Queue::new();
        let (p1, p2, p3) = (popper(&queue), popper(&queue), popper(&queue));
        settle();
        p2.cancel(); // waiting, nothing handed to it yet
        settle();
        queue.push(1).unwrap(); // handed to p1...
        p1.cancel(); // ...which is cancelled before it runs: 1 goes to p3
        assert_eq!(p3.join().unwrap(), Some(1));
        assert!(is_cancelled(p1) && is_cancelled(p2));

        // With no popper left waiting, the item goes back to the front.
        let p4 = popper(&queue);
        settle();
        queue.push(2).unwrap();
        queue.push(3).unwrap();
        p4.cancel();
        assert!(is_cancelled(p4));
        assert_eq!(queue.num_waiting(), 0);
        queue.close();
        assert_eq!(queue.iter().collect::<Vec<_>>(), [2, 3]);
    });
}

#[test]
fn a_popper_whose_timeout_expires_loses_no_item() {
    fibra::run(|| {
        let queue = Queue::new();
        let waiting = {
            let queue = queue.clone();
            spawn(move || timeout(Duration::from_millis(20), || queue.pop()))
        };
        settle();
        // Handed an item just as its deadline passes: it may return it, or
        // unwind and give it back; either way the item is not lost.
        thread::sleep(Duration::from_millis(25));
        queue.push(7).unwrap();
        match waiting.join().unwrap() {
            Ok(item) => assert_eq!(item, Some(7)),
            Err(_elapsed) => assert_eq!(queue.try_pop(), Ok(7)),
        }
        assert!(queue.is_empty());
        assert_eq!(queue.num_waiting(), 0);
    });
}

#[test]
fn a_cancelled_pusher_pushes_once_or_not_at_all() {
    fibra::run(|| {
        let sized = SizedQueue::new(1);
        sized.push(0).unwrap();
        let push_one = |n: i32| {
            let sized = sized.clone();
            spawn(move || sized.push(n))
        };
        let (s1, s2, s3) = (push_one(1), push_one(2), push_one(3));
        settle();
        s2.cancel(); // waiting, its item not taken: it is not pushed
        settle();
        assert_eq!(sized.pop(), Some(0)); // room: s1's item moves in, s1 is done...
        s1.cancel(); // ...so cancelling it now changes nothing
        assert!(is_cancelled(s1) && is_cancelled(s2));
        assert_eq!(sized.pop(), Some(1));
        s3.join().unwrap().unwrap();
        sized.close();
        assert_eq!(sized.iter().collect::<Vec<_>>(), [3]);
    });
}

// ------------------------------------------- many producers, many consumers

/// `producers` OS threads and as many green threads on each of two runtimes
/// push `each` distinct items; `consumers` OS threads and as many green
/// threads on each runtime pop until the close: every item is popped exactly
/// once.
fn many_to_many(queue: Queue<usize>, producers: usize, consumers: usize, each: usize) {
    let total = 3 * producers * each;
    let pushed = Arc::new(AtomicUsize::new(0));
    // Pushers of all three kinds, numbered 0..3 * producers.
    let push_all = move |queue: Queue<usize>, pushed: Arc<AtomicUsize>, id: usize| {
        move || {
            for i in 0..each {
                queue.push(id * each + i).unwrap();
            }
            // The last pusher closes the queue.
            if pushed.fetch_add(each, Ordering::AcqRel) + each == total {
                queue.close();
            }
        }
    };
    let pop_all = |queue: Queue<usize>| move || queue.iter().collect::<Vec<_>>();
    let runtime = |first: usize| {
        let (queue, pushed) = (queue.clone(), pushed.clone());
        thread::spawn(move || {
            fibra::run(move || {
                let popping: Vec<_> = (0..consumers)
                    .map(|_| spawn(pop_all(queue.clone())))
                    .collect();
                let pushing: Vec<_> = (0..producers)
                    .map(|p| spawn(push_all(queue.clone(), pushed.clone(), first + p)))
                    .collect();
                pushing.into_iter().for_each(|p| p.join().unwrap());
                popping
                    .into_iter()
                    .flat_map(|p| p.join().unwrap())
                    .collect::<Vec<_>>()
            })
        })
    };
    let runtimes = [runtime(0), runtime(producers)];
    let os_popping: Vec<_> = (0..consumers)
        .map(|_| thread::spawn(pop_all(queue.clone())))
        .collect();
    let os_pushing: Vec<_> = (0..producers)
        .map(|p| thread::spawn(push_all(queue.clone(), pushed.clone(), 2 * producers + p)))
        .collect();
    os_pushing.into_iter().for_each(|p| p.join().unwrap());
    let mut got: Vec<usize> = runtimes
        .into_iter()
        .chain(os_popping)
        .flat_map(|t| t.join().unwrap())
        .collect();
    got.sort_unstable();
    assert_eq!(got.len(), total, "nothing lost, nothing duplicated");
    assert!(got.iter().enumerate().all(|(i, &n)| i == n));
}

#[test]
fn many_producers_and_consumers_across_threads_lose_and_duplicate_nothing() {
    without_hanging("many to many, unbounded", || {
        many_to_many(Queue::new(), 4, 4, 2_000)
    });
}

#[test]
fn many_producers_and_consumers_through_a_small_sized_queue_lose_nothing() {
    without_hanging("many to many, sized", || {
        let sized = SizedQueue::new(3);
        many_to_many(Queue::clone(&sized), 4, 4, 2_000)
    });
}

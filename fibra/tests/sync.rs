//! What a user of `fibra::sync` sees: locks, condition variables, channels and
//! select among green threads — exact counts under contention of 10,000
//! threads, ordering, back-pressure, disconnection, timeouts, and cancellation
//! of waiting threads, which must lose nothing and wedge nobody.

use fibra::runtime::{JoinError, yield_now};
use fibra::sync::channel::{
    self, Receiver, RecvError, RecvTimeoutError, Select, SendError, SendTimeoutError, TryRecvError,
    TrySendError,
};
use fibra::sync::{Condvar, Mutex};
use fibra::{JoinHandle, spawn};
use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;
use std::time::Duration;

const THREADS: usize = 10_000;

/// Counts drops of its clones' shared counter.
#[derive(Clone, Debug)]
struct DropCounter(Rc<Cell<u32>>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

/// Lets every runnable green thread run until all have parked or finished
/// (each `yield_now` runs the others once; a few rounds settle chains of
/// wake-ups).
fn settle() {
    for _ in 0..8 {
        yield_now();
    }
}

/// Where two sorted lists of messages first differ: the index, and what each
/// has there (to report them without printing thousands of numbers).
fn first_difference(got: &[usize], expected: &[usize]) -> (usize, Option<usize>, Option<usize>) {
    let at = got.iter().zip(expected).take_while(|(a, b)| a == b).count();
    (at, got.get(at).copied(), expected.get(at).copied())
}

fn is_cancelled<T>(handle: JoinHandle<T>) -> bool {
    matches!(handle.join(), Err(JoinError::Cancelled))
}

// ---------------------------------------------------------------- Mutex

#[test]
fn mutex_serialises_10k_threads_that_park_while_holding_it() {
    fibra::run(|| {
        let counter = Rc::new(Mutex::new(0usize));
        let holders = Rc::new(Cell::new(0));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (counter, holders) = (counter.clone(), holders.clone());
                spawn(move || {
                    let mut guard = counter.lock();
                    holders.set(holders.get() + 1);
                    assert_eq!(holders.get(), 1, "two threads hold the lock");
                    let seen = *guard;
                    yield_now(); // everyone else runs, and queues
                    *guard = seen + 1;
                    holders.set(holders.get() - 1);
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(*counter.lock(), THREADS);
        assert!(!counter.is_locked());
    });
}

#[test]
fn mutex_is_handed_over_in_arrival_order() {
    fibra::run(|| {
        let m = Rc::new(Mutex::new(Vec::new()));
        let first = m.lock();
        let handles: Vec<_> = (0..100)
            .map(|n| {
                let m = m.clone();
                spawn(move || m.lock().push(n))
            })
            .collect();
        settle(); // all 100 queue behind `first`
        drop(first);
        // A late locker cannot overtake the queue: the lock went to waiter 0.
        assert!(m.is_locked());
        assert!(m.try_lock().is_none());
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(*m.lock(), (0..100).collect::<Vec<_>>());
    });
}

#[test]
fn mutex_try_lock_get_mut_into_inner() {
    let mut m = Mutex::new(String::from("a"));
    {
        let mut g = m.try_lock().unwrap();
        g.push('b');
        assert!(m.try_lock().is_none());
        assert!(m.is_locked());
        assert_eq!(format!("{m:?}"), "Mutex { data: <locked>, .. }");
    }
    m.get_mut().push('c');
    assert_eq!(format!("{m:?}"), r#"Mutex { data: "abc", .. }"#);
    // Uncontended locking needs no runtime.
    assert_eq!(*m.lock(), "abc");
    assert_eq!(m.into_inner(), "abc");
}

#[test]
fn mutex_is_released_by_a_panicking_holder() {
    fibra::run(|| {
        let m = Rc::new(Mutex::new(0));
        let panicker = {
            let m = m.clone();
            spawn(move || {
                let mut g = m.lock();
                *g = 41;
                yield_now(); // the waiter queues
                panic!("while holding the lock");
            })
        };
        let waiter = {
            let m = m.clone();
            spawn(move || *m.lock() + 1)
        };
        assert!(matches!(panicker.join(), Err(JoinError::Panicked(_))));
        // No poisoning: the next waiter got the lock, and sees the update.
        assert_eq!(waiter.join().unwrap(), 42);
        assert!(!m.is_locked());
    });
}

#[test]
fn cancelled_lock_waiters_lose_nothing() {
    fibra::run(|| {
        let m = Rc::new(Mutex::new(Vec::new()));
        let held = m.lock();
        let spawn_locker = |n: u32| {
            let m = m.clone();
            spawn(move || m.lock().push(n))
        };
        let (a, b, c, d) = (
            spawn_locker(1),
            spawn_locker(2),
            spawn_locker(3),
            spawn_locker(4),
        );
        settle();
        // Cancelled while queued.
        b.cancel();
        settle();
        // Cancelled after the lock was handed to it, before it ran: the lock
        // passes on to the next waiter.
        drop(held);
        a.cancel();
        for h in [c, d] {
            h.join().unwrap();
        }
        assert!(is_cancelled(a));
        assert!(is_cancelled(b));
        assert_eq!(*m.lock(), [3, 4]);
        assert!(m.try_lock().is_some());
    });
}

// ---------------------------------------------------------------- Condvar

#[test]
fn condvar_notify_one_wakes_one_and_notify_all_wakes_all() {
    fibra::run(|| {
        let state = Rc::new((Mutex::new(0u32), Condvar::new(), Cell::new(0u32)));
        let handles: Vec<_> = (0..5)
            .map(|_| {
                let state = state.clone();
                spawn(move || {
                    let (m, cv, woken) = &*state;
                    let g = cv.wait(m.lock());
                    woken.set(woken.get() + 1);
                    drop(g);
                })
            })
            .collect();
        settle();
        let (_, cv, woken) = &*state;
        assert_eq!(woken.get(), 0);
        cv.notify_one();
        settle();
        assert_eq!(woken.get(), 1);
        cv.notify_all();
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(woken.get(), 5);
        // Nobody waits: notifying is a no-op.
        cv.notify_one();
        cv.notify_all();
    });
}

#[test]
fn condvar_wait_timeout_reports_timeouts_and_notifications() {
    fibra::run(|| {
        let pair = Rc::new((Mutex::new(false), Condvar::new()));
        let (m, cv) = &*pair;
        let (g, timed_out) = cv.wait_timeout(m.lock(), Duration::from_millis(5));
        assert!(timed_out);
        drop(g);

        let notifier = {
            let pair = pair.clone();
            spawn(move || {
                *pair.0.lock() = true;
                pair.1.notify_one();
            })
        };
        let (g, timed_out) =
            cv.wait_timeout_while(m.lock(), Duration::from_secs(60), |ready| !*ready);
        assert!(!timed_out);
        assert!(*g);
        drop(g);
        notifier.join().unwrap();

        let (g, timed_out) = cv.wait_timeout_while(m.lock(), Duration::from_millis(5), |r| *r);
        assert!(timed_out);
        assert!(*g);
    });
}

#[test]
fn condvar_producer_consumer_with_10k_threads() {
    fibra::run(|| {
        // A queue of capacity 4 built from a mutex and two condition variables.
        let shared = Rc::new((Mutex::new(VecDeque::new()), Condvar::new(), Condvar::new()));
        let consumers: Vec<_> = (0..10)
            .map(|_| {
                let shared = shared.clone();
                spawn(move || {
                    let (m, not_empty, not_full) = &*shared;
                    let mut got = Vec::new();
                    loop {
                        let mut q = not_empty.wait_while(m.lock(), |q| q.is_empty());
                        let item: Option<usize> = q.pop_front().unwrap();
                        drop(q);
                        not_full.notify_one();
                        match item {
                            Some(n) => got.push(n),
                            None => return got,
                        }
                    }
                })
            })
            .collect();
        let producers: Vec<_> = (0..THREADS)
            .map(|n| {
                let shared = shared.clone();
                spawn(move || {
                    let (m, not_empty, not_full) = &*shared;
                    not_full
                        .wait_while(m.lock(), |q| q.len() >= 4)
                        .push_back(Some(n));
                    not_empty.notify_one();
                })
            })
            .collect();
        producers.into_iter().for_each(|h| h.join().unwrap());
        for _ in 0..10 {
            let (m, not_empty, not_full) = &*shared;
            not_full
                .wait_while(m.lock(), |q| q.len() >= 4)
                .push_back(None);
            not_empty.notify_one();
        }
        let mut all: Vec<usize> = consumers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        let expected: Vec<usize> = (0..THREADS).collect();
        assert!(
            all == expected,
            "lost or duplicated: {:?}",
            first_difference(&all, &expected)
        );
    });
}

#[test]
fn a_cancelled_notified_waiter_passes_the_notification_on() {
    fibra::run(|| {
        let state = Rc::new((Mutex::new(()), Condvar::new()));
        let waiter = || {
            let state = state.clone();
            spawn(move || drop(state.1.wait(state.0.lock())))
        };
        let (first, second) = (waiter(), waiter());
        settle();
        state.1.notify_one(); // goes to `first`...
        first.cancel(); // ...which unwinds before it returns
        second.join().unwrap();
        assert!(is_cancelled(first));

        // Cancelled while it re-acquires the lock after the notification.
        let (third, fourth) = (waiter(), waiter());
        settle();
        let held = state.0.lock();
        state.1.notify_one();
        settle(); // `third` is notified and now queues for the lock
        third.cancel();
        drop(held);
        fourth.join().unwrap();
        assert!(is_cancelled(third));
    });
}

// ---------------------------------------------------------------- channels

type Channel<T> = (channel::Sender<T>, Receiver<T>);

/// 10,000 senders, `per_sender` messages each, through a channel of the given
/// capacity to `receivers` receivers; checks that every message arrives
/// exactly once, and each sender's messages in order (per receiver).
fn many_to_many(make: fn() -> Channel<(usize, usize)>, receivers: usize, per_sender: usize) {
    fibra::run(move || {
        let (tx, rx) = make();
        let receiving: Vec<_> = (0..receivers)
            .map(|_| {
                let rx = rx.clone();
                spawn(move || {
                    let mut next = vec![0usize; THREADS];
                    let mut count = 0;
                    for (sender, n) in &rx {
                        assert!(
                            n >= next[sender],
                            "sender {sender}: {n} after {}",
                            next[sender]
                        );
                        next[sender] = n + 1;
                        count += 1;
                    }
                    count
                })
            })
            .collect();
        drop(rx);
        let sending: Vec<_> = (0..THREADS)
            .map(|sender| {
                let tx = tx.clone();
                spawn(move || {
                    for n in 0..per_sender {
                        tx.send((sender, n)).unwrap();
                        if n % 2 == 0 {
                            yield_now();
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        sending.into_iter().for_each(|h| h.join().unwrap());
        let total: usize = receiving.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(total, THREADS * per_sender);
    });
}

#[test]
fn unbounded_10k_senders_one_receiver_in_order() {
    many_to_many(channel::unbounded, 1, 5);
}

#[test]
fn bounded_10k_senders_many_receivers_exactly_once() {
    many_to_many(|| channel::bounded(16), 7, 3);
}

#[test]
fn bounded_10k_senders_one_receiver_in_order() {
    many_to_many(|| channel::bounded(1), 1, 3);
}

#[test]
fn rendezvous_10k_senders_many_receivers_exactly_once() {
    many_to_many(channel::rendezvous, 3, 3);
}

#[test]
fn messages_arrive_exactly_once_across_10k_receivers() {
    fibra::run(|| {
        let (tx, rx) = channel::bounded(8);
        let seen = Rc::new(RefCell::new(HashSet::new()));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (rx, seen) = (rx.clone(), seen.clone());
                spawn(move || {
                    let n: usize = rx.recv().unwrap();
                    assert!(seen.borrow_mut().insert(n), "{n} received twice");
                })
            })
            .collect();
        for n in 0..THREADS {
            tx.send(n).unwrap();
        }
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(seen.borrow().len(), THREADS);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    });
}

#[test]
fn bounded_send_parks_while_full_and_resumes_as_room_frees() {
    fibra::run(|| {
        let (tx, rx) = channel::bounded(2);
        let sent = Rc::new(Cell::new(0));
        let progress = sent.clone();
        let sender = spawn(move || {
            for n in 0..5 {
                tx.send(n).unwrap();
                progress.set(progress.get() + 1);
            }
        });
        settle();
        assert_eq!(sent.get(), 2, "two fit; the third send parks");
        assert_eq!(rx.len(), 2);
        assert_eq!(rx.recv(), Ok(0));
        // The parked send completed as room freed: its message moved in.
        assert_eq!(rx.len(), 2);
        settle();
        assert_eq!(sent.get(), 3, "the fourth send parks");
        // Each receive lets the next waiting message in.
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2, 3]);
        settle();
        assert_eq!(sent.get(), 5);
        assert_eq!(rx.iter().collect::<Vec<_>>(), [4]);
        sender.join().unwrap();
    });
}

#[test]
fn rendezvous_send_completes_only_when_received() {
    fibra::run(|| {
        let (tx, rx) = channel::rendezvous();
        assert_eq!(tx.capacity(), Some(0));
        assert_eq!(
            tx.try_send(1),
            Err(TrySendError::Full(1)),
            "nobody is receiving"
        );
        let done = Rc::new(Cell::new(false));
        let flag = done.clone();
        let sender = spawn(move || {
            tx.send(2).unwrap();
            flag.set(true);
            tx
        });
        settle();
        assert!(!done.get());
        assert!(rx.is_empty(), "a rendezvous channel holds nothing");
        assert_eq!(rx.try_recv(), Ok(2));
        settle();
        assert!(done.get());
        let tx = sender.join().unwrap();
        // And the other way round: a waiting receiver takes a try_send.
        let receiver = spawn(move || rx.recv());
        settle();
        assert_eq!(tx.try_send(3), Ok(()));
        assert_eq!(receiver.join().unwrap(), Ok(3));
    });
}

#[test]
fn disconnection_is_reported_on_both_sides() {
    fibra::run(|| {
        // Every sender gone: the buffer drains, then RecvError.
        let (tx, rx) = channel::unbounded();
        let tx2 = tx.clone();
        tx.send(1).unwrap();
        drop(tx);
        assert!(!rx.is_disconnected());
        tx2.send(2).unwrap();
        drop(tx2);
        assert!(rx.is_disconnected());
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(rx.try_recv(), Ok(2));
        assert_eq!(rx.recv(), Err(RecvError));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(60)),
            Err(RecvTimeoutError::Disconnected)
        );

        // Every receiver gone: sends fail with the message back, and the
        // buffered messages are dropped.
        let drops = Rc::new(Cell::new(0));
        let (tx, rx) = channel::unbounded();
        tx.send(DropCounter(drops.clone())).unwrap();
        let rx2 = rx.clone();
        drop(rx);
        assert!(!tx.is_disconnected());
        drop(rx2);
        assert!(tx.is_disconnected());
        assert_eq!(drops.get(), 1);
        let SendError(back) = tx.send(DropCounter(drops.clone())).unwrap_err();
        assert_eq!(drops.get(), 1, "the message came back");
        drop(back);
        let err = tx.try_send(DropCounter(drops.clone())).unwrap_err();
        assert!(err.is_disconnected());

        // A parked receiver is woken by the last sender leaving...
        let (tx, rx) = channel::unbounded::<u8>();
        let receiver = spawn(move || rx.recv());
        settle();
        drop(tx);
        assert_eq!(receiver.join().unwrap(), Err(RecvError));

        // ...and a parked sender by the last receiver leaving, with its message.
        let (tx, rx) = channel::rendezvous();
        let sender = spawn(move || tx.send(String::from("lost?")));
        settle();
        drop(rx);
        assert_eq!(
            sender.join().unwrap(),
            Err(SendError(String::from("lost?")))
        );
    });
}

#[test]
fn try_variants_never_park() {
    let (tx, rx) = channel::bounded(1);
    // No runtime needed: nothing waits.
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    assert_eq!(tx.try_send(1), Ok(()));
    let err = tx.try_send(2).unwrap_err();
    assert!(err.is_full());
    assert_eq!(err.into_inner(), 2);
    assert_eq!(rx.try_recv(), Ok(1));
    drop(rx);
    assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
    let (tx, rx) = channel::bounded::<u8>(1);
    drop(tx);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn timeouts_time_out() {
    fibra::run(|| {
        let (tx, rx) = channel::bounded(1);
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(5)),
            Err(RecvTimeoutError::Timeout)
        );
        tx.send(1).unwrap();
        assert_eq!(
            tx.send_timeout(2, Duration::from_millis(5)),
            Err(SendTimeoutError::Timeout(2))
        );
        assert_eq!(rx.recv_timeout(Duration::from_millis(5)), Ok(1));
        // A message that arrives while it waits ends the wait.
        let late = spawn(move || {
            fibra::time::sleep(Duration::from_millis(2));
            tx.send(3).unwrap();
        });
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)), Ok(3));
        late.join().unwrap();
    });
}

#[test]
fn errors_display_clear_messages() {
    assert_eq!(
        SendError(1).to_string(),
        "sending on a disconnected channel (every receiver is gone)"
    );
    assert_eq!(
        RecvError.to_string(),
        "receiving on an empty channel whose senders are all gone"
    );
    assert_eq!(
        TrySendError::Full(1).to_string(),
        "sending on a full channel"
    );
    assert_eq!(
        TryRecvError::Empty.to_string(),
        "receiving on an empty channel"
    );
    assert_eq!(
        RecvTimeoutError::Timeout.to_string(),
        "timed out receiving on a channel that stayed empty"
    );
    let boxed: Box<dyn std::error::Error> = Box::new(SendError(vec![1]));
    assert!(boxed.to_string().contains("disconnected"));
    assert_eq!(format!("{:?}", TrySendError::Full(vec![1])), "Full(..)");
}

#[test]
fn dropping_messages_may_use_the_channel() {
    // A message that holds a handle of its own channel: dropping the buffer
    // runs that handle's destructor while the channel is being torn down.
    struct Msg(#[allow(dead_code)] channel::Sender<Msg>);
    let (tx, rx) = channel::unbounded();
    tx.send(Msg(tx.clone())).unwrap();
    drop(tx);
    drop(rx);
}

#[test]
fn messages_whose_destructors_panic_are_all_dropped_without_an_abort() {
    // Two of the buffered messages panic when dropped with the last
    // receiver: a `VecDeque` would abort the process at the second panic.
    struct Bomb {
        panics: bool,
        _counted: DropCounter,
    }
    impl Drop for Bomb {
        fn drop(&mut self) {
            if self.panics {
                panic!("bomb");
            }
        }
    }
    let dropped = Rc::new(Cell::new(0));
    let (tx, rx) = channel::unbounded();
    for n in 0..5 {
        tx.send(Bomb {
            panics: n % 2 == 1,
            _counted: DropCounter(dropped.clone()),
        })
        .unwrap();
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(rx)));
    let payload = outcome.expect_err("the first panic goes on");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"bomb"));
    assert_eq!(dropped.get(), 5, "every message was dropped");
    // The channel still works for its sender.
    assert!(matches!(
        tx.send(Bomb {
            panics: false,
            _counted: DropCounter(dropped.clone())
        }),
        Err(SendError(_))
    ));
}

// ------------------------------------------------------- cancelled waiters

#[test]
fn a_cancelled_receiver_loses_no_message() {
    fibra::run(|| {
        let (tx, rx) = channel::unbounded();
        let recv_one = |rx: &Receiver<i32>| {
            let rx = rx.clone();
            spawn(move || rx.recv())
        };
        let (r1, r2, r3) = (recv_one(&rx), recv_one(&rx), recv_one(&rx));
        settle();
        r2.cancel(); // queued, nothing handed to it yet
        settle();
        tx.send(1).unwrap(); // handed to r1...
        r1.cancel(); // ...which is cancelled before it runs: 1 goes to r3
        assert_eq!(r3.join().unwrap(), Ok(1));
        assert!(is_cancelled(r1) && is_cancelled(r2));

        // With no receiver left waiting, the message goes back to the front.
        let r4 = recv_one(&rx);
        settle();
        tx.send(2).unwrap();
        tx.send(3).unwrap();
        r4.cancel();
        assert!(is_cancelled(r4));
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), [2, 3]);
    });
}

#[test]
fn a_cancelled_sender_sends_once_or_not_at_all() {
    fibra::run(|| {
        let (tx, rx) = channel::bounded(1);
        tx.send(0).unwrap();
        let send_one = |n: i32| {
            let tx = tx.clone();
            spawn(move || tx.send(n))
        };
        let (s1, s2, s3) = (send_one(1), send_one(2), send_one(3));
        settle();
        s2.cancel(); // parked, message not taken: it is not sent
        settle();
        assert_eq!(rx.recv(), Ok(0)); // room: s1's message moves in, s1 is done...
        s1.cancel(); // ...so cancelling it now changes nothing
        assert!(is_cancelled(s1) && is_cancelled(s2));
        assert_eq!(rx.recv(), Ok(1));
        s3.join().unwrap().unwrap();
        drop(tx);
        assert_eq!(rx.iter().collect::<Vec<_>>(), [3]);
    });
}

#[test]
fn cancelling_half_of_10k_waiting_receivers_wedges_nobody() {
    fibra::run(|| {
        let (tx, rx) = channel::rendezvous();
        let got = Rc::new(RefCell::new(Vec::new()));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (rx, got) = (rx.clone(), got.clone());
                spawn(move || {
                    if let Ok(n) = rx.recv() {
                        got.borrow_mut().push(n);
                    }
                })
            })
            .collect();
        drop(rx);
        settle();
        // Hand out messages while every other receiver is cancelled: some
        // while they wait, some just after a message was handed to them.
        let sender = spawn(move || {
            for n in 0..THREADS / 2 {
                tx.send(n).unwrap();
                if n % 3 == 0 {
                    yield_now();
                }
            }
            // Dropping the sender ends the receivers still waiting.
        });
        for h in handles.iter().step_by(2) {
            h.cancel();
            if h.is_finished() {
                continue;
            }
            yield_now();
        }
        sender.join().unwrap();
        let mut cancelled = 0;
        for h in handles {
            match h.join() {
                Ok(()) => {}
                Err(JoinError::Cancelled) => cancelled += 1,
                Err(err) => panic!("{err}"),
            }
        }
        let mut got = got.take();
        got.sort_unstable();
        let expected: Vec<usize> = (0..THREADS / 2).collect();
        assert!(
            got == expected,
            "lost or duplicated: {:?}",
            first_difference(&got, &expected)
        );
        assert!(cancelled > 0);
    });
}

// ---------------------------------------------------------------- select

#[test]
fn select_receives_from_whichever_is_ready() {
    fibra::run(|| {
        let (tx1, rx1) = channel::unbounded::<&str>();
        let (tx2, rx2) = channel::unbounded::<i32>();
        tx2.send(7).unwrap();
        let mut sel = Select::new();
        let a = sel.recv(&rx1);
        let b = sel.recv(&rx2);
        let op = sel.wait();
        assert_eq!(op.index(), b);
        assert_eq!(op.recv(&rx2), Ok(7));
        assert!(sel.try_wait().is_err());
        // Nothing ready: parks until a sender comes.
        let sender = spawn(move || {
            yield_now();
            tx1.send("hi").unwrap();
            tx1
        });
        let op = sel.wait();
        assert_eq!(op.index(), a);
        assert_eq!(op.recv(&rx1), Ok("hi"));
        let tx1 = sender.join().unwrap();
        drop(tx1);
        // A disconnected channel is ready at once, with its error.
        let op = sel.wait();
        assert_eq!(op.index(), a);
        assert_eq!(op.recv(&rx1), Err(RecvError));
        drop(tx2);
    });
}

#[test]
fn select_sends_on_whichever_has_room() {
    fibra::run(|| {
        let (tx1, rx1) = channel::bounded(1);
        let (tx2, rx2) = channel::rendezvous();
        tx1.send(0).unwrap(); // full
        let receiver = spawn(move || rx2.recv());
        settle(); // the receiver waits on the rendezvous channel
        let mut sel = Select::new();
        let a = sel.send(&tx1, 1);
        let b = sel.send(&tx2, 2);
        let op = sel.wait();
        assert_eq!(op.index(), b);
        op.send(&tx2).unwrap();
        assert_eq!(receiver.join().unwrap(), Ok(2));
        // The other send stays armed; the spent one takes no part.
        assert!(sel.try_wait().is_err());
        assert_eq!(rx1.recv(), Ok(0));
        let op = sel.wait();
        assert_eq!(op.index(), a);
        op.send(&tx1).unwrap();
        assert_eq!(rx1.recv(), Ok(1));
        // Disconnected: ready at once, and the message comes back.
        let (tx3, rx3) = channel::unbounded();
        drop(rx3);
        let mut sel = Select::new();
        sel.send(&tx3, String::from("back"));
        let op = sel.wait();
        assert_eq!(op.send(&tx3), Err(SendError(String::from("back"))));
    });
}

#[test]
fn select_timeout_and_default() {
    fibra::run(|| {
        let (_tx, rx) = channel::unbounded::<()>();
        let (tx2, _rx2) = channel::rendezvous::<()>();
        let mut sel = Select::new();
        sel.recv(&rx);
        sel.send(&tx2, ());
        assert!(sel.try_wait().is_err());
        assert!(sel.wait_timeout(Duration::from_millis(5)).is_err());
        // An empty select only times out.
        assert!(
            Select::new()
                .wait_timeout(Duration::from_millis(1))
                .is_err()
        );
        assert!(Select::new().try_wait().is_err());
    });
}

#[test]
#[should_panic(expected = "no operation to wait for")]
fn an_empty_select_refuses_to_wait_forever() {
    fibra::run(|| {
        let _ = Select::new().wait();
    });
}

#[test]
#[should_panic(expected = "is not a receive from this receiver")]
fn collecting_with_the_wrong_handle_panics() {
    let (tx1, rx1) = channel::unbounded::<i32>();
    let (_tx2, rx2) = channel::unbounded::<i32>();
    tx1.send(1).unwrap();
    let mut sel = Select::new();
    sel.recv(&rx1);
    sel.recv(&rx2);
    let _ = sel.try_wait().unwrap().recv(&rx2);
}

#[test]
fn select_does_not_starve_a_ready_channel() {
    fibra::run(|| {
        let (tx1, rx1) = channel::unbounded();
        let (tx2, rx2) = channel::unbounded();
        for n in 0..1000 {
            tx1.send(n).unwrap();
            tx2.send(n).unwrap();
        }
        let mut counts = [0, 0];
        for _ in 0..1000 {
            let mut sel = Select::new();
            let a = sel.recv(&rx1);
            sel.recv(&rx2);
            let op = sel.wait();
            if op.index() == a {
                op.recv(&rx1).unwrap();
                counts[0] += 1;
            } else {
                op.recv(&rx2).unwrap();
                counts[1] += 1;
            }
        }
        // Both are always ready; a fixed preference would starve one.
        assert!(counts[0] > 0 && counts[1] > 0, "{counts:?}");
    });
}

/// Go's TestSelectFairness: a select over two channels that are never ready,
/// then two that always are, picks each ready one about half the time. (Go
/// allows 2.2 % off over 10,000 trials; the bound here is ten standard
/// deviations, 500, which a fair choice misses about once in 10^23 runs,
/// while a choice that favours the operation after the not-ready ones gives
/// 7,500 / 2,500.)
#[test]
fn select_picks_each_ready_operation_with_equal_chance() {
    const TRIALS: usize = 10_000;
    fibra::run(|| {
        let (_never_tx1, never1) = channel::rendezvous::<u8>();
        let (_never_tx2, never2) = channel::rendezvous::<u8>();
        let (tx1, rx1) = channel::unbounded();
        let (tx2, rx2) = channel::unbounded();
        for _ in 0..TRIALS {
            tx1.send(1u8).unwrap();
            tx2.send(2u8).unwrap();
        }
        let mut counts = [0usize; 2];
        for _ in 0..TRIALS {
            let mut sel = Select::new();
            sel.recv(&never1);
            sel.recv(&never2);
            let one = sel.recv(&rx1);
            let two = sel.recv(&rx2);
            let op = sel.wait();
            match op.index() {
                i if i == one => counts[usize::from(op.recv(&rx1).unwrap()) - 1] += 1,
                i if i == two => counts[usize::from(op.recv(&rx2).unwrap()) - 1] += 1,
                i => panic!("operation {i} was never ready"),
            }
        }
        for count in counts {
            assert!(count.abs_diff(TRIALS / 2) <= 500, "{counts:?}");
        }
    });
}

/// crossbeam's `fairness_duplicates` and Go's TestPseudoRandomSend: five sends
/// on one rendezvous channel in one select that waits; the receiver that
/// comes then completes each of them about a fifth of the time, not always
/// the first queued. (Bound: ten standard deviations, 400 of 2,000.)
#[test]
fn a_waiting_select_completes_duplicate_operations_with_equal_chance() {
    const TRIALS: usize = 10_000;
    const SENDS: usize = 5;
    fibra::run(|| {
        let (tx, rx) = channel::rendezvous();
        let (go_tx, go_rx) = channel::unbounded::<()>();
        let receiver = spawn(move || {
            let mut got = [0usize; SENDS];
            while go_rx.recv().is_ok() {
                got[rx.recv().unwrap()] += 1;
            }
            got
        });
        let mut hits = [0usize; SENDS];
        for _ in 0..TRIALS {
            // The receiver runs only once this select has parked: the
            // select waits, and the receiver completes one of its sends.
            go_tx.send(()).unwrap();
            let mut sel = Select::new();
            for n in 0..SENDS {
                assert_eq!(sel.send(&tx, n), n);
            }
            let op = sel.wait();
            let index = op.index();
            op.send(&tx).unwrap();
            hits[index] += 1;
        }
        drop(go_tx);
        assert_eq!(receiver.join().unwrap(), hits, "each send sent its own");
        for hit in hits {
            assert!(hit.abs_diff(TRIALS / SENDS) <= 400, "{hits:?}");
        }
    });
}

#[test]
fn select_to_select_over_a_rendezvous_channel() {
    fibra::run(|| {
        let (tx, rx) = channel::rendezvous();
        let (_idle_tx, idle_rx) = channel::unbounded::<u32>();
        let receiver = spawn(move || {
            let mut got = Vec::new();
            for _ in 0..100 {
                let mut sel = Select::new();
                let r = sel.recv(&rx);
                sel.recv(&idle_rx);
                let op = sel.wait();
                assert_eq!(op.index(), r);
                got.push(op.recv(&rx).unwrap());
            }
            got
        });
        let (_idle_tx2, idle_rx2) = channel::unbounded::<u32>();
        for n in 0..100 {
            let mut sel = Select::new();
            let s = sel.send(&tx, n);
            sel.recv(&idle_rx2);
            let op = sel.wait();
            assert_eq!(op.index(), s);
            op.send(&tx).unwrap();
        }
        assert_eq!(receiver.join().unwrap(), (0..100).collect::<Vec<_>>());
    });
}

#[test]
fn selected_but_uncollected_operations_are_kept() {
    fibra::run(|| {
        let (tx, rx) = channel::unbounded();
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        {
            let mut sel = Select::new();
            let a = sel.recv(&rx);
            assert_eq!(sel.wait().index(), a); // dropped uncollected
            assert_eq!(rx.len(), 1);
            let op = sel.wait(); // the same operation, without receiving again
            assert_eq!(rx.len(), 1);
            drop(op);
        } // dropping the select gives 1 back to the front
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2]);
    });
}

#[test]
fn cancelled_selects_lose_nothing() {
    fibra::run(|| {
        let (tx, rx) = channel::unbounded::<u32>();
        let (tx2, rx2) = channel::unbounded::<u32>();
        let (out_tx, out_rx) = channel::rendezvous::<u32>();
        let selector = || {
            let (rx, rx2, out_tx) = (rx.clone(), rx2.clone(), out_tx.clone());
            spawn(move || {
                let mut sel = Select::new();
                let a = sel.recv(&rx);
                let b = sel.recv(&rx2);
                sel.send(&out_tx, 99);
                let op = sel.wait();
                match op.index() {
                    i if i == a => op.recv(&rx).unwrap(),
                    i if i == b => op.recv(&rx2).unwrap(),
                    _ => op.send(&out_tx).map(|()| 99).unwrap(),
                }
            })
        };
        let (s1, s2) = (selector(), selector());
        settle();
        tx.send(1).unwrap(); // completes s1's receive...
        s1.cancel(); // ...and s1 unwinds before collecting it: 1 goes to s2
        assert_eq!(s2.join().unwrap(), 1);
        assert!(is_cancelled(s1));

        let s3 = selector();
        settle();
        s3.cancel(); // cancelled while parked: no operation happened
        assert!(is_cancelled(s3));
        assert_eq!(out_rx.try_recv(), Err(TryRecvError::Empty));
        tx2.send(2).unwrap();
        assert_eq!(rx2.try_recv(), Ok(2));
        drop(tx);
    });
}

#[test]
fn select_under_contention_of_10k_threads() {
    fibra::run(|| {
        let (tx_a, rx_a) = channel::bounded::<usize>(4);
        let (tx_b, rx_b) = channel::rendezvous::<usize>();
        let consumers: Vec<_> = (0..10)
            .map(|_| {
                let (rx_a, rx_b) = (rx_a.clone(), rx_b.clone());
                spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        let mut sel = Select::new();
                        let a = sel.recv(&rx_a);
                        sel.recv(&rx_b);
                        let op = sel.wait();
                        let msg = if op.index() == a {
                            op.recv(&rx_a)
                        } else {
                            op.recv(&rx_b)
                        };
                        match msg {
                            Ok(n) => got.push(n),
                            // One channel closed: drain the other plainly.
                            Err(RecvError) => {
                                got.extend(rx_a.iter());
                                got.extend(rx_b.iter());
                                return got;
                            }
                        }
                    }
                })
            })
            .collect();
        drop((rx_a, rx_b));
        let producers: Vec<_> = (0..THREADS)
            .map(|n| {
                let (tx_a, tx_b) = (tx_a.clone(), tx_b.clone());
                spawn(move || {
                    let mut sel = Select::new();
                    let a = sel.send(&tx_a, n);
                    sel.send(&tx_b, n);
                    let op = sel.wait();
                    if op.index() == a {
                        op.send(&tx_a).unwrap();
                    } else {
                        op.send(&tx_b).unwrap();
                    }
                })
            })
            .collect();
        drop((tx_a, tx_b));
        producers.into_iter().for_each(|h| h.join().unwrap());
        let mut all: Vec<usize> = consumers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        let expected: Vec<usize> = (0..THREADS).collect();
        assert!(
            all == expected,
            "lost or duplicated: {:?}",
            first_difference(&all, &expected)
        );
    });
}

#[test]
fn waits_that_end_early_take_their_timers_with_them() {
    // Each wait below parks with an hour's limit and is ended by another
    // thread long before: its timer must go with it, so no timer entry is
    // left behind however many waits are made (before: one per wait, until
    // its hour was up).
    fibra::run(|| {
        let (tx, rx) = channel::unbounded();
        let (rendezvous_tx, rendezvous_rx) = channel::rendezvous();
        let pair = Rc::new((Mutex::new(false), Condvar::new()));
        let hour = Duration::from_secs(3600);
        for round in 0..1000 {
            let sender = tx.clone();
            let h = spawn(move || sender.send(round).unwrap());
            assert_eq!(rx.recv_timeout(hour), Ok(round));
            h.join().unwrap();

            let receiver = rendezvous_rx.clone();
            let h = spawn(move || receiver.recv().unwrap());
            assert_eq!(rendezvous_tx.send_timeout(round, hour), Ok(()));
            assert_eq!(h.join().unwrap(), round);

            let notifier = pair.clone();
            let h = spawn(move || {
                *notifier.0.lock() = true;
                notifier.1.notify_one();
            });
            let (mut ready, timed_out) = pair.1.wait_timeout_while(pair.0.lock(), hour, |r| !*r);
            assert!(!timed_out);
            *ready = false;
            drop(ready);
            h.join().unwrap();

            let sender = tx.clone();
            let h = spawn(move || sender.send(round).unwrap());
            let mut sel = Select::new();
            sel.recv(&rx);
            let op = sel.wait_timeout(hour).unwrap();
            assert_eq!(op.recv(&rx), Ok(round));
            h.join().unwrap();

            assert_eq!(fibra::runtime::timer_entries(), 0, "round {round}");
        }
    });
}

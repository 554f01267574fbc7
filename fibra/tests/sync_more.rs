//! What a user of `fibra::sync`'s further primitives sees: `RwLock`,
//! `Semaphore`, `Barrier`, `Notify`, `WaitGroup`, `OnceCell` and `broadcast`
//! — behaviour, arrival-order fairness, and cancellation of waiting threads,
//! which must lose nothing (a lock, permits, a notification or a turn to
//! initialise handed to a cancelled thread passes on); and `Mutex`'s
//! recursive-locking panic and `is_owned`.

use fibra::runtime::{self, JoinError, RuntimeState, ThreadBuilder, ThreadState, WaitReason};
use fibra::sync::broadcast::{self, RecvError, TryRecvError};
use fibra::sync::{
    AcquireError, Barrier, Mutex, Notify, OnceCell, RwLock, Semaphore, TryAcquireError, WaitGroup,
};
use fibra::time::{sleep, timeout};
use fibra::{JoinHandle, spawn};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

const THREADS: usize = 10_000;

/// Lets every runnable green thread run until all have parked or finished
/// (each `yield_now` runs the others once; a few rounds settle chains of
/// wake-ups).
fn settle() {
    for _ in 0..8 {
        runtime::yield_now();
    }
}

fn is_cancelled<T>(handle: JoinHandle<T>) -> bool {
    matches!(handle.join(), Err(JoinError::Cancelled))
}

/// A log the threads of a test append to, in the order things happen.
#[derive(Clone, Default)]
struct Log(Rc<RefCell<Vec<String>>>);

impl Log {
    fn push(&self, entry: impl Into<String>) {
        self.0.borrow_mut().push(entry.into());
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

/// The message of a panic payload.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

// ---------------------------------------------------------------- Mutex

#[test]
fn mutex_locked_again_by_its_holder_panics_deadlock_recursive_locking() {
    fibra::run(|| {
        let m = Mutex::new(1);
        let held = m.lock();
        let payload = panic::catch_unwind(AssertUnwindSafe(|| drop(m.lock()))).unwrap_err();
        assert!(
            message(&*payload).contains("deadlock; recursive locking"),
            "{}",
            message(&*payload)
        );
        // The lock is still held, and still the holder's.
        assert!(m.is_owned());
        drop(held);
        assert_eq!(*m.lock(), 1);
    });
    // Outside a runtime, too, instead of "must run inside a fibra runtime".
    let m = Mutex::new(());
    let _held = m.lock();
    let payload = panic::catch_unwind(AssertUnwindSafe(|| drop(m.lock()))).unwrap_err();
    assert!(message(&*payload).contains("deadlock; recursive locking"));
}

#[test]
fn mutex_is_owned_only_by_the_thread_that_holds_it() {
    fibra::run(|| {
        let m = Rc::new(Mutex::new(()));
        assert!(!m.is_owned());
        let held = m.lock();
        assert!(m.is_owned() && m.is_locked());
        let waiter = {
            let m = m.clone();
            spawn(move || {
                let before = m.is_owned();
                let guard = m.lock();
                let during = m.is_owned();
                drop(guard);
                (before, during, m.is_owned())
            })
        };
        settle(); // the waiter asked, and queued
        drop(held);
        // Handed to the waiter, which has not run yet: nobody here owns it.
        assert!(m.is_locked());
        assert!(!m.is_owned());
        assert_eq!(waiter.join().unwrap(), (false, true, false));
        assert!(!m.is_locked());
    });
}

// ---------------------------------------------------------------- RwLock

#[test]
fn rwlock_readers_share_the_lock_and_a_writer_has_it_alone() {
    fibra::run(|| {
        let lock = Rc::new(RwLock::new(0u32));
        let (readers_in, most_readers) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
        let writer_in = Rc::new(Cell::new(false));
        let handles: Vec<_> = (0..200)
            .map(|n| {
                let (lock, readers_in, most_readers, writer_in) = (
                    lock.clone(),
                    readers_in.clone(),
                    most_readers.clone(),
                    writer_in.clone(),
                );
                spawn(move || {
                    if n % 10 == 0 {
                        let mut value = lock.write();
                        assert_eq!(readers_in.get(), 0, "a writer beside readers");
                        assert!(!writer_in.replace(true), "two writers");
                        runtime::yield_now(); // everyone else runs, and queues
                        *value += 1;
                        writer_in.set(false);
                    } else {
                        let value = lock.read();
                        assert!(!writer_in.get(), "a reader beside a writer");
                        readers_in.set(readers_in.get() + 1);
                        most_readers.set(most_readers.get().max(readers_in.get()));
                        runtime::yield_now();
                        readers_in.set(readers_in.get() - 1);
                        drop(value);
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(*lock.read(), 20);
        assert!(most_readers.get() > 1, "readers never shared the lock");
        assert!(lock.try_write().is_some());
    });
}

#[test]
fn rwlock_serves_in_arrival_order_so_a_writer_is_not_starved_by_readers() {
    fibra::run(|| {
        let lock = Rc::new(RwLock::new(()));
        let log = Log::default();
        let first_reader = lock.read();
        let queue = |name: &'static str, write: bool| {
            let (lock, log) = (lock.clone(), log.clone());
            spawn(move || {
                if write {
                    let _w = lock.write();
                    log.push(format!("{name} in"));
                    runtime::yield_now();
                    log.push(format!("{name} out"));
                } else {
                    let _r = lock.read();
                    log.push(format!("{name} in"));
                    runtime::yield_now();
                    log.push(format!("{name} out"));
                }
            })
        };
        let w1 = queue("w1", true);
        settle();
        // A reader could share the lock with `first_reader`, but a writer
        // waits before it: it queues (and try_read fails) instead.
        assert!(lock.try_read().is_none());
        let r1 = queue("r1", false);
        let r2 = queue("r2", false);
        let w2 = queue("w2", true);
        let r3 = queue("r3", false);
        settle();
        assert!(log.take().is_empty());
        drop(first_reader);
        for h in [w1, r1, r2, w2, r3] {
            h.join().unwrap();
        }
        assert_eq!(
            log.take(),
            [
                "w1 in", "w1 out", // the writer first,
                "r1 in", "r2 in", "r1 out", "r2 out", // the readers behind it together,
                "w2 in", "w2 out", // then the next writer,
                "r3 in", "r3 out", // and the reader that came after it
            ]
        );
    });
}

#[test]
fn rwlock_cancelled_waiters_lose_nothing() {
    fibra::run(|| {
        let lock = Rc::new(RwLock::new(Vec::new()));
        let writer = |n: u32| {
            let lock = lock.clone();
            spawn(move || lock.write().push(n))
        };
        let reader = || {
            let lock = lock.clone();
            spawn(move || lock.read().len())
        };
        // A writer cancelled while queued: the readers behind it get in.
        let held = lock.read();
        let w1 = writer(1);
        let r1 = reader();
        settle();
        w1.cancel();
        assert!(is_cancelled(w1));
        assert_eq!(r1.join().unwrap(), 0);
        drop(held);

        // A writer the lock was handed to, cancelled before it ran: the lock
        // passes to the waiters behind it.
        let held = lock.read();
        let w2 = writer(2);
        let w3 = writer(3);
        settle();
        drop(held); // goes to w2 ...
        w2.cancel(); // ... which unwinds before it takes it
        w3.join().unwrap();
        assert!(is_cancelled(w2));
        assert_eq!(*lock.read(), [3]);
        assert!(lock.try_write().is_some());
    });
}

// ---------------------------------------------------------------- Semaphore

#[test]
fn semaphore_bounds_how_many_hold_a_permit_at_once() {
    fibra::run(|| {
        let sem = Rc::new(Semaphore::new(3));
        let (inside, most) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
        let handles: Vec<_> = (0..THREADS)
            .map(|n| {
                let (inside, most) = (inside.clone(), most.clone());
                // Half take a permit here, half in the thread.
                let permit = (n % 2 == 0).then(|| sem.clone().acquire_owned().unwrap());
                let sem = sem.clone();
                spawn(move || {
                    let _permit = permit.unwrap_or_else(|| sem.acquire_owned().unwrap());
                    inside.set(inside.get() + 1);
                    most.set(most.get().max(inside.get()));
                    runtime::yield_now();
                    inside.set(inside.get() - 1);
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(most.get(), 3);
        assert_eq!(sem.available_permits(), 3);

        sem.add_permits(2);
        let five = sem.try_acquire_many(5).unwrap();
        assert_eq!(five.num_permits(), 5);
        assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
        drop(five);
        sem.acquire_many(2).unwrap().forget();
        assert_eq!(sem.available_permits(), 3);
        assert_eq!(sem.acquire_many(0).unwrap().num_permits(), 0);
    });
}

#[test]
fn semaphore_serves_in_arrival_order_and_a_large_request_is_not_starved() {
    fibra::run(|| {
        let sem = Rc::new(Semaphore::new(3));
        let log = Log::default();
        let held = sem.acquire().unwrap();
        let queue = |name: &'static str, n: u32| {
            let (sem, log) = (sem.clone(), log.clone());
            spawn(move || {
                let _permits = sem.acquire_many(n).unwrap();
                log.push(format!("{name} in"));
                runtime::yield_now();
                log.push(format!("{name} out"));
            })
        };
        let big = queue("big", 3);
        settle();
        // Two permits are free, but `big` waits first: small requests queue
        // behind it instead of overtaking it forever.
        assert_eq!(sem.available_permits(), 2);
        assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
        let smalls: Vec<_> = ["s1", "s2", "s3"]
            .into_iter()
            .map(|name| queue(name, 1))
            .collect();
        settle();
        assert!(log.take().is_empty());
        drop(held);
        big.join().unwrap();
        smalls.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(
            log.take(),
            [
                "big in", "big out", "s1 in", "s2 in", "s3 in", "s1 out", "s2 out", "s3 out"
            ]
        );
        assert_eq!(sem.available_permits(), 3);
    });
}

#[test]
fn semaphore_cancelled_waiters_lose_nothing() {
    fibra::run(|| {
        let sem = Rc::new(Semaphore::new(2));
        let acquirer = |n: u32| {
            let sem = sem.clone();
            spawn(move || sem.acquire_many(n).map(|p| p.num_permits()).unwrap())
        };
        // A large request at the head of the queue, cancelled: the small ones
        // behind it, which the free permits suffice for, are served.
        let held = sem.acquire().unwrap();
        let big = acquirer(2);
        let small = acquirer(1);
        settle();
        big.cancel();
        assert!(is_cancelled(big));
        assert_eq!(small.join().unwrap(), 1);

        // Permits handed to a waiter that is cancelled before it runs go on
        // to the next waiter.
        let other = sem.acquire().unwrap();
        let (first, second) = (acquirer(2), acquirer(2));
        settle();
        drop(held);
        drop(other); // two free: handed to `first` ...
        first.cancel(); // ... which unwinds before it takes them
        assert_eq!(second.join().unwrap(), 2);
        assert!(is_cancelled(first));

        // A timeout that expires while waiting leaves nothing taken.
        let all = sem.acquire_many(2).unwrap();
        let late = timeout(Duration::from_millis(5), || sem.acquire().map(|_| ()));
        assert_eq!(late.map_err(|e| e.limit()), Err(Duration::from_millis(5)));
        drop(all);
        assert_eq!(sem.available_permits(), 2);
    });
}

#[test]
fn cancelling_half_of_10k_semaphore_waiters_wedges_nobody_and_loses_no_permit() {
    const PERMITS: usize = 5;
    /// Counts permits in use while its thread holds them, unwinding included.
    struct InUse<'a>(&'a Cell<usize>, usize);
    impl Drop for InUse<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() - self.1);
        }
    }
    fibra::run(|| {
        let sem = Rc::new(Semaphore::new(PERMITS));
        let in_use = Rc::new(Cell::new(0));
        let handles: Vec<_> = (0..THREADS)
            .map(|n| {
                let (sem, in_use) = (sem.clone(), in_use.clone());
                spawn(move || {
                    let wants = 1 + n % 3;
                    let _permits = sem.acquire_many(wants as u32).unwrap();
                    in_use.set(in_use.get() + wants);
                    let _in_use = InUse(&in_use, wants);
                    assert!(in_use.get() <= PERMITS, "{} permits in use", in_use.get());
                    runtime::yield_now(); // cancelled here, or while queued
                })
            })
            .collect();
        // Cancel every other thread: some while they wait, some just after
        // their permits were handed to them, some while they hold them.
        for h in handles.iter().step_by(2) {
            h.cancel();
            runtime::yield_now();
        }
        let mut cancelled = 0;
        for h in handles {
            match h.join() {
                Ok(()) => {}
                Err(JoinError::Cancelled) => cancelled += 1,
                Err(err) => panic!("{err}"),
            }
        }
        assert!(cancelled > 0);
        assert_eq!(in_use.get(), 0);
        assert_eq!(sem.available_permits(), PERMITS);
    });
}

#[test]
fn a_closed_semaphore_fails_its_waiters_and_later_callers() {
    fibra::run(|| {
        let sem = Rc::new(Semaphore::new(1));
        let held = sem.acquire().unwrap();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let sem = sem.clone();
                spawn(move || sem.acquire().map(drop))
            })
            .collect();
        settle();
        sem.close();
        for waiter in waiters {
            let outcome: Result<(), AcquireError> = waiter.join().unwrap();
            assert!(outcome.is_err());
        }
        assert!(sem.acquire().is_err());
        assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::Closed));
        // A permit held across the close still goes back.
        drop(held);
        assert_eq!(sem.available_permits(), 1);
        assert_eq!(
            sem.acquire().unwrap_err().to_string(),
            "the semaphore is closed"
        );
    });
}

// ---------------------------------------------------------------- Barrier

#[test]
fn barrier_releases_each_generation_together_with_one_leader() {
    const N: usize = 50;
    const ROUNDS: usize = 4;
    fibra::run(|| {
        let barrier = Rc::new(Barrier::new(N));
        let arrived = Rc::new(RefCell::new([0usize; ROUNDS]));
        let leaders = Rc::new(RefCell::new([0usize; ROUNDS]));
        let handles: Vec<_> = (0..N)
            .map(|n| {
                let (barrier, arrived, leaders) =
                    (barrier.clone(), arrived.clone(), leaders.clone());
                spawn(move || {
                    for round in 0..ROUNDS {
                        arrived.borrow_mut()[round] += 1;
                        if n % 3 == 0 {
                            runtime::yield_now(); // arrive in a mixed order
                        }
                        let result = barrier.wait();
                        // Nobody passes before all of its generation arrived.
                        assert_eq!(arrived.borrow()[round], N, "round {round}");
                        if result.is_leader() {
                            leaders.borrow_mut()[round] += 1;
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(*leaders.borrow(), [1; ROUNDS]);
        assert_eq!(barrier.waiting(), 0);
        // One thread or none: every wait leads at once.
        assert!(Barrier::new(1).wait().is_leader());
        assert!(Barrier::new(0).wait().is_leader());
    });
}

#[test]
fn a_cancelled_barrier_waiter_takes_its_arrival_back() {
    fibra::run(|| {
        let barrier = Rc::new(Barrier::new(3));
        let waiter = || {
            let barrier = barrier.clone();
            spawn(move || barrier.wait().is_leader())
        };
        let (a, b) = (waiter(), waiter());
        settle();
        assert_eq!(barrier.waiting(), 2);
        a.cancel();
        assert!(is_cancelled(a));
        assert_eq!(barrier.waiting(), 1);
        // The generation still needs three present: `b` and two more.
        let c = waiter();
        settle();
        assert!(!c.is_finished());
        let d = waiter();
        let leaders = [b, c, d].map(|h| h.join().unwrap());
        assert_eq!(leaders, [false, false, true]);
    });
}

// ---------------------------------------------------------------- Notify

#[test]
fn notify_one_wakes_in_order_or_stores_one_permit() {
    fibra::run(|| {
        let notify = Rc::new(Notify::new());
        // Nobody waits: two notifications store one permit.
        notify.notify_one();
        notify.notify_one();
        notify.notified(); // takes it, at once
        let log = Log::default();
        let waiters: Vec<_> = (0..3)
            .map(|n| {
                let (notify, log) = (notify.clone(), log.clone());
                spawn(move || {
                    notify.notified();
                    log.push(format!("{n}"));
                })
            })
            .collect();
        settle();
        assert!(log.take().is_empty(), "the permit was taken once");
        for _ in 0..3 {
            notify.notify_one();
            settle();
        }
        waiters.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(log.take(), ["0", "1", "2"]);
    });
}

#[test]
fn notify_waiters_wakes_those_waiting_and_stores_nothing() {
    fibra::run(|| {
        let notify = Rc::new(Notify::new());
        let waiters: Vec<_> = (0..5)
            .map(|_| {
                let notify = notify.clone();
                spawn(move || notify.notified())
            })
            .collect();
        settle();
        notify.notify_waiters();
        waiters.into_iter().for_each(|h| h.join().unwrap());
        // No permit was stored: a new waiter waits.
        let late = {
            let notify = notify.clone();
            spawn(move || notify.notified())
        };
        settle();
        assert!(!late.is_finished());
        notify.notify_one();
        late.join().unwrap();
    });
}

#[test]
fn a_cancelled_notified_waiter_passes_the_notification_on() {
    fibra::run(|| {
        let notify = Rc::new(Notify::new());
        let waiter = || {
            let notify = notify.clone();
            spawn(move || notify.notified())
        };
        let (first, second) = (waiter(), waiter());
        settle();
        notify.notify_one(); // chooses `first` ...
        first.cancel(); // ... which unwinds before it returns
        second.join().unwrap();
        assert!(is_cancelled(first));

        // With nobody else waiting, it becomes the stored permit.
        let third = waiter();
        settle();
        notify.notify_one();
        third.cancel();
        assert!(is_cancelled(third));
        notify.notified(); // returns at once
    });
}

// ---------------------------------------------------------------- WaitGroup

#[test]
fn wait_group_waits_for_every_guard_even_of_panicking_and_cancelled_threads() {
    fibra::run(|| {
        let group = Rc::new(WaitGroup::new());
        let finished = Rc::new(Cell::new(0));
        let workers: Vec<_> = (0..100)
            .map(|n| {
                let (done, finished) = (group.guard(), finished.clone());
                spawn(move || {
                    let _done = done;
                    sleep(Duration::from_millis(n % 5));
                    if n == 7 {
                        panic!("worker 7 fails");
                    }
                    if n == 8 {
                        runtime::park(); // cancelled below
                    }
                    finished.set(finished.get() + 1);
                })
            })
            .collect();
        assert_eq!(group.count(), 100);
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let group = group.clone();
                spawn(move || group.wait())
            })
            .collect();
        settle();
        let mut workers = workers.into_iter();
        let cancelled = workers.nth(8).unwrap();
        cancelled.cancel();
        waiters.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(group.count(), 0);
        assert_eq!(finished.get(), 98);
        assert!(is_cancelled(cancelled));
    });
}

#[test]
fn wait_group_add_done_wait_and_reuse() {
    fibra::run(|| {
        let wg = Rc::new(WaitGroup::new());
        wg.wait(); // zero: returns at once
        for round in 0..3 {
            wg.add(4);
            let log = Log::default();
            for n in 0..4 {
                let (wg, log) = (wg.clone(), log.clone());
                spawn(move || {
                    runtime::yield_now();
                    log.push(format!("{round}.{n}"));
                    wg.done();
                });
            }
            wg.wait();
            assert_eq!(log.take().len(), 4);
        }
        // A waiter cancelled while it waits leaves the others waiting.
        wg.add(1);
        let (a, b) = {
            let (wg1, wg2) = (wg.clone(), wg.clone());
            (spawn(move || wg1.wait()), spawn(move || wg2.wait()))
        };
        settle();
        a.cancel();
        assert!(is_cancelled(a));
        assert!(!b.is_finished());
        wg.done();
        b.join().unwrap();
    });
}

#[test]
fn wait_group_done_below_zero_panics_saying_so() {
    let wg = WaitGroup::new();
    wg.add(1);
    wg.done();
    let payload = panic::catch_unwind(AssertUnwindSafe(|| wg.done())).unwrap_err();
    assert!(
        message(&*payload).contains("negative WaitGroup counter"),
        "{}",
        message(&*payload)
    );
    assert_eq!(wg.count(), 0);
}

// ---------------------------------------------------------------- OnceCell

#[test]
fn racing_once_cell_initialisers_that_park_run_once_and_all_see_its_value() {
    fibra::run(|| {
        let cell = Rc::new(OnceCell::new());
        let runs = Rc::new(Cell::new(0));
        let handles: Vec<_> = (0..100)
            .map(|n| {
                let (cell, runs) = (cell.clone(), runs.clone());
                spawn(move || {
                    *cell.get_or_init(|| {
                        runs.set(runs.get() + 1);
                        sleep(Duration::from_millis(5)); // the others arrive meanwhile
                        n
                    })
                })
            })
            .collect();
        let values: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(runs.get(), 1);
        assert_eq!(values, [0; 100]);
        assert_eq!(cell.get(), Some(&0));
    });
}

#[test]
fn a_panicking_once_cell_initialiser_lets_the_next_waiter_initialise() {
    fibra::run(|| {
        let cell = Rc::new(OnceCell::new());
        let log = Log::default();
        let handles: Vec<_> = (0..4)
            .map(|n| {
                let (cell, log) = (cell.clone(), log.clone());
                spawn(move || {
                    cell.get_or_init(|| {
                        log.push(format!("{n} starts"));
                        sleep(Duration::from_millis(2));
                        if n == 0 {
                            panic!("initialiser 0 fails");
                        }
                        n
                    })
                    .to_owned()
                })
            })
            .collect();
        let outcomes: Vec<_> = handles.into_iter().map(|h| h.join().ok()).collect();
        // 0 failed, the longest waiter (1) ran next and succeeded, and the
        // others saw its value.
        assert_eq!(outcomes, [None, Some(1), Some(1), Some(1)]);
        assert_eq!(log.take(), ["0 starts", "1 starts"]);
    });
}

#[test]
fn a_cancelled_once_cell_initialiser_or_handed_over_waiter_passes_the_turn_on() {
    fibra::run(|| {
        let cell = Rc::new(OnceCell::new());
        // Each initialiser waits for the gate (it is cancelled meanwhile, or not).
        let gate = Rc::new(Notify::new());
        let initialiser = |n: u32| {
            let (cell, gate) = (cell.clone(), gate.clone());
            spawn(move || {
                *cell.get_or_init(|| {
                    gate.notified();
                    n
                })
            })
        };
        let (a, b, c) = (initialiser(1), initialiser(2), initialiser(3));
        settle(); // a initialises, b and c wait
        a.cancel(); // the turn goes to b ...
        b.cancel(); // ... cancelled before it ran: to c
        settle();
        assert!(cell.get().is_none());
        gate.notify_one(); // c's initialiser, the one waiting now, finishes
        assert_eq!(c.join().unwrap(), 3);
        assert!(is_cancelled(a));
        assert!(is_cancelled(b));
        assert_eq!(cell.get(), Some(&3));
    });
}

#[test]
fn once_cell_try_init_set_take_and_reentrance() {
    fibra::run(|| {
        let mut cell = OnceCell::new();
        assert_eq!(cell.get_or_try_init(|| Err::<u8, _>("no")), Err("no"));
        assert_eq!(cell.get(), None);
        assert_eq!(cell.get_or_try_init(|| Ok::<_, ()>(5)), Ok(&5));
        assert_eq!(cell.set(6), Err(6));
        assert_eq!(cell.take(), Some(5));
        assert_eq!(cell.set(7), Ok(()));
        *cell.get_mut().unwrap() += 1;
        assert_eq!(format!("{cell:?}"), "OnceCell(8)");
        assert_eq!(cell.into_inner(), Some(8));

        // An initialiser that asks its own cell would wait for itself.
        let cell = OnceCell::new();
        let payload = panic::catch_unwind(AssertUnwindSafe(|| {
            cell.get_or_init(|| *cell.get_or_init(|| 1));
        }))
        .unwrap_err();
        assert!(
            message(&*payload).contains("reentrant"),
            "{}",
            message(&*payload)
        );
        // The failed initialisation left the cell empty and usable.
        assert_eq!(cell.get_or_init(|| 2), &2);
    });
}

#[test]
fn a_once_cell_waiter_under_a_timeout_gives_up_and_leaves_the_cell_working() {
    fibra::run(|| {
        let cell = Rc::new(OnceCell::new());
        let gate = Rc::new(Notify::new());
        let slow = {
            let (cell, gate) = (cell.clone(), gate.clone());
            spawn(move || {
                *cell.get_or_init(|| {
                    gate.notified();
                    "slow"
                })
            })
        };
        settle();
        let waited = timeout(Duration::from_millis(1), || {
            *cell.get_or_init(|| "impatient")
        });
        assert!(waited.is_err());
        gate.notify_one();
        assert_eq!(slow.join().unwrap(), "slow");
        assert_eq!(cell.get(), Some(&"slow"));
    });
}

// ---------------------------------------------------------------- broadcast

#[test]
fn every_broadcast_receiver_sees_every_message_in_order() {
    fibra::run(|| {
        let (tx, rx) = broadcast::channel(16);
        let receivers: Vec<_> = (0..50)
            .map(|_| {
                let mut rx = rx.resubscribe();
                spawn(move || {
                    let mut got = Vec::new();
                    while let Ok(n) = rx.recv() {
                        got.push(n);
                    }
                    got
                })
            })
            .collect();
        drop(rx);
        settle();
        assert_eq!(tx.receiver_count(), 50);
        for n in 0..1000 {
            assert_eq!(tx.send(n), Ok(50));
            if n % 8 == 0 {
                runtime::yield_now(); // the receivers keep up
            }
        }
        drop(tx);
        let expected: Vec<u32> = (0..1000).collect();
        for receiver in receivers {
            assert_eq!(receiver.join().unwrap(), expected);
        }
    });
}

#[test]
fn a_lagging_broadcast_receiver_is_told_how_many_it_missed() {
    fibra::run(|| {
        let (tx, mut slow) = broadcast::channel(4);
        let mut fast = tx.subscribe();
        for n in 0..10 {
            tx.send(n).unwrap();
            assert_eq!(fast.try_recv(), Ok(n));
        }
        assert_eq!(slow.len(), 10);
        assert_eq!(slow.recv(), Err(RecvError::Lagged(6)));
        assert_eq!(slow.recv(), Ok(6)); // the oldest kept
        tx.send(10).unwrap();
        let rest: Vec<_> = std::iter::from_fn(|| slow.try_recv().ok()).collect();
        assert_eq!(rest, [7, 8, 9, 10]);
        assert_eq!(slow.try_recv(), Err(TryRecvError::Empty));
        assert_eq!(
            RecvError::Lagged(6).to_string(),
            "the receiver lagged behind and missed 6 messages"
        );
    });
}

#[test]
fn broadcast_closes_when_the_last_sender_goes_and_needs_a_receiver_to_send() {
    fibra::run(|| {
        let (tx, mut rx) = broadcast::channel(8);
        let tx2 = tx.clone();
        tx.send(1).unwrap();
        let mut late = tx.subscribe(); // sees only what is sent from now on
        tx2.send(2).unwrap();
        let waiting = spawn(move || (late.recv(), late.recv()));
        settle();
        drop(tx);
        assert!(!rx.is_closed());
        drop(tx2);
        assert!(rx.is_closed());
        assert_eq!(waiting.join().unwrap(), (Ok(2), Err(RecvError::Closed)));
        // The messages kept are received before Closed.
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(rx.recv(), Ok(2));
        assert_eq!(rx.recv(), Err(RecvError::Closed));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));

        let (tx, rx) = broadcast::channel::<u8>(1);
        drop(rx);
        assert_eq!(tx.send(3).unwrap_err().into_inner(), 3);
    });
}

#[test]
fn broadcast_messages_go_once_every_receiver_has_them() {
    fibra::run(|| {
        let value = Rc::new(());
        let (tx, mut a) = broadcast::channel(8);
        let mut b = tx.subscribe();
        for _ in 0..3 {
            tx.send(value.clone()).unwrap();
        }
        assert_eq!(Rc::strong_count(&value), 4);
        a.try_recv().unwrap();
        a.try_recv().unwrap();
        // `a` has two, `b` none: all three are still kept for `b`.
        assert_eq!(tx.len(), 3);
        b.try_recv().unwrap();
        assert_eq!(tx.len(), 2);
        // A receiver that goes counts itself off what it had not received.
        drop(b);
        assert_eq!(tx.len(), 1);
        drop(a);
        assert_eq!(tx.len(), 0);
        assert_eq!(Rc::strong_count(&value), 1);
    });
}

#[test]
fn a_cancelled_broadcast_receiver_loses_nothing_for_the_others() {
    fibra::run(|| {
        let (tx, rx) = broadcast::channel(4);
        let receiver = || {
            let mut rx = rx.resubscribe();
            spawn(move || rx.recv())
        };
        let (a, b) = (receiver(), receiver());
        settle();
        a.cancel();
        assert!(is_cancelled(a));
        tx.send(5).unwrap();
        assert_eq!(b.join().unwrap(), Ok(5));
        drop(rx);
        assert!(tx.is_empty());
    });
}

// ---------------------------------------------------------------- dumps

#[test]
fn a_dump_says_which_primitive_a_thread_waits_for() {
    std::thread::Builder::new()
        .name("sync_more_reasons".into())
        .spawn(|| {
            fibra::run(|| {
                let lock = Rc::new(RwLock::new(()));
                let sem = Rc::new(Semaphore::new(0));
                let barrier = Rc::new(Barrier::new(2));
                let notify = Rc::new(Notify::new());
                let group = Rc::new(WaitGroup::new());
                let cell = Rc::new(OnceCell::<()>::new());
                let (_tx, rx) = broadcast::channel::<u8>(1);
                let read_held = lock.read();
                group.add(1);
                let spawn_named = |name: &str, f: Box<dyn FnOnce()>| {
                    ThreadBuilder::new().name(name).spawn(f).unwrap()
                };
                let (l1, l2) = (lock.clone(), lock.clone());
                let cell2 = cell.clone();
                let handles = vec![
                    spawn_named(
                        "initialiser",
                        Box::new(move || {
                            cell2.get_or_init(runtime::park);
                        }),
                    ),
                    spawn_named("write", Box::new(move || drop(l1.write()))),
                    spawn_named("read", Box::new(move || drop(l2.read()))),
                    spawn_named("semaphore", Box::new(move || drop(sem.acquire()))),
                    spawn_named(
                        "barrier",
                        Box::new(move || {
                            barrier.wait();
                        }),
                    ),
                    spawn_named("notify", Box::new(move || notify.notified())),
                    spawn_named("wait_group", Box::new(move || group.wait())),
                    spawn_named(
                        "once_cell",
                        Box::new(move || {
                            cell.get_or_init(|| ());
                        }),
                    ),
                    spawn_named(
                        "broadcast",
                        Box::new(move || {
                            let mut rx = rx;
                            let _ = rx.recv();
                        }),
                    ),
                ];
                settle();
                let dump = runtime::dump();
                let runtime = dump
                    .runtimes
                    .iter()
                    .find(|r| r.os_thread_name.as_deref() == Some("sync_more_reasons"))
                    .unwrap_or_else(|| panic!("no runtime of this test in:\n{dump}"));
                let RuntimeState::Threads(threads) = &runtime.state else {
                    panic!("{:?}", runtime.state);
                };
                let reason = |name: &str| {
                    let thread = threads
                        .iter()
                        .find(|t| t.name.as_deref() == Some(name))
                        .unwrap_or_else(|| panic!("no thread '{name}' in:\n{dump}"));
                    match thread.state {
                        ThreadState::Parked { reason, .. } => reason,
                        ref other => panic!("'{name}' is {other:?}"),
                    }
                };
                assert_eq!(reason("write"), WaitReason::RwLockWrite);
                assert_eq!(reason("read"), WaitReason::RwLockRead);
                assert_eq!(reason("semaphore"), WaitReason::Semaphore);
                assert_eq!(reason("barrier"), WaitReason::Barrier);
                assert_eq!(reason("notify"), WaitReason::Notify);
                assert_eq!(reason("wait_group"), WaitReason::WaitGroup);
                assert_eq!(reason("once_cell"), WaitReason::OnceCell);
                assert_eq!(reason("broadcast"), WaitReason::BroadcastReceive);
                assert_eq!(
                    WaitReason::OnceCell.to_string(),
                    "once cell (another thread initialises it)"
                );
                // The runtime's end cancels the parked threads.
                drop(read_held);
                drop(handles);
            })
        })
        .unwrap()
        .join()
        .unwrap();
}

//! What a user of green threads sees: join, panics, sleeping, parking and
//! waking across OS threads, timeouts, blocking work, cancellation, the end of a
//! runtime, and misuse.

use fibra::runtime::{self, JoinError};
use fibra::time::{sleep, timeout};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[path = "support/without_hanging.rs"]
mod hang;
use hang::without_hanging;

struct Flag(Rc<Cell<u32>>);
impl Drop for Flag {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

/// A destructor that waits for what never comes: a thread that holds one
/// cannot finish unwinding, and the end of its runtime abandons it.
struct Stuck;
impl Drop for Stuck {
    fn drop(&mut self) {
        loop {
            runtime::park();
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn run_returns_the_value_and_join_returns_each_threads_value() {
    let total = fibra::run(|| {
        let handles: Vec<_> = (0..100u64).map(|i| fibra::spawn(move || i * 2)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
    });
    assert_eq!(total, 9900);
}

#[test]
fn join_of_a_panicked_thread_returns_the_payload() {
    fibra::run(|| {
        let h = fibra::spawn(|| -> u32 { panic!("green thread failed") });
        let err = h.join().unwrap_err();
        assert_eq!(
            err.to_string(),
            "green thread panicked: green thread failed"
        );
        assert_eq!(
            panic_message(&*err.into_panic().unwrap()),
            "green thread failed"
        );
        // The other threads go on.
        assert_eq!(fibra::spawn(|| 5).join().unwrap(), 5);
    });
}

#[test]
fn a_panic_in_the_first_thread_continues_in_the_caller_of_run() {
    let err = panic::catch_unwind(|| fibra::run(|| panic!("main green thread"))).unwrap_err();
    assert_eq!(panic_message(&*err), "main green thread");
}

#[test]
fn sleepers_wake_in_deadline_order() {
    let deadlines = fibra::run(|| {
        let woken = Rc::new(RefCell::new(Vec::new()));
        // 500 threads with scrambled sleeps: each notes its deadline when it
        // wakes, so the notes come in deadline order.
        let handles: Vec<_> = (0..500u64)
            .map(|i| (i * 7919) % 500)
            .map(|ms| {
                let woken = woken.clone();
                fibra::spawn(move || {
                    let deadline = Instant::now() + Duration::from_millis(ms);
                    fibra::time::sleep_until(deadline);
                    woken.borrow_mut().push(deadline);
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        Rc::try_unwrap(woken).unwrap().into_inner()
    });
    assert_eq!(deadlines.len(), 500);
    assert!(
        deadlines.is_sorted(),
        "a sleeper woke before one with an earlier deadline"
    );
}

#[test]
fn sleeping_threads_overlap_on_one_os_thread() {
    // All three sleepers are asleep at the same moment: a sleep parks only its
    // own green thread.
    let most_asleep_at_once = fibra::run(|| {
        let asleep = Rc::new(Cell::new(0));
        let most = Rc::new(Cell::new(0));
        let hs: Vec<_> = [30u64, 20, 50]
            .map(|ms| {
                let (asleep, most) = (asleep.clone(), most.clone());
                fibra::spawn(move || {
                    asleep.set(asleep.get() + 1);
                    most.set(most.get().max(asleep.get()));
                    sleep(Duration::from_millis(ms));
                    asleep.set(asleep.get() - 1);
                })
            })
            .into();
        hs.into_iter().for_each(|h| h.join().unwrap());
        most.get()
    });
    assert_eq!(most_asleep_at_once, 3);
}

#[test]
fn yield_now_lets_the_others_run_in_turn() {
    let log = fibra::run(|| {
        let log = Rc::new(RefCell::new(String::new()));
        let hs: Vec<_> = ["a", "b", "c"]
            .map(|name| {
                let log = log.clone();
                fibra::spawn(move || {
                    for _ in 0..3 {
                        log.borrow_mut().push_str(name);
                        runtime::yield_now();
                    }
                })
            })
            .into();
        hs.into_iter().for_each(|h| h.join().unwrap());
        Rc::try_unwrap(log).unwrap().into_inner()
    });
    assert_eq!(log, "abcabcabc");
}

#[test]
fn a_parked_thread_is_woken_from_another_os_thread() {
    let woken = fibra::run(|| {
        let ready = Arc::new(AtomicBool::new(false));
        let unparker = runtime::current().unparker();
        let r = ready.clone();
        let os_thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            r.store(true, Ordering::Release);
            unparker.unpark();
        });
        let mut parks = 0;
        while !ready.load(Ordering::Acquire) {
            runtime::park();
            parks += 1;
        }
        os_thread.join().unwrap();
        parks
    });
    assert!(woken >= 1);
}

#[test]
fn many_os_threads_wake_many_green_threads() {
    let woken = fibra::run(|| {
        let (tx, rx) = std::sync::mpsc::channel::<(Arc<AtomicBool>, runtime::Unparker)>();
        let count = Rc::new(Cell::new(0));
        let handles: Vec<_> = (0..200)
            .map(|_| {
                let (tx, count) = (tx.clone(), count.clone());
                fibra::spawn(move || {
                    let flag = Arc::new(AtomicBool::new(false));
                    tx.send((flag.clone(), runtime::current().unparker()))
                        .unwrap();
                    while !flag.load(Ordering::Acquire) {
                        runtime::park();
                    }
                    count.set(count.get() + 1);
                })
            })
            .collect();
        drop(tx);
        runtime::yield_now(); // every waiter runs, hands out its unparker and parks
        let mut waiters: Vec<_> = rx.try_iter().collect();
        assert_eq!(waiters.len(), 200);
        let os_threads: Vec<_> = (0..4)
            .map(|_| {
                let group: Vec<_> = waiters.drain(..50).collect();
                std::thread::spawn(move || {
                    for (flag, unparker) in group {
                        flag.store(true, Ordering::Release);
                        unparker.unpark();
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        os_threads.into_iter().for_each(|t| t.join().unwrap());
        count.get()
    });
    assert_eq!(woken, 200);
}

#[test]
fn timeout_returns_the_value_in_time_and_unwinds_late_work() {
    let dropped = Rc::new(Cell::new(0));
    let d = dropped.clone();
    fibra::run(move || {
        assert_eq!(timeout(Duration::from_secs(10), || "quick"), Ok("quick"));
        let guard = Flag(d.clone());
        let late = timeout(Duration::from_millis(20), move || {
            let _guard = guard;
            sleep(Duration::from_secs(3600));
        });
        let err = late.unwrap_err();
        assert_eq!(err.limit(), Duration::from_millis(20));
        assert_eq!(err.to_string(), "timed out after 20ms");
        assert_eq!(
            d.get(),
            1,
            "the late work's destructors ran before Err came back"
        );
    });
    assert_eq!(dropped.get(), 1);
}

#[test]
fn a_panic_inside_timeout_continues_in_its_caller() {
    fibra::run(|| {
        let err =
            panic::catch_unwind(|| timeout(Duration::from_secs(10), || panic!("inside timeout")))
                .unwrap_err();
        assert_eq!(panic_message(&*err), "inside timeout");
    });
}

#[test]
fn blocking_work_does_not_stall_the_other_green_threads() {
    fibra::run(|| {
        let ticks = Arc::new(AtomicUsize::new(0));
        let t = ticks.clone();
        let ticker = fibra::spawn(move || {
            for _ in 0..10 {
                sleep(Duration::from_millis(1));
                t.fetch_add(1, Ordering::SeqCst);
            }
        });
        // The blocking job waits (on its pool thread) until the ticker has
        // ticked ten times: if it stalled the runtime, that would never happen.
        let seen = ticks.clone();
        let saw_ticks = fibra::blocking(move || {
            let until = Instant::now() + Duration::from_secs(30);
            while seen.load(Ordering::SeqCst) < 10 && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
            seen.load(Ordering::SeqCst)
        });
        assert_eq!(saw_ticks, 10);
        ticker.join().unwrap();
        // A panic in blocking work continues in the caller.
        let err = panic::catch_unwind(|| fibra::blocking(|| panic!("in the pool"))).unwrap_err();
        assert_eq!(panic_message(&*err), "in the pool");
    });
    // Outside a runtime it simply runs here.
    assert_eq!(fibra::blocking(|| 3), 3);
}

#[test]
fn cancelling_a_parked_thread_unwinds_it() {
    fibra::run(|| {
        let dropped = Rc::new(Cell::new(0));
        let guard = Flag(dropped.clone());
        let h = fibra::spawn(move || {
            let _guard = guard;
            sleep(Duration::from_secs(3600));
            "never"
        });
        runtime::yield_now(); // it starts and parks
        h.cancel();
        assert!(matches!(h.join(), Err(JoinError::Cancelled)));
        assert_eq!(dropped.get(), 1);
    });
}

/// A destructor that waits for `go` (and records that it began and ended),
/// run while its green thread unwinds from its own panic.
struct WaitingCleanup {
    go: fibra::sync::channel::Receiver<()>,
    began: Rc<Cell<bool>>,
    ended: Rc<Cell<bool>>,
}

impl Drop for WaitingCleanup {
    fn drop(&mut self) {
        self.began.set(true);
        // A wait during the unwind: it must complete, whatever happens meanwhile.
        let _ = self.go.recv();
        self.ended.set(true);
    }
}

/// A thread that panics and, during the unwind, waits in `WaitingCleanup` for
/// the returned sender; returns its handle once it waits there.
fn panic_with_waiting_cleanup(
    ended: &Rc<Cell<bool>>,
) -> (fibra::sync::channel::Sender<()>, runtime::JoinHandle<()>) {
    let (go, wait) = fibra::sync::channel::unbounded();
    let began = Rc::new(Cell::new(false));
    let cleanup = WaitingCleanup {
        go: wait,
        began: began.clone(),
        ended: ended.clone(),
    };
    let h = fibra::spawn(move || {
        let _cleanup = cleanup;
        panic!("ordinary failure");
    });
    while !began.get() {
        runtime::yield_now();
    }
    (go, h)
}

// Audit round 2, finding 3 (`cancel_during_panic cancel`): cancelling a thread
// that is unwinding from its own panic aborted the process.
#[test]
fn cancelling_a_thread_that_unwinds_from_its_panic_lets_it_finish_and_join_reports_the_panic() {
    fibra::run(|| {
        let ended = Rc::new(Cell::new(false));
        let (go, h) = panic_with_waiting_cleanup(&ended);
        h.cancel();
        runtime::yield_now();
        assert!(
            !ended.get(),
            "the cleanup still waits: the cancel did not cut it"
        );
        go.send(()).unwrap();
        let err = h.join().unwrap_err();
        assert_eq!(
            panic_message(&*err.into_panic().expect("the panic, not Cancelled")),
            "ordinary failure"
        );
        assert!(ended.get());
    });
}

// Finding 3 (`cancel_during_panic shutdown`): the end of `run` cancels a
// thread that is unwinding from its own panic.
#[test]
fn the_end_of_run_lets_a_thread_unwinding_from_its_panic_finish() {
    let ended = Rc::new(Cell::new(false));
    let e = ended.clone();
    fibra::run(move || {
        let (go, _h) = panic_with_waiting_cleanup(&e);
        // The cleanup can complete only after `run` has begun to end.
        fibra::spawn(move || {
            sleep(Duration::from_millis(5));
            go.send(()).unwrap();
        });
    });
    assert!(ended.get());
}

// Finding 3 (`cancel_during_panic timeout`): a timeout whose deadline passes
// while its work unwinds from a panic; the panic continues in the caller.
#[test]
fn a_deadline_that_passes_while_the_work_unwinds_from_its_panic_does_not_cut_its_cleanup() {
    fibra::run(|| {
        let ended = Rc::new(Cell::new(false));
        let (go, wait) = fibra::sync::channel::unbounded();
        let cleanup = WaitingCleanup {
            go: wait,
            began: Rc::new(Cell::new(false)),
            ended: ended.clone(),
        };
        let sender = fibra::spawn(move || {
            sleep(Duration::from_millis(20));
            go.send(()).unwrap();
        });
        let err = panic::catch_unwind(AssertUnwindSafe(|| {
            timeout(Duration::from_millis(1), move || {
                let _cleanup = cleanup;
                panic!("ordinary failure");
            })
        }))
        .unwrap_err();
        assert_eq!(panic_message(&*err), "ordinary failure");
        assert!(ended.get());
        sender.join().unwrap();
    });
}

// A cancel of a thread that catches its own panic and goes on is delivered at
// its next park after the unwind.
#[test]
fn a_cancel_during_a_caught_unwind_is_delivered_at_the_next_park() {
    fibra::run(|| {
        let (go, wait) = fibra::sync::channel::unbounded();
        let began = Rc::new(Cell::new(false));
        let ended = Rc::new(Cell::new(false));
        let cleanup = WaitingCleanup {
            go: wait,
            began: began.clone(),
            ended: ended.clone(),
        };
        let h = fibra::spawn(move || {
            let caught = panic::catch_unwind(AssertUnwindSafe(move || {
                let _cleanup = cleanup;
                panic!("caught failure");
            }));
            assert!(caught.is_err());
            runtime::park();
            "never"
        });
        while !began.get() {
            runtime::yield_now();
        }
        h.cancel();
        go.send(()).unwrap();
        assert!(matches!(h.join(), Err(JoinError::Cancelled)));
        assert!(ended.get());
    });
}

// std counts panics per OS thread, so a cancelled thread cannot be told from
// one whose unwind is in flight while another green thread is parked in the
// middle of its own: its cancel waits for that unwind to end, and then goes
// through.
#[test]
fn a_cancel_owed_while_another_thread_unwinds_is_delivered_once_it_has() {
    fibra::run(|| {
        let ended = Rc::new(Cell::new(false));
        let (go, unwinding) = panic_with_waiting_cleanup(&ended);
        // `park` may return spuriously: parks in a loop, as every wait does.
        let parked = fibra::spawn(|| {
            loop {
                runtime::park();
            }
        });
        runtime::yield_now();
        parked.cancel();
        go.send(()).unwrap();
        assert!(matches!(parked.join(), Err(JoinError::Cancelled)));
        assert!(unwinding.join().is_err());
        assert!(ended.get());
    });
}

#[test]
fn the_end_of_run_unwinds_the_threads_still_parked() {
    let dropped = Rc::new(Cell::new(0));
    let d = dropped.clone();
    fibra::run(move || {
        for _ in 0..100 {
            let guard = Flag(d.clone());
            fibra::spawn(move || {
                let _guard = guard;
                sleep(Duration::from_secs(3600));
            });
        }
        runtime::yield_now();
        // Returning ends the runtime with 100 threads asleep.
    });
    assert_eq!(dropped.get(), 100);
}

#[test]
fn a_deadlock_is_reported_instead_of_hanging() {
    let err = panic::catch_unwind(|| {
        fibra::run(|| {
            let _other = fibra::spawn(runtime::park);
            runtime::park();
        })
    })
    .unwrap_err();
    let message = panic_message(&*err);
    assert!(message.contains("deadlock"), "{message}");
}

#[test]
fn misuse_is_reported_clearly() {
    let err = panic::catch_unwind(|| sleep(Duration::from_millis(1))).unwrap_err();
    assert!(panic_message(&*err).contains("must run inside a fibra runtime"));
    let err = panic::catch_unwind(|| fibra::run(|| fibra::run(|| ()))).unwrap_err();
    assert!(panic_message(&*err).contains("already running"));
    // Blocking from a fiber nested inside a green thread cannot suspend the
    // green thread: it panics (in the nested fiber, then in the green thread).
    // The sleep is long so that it must block: a sleep whose deadline has
    // passed by the time it looks (1 ms could, under valgrind) returns at once.
    fibra::run(|| {
        let nested: fibra::Fiber = fibra::Fiber::new(|_, ()| sleep(Duration::from_secs(3600)));
        let err = panic::catch_unwind(AssertUnwindSafe(|| nested.resume(()))).unwrap_err();
        assert!(panic_message(&*err).contains("on its own stack"));
    });
}

#[test]
fn a_runtime_per_os_thread() {
    let sums: Vec<u64> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                fibra::run(move || {
                    let hs: Vec<_> = (0..1000).map(|i| fibra::spawn(move || i + t)).collect();
                    hs.into_iter().map(|h| h.join().unwrap()).sum()
                })
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    assert_eq!(sums, (0..4).map(|t| 499_500 + 1000 * t).collect::<Vec<_>>());
}

#[test]
fn a_thread_that_cannot_have_a_stack_fails_with_the_reason() {
    // A stack larger than the address space cannot be mapped: the first green
    // thread does not start, and `run` reports why instead of hanging.
    let outcome = std::panic::catch_unwind(|| {
        fibra::runtime::Builder::new()
            .stack_size(1 << 47)
            .run(|| unreachable!("no stack, no run"))
    });
    let message = panic_message(&*outcome.unwrap_err());
    assert!(
        message.starts_with("fibra: the green thread could not start: "),
        "{message}"
    );
}

#[test]
fn finished_timeouts_and_cancelled_sleeps_take_their_timers_with_them() {
    fibra::run(|| {
        // A timer that stays armed, earlier than the others: disarmed timers
        // below it in the heap are not dropped by reaching its top. The
        // heap, not the lane of timers armed in deadline order: each is
        // armed after the later `late`.
        let late = fibra::spawn(|| sleep(Duration::from_secs(7200)));
        runtime::yield_now();
        let sleeper = fibra::spawn(|| sleep(Duration::from_secs(1800)));
        runtime::yield_now();
        for round in 0..10_000 {
            assert_eq!(timeout(Duration::from_secs(3600), move || round), Ok(round));
            let cancelled = fibra::spawn(|| sleep(Duration::from_secs(3600)));
            runtime::yield_now();
            cancelled.cancel();
            assert!(matches!(cancelled.join(), Err(JoinError::Cancelled)));
            // The sleepers' timers, and at most as many disarmed entries as
            // the heap holds armed ones.
            let entries = runtime::timer_entries();
            assert!(entries <= 3, "round {round}: {entries} timer entries");
        }
        for sleeper in [sleeper, late] {
            sleeper.cancel();
            assert!(matches!(sleeper.join(), Err(JoinError::Cancelled)));
        }
        assert_eq!(runtime::timer_entries(), 0);
    });
}

#[test]
fn a_deadlock_after_timed_waits_that_ended_is_reported() {
    // The hour-long timers of the finished timeout and of the cancelled
    // sleep went with their waits: nothing can wake the parked thread, so
    // `run` reports the deadlock now, not in an hour.
    let message = without_hanging("a deadlock after timed waits", || {
        let err = panic::catch_unwind(|| {
            fibra::run(|| {
                assert_eq!(timeout(Duration::from_secs(3600), || 5), Ok(5));
                let sleeper = fibra::spawn(|| sleep(Duration::from_secs(3600)));
                runtime::yield_now();
                sleeper.cancel();
                assert!(matches!(sleeper.join(), Err(JoinError::Cancelled)));
                runtime::park();
            })
        })
        .unwrap_err();
        panic_message(&*err)
    });
    assert!(message.contains("deadlock"), "{message}");
}

#[test]
fn the_end_of_run_does_not_wait_for_the_timer_of_a_cancelled_sleep() {
    // Cancelled at the end, the sleeper unwinds into a destructor that waits
    // for ever: with its sleep's timer gone, nothing can wake it, so it is
    // abandoned at once instead of when the hour is up.
    let dropped = without_hanging("the end of run after a cancelled sleep", || {
        let dropped = Rc::new(Cell::new(0));
        let d = dropped.clone();
        fibra::run(move || {
            let guard = Flag(d);
            fibra::spawn(move || {
                let _stuck = Stuck;
                let _guard = guard;
                sleep(Duration::from_secs(3600));
            });
            runtime::yield_now();
        });
        dropped.get()
    });
    assert_eq!(dropped, 1, "the destructors before the stuck one ran");
}

#[test]
fn a_join_handle_outliving_its_runtime_names_only_its_own_thread() {
    let (stuck, done) = fibra::run(|| {
        let stuck = fibra::spawn(|| {
            let _stuck = Stuck;
            sleep(Duration::from_secs(3600));
        });
        let done = fibra::spawn(|| "finished in time");
        runtime::yield_now();
        (stuck, done) // the end of the runtime cancels and abandons `stuck`
    });
    // Outside any runtime: the outcomes the threads had at the end.
    assert!(stuck.is_finished());
    stuck.cancel();
    assert!(done.is_finished());
    assert_eq!(done.join().unwrap(), "finished in time");
    // In the next runtime on this OS thread, where the same slot and serial
    // name an unrelated thread: the stale handle touches nothing there.
    let victim = fibra::run(move || {
        let victim = fibra::spawn(|| {
            sleep(Duration::from_millis(10));
            "the victim's own outcome"
        });
        runtime::yield_now(); // it parks in its sleep
        stuck.cancel();
        assert!(stuck.is_finished());
        assert!(matches!(stuck.join(), Err(JoinError::Cancelled)));
        assert!(!victim.is_finished());
        victim.join()
    });
    assert_eq!(victim.unwrap(), "the victim's own outcome");
}

#[test]
fn a_wait_list_outliving_its_runtime_wakes_no_thread_of_the_next() {
    // A thread abandoned at the end of its runtime while waiting on a
    // condition variable stays listed there; a notification in the next
    // runtime must not wake the thread that has its slot and serial there.
    let pair = fibra::run(|| {
        let pair = Rc::new((fibra::sync::Mutex::new(()), fibra::sync::Condvar::new()));
        let waits = pair.clone();
        fibra::spawn(move || {
            let (mutex, condvar) = &*waits;
            let mut guard = mutex.lock();
            // Swallows the end of the runtime's cancel and waits again, so it
            // is abandoned in the wait (and not in the middle of an unwind,
            // which would leave std's panic count of this OS thread raised).
            loop {
                match panic::catch_unwind(AssertUnwindSafe(|| condvar.wait(guard))) {
                    Ok(woken) => guard = woken,
                    Err(_) => guard = mutex.lock(),
                }
            }
        });
        runtime::yield_now();
        pair
    });
    fibra::run(move || {
        let parked = Rc::new(Cell::new(false));
        let flag = parked.clone();
        let unrelated = fibra::spawn(move || {
            flag.set(true);
            runtime::park();
            flag.set(false);
        });
        runtime::yield_now(); // it parks
        assert!(parked.get());
        pair.1.notify_all();
        runtime::yield_now();
        runtime::yield_now();
        assert!(
            parked.get(),
            "a stale waiter's wake reached an unrelated thread"
        );
        unrelated.cancel();
        let joined = unrelated.join();
        assert!(matches!(joined, Err(JoinError::Cancelled)), "{joined:?}");
    });
}

/// Sets its flag when dropped.
struct DropFlag(Rc<Cell<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[test]
fn a_cancelled_thread_drops_its_closure_while_its_handle_lives() {
    // The closure and the handle's slot share one allocation: what the
    // closure held goes when the thread ends, not when the handle does.
    let dropped = Rc::new(Cell::new(false));
    let flag = DropFlag(dropped.clone());
    fibra::run(move || {
        let stuck = fibra::spawn(move || {
            let _flag = flag;
            loop {
                fibra::runtime::park(); // nothing will wake it
            }
        });
        stuck.cancel();
        fibra::runtime::yield_now(); // its turn: its closure is dropped, unrun
        assert!(stuck.is_finished());
        assert!(dropped.get(), "what the closure held outlived its thread");
        assert!(matches!(stuck.join(), Err(JoinError::Cancelled)));
    });
}

/// Sleeps in its destructor, which only a green thread can do, then sets
/// its flag.
struct SleepOnDrop(Rc<Cell<bool>>);

impl Drop for SleepOnDrop {
    fn drop(&mut self) {
        sleep(Duration::from_millis(1));
        self.0.set(true);
    }
}

#[test]
fn a_thread_cancelled_before_it_starts_never_runs_and_its_closure_drops_on_its_own_stack() {
    fibra::run(|| {
        let ran = Rc::new(Cell::new(false));
        let dropped = Rc::new(Cell::new(false));
        let held = SleepOnDrop(dropped.clone());
        let ran_inside = ran.clone();
        let never = fibra::spawn(move || {
            let _held = held;
            ran_inside.set(true);
        });
        let sibling = fibra::spawn(|| 7);
        never.cancel();
        never.cancel(); // told once
        assert!(matches!(never.join(), Err(JoinError::Cancelled)));
        assert!(!ran.get(), "a thread cancelled before it started ran");
        assert!(
            dropped.get(),
            "its closure was not dropped (or its destructor could not sleep)"
        );
        assert_eq!(sibling.join().unwrap(), 7);
    });
}

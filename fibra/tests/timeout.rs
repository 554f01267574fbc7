//! `time::timeout` runs its work on the calling green thread: the work may
//! borrow, every wait inside it sees the deadline, and `Err(Elapsed)` comes
//! back only once the work has unwound. No test asserts a time: each limit is
//! either far shorter than a wait that would never end, or far longer than
//! work that does not wait.

#[path = "support/without_hanging.rs"]
mod hang;

use fibra::net::{TcpListener, TcpStream};
use fibra::runtime::{self, JoinError};
use fibra::sync::Mutex;
use fibra::sync::channel;
use fibra::time::{Elapsed, sleep, timeout};
use hang::without_hanging;
use std::cell::Cell;
use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

const SHORT: Duration = Duration::from_millis(10);
const HOUR: Duration = Duration::from_secs(3600);

/// Counts its drops.
struct Flag<'a>(&'a Cell<u32>);
impl Drop for Flag<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

/// A destructor that waits: a sleep, then it counts.
struct SlowCleanup<'a>(&'a Cell<u32>);
impl Drop for SlowCleanup<'_> {
    fn drop(&mut self) {
        sleep(Duration::from_millis(5));
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn the_works_destructors_ran_and_its_lock_is_free_when_elapsed_returns() {
    fibra::run(|| {
        let lock = Mutex::new(0);
        let dropped = Cell::new(0);
        let late = timeout(SHORT, || {
            let mut guard = lock.lock();
            *guard += 1;
            let _flag = Flag(&dropped);
            sleep(HOUR);
        });
        assert_eq!(late.map_err(|e: Elapsed| e.limit()), Err(SHORT));
        assert_eq!(
            dropped.get(),
            1,
            "the work's destructors ran before Err came back"
        );
        assert!(!lock.is_locked(), "the work's lock is free");
        assert_eq!(*lock.lock(), 1);
    });
}

#[test]
fn destructors_that_wait_during_the_timeouts_unwind_complete() {
    fibra::run(|| {
        let cleaned = Cell::new(0);
        let late = timeout(SHORT, || {
            let _cleanup = SlowCleanup(&cleaned);
            sleep(HOUR);
        });
        assert!(late.is_err());
        assert_eq!(
            cleaned.get(),
            1,
            "the cleanup's own sleep was not cut short"
        );
    });
}

#[test]
fn a_borrowed_read_under_a_timeout() {
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let mut buf = [0u8; 16];
        // Nothing written yet: the read waits, and the limit ends it.
        let quiet = timeout(SHORT, || client.read(&mut buf));
        assert!(quiet.is_err());
        // The same socket and buffer, borrowed again: a read that completes.
        server.write_all(b"hello").unwrap();
        let n = timeout(HOUR, || client.read(&mut buf)).unwrap().unwrap();
        assert_eq!(&buf[..n], b"hello");
    });
}

#[test]
fn work_that_does_not_wait_runs_to_its_end_whatever_the_limit() {
    fibra::run(|| {
        assert_eq!(timeout(Duration::ZERO, || 5), Ok(5));
        // A message already there is taken without waiting, as
        // `recv_timeout(Duration::ZERO)` takes it.
        let (tx, rx) = channel::unbounded();
        tx.send(1).unwrap();
        assert_eq!(timeout(Duration::ZERO, || rx.recv()), Ok(Ok(1)));
        assert_eq!(
            rx.recv_timeout(Duration::ZERO),
            Err(channel::RecvTimeoutError::Timeout)
        );
        tx.send(2).unwrap();
        assert_eq!(rx.recv_timeout(Duration::ZERO), Ok(2));
        // Busy work past a short limit is not interrupted.
        let spins = Cell::new(0u64);
        let busy = timeout(Duration::from_millis(1), || {
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_millis(5) {
                spins.set(spins.get() + 1);
            }
            "done"
        });
        assert_eq!(busy, Ok("done"));
    });
}

#[test]
fn a_limit_already_passed_ends_the_work_at_its_first_wait() {
    fibra::run(|| {
        let (_tx, rx) = channel::unbounded::<i32>();
        let steps = Cell::new(0);
        let zero = timeout(Duration::ZERO, || {
            steps.set(1);
            let _ = rx.recv();
            steps.set(2);
        });
        assert_eq!(zero.unwrap_err().limit(), Duration::ZERO);
        assert_eq!(steps.get(), 1, "it ran up to its first wait, not past it");
        // A yield is a wait too.
        let yielded = timeout(Duration::ZERO, || {
            runtime::yield_now();
            steps.set(3);
        });
        assert!(yielded.is_err());
        assert_eq!(steps.get(), 1);
    });
}

#[test]
fn an_inner_timeout_with_a_later_deadline_does_not_mask_the_outer() {
    fibra::run(|| {
        let after_inner = Cell::new(false);
        let outer = timeout(SHORT, || {
            let inner = timeout(HOUR, || sleep(HOUR));
            // Never reached: the outer deadline unwinds through the inner
            // timeout, which does not turn it into its own Err.
            after_inner.set(true);
            inner
        });
        assert_eq!(outer.unwrap_err().limit(), SHORT);
        assert!(!after_inner.get());
    });
}

#[test]
fn an_inner_timeout_that_expires_first_returns_to_the_outer_work() {
    fibra::run(|| {
        let outer = timeout(HOUR, || {
            let inner = timeout(SHORT, || sleep(HOUR));
            assert_eq!(inner.unwrap_err().limit(), SHORT);
            "the outer work went on"
        });
        assert_eq!(outer, Ok("the outer work went on"));
    });
}

#[test]
fn when_both_deadlines_have_passed_the_outer_one_expires() {
    fibra::run(|| {
        let after_inner = Cell::new(false);
        let outer = timeout(Duration::ZERO, || {
            let _ = timeout(Duration::ZERO, || sleep(HOUR));
            after_inner.set(true);
        });
        assert_eq!(outer.unwrap_err().limit(), Duration::ZERO);
        assert!(!after_inner.get());
    });
}

#[test]
fn a_cancel_goes_through_a_timeout_untouched() {
    fibra::run(|| {
        let dropped = Rc::new(Cell::new(0));
        let d = dropped.clone();
        let worker = fibra::spawn(move || {
            let inner = timeout(HOUR, || {
                let _flag = Flag(&d);
                runtime::park();
            });
            // Never reached: the cancel is not the timeout's to catch.
            panic!("timeout returned {inner:?}");
        });
        runtime::yield_now();
        worker.cancel();
        assert!(matches!(worker.join(), Err(JoinError::Cancelled)));
        assert_eq!(dropped.get(), 1);
    });
}

#[test]
fn a_panic_in_the_work_wins_over_a_deadline_that_passed_during_its_unwind() {
    fibra::run(|| {
        let cleaned = Cell::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            timeout(Duration::ZERO, || {
                let _cleanup = SlowCleanup(&cleaned);
                panic!("ordinary failure");
            })
        }));
        let payload = outcome.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"ordinary failure"));
        assert_eq!(cleaned.get(), 1, "the cleanup's sleep completed");
    });
}

#[test]
fn work_that_swallows_the_expiry_is_ended_again_at_its_next_wait() {
    fibra::run(|| {
        let swallowed = Cell::new(false);
        let late = timeout(SHORT, || {
            let caught = panic::catch_unwind(|| sleep(HOUR));
            swallowed.set(caught.is_err());
            sleep(HOUR);
        });
        assert!(late.is_err());
        assert!(swallowed.get());
    });
}

#[test]
fn other_threads_run_while_the_work_waits() {
    fibra::run(|| {
        let ticks = Rc::new(Cell::new(0));
        let t = ticks.clone();
        let ticker = fibra::spawn(move || {
            for _ in 0..3 {
                t.set(t.get() + 1);
                runtime::yield_now();
            }
        });
        let (tx, rx) = channel::unbounded();
        let sender = fibra::spawn(move || tx.send("late").unwrap());
        // The receive waits until the sender runs; its deadline is far off.
        assert_eq!(timeout(HOUR, || rx.recv()), Ok(Ok("late")));
        sender.join().unwrap();
        ticker.join().unwrap();
        assert_eq!(ticks.get(), 3);
    });
}

/// Waits for a message when dropped (during its thread's unwind).
struct WaitsForGo(channel::Receiver<()>);
impl Drop for WaitsForGo {
    fn drop(&mut self) {
        let _ = self.0.recv();
    }
}

// std counts panics per OS thread: while another green thread is parked in
// the middle of its unwind, an expired deadline cannot be told from one whose
// own unwind is in flight. It waits for that unwind to end, and then ends the
// work.
#[test]
fn a_deadline_that_passes_while_another_thread_unwinds_is_enforced_once_it_has() {
    // Were the owed deadline never enforced, the hour-long sleep would go on.
    without_hanging("an owed deadline", || {
        fibra::run(|| {
            let (go, wait) = channel::unbounded();
            let unwinding = fibra::spawn(move || {
                let _cleanup = WaitsForGo(wait);
                panic!("ordinary failure");
            });
            runtime::yield_now();
            let releaser = fibra::spawn(move || {
                sleep(Duration::from_millis(20));
                go.send(()).unwrap();
            });
            let late = timeout(Duration::from_millis(1), || sleep(HOUR));
            assert!(late.is_err());
            assert!(unwinding.join().is_err());
            releaser.join().unwrap();
        });
    });
}

// A timeout called by a destructor that runs during an unwind cannot end its
// work (that would be a second unwind): the work completes.
#[test]
fn a_timeout_inside_a_destructor_during_an_unwind_lets_its_work_complete() {
    struct FlushOnDrop<'a>(&'a Cell<Option<Result<(), Elapsed>>>);
    impl Drop for FlushOnDrop<'_> {
        fn drop(&mut self) {
            self.0.set(Some(timeout(Duration::ZERO, || {
                sleep(Duration::from_millis(1))
            })));
        }
    }
    fibra::run(|| {
        let flushed = Cell::new(None);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let _flush = FlushOnDrop(&flushed);
            panic!("ordinary failure");
        }));
        assert!(outcome.is_err());
        assert_eq!(flushed.get(), Some(Ok(())));
    });
}

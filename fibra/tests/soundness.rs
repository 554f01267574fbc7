//! One regression test for each finding of the outside soundness review
//! (2026-11-23; its reproducers are in `shared/soundness/`), each asserting the
//! outcome that the crate's `# Soundness` docs and the fiber module's table now
//! define. Cases whose defined outcome is a process abort run in a child
//! process: this test binary run again with an environment variable.
//!
//! Finding 2 (messages carried as integers) is checked under Miri by the unit
//! tests of `fiber::message` (`scripts/miri.sh`); finding 7 (`panic = "abort"`)
//! by `checks/panic-abort`, which must be built with that panic strategy.

mod support;

use fibra::fiber::{Builder, Status};
use fibra::{Fiber, FiberError, Generator, Step, Yielder};
use std::cell::{Cell, OnceCell};
use std::os::unix::process::ExitStatusExt;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

const CHILD: &str = "FIBRA_SOUNDNESS_CHILD";

/// Counts its drops, and checks at its drop that the memory it lives in still
/// holds what it wrote: a stack handed to another fiber too early would not.
struct Witness {
    magic: u64,
    drops: Rc<Cell<u32>>,
}

const MAGIC: u64 = 0x5afe_5afe_5afe_5afe;

impl Witness {
    fn new(drops: &Rc<Cell<u32>>) -> Witness {
        Witness {
            magic: MAGIC,
            drops: drops.clone(),
        }
    }
}

impl Drop for Witness {
    fn drop(&mut self) {
        assert_eq!(
            std::hint::black_box(self.magic),
            MAGIC,
            "a live stack was reused"
        );
        self.drops.set(self.drops.get() + 1);
    }
}

/// Overwrites the top of whatever stack the pool hands out next (where the
/// first frames, and so the witnesses, live), as the review's reproducers did to
/// show the use after free.
fn scribble_on_the_next_stack() {
    let z: Fiber<(), (), ()> = Fiber::new(|y, ()| {
        let mut buf = [0x41u8; 64 * 1024];
        std::hint::black_box(&mut buf);
        y.suspend(());
        std::hint::black_box(&buf);
    });
    z.resume(()).unwrap();
}

type Unit = Fiber<(), (), ()>;

// Finding 0: resuming a fiber that is suspended inside a transfer.
#[test]
fn f0_resuming_a_transferring_fiber_is_an_error() {
    type F = Fiber<u32, u32, u32>;
    let f1: Rc<OnceCell<F>> = Rc::new(OnceCell::new());
    let f2: Rc<OnceCell<F>> = Rc::new(OnceCell::new());
    let seen = Rc::new(Cell::new(None));
    let to_f2 = Rc::downgrade(&f2);
    f1.set(Fiber::new(move |y, _| {
        y.transfer(to_f2.upgrade().unwrap().get().unwrap(), 1)
            .unwrap()
    }))
    .ok();
    let (to_f1, seen2) = (Rc::downgrade(&f1), seen.clone());
    f2.set(Fiber::new(move |_, _| {
        seen2.set(Some(to_f1.upgrade().unwrap().get().unwrap().resume(2)));
        20
    }))
    .ok();
    assert_eq!(f1.get().unwrap().resume(0).unwrap(), Step::Return(20));
    assert_eq!(seen.get(), Some(Err(FiberError::Transferring)));
    assert_eq!(f1.get().unwrap().status(), Status::Transferred);
}

// Finding 1, mode "catch": the fiber catches the forced unwind, then transfers.
#[test]
fn f1_a_dropped_fiber_that_catches_the_unwind_cannot_transfer_away() {
    let drops = Rc::new(Cell::new(0));
    let w: Rc<Unit> = Rc::new(Fiber::new(|_, ()| {}));
    let (w2, d) = (w.clone(), drops.clone());
    let transfer = Rc::new(Cell::new(None));
    let t = transfer.clone();
    let x: Unit = Fiber::new(move |y, ()| {
        let _local = Witness::new(&d);
        let caught = panic::catch_unwind(AssertUnwindSafe(|| y.suspend(())));
        assert!(caught.is_err(), "the drop unwinds the suspend");
        t.set(Some(y.transfer(&w2, ())));
    });
    x.resume(()).unwrap();
    drop(x);
    assert_eq!(transfer.get(), Some(Err(FiberError::Dropping)));
    assert_eq!(
        drops.get(),
        1,
        "the local on the dropped fiber's stack was dropped"
    );
    assert_eq!(
        w.status(),
        Status::Created,
        "nothing ran on the dropped fiber's behalf"
    );
    assert!(!std::thread::panicking());
    scribble_on_the_next_stack();
}

// Finding 1, mode "hop": a destructor transfers during the forced unwind.
#[test]
fn f1_a_destructor_cannot_transfer_away_from_a_fiber_being_dropped() {
    struct Hop<'a>(
        &'a Yielder<(), (), ()>,
        Rc<Unit>,
        Rc<Cell<Option<FiberError>>>,
    );
    impl Drop for Hop<'_> {
        fn drop(&mut self) {
            self.2.set(self.0.transfer(&self.1, ()).err());
        }
    }
    let drops = Rc::new(Cell::new(0));
    let refused = Rc::new(Cell::new(None));
    let w: Rc<Unit> = Rc::new(Fiber::new(|_, ()| panic!("W must not run")));
    let (w2, d, r) = (w.clone(), drops.clone(), refused.clone());
    let x: Unit = Fiber::new(move |y, ()| {
        let _outer = Witness::new(&d);
        let _hop = Hop(y, w2, r);
        y.suspend(());
    });
    x.resume(()).unwrap();
    drop(x);
    assert_eq!(refused.get(), Some(FiberError::Dropping));
    assert_eq!(drops.get(), 1, "the unwind went on past the destructor");
    assert!(!std::thread::panicking(), "no unwind was left unfinished");
    assert_eq!(w.status(), Status::Created);
    scribble_on_the_next_stack();
}

// Finding 1, mode "panic": a new panic while being dropped reaches the dropper,
// after the fiber is dead.
#[test]
fn f1_a_new_panic_while_dropped_reaches_the_dropper_once_the_fiber_is_dead() {
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    let x: Unit = Fiber::new(move |y, ()| {
        let _local = Witness::new(&d);
        let _ = panic::catch_unwind(AssertUnwindSafe(|| y.suspend(())));
        panic!("anew");
    });
    x.resume(()).unwrap();
    let payload = panic::catch_unwind(AssertUnwindSafe(move || drop(x))).unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"anew"));
    assert_eq!(drops.get(), 1);
    scribble_on_the_next_stack();
}

// Finding 1: a fiber that catches the forced unwind and suspends is unwound
// again (its suspend comes back to the dropper, which sends the unwind
// again at once), until it ends.
#[test]
fn f1_a_dropped_fiber_that_suspends_again_is_unwound_again() {
    let caught = Rc::new(Cell::new(0));
    let c = caught.clone();
    let x: Unit = Fiber::new(move |y, ()| {
        for _ in 0..3 {
            if panic::catch_unwind(AssertUnwindSafe(|| y.suspend(()))).is_err() {
                c.set(c.get() + 1);
            }
        }
        y.suspend(());
    });
    x.resume(()).unwrap();
    drop(x);
    assert_eq!(caught.get(), 3);
}

// Finding 3: stack sizes whose arithmetic overflows.
#[test]
fn f3_a_stack_size_that_overflows_is_an_error_naming_it() {
    for size in [usize::MAX, 1 << 63, 1 << 62, 1 << 60] {
        let err = Builder::new()
            .stack_size(size)
            .build(|_, ()| {})
            .map(|_: Unit| ())
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
        assert!(err.to_string().contains("does not fit"), "{err}");
    }
    let payload =
        panic::catch_unwind(|| fibra::runtime::Builder::new().stack_size(1 << 60).run(|| 7))
            .unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("could not start") && message.contains("does not fit"),
        "{message}"
    );
}

struct SleepOnDrop(Rc<Cell<u32>>);
impl Drop for SleepOnDrop {
    fn drop(&mut self) {
        fibra::time::sleep(Duration::from_millis(1));
        let (tx, rx) = fibra::sync::channel::unbounded::<u8>();
        let sender = fibra::spawn(move || tx.send(1).unwrap());
        assert_eq!(rx.recv().unwrap(), 1);
        sender.join().unwrap();
        self.0.set(self.0.get() + 1);
    }
}

// Finding 4: destructors that wait inside a cancelled green thread complete.
#[test]
fn f4_a_destructor_that_waits_in_a_cancelled_thread_completes() {
    let done = Rc::new(Cell::new(0));
    let d = done.clone();
    fibra::run(move || {
        let d2 = d.clone();
        let worker = fibra::spawn(move || {
            let _flush = SleepOnDrop(d2);
            fibra::time::sleep(Duration::from_secs(3600));
        });
        fibra::time::sleep(Duration::from_millis(2));
        worker.cancel();
        assert!(matches!(
            worker.join(),
            Err(fibra::runtime::JoinError::Cancelled)
        ));
        assert_eq!(d.get(), 1);
        // And at the end of the runtime.
        let _late = fibra::spawn(move || {
            let _flush = SleepOnDrop(d);
            fibra::time::sleep(Duration::from_secs(3600));
        });
        fibra::runtime::yield_now();
    });
    assert_eq!(done.get(), 2);
}

// Finding 5: a green thread spawned during shutdown is unwound too.
#[test]
fn f5_a_thread_spawned_during_shutdown_is_unwound() {
    struct SpawnOnDrop(Rc<Cell<u32>>);
    impl Drop for SpawnOnDrop {
        fn drop(&mut self) {
            // Cancelled by the shutdown before it starts, it never runs:
            // what its closure holds is dropped then, and nothing is left.
            let witness = Witness::new(&self.0);
            let _ = fibra::spawn(move || {
                let _local = witness;
                fibra::runtime::park();
            });
        }
    }
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    fibra::run(move || {
        let _h = fibra::spawn(move || {
            let _s = SpawnOnDrop(d);
            fibra::runtime::park();
        });
        fibra::runtime::yield_now();
    });
    assert_eq!(drops.get(), 1);
}

// Finding 6: a suspended fiber kept in a thread-local is unwound at thread exit.
#[test]
fn f6_a_suspended_fiber_in_a_thread_local_is_unwound_at_thread_exit() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    struct Count(Arc<AtomicU32>);
    impl Drop for Count {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    thread_local! {
        static HELD: std::cell::RefCell<Option<Unit>> = const { std::cell::RefCell::new(None) };
    }
    let drops = Arc::new(AtomicU32::new(0));
    let d = drops.clone();
    std::thread::spawn(move || {
        let f: Unit = Fiber::new(move |y, ()| {
            let _c = Count(d);
            y.suspend(());
        });
        f.resume(()).unwrap();
        HELD.with(|h| *h.borrow_mut() = Some(f));
        // Another fiber's drop and panic touch fibra's own thread-locals after
        // HELD registered its destructor, so theirs would run first.
        let g: Unit = Fiber::new(|y, ()| y.suspend(()));
        g.resume(()).unwrap();
        drop(g);
        let p: Unit = Fiber::new(|_, ()| panic!("touches the panic slot"));
        assert!(panic::catch_unwind(AssertUnwindSafe(|| p.resume(()))).is_err());
    })
    .join()
    .unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

// Finding 8: a generator is fused, even when its end came from a fiber that
// its body transferred to.
#[test]
fn f8_a_generator_is_fused() {
    let w: Rc<Fiber<(), u32, ()>> = Rc::new(Fiber::new(|y, ()| {
        y.suspend(2);
        y.suspend(3);
    }));
    let w2 = w.clone();
    let mut items_of = Generator::new(move |out| {
        out.suspend(1);
        let _ = out.transfer(&w2, ());
        out.suspend(4);
    });
    let items: Vec<Option<u32>> = (0..6).map(|_| items_of.next()).collect();
    assert_eq!(items[0], Some(1));
    let first_none = items.iter().position(Option::is_none).unwrap();
    assert!(items[first_none..].iter().all(Option::is_none), "{items:?}");
}

// Finding 11: Duration::MAX waits behave as std's do.
#[test]
fn f11_duration_max_timeouts_do_not_overflow() {
    fibra::run(|| {
        assert_eq!(fibra::time::timeout(Duration::MAX, || 5), Ok(5));
        let (tx, rx) = fibra::sync::channel::unbounded();
        tx.send(1).unwrap();
        assert_eq!(rx.recv_timeout(Duration::MAX), Ok(1));
        let (tx, rx) = fibra::sync::channel::bounded(1);
        tx.send_timeout(2, Duration::MAX).unwrap();
        assert_eq!(rx.recv().unwrap(), 2);
        let pair = Rc::new((fibra::sync::Mutex::new(false), fibra::sync::Condvar::new()));
        let p = pair.clone();
        let waker = fibra::spawn(move || {
            *p.0.lock() = true;
            p.1.notify_one();
        });
        let guard = pair.0.lock();
        let (guard, timed_out) = pair
            .1
            .wait_timeout_while(guard, Duration::MAX, |ready| !*ready);
        assert!(*guard && !timed_out);
        drop(guard);
        waker.join().unwrap();
    });
}

// Finding 12: a panic with RUST_BACKTRACE set on the smallest stack.
#[test]
fn f12_a_panic_with_a_backtrace_fits_on_the_smallest_stack() {
    let out = child("small_stack_panic", &[("RUST_BACKTRACE", "full")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("caught"));
}

// Finding 13: a destructor that suspends while its fiber is dropped aborts
// with a message that says so.
#[test]
fn f13_a_destructor_that_suspends_during_the_drop_aborts_with_a_message() {
    let out = child("dtor_suspends", &[]);
    assert_eq!(out.status.signal(), Some(libc_sigabrt()), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("fibra: a fiber suspended while it was being dropped"),
        "{stderr}"
    );
}

fn libc_sigabrt() -> i32 {
    6
}

/// Runs the test `child_process` of this binary with `CHILD=which` and `env`.
fn child(which: &str, env: &[(&str, &str)]) -> std::process::Output {
    support::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, which)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// The child's side of the tests above; does nothing when run as a test.
#[test]
fn child_process() {
    match std::env::var(CHILD).as_deref() {
        Ok("small_stack_panic") => {
            let f: Unit = Builder::new()
                .stack_size(fibra::fiber::MIN_STACK_SIZE)
                .build(|_, ()| panic!("boom"))
                .unwrap();
            let r = panic::catch_unwind(AssertUnwindSafe(|| f.resume(())));
            println!("caught: {}", r.is_err());
        }
        Ok("dtor_suspends") => {
            struct SuspendOnDrop<'a>(&'a Yielder<(), u32, ()>);
            impl Drop for SuspendOnDrop<'_> {
                fn drop(&mut self) {
                    self.0.suspend(99);
                }
            }
            let f: Fiber<(), u32, ()> = Fiber::new(|y, ()| {
                let _g = SuspendOnDrop(y);
                y.suspend(1);
            });
            f.resume(()).unwrap();
            drop(f);
            println!("dropped (must not be reached)");
        }
        _ => {}
    }
}

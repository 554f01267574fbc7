//! `runtime::Handle`: spawning green threads onto a runtime from other OS
//! threads (plain ones, another runtime's green threads, `blocking` jobs,
//! Ractor bodies, the runtime itself), and waiting for them with a
//! `RemoteJoinHandle` — joined, awaited as a future, cancelled — up to and
//! past the end of the runtime. Cross-thread code: `scripts/tsan.sh --test
//! handle` runs these under ThreadSanitizer.

#[path = "support/without_hanging.rs"]
mod hang;

use fibra::ractor::{Context, Ractor};
use fibra::runtime::{self, Handle, JoinError, RemoteJoinHandle};
use hang::without_hanging;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

/// Runs a runtime on an OS thread of its own until `stop` is sent, and
/// returns a handle to it and that OS thread.
fn background_runtime() -> (Handle, mpsc::Sender<()>, thread::JoinHandle<()>) {
    let (handles, handle) = mpsc::channel();
    let (stop, stopped) = mpsc::channel::<()>();
    let runtime = thread::spawn(move || {
        fibra::run(move || {
            handles.send(runtime::handle()).unwrap();
            // Waits without holding the runtime, which runs what others
            // spawn onto it meanwhile.
            fibra::blocking(move || {
                let _ = stopped.recv();
            });
        })
    });
    (handle.recv().unwrap(), stop, runtime)
}

#[test]
fn a_plain_os_thread_spawns_and_blocks_in_join_for_the_value() {
    without_hanging("a spawn from a plain OS thread", || {
        let (handle, stop, runtime) = background_runtime();
        let runtime_thread = runtime.thread().id();
        let thread = handle
            .spawn(|| {
                fibra::time::sleep(Duration::from_millis(5));
                (thread::current().id(), runtime::current().id())
            })
            .unwrap();
        let (ran_on, green_id) = thread.join().unwrap();
        assert_eq!(ran_on, runtime_thread, "a green thread of that runtime");
        assert!(green_id > 1);
        stop.send(()).unwrap();
        runtime.join().unwrap();
    });
}

#[test]
fn another_runtimes_green_thread_parks_only_itself_while_it_joins() {
    without_hanging("a join from another runtime", || {
        let (handle, stop, runtime) = background_runtime();
        let ticks = fibra::run(move || {
            let (release, released) = mpsc::channel::<()>();
            let ticked = std::rc::Rc::new(std::cell::Cell::new(0));
            let ticker = fibra::spawn({
                let ticked = ticked.clone();
                move || {
                    for _ in 0..3 {
                        fibra::time::sleep(Duration::from_millis(1));
                        ticked.set(ticked.get() + 1);
                    }
                    // Only once this runtime's ticker has ticked does the
                    // other runtime's thread finish: a join that blocked this
                    // OS thread would never see it.
                    release.send(()).unwrap();
                }
            });
            let remote = handle
                .spawn(move || fibra::blocking(move || released.recv().unwrap()))
                .unwrap();
            remote.join().unwrap();
            ticker.join().unwrap();
            ticked.get()
        });
        assert_eq!(ticks, 3);
        stop.send(()).unwrap();
        runtime.join().unwrap();
    });
}

#[test]
fn a_blocking_job_and_a_ractor_body_spawn_onto_a_runtime() {
    without_hanging("spawns from blocking and a Ractor", || {
        fibra::run(|| {
            let here = runtime::handle();
            let from_pool = {
                let here = here.clone();
                fibra::blocking(move || here.spawn(|| 1).unwrap().join().unwrap())
            };
            let ractor =
                Ractor::new(move |_: &Context<()>| here.spawn(|| 2).unwrap().join().unwrap());
            // Waited for in `blocking`, so that this runtime runs the
            // thread the Ractor spawns meanwhile.
            let from_ractor = fibra::blocking(move || ractor.join().unwrap());
            assert_eq!((from_pool, from_ractor), (1, 2));
        });
    });
}

#[test]
fn the_runtime_itself_spawns_through_its_handle_and_parks_in_join() {
    let (value, parked_joiner) = fibra::run(|| {
        let went_on = std::rc::Rc::new(std::cell::Cell::new(false));
        let other = fibra::spawn({
            let went_on = went_on.clone();
            move || went_on.set(true)
        });
        let thread = runtime::handle().spawn(|| 7).unwrap();
        let value = thread.join().unwrap();
        other.join().unwrap();
        (value, went_on.get())
    });
    assert_eq!(value, 7);
    assert!(
        parked_joiner,
        "the other green thread ran while the joiner parked"
    );
}

#[test]
fn the_join_handle_is_a_future() {
    without_hanging("awaiting a RemoteJoinHandle", || {
        let (handle, stop, runtime) = background_runtime();
        // With `block_on`, on a plain OS thread.
        let thread = handle.spawn(|| "awaited").unwrap();
        assert_eq!(fibra::block_on(thread).unwrap(), "awaited");
        // Inside an async block, beside another await.
        let (first, second) = (handle.spawn(|| 1).unwrap(), handle.spawn(|| 2).unwrap());
        let sum = fibra::block_on(async move { first.await.unwrap() + second.await.unwrap() });
        assert_eq!(sum, 3);
        // By hand: pending until the thread finishes, then its waker is
        // called (from the runtime's OS thread) and the poll is ready.
        let (release, released) = mpsc::channel::<()>();
        let mut thread = pin!(
            handle
                .spawn(move || {
                    fibra::blocking(move || released.recv().unwrap());
                    5
                })
                .unwrap()
        );
        let woken = Arc::new(Flag::default());
        let waker = Waker::from(woken.clone());
        let mut cx = TaskContext::from_waker(&waker);
        assert!(thread.as_mut().poll(&mut cx).is_pending());
        assert!(!thread.is_finished());
        release.send(()).unwrap();
        while !woken.0.load(Ordering::Acquire) {
            thread::park();
        }
        assert!(thread.is_finished());
        assert!(matches!(thread.as_mut().poll(&mut cx), Poll::Ready(Ok(5))));
        stop.send(()).unwrap();
        runtime.join().unwrap();
    });
}

/// A waker that records that it was woken and unparks the test's thread.
struct Flag(AtomicBool, thread::Thread);

impl Default for Flag {
    fn default() -> Flag {
        Flag(AtomicBool::new(false), thread::current())
    }
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
        self.1.unpark();
    }
}

#[test]
fn a_handle_to_an_ended_runtime_returns_an_error() {
    let handle = fibra::run(runtime::handle);
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    let refused = handle
        .spawn(move || flag.store(true, Ordering::Relaxed))
        .unwrap_err();
    assert!(refused.to_string().contains("has ended"), "{refused}");
    assert!(!ran.load(Ordering::Relaxed));
    // Inside another runtime on the same OS thread, too.
    fibra::run(move || assert!(handle.spawn(|| ()).is_err()));
}

#[test]
fn handle_try_current_is_none_outside_a_runtime() {
    assert!(Handle::try_current().is_none());
    let (inside, id) = fibra::run(|| {
        let handle = Handle::try_current().expect("inside a runtime");
        (format!("{handle:?}"), handle.id())
    });
    assert_eq!(inside, format!("Handle {{ runtime: {id} }}"));
    assert!(std::panic::catch_unwind(runtime::handle).is_err());
}

/// Several OS threads spawn onto one runtime at once, and then it ends while
/// they go on spawning: every spawn either ran (its join gives the value),
/// was refused, or was dropped by the end of the runtime (its join says it
/// was cancelled). None is lost, and no join hangs.
#[test]
fn spawns_from_several_os_threads_all_run_and_those_racing_the_end_never_hang() {
    const OS_THREADS: usize = 6;
    const SPAWNS: usize = 300;
    without_hanging("spawns racing the end of a runtime", || {
        let (handle, stop, runtime) = background_runtime();
        let ran = Arc::new(AtomicUsize::new(0));
        let start = Arc::new(Barrier::new(OS_THREADS + 1));
        let spawners: Vec<_> = (0..OS_THREADS)
            .map(|t| {
                let (handle, ran, start) = (handle.clone(), ran.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    let joins: Vec<(usize, RemoteJoinHandle<usize>)> = (0..SPAWNS)
                        .map(|i| {
                            let ran = ran.clone();
                            let n = t * SPAWNS + i;
                            let spawned = handle.spawn(move || {
                                ran.fetch_add(1, Ordering::Relaxed);
                                n
                            });
                            (n, spawned.expect("the runtime runs until they are joined"))
                        })
                        .collect();
                    joins
                        .into_iter()
                        .for_each(|(n, join)| assert_eq!(join.join().unwrap(), n));
                })
            })
            .collect();
        start.wait();
        spawners.into_iter().for_each(|s| s.join().unwrap());
        assert_eq!(ran.load(Ordering::Relaxed), OS_THREADS * SPAWNS);

        // Now the end: spawners keep going while the runtime stops.
        let outcomes = Arc::new([(); 3].map(|()| AtomicUsize::new(0)));
        let start = Arc::new(Barrier::new(OS_THREADS + 1));
        let racers: Vec<_> = (0..OS_THREADS)
            .map(|_| {
                let (handle, outcomes, start) = (handle.clone(), outcomes.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    loop {
                        let outcome = match handle.spawn(|| fibra::time::sleep(Duration::ZERO)) {
                            Err(_) => 0,
                            Ok(join) => match join.join() {
                                Ok(()) => 1,
                                Err(JoinError::Cancelled) => 2,
                                Err(err) => panic!("{err}"),
                            },
                        };
                        outcomes[outcome].fetch_add(1, Ordering::Relaxed);
                        if outcome == 0 {
                            return;
                        }
                    }
                })
            })
            .collect();
        start.wait();
        thread::sleep(Duration::from_millis(20));
        stop.send(()).unwrap();
        runtime.join().unwrap();
        racers.into_iter().for_each(|r| r.join().unwrap());
        assert_eq!(
            outcomes[0].load(Ordering::Relaxed),
            OS_THREADS,
            "each saw the end"
        );
    });
}

#[test]
fn cancel_reaches_a_running_thread_and_one_not_yet_started() {
    without_hanging("remote cancels", || {
        let (handle, stop, runtime) = background_runtime();
        // A thread parked for good: cancelled from this OS thread, it
        // unwinds, and its destructors run.
        let (dropped, was_dropped) = mpsc::channel::<()>();
        let (parked, is_parked) = mpsc::channel::<()>();
        let stuck = handle
            .spawn(move || {
                let _guard = OnDrop(dropped);
                parked.send(()).unwrap();
                loop {
                    runtime::park();
                }
            })
            .unwrap();
        is_parked.recv().unwrap();
        assert!(!stuck.is_finished());
        stuck.cancel();
        assert!(matches!(stuck.join(), Err(JoinError::Cancelled)));
        was_dropped.recv().unwrap();

        // A thread cancelled before the runtime started it never runs:
        // the runtime is kept busy (a thread that holds it) meanwhile.
        let (hold, held) = mpsc::channel::<()>();
        let (holding, is_holding) = mpsc::channel::<()>();
        let holder = handle
            .spawn(move || {
                holding.send(()).unwrap();
                held.recv().unwrap(); // holds the runtime's OS thread
            })
            .unwrap();
        is_holding.recv().unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let never = handle
            .spawn(move || flag.store(true, Ordering::Relaxed))
            .unwrap();
        never.cancel();
        hold.send(()).unwrap();
        assert!(matches!(never.join(), Err(JoinError::Cancelled)));
        assert!(!ran.load(Ordering::Relaxed));
        holder.join().unwrap();
        stop.send(()).unwrap();
        runtime.join().unwrap();
    });
}

/// Sends on its channel when dropped.
struct OnDrop(mpsc::Sender<()>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// A thread that cannot finish unwinding at the end of its runtime is
/// abandoned, its body never finishing: its joiner on another OS thread is
/// told it was cancelled instead of waiting for ever.
#[test]
fn the_joiner_of_a_thread_abandoned_at_the_end_hears_it_was_cancelled() {
    without_hanging("a join of an abandoned thread", || {
        let (handle, stop, runtime) = background_runtime();
        let (parked, is_parked) = mpsc::channel::<()>();
        let stuck = handle
            .spawn(move || {
                let _stays = ParksForEver;
                parked.send(()).unwrap();
                loop {
                    runtime::park();
                }
            })
            .unwrap();
        is_parked.recv().unwrap();
        stop.send(()).unwrap();
        assert!(matches!(stuck.join(), Err(JoinError::Cancelled)));
        runtime.join().unwrap();
    });
}

/// Parks for good in its destructor: a thread unwinding through it never
/// ends.
struct ParksForEver;

impl Drop for ParksForEver {
    fn drop(&mut self) {
        loop {
            runtime::park();
        }
    }
}

#[test]
fn a_panic_in_the_thread_reaches_the_joiner_with_its_payload() {
    let handle = fibra::run(|| {
        let thread = runtime::handle().spawn(|| panic!("remote boom")).unwrap();
        thread.join()
    });
    let err = handle.unwrap_err();
    assert_eq!(err.to_string(), "green thread panicked: remote boom");
}

#[test]
fn a_handle_and_a_remote_join_handle_cross_os_threads() {
    fn send_sync<T: Send + Sync + Clone + std::fmt::Debug>() {}
    fn send<T: Send + Sync + std::fmt::Debug + Future>() {}
    send_sync::<Handle>();
    send::<RemoteJoinHandle<Vec<u8>>>();
}

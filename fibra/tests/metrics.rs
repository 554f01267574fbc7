//! `runtime::metrics()` counts a known workload exactly, and
//! `Handle::metrics()` reads another runtime's counters from a plain OS
//! thread while it runs.

use fibra::runtime::{self, Handle, RuntimeMetrics};
use fibra::sync::channel::unbounded;
use std::sync::mpsc;
use std::time::Duration;

const THREADS: u64 = 10;
const PARKS: u64 = 3;

#[test]
#[cfg_attr(miri, ignore = "runs green threads")]
fn a_known_workload_is_counted_exactly() {
    fibra::run(|| {
        let before = runtime::metrics();
        assert_eq!(before.green_threads_alive, 1); // this one
        assert_eq!(before.green_threads_parked, 0);
        // Each thread waits PARKS times on a channel of its own: a receive
        // from an empty channel parks, however slow the machine (a short
        // sleep may find its deadline passed already under valgrind, and
        // not park).
        let (senders, threads): (Vec<_>, Vec<_>) = (0..THREADS)
            .map(|_| {
                let (tx, rx) = unbounded::<()>();
                let thread = fibra::spawn(move || {
                    for _ in 0..PARKS {
                        rx.recv().unwrap();
                    }
                });
                (tx, thread)
            })
            .unzip();
        let spawned = runtime::metrics();
        assert_eq!(spawned.spawns - before.spawns, THREADS);
        assert_eq!(spawned.green_threads_alive, 1 + THREADS);
        assert_eq!(spawned.green_threads_ready, THREADS);
        // This thread yields (never parks): until they are all parked, then
        // it sends each one message, PARKS times.
        let mut yields = 0;
        for _ in 0..PARKS {
            while runtime::metrics().green_threads_parked < THREADS {
                runtime::yield_now();
                yields += 1;
            }
            senders.iter().for_each(|tx| tx.send(()).unwrap());
        }
        while !threads.iter().all(|t| t.is_finished()) {
            runtime::yield_now();
            yields += 1;
        }
        let after = runtime::metrics();
        assert_eq!(after.parks - before.parks, THREADS * PARKS);
        assert_eq!(after.yields - before.yields, yields);
        // Each park was ended by a send on this OS thread.
        assert_eq!(after.local_wakes - before.local_wakes, THREADS * PARKS);
        assert_eq!(after.remote_wakes, before.remote_wakes);
        assert_eq!(after.green_threads_alive, 1);
        assert_eq!(after.timers_armed, 0);
        assert!(after.switches - before.switches >= THREADS * (PARKS + 1) + yields);
        assert!(after.passes > before.passes);
        threads.into_iter().for_each(|t| t.join().unwrap());
    });
}

#[test]
#[cfg_attr(miri, ignore = "runs green threads")]
fn wakes_from_other_os_threads_are_counted_apart() {
    fibra::run(|| {
        let before = runtime::metrics();
        for _ in 0..3 {
            // The pool's thread unparks this one: a remote wake, unless the
            // answer came before it parked (then no park, no wake).
            fibra::blocking(|| std::thread::sleep(Duration::from_millis(5)));
        }
        let after = runtime::metrics();
        assert_eq!(
            after.remote_wakes - before.remote_wakes,
            after.parks - before.parks
        );
        assert_eq!(after.local_wakes, before.local_wakes);
    });
}

#[test]
#[cfg_attr(miri, ignore = "runs green threads")]
fn another_os_thread_reads_a_running_runtime() {
    let (handles, handle) = mpsc::channel::<Handle>();
    let (done, finished) = mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        let runtime = handle.recv().unwrap();
        let mut last = RuntimeMetrics::default();
        // Reads while the runtime spawns, until it says it is done.
        while finished.try_recv().is_err() {
            let now = runtime.metrics();
            assert!(now.spawns >= last.spawns && now.parks >= last.parks);
            last = now;
            std::thread::yield_now();
        }
        runtime.metrics()
    });
    fibra::run(move || {
        handles.send(runtime::handle()).unwrap();
        for _ in 0..200 {
            fibra::spawn(|| fibra::time::sleep(Duration::ZERO))
                .join()
                .unwrap();
        }
        done.send(()).unwrap();
    });
    let last = reader.join().unwrap();
    // The runtime has ended: its last counts stay readable.
    assert!(last.spawns >= 200, "{last:?}");
    assert!(last.switches >= 200, "{last:?}");
}

#[test]
#[cfg_attr(miri, ignore = "runs Ractors")]
fn a_ractor_worker_counts_its_ractors() {
    use fibra::ractor::{Context, Pool};
    let pool = Pool::new(1);
    // The only Ractor on the only worker, still running as it asks.
    let counted = pool.spawn(|_: &Context<(), ()>| runtime::metrics().ractors_alive);
    assert_eq!(counted.join().unwrap(), 1);
    fibra::run(|| assert_eq!(runtime::metrics().ractors_alive, 0));
}

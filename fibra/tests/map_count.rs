//! The map-count wall (see `fibra::stack`): where a guard page is made with
//! `mprotect` (Linux before 6.13, qemu-user), each fiber stack costs two
//! memory-map entries of the kernel's `vm.max_map_count`. fibra stops short of
//! the limit with an error that names it, and leaves the rest of the entries
//! to the process, which goes on: it can still allocate, start OS threads and
//! run green threads.
//!
//! One test in this binary, so that no other test holds stacks (and map
//! entries) at the same time.

use fibra::fiber::{self, MIN_STACK_SIZE};
use fibra::ractor::{Context, Pool, Ractor};
use fibra::runtime::{self, JoinHandle};
use fibra::sync::channel;
use std::sync::mpsc;
use std::time::Duration;

/// Lines of `/proc/self/maps`: the process's memory-map entries.
fn map_entries() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .expect("/proc/self/maps is readable")
        .lines()
        .count()
}

/// Spawns `n` green threads that park until `orders` closes, and lets them
/// run once, so that each has taken its stack (or failed to).
fn spawn_parked(orders: &channel::Receiver<()>, n: usize) -> Vec<JoinHandle<()>> {
    let crowd = (0..n)
        .map(|_| {
            let orders = orders.clone();
            fibra::spawn(move || while orders.recv().is_ok() {})
        })
        .collect();
    runtime::yield_now();
    crowd
}

/// Asserts that `text` is the wall's error, as a user sees it.
fn names_the_wall(text: &str) {
    assert!(text.contains("vm.max_map_count"), "{text}");
    assert!(text.contains("no stack for another fiber"), "{text}");
}

#[test]
fn too_many_fibers_for_the_map_count_is_an_error_and_the_process_goes_on() {
    // A Ractor pool whose worker is running (one Ractor has run, and left its
    // stack free in the worker's pool) before the wall is reached.
    let ractors = Pool::with_runtime(1, runtime::Builder::new().stack_size(MIN_STACK_SIZE));
    ractors.spawn(|_: &Context<()>| ()).join().unwrap();

    let walled = runtime::Builder::new()
        .stack_size(MIN_STACK_SIZE)
        .stall_threshold(None)
        .run(|| {
            let (orders, rx) = channel::unbounded::<()>();
            let before = map_entries();
            let mut crowd = spawn_parked(&rx, 1000);
            let grown = map_entries().saturating_sub(before);
            assert!(crowd.iter().all(|t| !t.is_finished()));
            if grown < 1000 {
                // The guards do not split mappings here (MADV_GUARD_INSTALL,
                // Linux 6.13+: a thousand stacks took a few entries): there is
                // no wall to reach, and a test that looked for it would spawn
                // millions of threads for nothing.
                drop(orders);
                crowd.into_iter().for_each(|t| t.join().unwrap());
                return false;
            }
            // Each stack costs two entries here: the wall comes before
            // vm.max_map_count / 2 stacks (or the limit is unreadable, and the
            // kernel's own refusal is the error).
            let limit: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count")
                .ok()
                .and_then(|text| text.trim().parse().ok())
                .unwrap_or(usize::MAX);
            let refused = loop {
                let batch = spawn_parked(&rx, 256);
                let (refused, parked): (Vec<_>, Vec<_>) =
                    batch.into_iter().partition(JoinHandle::is_finished);
                crowd.extend(parked);
                if !refused.is_empty() {
                    break refused;
                }
                assert!(
                    crowd.len() <= limit / 2,
                    "{} stacks and no error, with vm.max_map_count {limit}",
                    crowd.len()
                );
            };
            for thread in refused {
                let err = thread
                    .join()
                    .expect_err("a thread with no stack did not run");
                let text = err.to_string();
                assert!(text.contains("could not start"), "{text}");
                names_the_wall(&text);
            }
            // A fiber made at the wall is refused the same way.
            let err = fiber::Builder::new()
                .stack_size(MIN_STACK_SIZE)
                .build(|_: &fibra::Yielder<(), (), ()>, ()| ())
                .expect_err("no stack past the wall");
            assert_eq!(err.kind(), std::io::ErrorKind::OutOfMemory);
            names_the_wall(&err.to_string());

            // At the wall, the process goes on: memory from malloc (8 MiB, a
            // mapping of its own), an OS thread (its stack and guard, a
            // signal stack), a green thread that reuses a free stack.
            let block = vec![7u8; 8 << 20];
            assert_eq!(
                block.iter().map(|&b| usize::from(b)).sum::<usize>(),
                7 << 23
            );
            let os_thread = std::thread::spawn(|| vec![1u64; 1 << 16].iter().sum::<u64>());
            assert_eq!(os_thread.join().unwrap(), 1 << 16);
            drop(orders);
            let parked = crowd.len();
            crowd.into_iter().for_each(|t| t.join().unwrap());
            assert!(parked > 1000, "{parked}");
            assert_eq!(fibra::spawn(|| 6 * 7).join().unwrap(), 42);
            true
        });
    if !walled {
        return;
    }

    // The crowd's stacks are free in this thread's pool, and still count: a
    // Ractor that needs a new stack ends with the same error, as its remote
    // error; one that finds its worker's free stack runs (and says so).
    let (started, starts) = mpsc::channel();
    let waiting: Vec<Ractor<()>> = (0..4)
        .map(|_| {
            let started = started.clone();
            ractors.spawn(move |ctx: &Context<()>| {
                started.send(()).unwrap();
                while ctx.receive().is_ok() {}
            })
        })
        .collect();
    let mut running = 0;
    while running + waiting.iter().filter(|r| r.is_finished()).count() < waiting.len() {
        running += starts
            .recv_timeout(Duration::from_millis(10))
            .map_or(0, |()| 1);
    }
    assert!(running >= 1, "the worker's free stack was not reused");
    assert!(running < waiting.len(), "no Ractor was refused a stack");
    for ractor in waiting {
        let refused = ractor.is_finished();
        ractor.close_incoming();
        match ractor.join() {
            Err(err) => {
                assert!(refused, "{err}");
                names_the_wall(&err.to_string());
            }
            Ok(()) => assert!(!refused),
        }
    }
}

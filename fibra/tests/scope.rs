//! `fibra::scope`: green threads that borrow from the thread that spawns
//! them. The scope returns only once every one has ended; a panic that
//! nobody joined reaches the scope's caller; a scope whose own thread is
//! cancelled, panics or times out cancels its threads and waits for them
//! before it unwinds; and the scope's thread, whose stack they borrow, is
//! never compacted meanwhile.

#[path = "support/without_hanging.rs"]
mod hang;

use fibra::runtime::{self, Builder, JoinError, RuntimeState, ThreadDump, WaitReason};
use fibra::sync::channel;
use fibra::{Fiber, scope};
use hang::without_hanging;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

#[test]
fn threads_read_a_borrowed_vec_and_write_through_a_mut_split() {
    fibra::run(|| {
        let numbers: Vec<u64> = (1..=100).collect();
        let mut halves = [0u64; 2];
        let (left, right) = halves.split_at_mut(1);
        let total = scope(|s| {
            let (low, high) = numbers.split_at(50);
            s.spawn(|| {
                runtime::yield_now();
                left[0] = low.iter().sum();
            });
            s.spawn(|| {
                fibra::time::sleep(Duration::from_millis(1));
                right[0] = high.iter().sum();
            });
            let counted = s.spawn(|| numbers.len());
            counted.join().unwrap()
        });
        assert_eq!(total, 100);
        assert_eq!(halves, [1275, 3775]);
        assert_eq!(numbers.len(), 100, "only borrowed");
    });
}

#[test]
fn scope_returns_only_once_every_thread_has_ended() {
    fibra::run(|| {
        let ended = Cell::new(0);
        scope(|s| {
            for n in 0..8u64 {
                let ended = &ended;
                s.spawn(move || {
                    fibra::time::sleep(Duration::from_millis(n));
                    // A thread spawned by a thread of the scope counts too.
                    s.spawn(move || {
                        runtime::yield_now();
                        ended.set(ended.get() + 1);
                    });
                    ended.set(ended.get() + 1);
                });
            }
            // None joined, nor waited for here: `scope` waits.
        });
        assert_eq!(ended.get(), 16);
    });
}

#[test]
fn a_panic_that_nobody_joined_reaches_the_scopes_caller_after_the_others_end() {
    fibra::run(|| {
        let finished = Cell::new(false);
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            scope(|s| {
                s.spawn(|| panic!("child boom"));
                s.spawn(|| {
                    fibra::time::sleep(Duration::from_millis(5));
                    finished.set(true);
                });
            })
        }));
        let payload = caught.expect_err("the child's panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"child boom"));
        assert!(finished.get(), "the other thread ended first");
    });
}

#[test]
fn a_joined_panic_is_the_joiners_and_not_the_scopes() {
    fibra::run(|| {
        let value = scope(|s| {
            let failing = s.spawn(|| -> u32 { panic!("joined boom") });
            assert!(matches!(failing.join(), Err(JoinError::Panicked(_))));
            7
        });
        assert_eq!(value, 7);
    });
}

#[test]
fn a_handle_dropped_before_or_after_the_panic_hands_it_to_the_scope() {
    fibra::run(|| {
        for drop_first in [true, false] {
            let caught = panic::catch_unwind(AssertUnwindSafe(|| {
                scope(|s| {
                    let thread = s.spawn(|| {
                        runtime::yield_now();
                        panic!("unjoined boom")
                    });
                    if drop_first {
                        drop(thread); // before it panics
                    } else {
                        while !thread.is_finished() {
                            runtime::yield_now();
                        }
                        drop(thread); // after
                    }
                })
            }));
            let payload = caught.expect_err("the panic reaches the caller");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"unjoined boom"));
        }
    });
}

/// Records, when dropped, that its thread unwound; waits a little first, so
/// that `scope` must wait for destructors that wait.
struct Unwound<'a>(&'a RefCell<Vec<u32>>, u32);

impl Drop for Unwound<'_> {
    fn drop(&mut self) {
        fibra::time::sleep(Duration::from_millis(2));
        self.0.borrow_mut().push(self.1);
    }
}

#[test]
fn cancelling_the_scopes_thread_cancels_its_threads_and_waits_for_them() {
    without_hanging("a cancelled scope", || {
        fibra::run(|| {
            let unwound = Rc::new(RefCell::new(Vec::new()));
            let record = unwound.clone();
            let scoped = fibra::spawn(move || {
                let record = &*record;
                scope(|s| {
                    for n in 0..4 {
                        s.spawn(move || {
                            let _unwound = Unwound(record, n);
                            loop {
                                runtime::park();
                            }
                        });
                    }
                    loop {
                        runtime::park(); // the scope's closure parks for good too
                    }
                })
            });
            fibra::time::sleep(Duration::from_millis(1));
            scoped.cancel();
            assert!(matches!(scoped.join(), Err(JoinError::Cancelled)));
            let mut unwound = unwound.borrow().clone();
            unwound.sort_unstable();
            assert_eq!(
                unwound,
                [0, 1, 2, 3],
                "every thread unwound before the scope's thread ended"
            );
        });
    });
}

#[test]
fn cancelling_the_scopes_thread_while_scope_waits_cancels_its_threads() {
    without_hanging("a scope cancelled in its wait", || {
        fibra::run(|| {
            let unwound = Rc::new(RefCell::new(Vec::new()));
            let record = unwound.clone();
            let scoped = fibra::spawn(move || {
                let record = &*record;
                scope(|s| {
                    s.spawn(move || {
                        let _unwound = Unwound(record, 1);
                        fibra::time::sleep(Duration::from_secs(3600));
                    });
                    // Returns: `scope` waits for the thread, and is cancelled there.
                })
            });
            fibra::time::sleep(Duration::from_millis(1));
            scoped.cancel();
            assert!(matches!(scoped.join(), Err(JoinError::Cancelled)));
            assert_eq!(*unwound.borrow(), [1]);
        });
    });
}

#[test]
fn a_panic_in_the_scopes_closure_cancels_its_threads_first() {
    without_hanging("a scope whose closure panics", || {
        fibra::run(|| {
            let unwound = RefCell::new(Vec::new());
            let caught = panic::catch_unwind(AssertUnwindSafe(|| {
                scope(|s| {
                    let unwound = &unwound;
                    s.spawn(move || {
                        let _unwound = Unwound(unwound, 9);
                        fibra::time::sleep(Duration::from_secs(3600));
                    });
                    runtime::yield_now();
                    panic!("closure boom");
                })
            }));
            let payload = caught.expect_err("the closure's panic goes on");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"closure boom"));
            assert_eq!(*unwound.borrow(), [9]);
        });
    });
}

/// A deadline passes while the scope waits: its parks would all unwind with
/// the expiry, so the wait for the cancelled threads is shielded from it;
/// the threads unwind (or, where the deadline passed before they started —
/// a slow machine, valgrind — never run: what their closures hold is dropped
/// then, on their own stacks), and then the `timeout` returns `Elapsed`.
#[test]
fn a_timeout_around_a_scope_cancels_its_threads_and_waits_for_them() {
    without_hanging("a scope that times out", || {
        fibra::run(|| {
            let unwound = RefCell::new(Vec::new());
            let outcome = fibra::time::timeout(Duration::from_millis(5), || {
                scope(|s| {
                    for n in 0..3 {
                        // Made here, so that it is dropped whether the
                        // thread starts and unwinds or never starts.
                        let held = Unwound(&unwound, n);
                        s.spawn(move || {
                            let _unwound = held;
                            fibra::time::sleep(Duration::from_secs(3600));
                        });
                    }
                })
            });
            assert!(outcome.is_err(), "elapsed");
            let mut unwound = unwound.into_inner();
            unwound.sort_unstable();
            assert_eq!(unwound, [0, 1, 2]);
        });
    });
}

#[test]
fn a_scoped_thread_can_be_cancelled_alone() {
    fibra::run(|| {
        let went_on = Cell::new(false);
        scope(|s| {
            let parked = s.spawn(|| {
                loop {
                    runtime::park();
                }
            });
            s.spawn(|| went_on.set(true));
            runtime::yield_now();
            assert!(!parked.is_finished());
            parked.cancel();
            assert!(matches!(parked.join(), Err(JoinError::Cancelled)));
        });
        assert!(went_on.get());
    });
}

#[test]
fn scopes_nest() {
    fibra::run(|| {
        let mut grid = [[0u32; 4]; 4];
        scope(|outer| {
            for (r, row) in grid.iter_mut().enumerate() {
                outer.spawn(move || {
                    scope(|inner| {
                        for (c, cell) in row.iter_mut().enumerate() {
                            inner.spawn(move || {
                                runtime::yield_now();
                                *cell = (r * 4 + c) as u32;
                            });
                        }
                    })
                });
            }
        });
        let flat: Vec<u32> = grid.iter().flatten().copied().collect();
        assert_eq!(flat, (0..16).collect::<Vec<_>>());
    });
}

#[test]
fn scope_outside_a_runtime_or_inside_a_fiber_panics_with_a_clear_message() {
    let outside = panic::catch_unwind(|| scope(|_| ())).unwrap_err();
    let said = message(&*outside);
    assert!(
        said.contains("must be called from a green thread"),
        "{said}"
    );
    fibra::run(|| {
        let fiber: Fiber<(), (), ()> = Fiber::new(|_, ()| scope(|_| ()));
        let inside = panic::catch_unwind(AssertUnwindSafe(|| fiber.resume(()))).unwrap_err();
        let said = message(&*inside);
        assert!(said.contains("own stack"), "{said}");
    });
}

/// A runtime that compacts every parked thread at the end of each round.
fn compacting() -> Builder {
    // SAFETY: no green thread of this test lends its stack to another OS
    // thread while it parks (the scope's threads are the same OS thread's,
    // and fibra keeps the scope's thread from being compacted).
    unsafe { Builder::new().compact_parked_after(Some(Duration::ZERO)) }
}

/// This runtime's green threads, as a dump lists them.
fn threads() -> Vec<ThreadDump> {
    let dump = runtime::dump();
    let here = std::thread::current().id();
    match dump.runtimes.into_iter().find(|r| r.os_thread_id == here) {
        Some(runtime) => match runtime.state {
            RuntimeState::Threads(threads) => threads,
            other => panic!("this runtime is busy: {other:?}"),
        },
        None => panic!("this runtime is not in its dump"),
    }
}

/// Thread `id` in `threads`.
fn thread(threads: &[ThreadDump], id: u64) -> &ThreadDump {
    threads
        .iter()
        .find(|t| t.id == id)
        .expect("the thread is listed")
}

/// A panic's message.
fn message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or_default()
}

/// The scope's thread parks in `scope` while its threads park in turn, each
/// compacted at every round; they write into its stack between their parks.
/// Were it compacted and restored meanwhile, the restore would put back what
/// it held before they wrote.
#[test]
fn the_scopes_thread_is_never_compacted_while_its_threads_run() {
    compacting().run(|| {
        const THREADS: usize = 4;
        const ROUNDS: u64 = 3;
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..THREADS).map(|_| channel::unbounded::<u64>()).unzip();
        let scoped_id = Rc::new(Cell::new(0));
        let (after, go_after) = channel::unbounded::<()>();
        let scoped = fibra::spawn({
            let scoped_id = scoped_id.clone();
            move || {
                scoped_id.set(runtime::current().id());
                let mut frame = [0u64; THREADS * 16];
                scope(|s| {
                    for (chunk, rx) in frame.chunks_mut(16).zip(receivers) {
                        s.spawn(move || {
                            while let Ok(round) = rx.recv() {
                                chunk.iter_mut().for_each(|word| *word += round);
                            }
                        });
                    }
                });
                // Lent no more: this park is compacted like any other.
                go_after.recv().unwrap();
                frame
            }
        });
        let plain = fibra::spawn(runtime::park);
        for round in 1..=ROUNDS {
            (0..3).for_each(|_| runtime::yield_now());
            // One dump for all: a dump restores the compacted threads it
            // traces (they are compacted again at the next round).
            let all = threads();
            let scoped = thread(&all, scoped_id.get());
            assert!(
                matches!(
                    scoped.state,
                    runtime::ThreadState::Parked {
                        reason: WaitReason::Scope,
                        ..
                    }
                ),
                "{:?}",
                scoped.state
            );
            assert_eq!(
                scoped.compacted, None,
                "round {round}: the lender is not compacted"
            );
            let compacted = all.iter().filter(|t| t.compacted.is_some()).count();
            assert_eq!(compacted, THREADS + 1, "its threads and the plain park are");
            senders.iter().for_each(|tx| tx.send(round).unwrap());
        }
        drop(senders);
        (0..3).for_each(|_| runtime::yield_now());
        let all = threads();
        assert!(
            thread(&all, scoped_id.get()).compacted.is_some(),
            "compacted once scope returned"
        );
        after.send(()).unwrap();
        let frame = scoped.join().unwrap();
        assert!(
            frame.iter().all(|&word| word == (1..=ROUNDS).sum::<u64>()),
            "{frame:?}"
        );
        plain.cancel();
        assert!(plain.join().is_err());
    });
}

//! `green_local!`: each green thread has its own value, made on first use and
//! dropped when the thread ends; outside green threads, one per OS thread.

#[path = "support/without_hanging.rs"]
mod hang;

use fibra::runtime::{self, AccessError, JoinError, ThreadBuilder};
use fibra::time::sleep;
use hang::without_hanging;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fibra::green_local! {
    /// The request a green thread serves.
    static REQUEST_ID: Cell<u64> = Cell::new(0);
    static NAMES: RefCell<Vec<String>> = RefCell::new(vec!["first".to_string()]);
}

#[test]
fn three_green_threads_read_back_their_own_request_ids() {
    let seen = without_hanging("request ids", || {
        fibra::run(|| {
            let handlers: Vec<_> = (1..=3u64)
                .map(|id| {
                    fibra::spawn(move || {
                        REQUEST_ID.set(id);
                        // The first to set its id sleeps longest, so each
                        // reads back after the others have set theirs.
                        sleep(Duration::from_millis(10 * (4 - id)));
                        (id, REQUEST_ID.get())
                    })
                })
                .collect();
            handlers
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        })
    });
    assert_eq!(seen, [(1, 1), (2, 2), (3, 3)]);
}

static MADE: AtomicUsize = AtomicUsize::new(0);

fibra::green_local! {
    static COUNTED: u32 = {
        MADE.fetch_add(1, Ordering::Relaxed);
        7
    };
}

#[test]
fn a_value_is_made_on_first_use_once_per_thread() {
    without_hanging("lazy values", || {
        fibra::run(|| {
            let before = MADE.load(Ordering::Relaxed);
            let idle = fibra::spawn(|| ());
            let users: Vec<_> = (0..3)
                .map(|_| {
                    fibra::spawn(|| {
                        COUNTED.with(|v| assert_eq!(*v, 7));
                        fibra::runtime::yield_now();
                        COUNTED.with(|v| *v)
                    })
                })
                .collect();
            idle.join().unwrap();
            assert!(users.into_iter().all(|u| u.join().unwrap() == 7));
            // One value per thread that used the key, none for the one that
            // did not. (Other tests use other keys.)
            assert_eq!(MADE.load(Ordering::Relaxed) - before, 3);
        });
    });
}

/// Counts its drops, and records whether the thread's keys could be used
/// while it was dropped.
struct Tracked {
    drops: Rc<Cell<u32>>,
    during_end: Rc<Cell<Option<Result<u64, AccessError>>>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.during_end.set(Some(REQUEST_ID.try_with(Cell::get)));
        self.drops.set(self.drops.get() + 1);
    }
}

fibra::green_local! {
    static TRACKED: RefCell<Option<Tracked>> = RefCell::new(None);
}

#[test]
fn a_value_is_dropped_when_its_thread_ends_before_join_returns() {
    without_hanging("drops at the end", || {
        fibra::run(|| {
            let drops = Rc::new(Cell::new(0));
            let during_end = Rc::new(Cell::new(None));
            let ends = |outcome: fn() -> u32| {
                let (drops, during_end) = (drops.clone(), during_end.clone());
                fibra::spawn(move || {
                    TRACKED.set(Some(Tracked { drops, during_end }));
                    sleep(Duration::from_millis(1));
                    outcome()
                })
            };
            let returned = ends(|| 1);
            assert_eq!(returned.join().unwrap(), 1);
            assert_eq!(drops.get(), 1);
            // While its values are dropped, none of the thread's keys works.
            assert!(matches!(during_end.take(), Some(Err(AccessError { .. }))));

            let panicked = ends(|| panic!("a handler failed"));
            assert!(matches!(panicked.join(), Err(JoinError::Panicked(_))));
            assert_eq!(drops.get(), 2);

            let cancelled = ends(|| {
                sleep(Duration::from_secs(3600));
                0
            });
            fibra::runtime::yield_now(); // it sets its value, then sleeps
            cancelled.cancel();
            assert!(matches!(cancelled.join(), Err(JoinError::Cancelled)));
            assert_eq!(drops.get(), 3);
        });
    });
}

/// A destructor that parks: it sleeps, and records how many times a ticker
/// green thread ticked meanwhile.
struct SlowCleanup {
    ticks: Rc<Cell<u32>>,
    ticked_meanwhile: Rc<Cell<Option<u32>>>,
}

impl Drop for SlowCleanup {
    fn drop(&mut self) {
        let before = self.ticks.get();
        sleep(Duration::from_millis(5));
        self.ticked_meanwhile.set(Some(self.ticks.get() - before));
    }
}

fibra::green_local! {
    static CLEANUP: RefCell<Option<SlowCleanup>> = RefCell::new(None);
}

#[test]
fn a_destructor_may_park_and_join_waits_for_it() {
    without_hanging("parking destructor", || {
        fibra::run(|| {
            let ticks = Rc::new(Cell::new(0));
            let ticked_meanwhile = Rc::new(Cell::new(None));
            let ticker = {
                let (ticks, done) = (ticks.clone(), ticked_meanwhile.clone());
                fibra::spawn(move || {
                    while done.get().is_none() {
                        ticks.set(ticks.get() + 1);
                        sleep(Duration::from_millis(1));
                    }
                })
            };
            let worker = {
                let cleanup = SlowCleanup {
                    ticks: ticks.clone(),
                    ticked_meanwhile: ticked_meanwhile.clone(),
                };
                fibra::spawn(move || CLEANUP.set(Some(cleanup)))
            };
            worker.join().unwrap();
            // join returned once the destructor had ended; the ticker's 1 ms
            // sleeps, which began before the destructor's 5 ms one, ran
            // meanwhile.
            assert!(
                ticked_meanwhile.get() > Some(0),
                "{:?}",
                ticked_meanwhile.get()
            );
            ticker.join().unwrap();
        });
    });
}

struct Explodes;

impl Drop for Explodes {
    fn drop(&mut self) {
        panic!("a green-local destructor panicked");
    }
}

fibra::green_local! {
    static EXPLODES: RefCell<Option<Explodes>> = RefCell::new(None);
}

#[test]
fn a_panicking_destructor_is_the_threads_panic() {
    let message = without_hanging("panicking destructor", || {
        fibra::run(|| {
            let thread = fibra::spawn(|| EXPLODES.set(Some(Explodes)));
            thread.join().unwrap_err().to_string()
        })
    });
    assert_eq!(
        message,
        "green thread panicked: a green-local destructor panicked"
    );
}

#[test]
fn outside_a_runtime_the_value_is_per_os_thread() {
    REQUEST_ID.set(10);
    let other = std::thread::spawn(|| {
        assert_eq!(REQUEST_ID.get(), 0, "another OS thread's value is its own");
        REQUEST_ID.set(20);
        REQUEST_ID.get()
    });
    assert_eq!(other.join().unwrap(), 20);
    // A green thread of a runtime on this OS thread has its own value too,
    // and leaves this one alone. (The runtime runs here, since the test is
    // about this OS thread's value; nothing in it waits.)
    let in_green = fibra::run(|| {
        let fresh = REQUEST_ID.get();
        REQUEST_ID.set(30);
        (fresh, REQUEST_ID.get())
    });
    assert_eq!(in_green, (0, 30));
    assert_eq!(REQUEST_ID.get(), 10);
}

#[test]
fn cell_helpers_are_stds() {
    fibra::green_local! {
        static NOT_MADE: Cell<u32> = panic!("set makes the value: the initialiser never runs");
        static COUNT: Cell<u32> = Cell::new(5);
    }
    without_hanging("Cell helpers", || {
        fibra::run(|| {
            NOT_MADE.set(1);
            assert_eq!(NOT_MADE.get(), 1);
            assert_eq!(COUNT.get(), 5);
            assert_eq!(COUNT.replace(6), 5);
            assert_eq!(COUNT.take(), 6);
            assert_eq!(COUNT.get(), 0);
            COUNT.set(9);
            assert_eq!(COUNT.with(Cell::get), 9);
            // Another thread starts from the initialiser.
            assert_eq!(fibra::spawn(|| COUNT.get()).join().unwrap(), 5);
        });
    });
}

#[test]
fn refcell_helpers_are_stds() {
    fibra::green_local! {
        static NOT_MADE: RefCell<Vec<u32>> = panic!("set makes the value: the initialiser never runs");
    }
    without_hanging("RefCell helpers", || {
        fibra::run(|| {
            NOT_MADE.set(vec![1]);
            NOT_MADE.with_borrow_mut(|v| v.push(2));
            assert_eq!(NOT_MADE.with_borrow(Vec::clone), [1, 2]);
            assert_eq!(NOT_MADE.replace(vec![3]), [1, 2]);
            assert_eq!(NOT_MADE.take(), [3]);
            assert!(NOT_MADE.with_borrow(Vec::is_empty));
            NAMES.with_borrow_mut(|names| names.push("second".into()));
            NAMES.set(vec!["replaced".into()]);
            assert_eq!(NAMES.with_borrow(|names| names.join(",")), "replaced");
            assert_eq!(
                fibra::spawn(|| NAMES.with_borrow(|names| names.join(",")))
                    .join()
                    .unwrap(),
                "first"
            );
        });
    });
}

fibra::green_local! {
    /// Not `Send`: a green thread's values never leave its OS thread.
    static SHARED: Rc<Cell<u32>> = Rc::new(Cell::new(0));
    static DERIVED: u32 = SHARED.with(|s| s.get()) + 1;
}

#[test]
fn values_need_not_be_send_and_may_use_other_keys() {
    without_hanging("other keys", || {
        fibra::run(|| {
            SHARED.with(|s| s.set(41));
            assert_eq!(DERIVED.with(|d| *d), 42);
            // A fiber the thread resumes runs as part of it.
            let mut numbers = fibra::Generator::new(|out| out.suspend(SHARED.with(|s| s.get())));
            assert_eq!(numbers.next(), Some(41));
        });
    });
}

#[test]
fn a_value_may_be_used_across_parks_inside_with() {
    without_hanging("with across parks", || {
        fibra::run(|| {
            let threads: Vec<_> = (1..=3)
                .map(|n| {
                    fibra::spawn(move || {
                        NAMES.with(|names| {
                            names.borrow_mut().push(format!("n{n}"));
                            sleep(Duration::from_millis(1));
                            names.borrow().join(",")
                        })
                    })
                })
                .collect();
            let seen: Vec<String> = threads.into_iter().map(|t| t.join().unwrap()).collect();
            assert_eq!(seen, ["first,n1", "first,n2", "first,n3"]);
        });
    });
}

#[test]
fn a_compacted_thread_keeps_its_values() {
    without_hanging("compaction", || {
        // SAFETY: no green thread here lends its stack to another OS thread.
        let builder = unsafe { runtime::Builder::new().compact_parked_after(Some(Duration::ZERO)) };
        builder.run(|| {
            let threads: Vec<_> = (1..=3u64)
                .map(|id| {
                    fibra::spawn(move || {
                        REQUEST_ID.set(id);
                        for _ in 0..3 {
                            sleep(Duration::from_millis(2));
                        }
                        REQUEST_ID.get()
                    })
                })
                .collect();
            let ids: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
            assert_eq!(ids, [1, 2, 3]);
        });
    });
}

#[test]
fn a_ractor_body_has_values_of_its_own() {
    let ids = without_hanging("Ractors", || {
        REQUEST_ID.set(99);
        let ractors: Vec<_> = (1..=3u64)
            .map(|id| {
                fibra::ractor::Ractor::new(move |_: &fibra::ractor::Context<(), ()>| {
                    let fresh = REQUEST_ID.get();
                    REQUEST_ID.set(id);
                    let child = fibra::spawn(|| REQUEST_ID.get()).join().unwrap();
                    (fresh, REQUEST_ID.get(), child)
                })
            })
            .collect();
        ractors
            .into_iter()
            .map(|r| r.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(ids, [(0, 1, 0), (0, 2, 0), (0, 3, 0)]);
}

#[test]
fn named_threads_have_values_too() {
    without_hanging("named threads", || {
        fibra::run(|| {
            REQUEST_ID.set(1);
            let named = ThreadBuilder::new()
                .name("worker")
                .spawn(|| {
                    REQUEST_ID.set(2);
                    sleep(Duration::from_millis(1));
                    REQUEST_ID.get()
                })
                .unwrap();
            assert_eq!(named.join().unwrap(), 2);
            assert_eq!(REQUEST_ID.get(), 1);
        });
    });
}

//! `block_on`: futures woken from the same runtime, from another OS thread,
//! never woken (a deadlock `run` reports), and outside a runtime.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A one-shot slot: the future is pending until someone fills it, and the
/// filler wakes the waker the future left.
#[derive(Default)]
struct Slot {
    value: Option<u32>,
    waker: Option<Waker>,
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Slot>>);

impl Shared {
    fn fill(&self, value: u32) {
        let waker = {
            let mut slot = self.0.lock().unwrap();
            slot.value = Some(value);
            slot.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Future for Shared {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        let mut slot = self.0.lock().unwrap();
        match slot.value.take() {
            Some(value) => Poll::Ready(value),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[test]
fn a_future_woken_by_another_green_thread_parks_only_its_own() {
    let total = fibra::run(|| {
        let shared = Shared::default();
        let filler = shared.clone();
        let ticks = fibra::spawn(move || {
            let mut ticks = 0;
            for _ in 0..5 {
                fibra::time::sleep(Duration::from_millis(1));
                ticks += 1;
            }
            filler.fill(40);
            ticks
        });
        let value = fibra::block_on(shared);
        value + ticks.join().unwrap()
    });
    assert_eq!(total, 45);
}

/// A wake from the waiter's own runtime puts it straight in the run queue: it
/// runs before the waking thread comes back from `yield_now`. (Through the
/// queue that other OS threads use, it would only be seen after that round,
/// and the waker would come back first.)
#[test]
fn a_same_runtime_wake_makes_the_thread_runnable_at_once() {
    let order = fibra::run(|| {
        let order = Rc::new(RefCell::new(Vec::new()));
        let shared = Shared::default();
        let filler = shared.clone();
        let log = order.clone();
        let waiter = fibra::spawn(move || {
            let value = fibra::block_on(shared);
            log.borrow_mut().push(format!("woken with {value}"));
        });
        fibra::runtime::yield_now(); // the waiter polls its future and parks
        filler.fill(9);
        fibra::runtime::yield_now();
        order.borrow_mut().push("filler back".to_string());
        waiter.join().unwrap();
        order.take()
    });
    assert_eq!(order, ["woken with 9", "filler back"]);
}

#[test]
fn a_future_that_wakes_itself_while_polled_is_polled_again() {
    /// Pending `n` times, waking itself each time.
    struct Countdown(u32);
    impl Future for Countdown {
        type Output = &'static str;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'static str> {
            if self.0 == 0 {
                return Poll::Ready("done");
            }
            self.0 -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
    assert_eq!(fibra::run(|| fibra::block_on(Countdown(1000))), "done");
}

#[test]
fn a_future_woken_from_another_runtime_completes() {
    let value = fibra::run(|| {
        let shared = Shared::default();
        let filler = shared.clone();
        // A green thread of a runtime on another OS thread wakes this one.
        let other_runtime = std::thread::spawn(move || {
            fibra::run(move || {
                fibra::time::sleep(Duration::from_millis(5));
                filler.fill(11);
            })
        });
        let value = fibra::block_on(shared);
        fibra::blocking(move || other_runtime.join().unwrap());
        value
    });
    assert_eq!(value, 11);
}

#[test]
fn a_future_woken_from_another_os_thread_completes() {
    let value = fibra::run(|| {
        let shared = Shared::default();
        let filler = shared.clone();
        let os_thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            filler.fill(7);
        });
        let value = fibra::block_on(shared);
        fibra::blocking(move || os_thread.join().unwrap());
        value
    });
    assert_eq!(value, 7);
}

#[test]
fn a_future_never_woken_is_a_deadlock_that_run_reports() {
    let payload = std::panic::catch_unwind(|| {
        fibra::run(|| fibra::block_on(std::future::pending::<()>()));
    })
    .unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("deadlock"), "{message}");
}

#[test]
fn outside_a_runtime_the_os_thread_blocks() {
    let shared = Shared::default();
    let filler = shared.clone();
    let other = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(5));
        filler.fill(3);
    });
    assert_eq!(fibra::block_on(shared), 3);
    other.join().unwrap();
    assert_eq!(fibra::block_on(async { 1 + 1 }), 2);
}

/// A future may wait in fibra inside its poll (a channel receive here): that
/// is an ordinary park of the green thread, with the future pinned below it;
/// the other green threads run meanwhile, another future under `block_on`
/// among them, and each completes when woken, in any order.
#[test]
fn futures_that_wait_in_fibra_inside_their_poll_complete() {
    let values = fibra::run(|| {
        let waiter = |receiver: fibra::sync::channel::Receiver<u32>| {
            fibra::spawn(move || {
                fibra::block_on(async move {
                    let value = receiver.recv().unwrap();
                    async { value + 1 }.await
                })
            })
        };
        let (to_first, first) = fibra::sync::channel::unbounded();
        let (to_second, second) = fibra::sync::channel::unbounded();
        let first = waiter(first);
        let second = waiter(second);
        fibra::runtime::yield_now(); // both park inside their polls
        to_first.send(10).unwrap();
        let one = first.join().unwrap();
        to_second.send(20).unwrap();
        [one, second.join().unwrap()]
    });
    assert_eq!(values, [11, 21]);
}

//! `sync::oneshot` and `sync::watch` between any threads: green threads of
//! two runtimes, plain OS threads, async tasks; closing from either side;
//! timeouts; cancellation. Run under ThreadSanitizer too
//! (`scripts/tsan.sh --test oneshot_watch`).

#[path = "support/without_hanging.rs"]
mod hang;

use fibra::runtime::{JoinError, yield_now};
use fibra::sync::channel::{RecvError, RecvTimeoutError, SendError, TryRecvError};
use fibra::sync::{oneshot, watch};
use fibra::{block_on, spawn};
use hang::without_hanging;
use std::thread;
use std::time::Duration;

fn settle() {
    for _ in 0..8 {
        yield_now();
    }
}

// ---------------------------------------------------------------- oneshot

#[test]
fn a_oneshot_carries_a_value_between_two_runtimes() {
    let got = without_hanging("oneshot between runtimes", || {
        let (tx, rx) = oneshot::channel();
        let sender = thread::spawn(move || {
            fibra::run(move || {
                fibra::time::sleep(Duration::from_millis(1));
                tx.send(String::from("hello")).unwrap();
            })
        });
        let got = fibra::run(move || rx.recv());
        sender.join().unwrap();
        got
    });
    assert_eq!(got.as_deref(), Ok("hello"));
}

#[test]
fn a_sender_dropped_without_sending_is_reported() {
    without_hanging("dropped sender", || {
        let (tx, rx) = oneshot::channel::<u8>();
        let dropper = thread::spawn(move || drop(tx));
        assert_eq!(fibra::run(move || rx.recv()), Err(RecvError));
        dropper.join().unwrap();
    });
    let (tx, mut rx) = oneshot::channel::<u8>();
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    drop(tx);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(60)),
        Err(RecvTimeoutError::Disconnected)
    );
}

#[test]
fn a_send_after_the_receiver_is_gone_hands_the_value_back() {
    let (tx, rx) = oneshot::channel();
    assert!(!tx.is_closed());
    drop(rx);
    assert!(tx.is_closed());
    assert_eq!(tx.send(5), Err(5));
}

#[test]
fn try_recv_and_recv_timeout() {
    let check = || {
        let (tx, mut rx) = oneshot::channel();
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(5)),
            Err(RecvTimeoutError::Timeout)
        );
        tx.send(1).unwrap();
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    };
    check();
    fibra::run(check);
}

#[test]
fn a_oneshot_receiver_is_a_future() {
    let got = without_hanging("oneshot future", || {
        let (tx, rx) = oneshot::channel();
        let sender = thread::spawn(move || tx.send(9).unwrap());
        // Awaited by block_on, on a green thread and outside a runtime.
        let inside = fibra::run(move || block_on(rx));
        sender.join().unwrap();
        let (tx, rx) = oneshot::channel::<u8>();
        let dropper = thread::spawn(move || drop(tx));
        let outside = block_on(rx);
        dropper.join().unwrap();
        (inside, outside)
    });
    assert_eq!(got, (Ok(9), Err(RecvError)));
}

#[test]
fn a_cancelled_receiver_leaves_the_sender_able_to_send() {
    fibra::run(|| {
        let (tx, rx) = oneshot::channel::<u8>();
        let receiving = spawn(move || rx.recv());
        settle();
        receiving.cancel();
        assert!(matches!(receiving.join(), Err(JoinError::Cancelled)));
        assert!(tx.is_closed(), "the receiver went with its thread");
        assert_eq!(tx.send(1), Err(1));
    });
}

// ---------------------------------------------------------------- watch

#[test]
fn watchers_on_other_runtimes_see_the_latest_value_and_the_close() {
    const VALUES: u32 = 200;
    let finals = without_hanging("watch between runtimes", || {
        let (tx, rx) = watch::channel(0u32);
        let watchers: Vec<_> = (0..3)
            .map(|_| {
                let mut rx = rx.clone();
                thread::spawn(move || {
                    fibra::run(move || {
                        let mut last = *rx.borrow_and_update();
                        while rx.changed().is_ok() {
                            let now = *rx.borrow_and_update();
                            assert!(now > last, "values only move forward: {last} then {now}");
                            last = now;
                        }
                        last
                    })
                })
            })
            .collect();
        drop(rx);
        fibra::run(move || {
            for v in 1..=VALUES {
                tx.send(v).unwrap();
                if v % 10 == 0 {
                    fibra::time::sleep(Duration::from_micros(100));
                }
            }
            // Dropped here: the watchers' loops end once they have seen the last.
        });
        watchers
            .into_iter()
            .map(|w| w.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(finals, [VALUES; 3]);
}

#[test]
fn has_changed_borrow_and_update_and_subscribe() {
    let (tx, mut rx) = watch::channel(String::from("a"));
    assert_eq!(rx.has_changed(), Ok(false));
    assert_eq!(tx.receiver_count(), 1);
    tx.send_modify(|s| s.push('b'));
    assert_eq!(rx.has_changed(), Ok(true));
    assert_eq!(*rx.borrow(), "ab");
    assert_eq!(rx.has_changed(), Ok(true), "borrow does not mark it seen");
    assert_eq!(*rx.borrow_and_update(), "ab");
    assert_eq!(rx.has_changed(), Ok(false));
    let late = tx.subscribe();
    assert_eq!(
        late.has_changed(),
        Ok(false),
        "a new receiver has seen the value"
    );
    assert_eq!(tx.receiver_count(), 2);
    let copy = rx.clone();
    assert_eq!(tx.receiver_count(), 3);
    assert_eq!(tx.send_replace(String::from("c")), "ab");
    assert_eq!(*tx.borrow(), "c");
    assert!(copy.has_changed().unwrap() && late.has_changed().unwrap());
    drop(tx);
    // The last value is still there to see; after it, the close.
    assert_eq!(rx.changed(), Ok(()));
    assert_eq!(*rx.borrow(), "c");
    assert_eq!(rx.changed(), Err(RecvError));
    assert_eq!(rx.has_changed(), Err(RecvError));
}

#[test]
fn a_send_with_no_receiver_left_hands_the_value_back() {
    let (tx, rx) = watch::channel(1);
    drop(rx);
    assert!(tx.is_closed());
    assert_eq!(tx.send(2), Err(SendError(2)));
    assert_eq!(*tx.borrow(), 1);
    // send_replace sets it regardless, for receivers subscribed later.
    assert_eq!(tx.send_replace(3), 1);
    assert_eq!(*tx.subscribe().borrow(), 3);
}

#[test]
fn a_plain_os_thread_waits_for_a_change_from_a_green_thread() {
    let seen = without_hanging("watch to an OS thread", || {
        let (tx, mut rx) = watch::channel(false);
        let setter = thread::spawn(move || {
            fibra::run(move || {
                fibra::time::sleep(Duration::from_millis(1));
                tx.send(true).unwrap();
            })
        });
        rx.changed().unwrap();
        let seen = *rx.borrow();
        setter.join().unwrap();
        seen
    });
    assert!(seen);
}

#[test]
fn a_cancelled_watcher_leaves_nothing_behind() {
    fibra::run(|| {
        let (tx, rx) = watch::channel(0);
        let watchers: Vec<_> = (0..3)
            .map(|_| {
                let mut rx = rx.clone();
                spawn(move || rx.changed())
            })
            .collect();
        settle();
        let mut watchers = watchers.into_iter();
        let cancelled = watchers.next().unwrap();
        cancelled.cancel();
        assert!(matches!(cancelled.join(), Err(JoinError::Cancelled)));
        tx.send(1).unwrap();
        for w in watchers {
            assert_eq!(w.join().unwrap(), Ok(()));
        }
        assert_eq!(tx.receiver_count(), 1);
    });
}

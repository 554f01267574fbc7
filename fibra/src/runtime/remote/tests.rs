//! The remote queue's own tests: wakes beyond the ring, after the end, and
//! the sleeping handshake with a real poller (the model checker's are in
//! `model_check.rs`).

use super::*;
use crate::runtime::ring::SLOTS;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn remote() -> (mio::Poll, Remote) {
    let poll = mio::Poll::new().unwrap();
    let waker = mio::Waker::new(poll.registry(), mio::Token(0)).unwrap();
    (poll, Remote::new(waker))
}

fn id(index: usize) -> TaskId {
    TaskId {
        index,
        serial: index as u64 + 1,
    }
}

/// More wakes than the ring holds between two takes: the rest go to the
/// overflow list, and every one is taken.
#[test]
#[cfg_attr(miri, ignore = "epoll")]
fn wakes_beyond_the_ring_overflow_and_none_is_lost() {
    let (_poll, remote) = remote();
    let remote = Arc::new(remote);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let remote = remote.clone();
            std::thread::spawn(move || (0..100).for_each(|i| remote.push(id(t * 100 + i))))
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    assert!(remote.pending());
    let mut taken = Vec::new();
    remote.take(&mut taken);
    let mut indexes: Vec<usize> = taken.iter().map(|t| t.index).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, (0..400).collect::<Vec<_>>());
    assert!(!remote.pending());
}

fn overflowed(remote: &Remote) -> usize {
    remote.overflow.lock().unwrap().ids.len()
}

/// One thread woken again and again while the ring is full: it is queued
/// once, however many wakes come before the runtime takes them.
#[test]
#[cfg_attr(miri, ignore = "epoll")]
fn repeated_wakes_of_one_thread_take_one_entry() {
    let (_poll, remote) = remote();
    (0..SLOTS).for_each(|i| remote.push(id(i)));
    (0..10_000).for_each(|_| remote.push(id(1_000)));
    assert_eq!(overflowed(&remote), 1);
    let mut taken = Vec::new();
    remote.take(&mut taken);
    assert_eq!(taken.len(), SLOTS + 1);
    // Taken: the next wake of that thread is queued again.
    (0..SLOTS).for_each(|i| remote.push(id(i)));
    remote.push(id(1_000));
    assert_eq!(overflowed(&remote), 1);
}

/// Once the runtime has ended, wakes are dropped: what is queued is
/// freed, and nothing beyond the ring is queued again.
#[test]
#[cfg_attr(miri, ignore = "epoll")]
fn wakes_after_the_end_are_dropped() {
    let (_poll, remote) = remote();
    (0..SLOTS + 10).for_each(|i| remote.push(id(i)));
    assert_eq!(overflowed(&remote), 10);
    remote.end();
    assert_eq!(overflowed(&remote), 0);
    (0..10_000).for_each(|i| remote.push(id(i)));
    assert_eq!(overflowed(&remote), 0);
}

/// A runtime that waits only for an `Unparker` held elsewhere does not
/// sleep once none is held, and is woken from its sleep by the drop of
/// the last one.
#[test]
#[cfg_attr(miri, ignore = "epoll")]
fn the_last_unparker_dropped_wakes_a_runtime_that_waits_for_it() {
    let (mut poll, remote) = remote();
    let remote = Arc::new(remote);
    assert!(!remote.held_outside());
    assert!(!remote.prepare_to_sleep(true), "nothing is held: no sleep");
    assert!(
        remote.prepare_to_sleep(false),
        "it waits for something else"
    );
    remote.woke_up();
    let first = Outside::new(&remote);
    let second = first.clone();
    assert!(remote.held_outside());
    assert!(remote.prepare_to_sleep(true));
    std::thread::spawn(move || {
        drop(first);
        drop(second);
    });
    let mut events = mio::Events::with_capacity(4);
    poll.poll(&mut events, Some(Duration::from_secs(60)))
        .unwrap();
    assert!(!events.is_empty(), "the last drop wrote the eventfd");
    remote.woke_up();
    assert!(!remote.held_outside());
}

/// A runtime about to sleep with a wake pending stays awake; one that
/// sleeps is written to, and is not once awake.
#[test]
#[cfg_attr(miri, ignore = "epoll")]
fn a_pending_wake_keeps_the_runtime_awake() {
    let (mut poll, remote) = remote();
    remote.push(id(1));
    assert!(!remote.prepare_to_sleep(false), "a wake is pending");
    let mut taken = Vec::new();
    remote.take(&mut taken);
    assert!(remote.prepare_to_sleep(false));
    remote.push(id(2));
    // The push saw `sleeping` and wrote the eventfd: the poll returns.
    let mut events = mio::Events::with_capacity(4);
    poll.poll(&mut events, Some(Duration::from_secs(10)))
        .unwrap();
    assert!(!events.is_empty());
    remote.woke_up();
    remote.take(&mut taken);
    assert_eq!(taken.len(), 2);
}

/// The Dekker pair under stress: a consumer that sleeps in the poller
/// whenever the queue looks empty, and a producer that pushes one id at a
/// time and waits for it to be taken. A lost wake shows as a poll that
/// sleeps its whole (long) timeout.
#[test]
#[cfg_attr(miri, ignore = "epoll")]
fn a_runtime_about_to_sleep_never_sleeps_through_a_push() {
    use std::sync::atomic::AtomicUsize;
    let rounds: usize = 20_000;
    let (mut poll, remote) = remote();
    let remote = Arc::new(remote);
    let taken = Arc::new(AtomicUsize::new(0));
    let producer = {
        let (remote, taken) = (remote.clone(), taken.clone());
        std::thread::spawn(move || {
            for i in 0..rounds {
                remote.push(id(i));
                while taken.load(Ordering::Acquire) <= i {
                    std::hint::spin_loop();
                }
            }
        })
    };
    let mut events = mio::Events::with_capacity(4);
    let mut ids = Vec::new();
    let mut got = 0;
    while got < rounds {
        if remote.prepare_to_sleep(false) {
            let start = Instant::now();
            poll.poll(&mut events, Some(Duration::from_secs(5)))
                .unwrap();
            assert!(
                start.elapsed() < Duration::from_secs(4),
                "slept through a wake after {got} ids"
            );
            remote.woke_up();
        }
        remote.take(&mut ids);
        got += ids.len();
        ids.clear();
        taken.store(got, Ordering::Release);
    }
    producer.join().unwrap();
}

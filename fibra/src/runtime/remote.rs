//! Waking a green thread from another OS thread.
//!
//! Other threads cannot touch a runtime's run queue (it is not shared), so an
//! [`Unparker`] puts the thread's id in the runtime's *remote queue*; the
//! runtime moves the ids to its run queue the next time round its loop.
//!
//! # The remote queue
//!
//! A lock-free ring (`ring.rs`): an unpark takes one read-modify-write on its
//! tail and one store in a slot, and the runtime's "is anything pending?" is
//! a load of the slot at its head — the very cache line the producer wrote —
//! so an idle runtime that spins for a wake spins on the line the wake
//! arrives in. When the ring is full (more wakes than it has slots between two
//! turns of the loop) ids go to a locked overflow list instead, so no wake is
//! ever dropped.
//!
//! # Sleeping without losing a wake
//!
//! Waking the runtime's poller costs a system call on each side (an eventfd
//! write, an epoll return), so it is done only when the runtime is asleep in
//! the poller. `sleeping` and the queue form a Dekker pair:
//!
//! - the producer publishes its id, then a sequentially consistent fence, then
//!   reads `sleeping`, and writes the eventfd only if it is set;
//! - the runtime sets `sleeping`, then a sequentially consistent fence, then
//!   looks at the queue, and sleeps only if it is empty.
//!
//! The two fences are ordered one way or the other in the single total order
//! of sequentially consistent operations: if the producer's comes first, the
//! runtime's look at the queue (after its fence) sees the id; if the runtime's
//! comes first, the producer's read of `sleeping` (after its fence) sees
//! `true` and the eventfd is written. Either way the wake is not lost. A
//! runtime that is awake never has `sleeping` set, so producers only read
//! that line (it stays shared in every cache) and write no eventfd: waking an
//! awake runtime costs no system call and no lock. `tests/cross_thread.rs`
//! (`sleeping_receivers_never_miss_a_wake`) drives this hard.
//!
//! Before sleeping, an idle runtime spins for a few microseconds on the head
//! slot (see the scheduler), so that a wake from another core costs no system
//! call. A green thread that waits for a Ractor message spins first, in its
//! own `receive` (`spin.rs`), so that between two chatty Ractors no wake is
//! needed at all; it stops as soon as this ring has a wake for another thread.

use super::ring::Ring;
use super::task::TaskId;
use crossbeam_utils::CachePadded;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

pub(super) struct Remote {
    ring: Ring<TaskId>,
    /// Ids that found the ring full, and whether there are any.
    overflow: Mutex<Vec<TaskId>>,
    overflowed: AtomicBool,
    /// Set while the runtime sleeps in its poller (or is about to). Written
    /// only around a sleep, so awake, it is a line every core keeps shared.
    sleeping: CachePadded<AtomicBool>,
    waker: mio::Waker,
}

impl Remote {
    pub(super) fn new(waker: mio::Waker) -> Remote {
        Remote {
            ring: Ring::new(),
            overflow: Mutex::new(Vec::new()),
            overflowed: AtomicBool::new(false),
            sleeping: CachePadded::new(AtomicBool::new(false)),
            waker,
        }
    }

    /// Queues `task` (from any thread); then wakes the poller if the runtime
    /// sleeps there (see the module docs for why no wake is lost).
    fn push(&self, task: TaskId) {
        if !self.ring.push(task) {
            self.overflow
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(task);
            self.overflowed.store(true, Ordering::Release);
        }
        // The producer's half of the Dekker pair.
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) {
            // Failure means the runtime's poller is gone: nobody is left to wake.
            let _ = self.waker.wake();
        }
    }

    /// Whether an unpark is waiting to be taken (consumer only).
    pub(super) fn pending(&self) -> bool {
        self.ring.is_ready() || self.overflowed.load(Ordering::Acquire)
    }

    /// The ids woken since the last call (the runtime's own thread only).
    pub(super) fn take(&self, into: &mut Vec<TaskId>) {
        self.ring.pop_all(into);
        if self.overflowed.swap(false, Ordering::Acquire) {
            into.append(&mut self.overflow.lock().unwrap_or_else(PoisonError::into_inner));
        }
    }

    /// Spins for up to `limit` waiting for an unpark; returns whether one came.
    pub(super) fn spin(&self, limit: Duration) -> bool {
        let start = Instant::now();
        loop {
            for _ in 0..64 {
                if self.pending() {
                    return true;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= limit {
                return false;
            }
        }
    }

    /// Announces that the runtime is about to sleep in its poller; returns false
    /// (and stays awake) if an unpark is already pending.
    pub(super) fn prepare_to_sleep(&self) -> bool {
        // The runtime's half of the Dekker pair (see the module docs).
        self.sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.pending() {
            self.sleeping.store(false, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// The runtime is back from its poller: producers need not write the
    /// eventfd any more. (It takes the queue after this, so an id pushed
    /// meanwhile is not left behind.)
    pub(super) fn woke_up(&self) {
        self.sleeping.store(false, Ordering::Relaxed);
    }
}

/// Wakes one parked green thread from any OS thread (the counterpart of
/// [`std::thread::Thread::unpark`]): the thread's next or pending
/// [`park`](super::park) returns. Cloneable, `Send` and `Sync`.
///
/// Get one with [`Thread::unparker`](super::Thread::unparker). Unparking a
/// thread that has finished, or whose runtime has ended, does nothing.
/// Unparking takes no lock, and makes a system call only when the thread's
/// runtime is asleep with nothing else to do.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
///
/// fibra::run(|| {
///     let done = Arc::new(AtomicBool::new(false));
///     let unparker = fibra::runtime::current().unparker();
///     let flag = done.clone();
///     std::thread::spawn(move || {
///         flag.store(true, Ordering::Release);
///         unparker.unpark();
///     });
///     while !done.load(Ordering::Acquire) {
///         fibra::runtime::park(); // only this green thread waits; the OS thread is free
///     }
/// });
/// ```
#[derive(Clone)]
pub struct Unparker {
    pub(super) remote: Arc<Remote>,
    pub(super) task: TaskId,
}

impl Unparker {
    /// Makes the green thread runnable if it is parked, or makes its next
    /// [`park`](super::park) return at once if it is not.
    pub fn unpark(&self) {
        self.remote.push(self.task);
    }
}

impl fmt::Debug for Unparker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unparker")
            .field("thread", &self.task)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A runtime about to sleep with a wake pending stays awake; one that
    /// sleeps is written to, and is not once awake.
    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn a_pending_wake_keeps_the_runtime_awake() {
        let (mut poll, remote) = remote();
        remote.push(id(1));
        assert!(!remote.prepare_to_sleep(), "a wake is pending");
        let mut taken = Vec::new();
        remote.take(&mut taken);
        assert!(remote.prepare_to_sleep());
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
            if remote.prepare_to_sleep() {
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
}

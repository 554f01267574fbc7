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
//! ever dropped — each thread at most once, so that the list is bounded by
//! the threads woken, however fast another OS thread unparks. Once the
//! runtime has ended, nobody takes wakes any more: those the ring cannot
//! hold are dropped, not listed (an `Unparker` may outlive its runtime).
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
//!
//! # Errands
//!
//! What another OS thread asks of the runtime itself — to start a green
//! thread ([`Handle::spawn`](super::Handle::spawn)), to cancel one
//! ([`RemoteJoinHandle::cancel`](super::RemoteJoinHandle::cancel)) — is an
//! *errand*: a closure queued under a lock beside the ring, announced by a
//! wake of its own in the ring (`TaskId::ERRANDS`), so that it reaches a
//! sleeping or spinning runtime exactly as an unpark does, and the runtime's
//! loop runs it on its own OS thread. The queue is pushed to under its lock
//! before the wake is, so the runtime that takes the wake finds the errand
//! when it takes the queue under that lock. When the runtime ends it closes
//! the queue: an errand sent after that is handed back, and those still
//! queued are dropped — nothing is left queued where nobody will run it.

use super::ring::Ring;
use super::task::TaskId;
use crate::sync_prims::{AtomicBool, AtomicUsize, Mutex, fence};
use crossbeam_utils::CachePadded;
use std::collections::HashSet;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

pub(super) struct Remote {
    ring: Ring<TaskId>,
    /// Ids that found the ring full, whether there are any, and whether the
    /// runtime has ended.
    overflow: Mutex<Overflow>,
    overflowed: AtomicBool,
    /// How many [`Outside`] references there are (the `Unparker`s): none
    /// left, with nothing else to wait for, is a deadlock. A line of its
    /// own: other OS threads write it as they clone and drop `Unparker`s,
    /// and the runtime's spin for a wake reads `overflowed`.
    outside: CachePadded<AtomicUsize>,
    /// Set while the runtime sleeps in its poller (or is about to). Written
    /// only around a sleep, so awake, it is a line every core keeps shared.
    sleeping: CachePadded<AtomicBool>,
    waker: Waker,
    /// The errands other OS threads queued (see the module docs).
    errands: Mutex<Errands>,
}

/// Work for the runtime's loop, from another OS thread: it runs on the
/// runtime's OS thread, between green threads, where that runtime is the
/// current one (`scheduler::current()` is it; see the module docs).
pub(super) type Errand = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Errands {
    queue: Vec<Errand>,
    /// The runtime is ending: it takes no more.
    closed: bool,
}

/// The wakes that found the ring full, each thread once: a thread woken
/// twice before the runtime takes its wakes runs once either way (it is
/// parked or ready then, never running: the runtime takes wakes from its own
/// loop), so a second id would only cost memory — and a loop that unparks
/// one thread faster than its runtime takes wakes would grow the list
/// without bound. Bounded by the threads that were woken, then.
#[derive(Default)]
struct Overflow {
    ids: Vec<TaskId>,
    queued: HashSet<TaskId>,
    /// The runtime has ended: wakes are dropped, not queued (nobody would
    /// ever take them).
    ended: bool,
}

/// What the runtime's poller is woken with: the eventfd (for the model
/// checker, a flag that its model of a sleep waits on).
#[cfg(not(fibra_loom))]
type Waker = mio::Waker;
#[cfg(fibra_loom)]
type Waker = model_check::Poller;

impl Remote {
    #[cfg(not(fibra_loom))]
    pub(super) fn new(waker: mio::Waker) -> Remote {
        Remote::with_waker(waker)
    }

    /// (Never called under the model checker: it builds no runtime.)
    #[cfg(fibra_loom)]
    pub(super) fn new(_: mio::Waker) -> Remote {
        Remote::with_waker(Waker::default())
    }

    fn with_waker(waker: Waker) -> Remote {
        Remote {
            ring: Ring::new(),
            overflow: Mutex::new(Overflow::default()),
            overflowed: AtomicBool::new(false),
            outside: CachePadded::new(AtomicUsize::new(0)),
            sleeping: CachePadded::new(AtomicBool::new(false)),
            waker,
            errands: Mutex::new(Errands::default()),
        }
    }

    /// Queues `task` (from any thread); then wakes the poller if the runtime
    /// sleeps there (see the module docs for why no wake is lost). Once the
    /// runtime has ended, the wake is dropped instead (but for what fits in
    /// the ring: a wake that finds room there costs no look at whether the
    /// runtime has ended, and a full ring is not memory that grows).
    pub(super) fn push(&self, task: TaskId) {
        if !self.ring.push(task) {
            let mut overflow = self.overflow.lock().unwrap_or_else(PoisonError::into_inner);
            if overflow.ended {
                return;
            }
            if overflow.queued.insert(task) {
                overflow.ids.push(task);
            }
            // Under the lock, as the runtime's clearing: so the flag is set
            // whenever the list holds an id.
            self.overflowed.store(true, Ordering::Release);
        }
        self.wake_if_sleeping();
    }

    /// Writes the eventfd if the runtime sleeps in its poller; after a
    /// change the runtime must see (the producer's half of the Dekker pair).
    fn wake_if_sleeping(&self) {
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
        // A load, and the clearing under the lock, where the producers set
        // it: a swap here against their store let the model checker lose a
        // wake (`unparks_from_two_threads`: an id left in the list with the
        // flag cleared). That is loom's known fault with a store concurrent
        // with a swap (tokio-rs/loom#254), not a C11 outcome, but this way
        // has no such pair, and the runtime's take makes no read-modify-write.
        if self.overflowed.load(Ordering::Acquire) {
            let mut overflow = self.overflow.lock().unwrap_or_else(PoisonError::into_inner);
            self.overflowed.store(false, Ordering::Relaxed);
            overflow.queued.clear();
            into.append(&mut overflow.ids);
        }
    }

    /// Whether an [`Unparker`] is left anywhere (then it may wake a thread).
    /// If not, every unpark the dropped ones made is visible to [`take`](Self::take)
    /// (their drops' release pairs with this acquire).
    pub(super) fn held_outside(&self) -> bool {
        self.outside.load(Ordering::Acquire) != 0
    }

    /// The runtime has ended: from now on a wake that finds the ring full is
    /// dropped, and those queued are freed.
    pub(super) fn end(&self) {
        let mut overflow = self.overflow.lock().unwrap_or_else(PoisonError::into_inner);
        overflow.ended = true;
        overflow.ids = Vec::new();
        overflow.queued = HashSet::new();
    }

    /// Queues `errand` for the runtime's loop and wakes the runtime as an
    /// unpark does (see the module docs); hands it back if the runtime is
    /// ending or has ended.
    pub(super) fn send_errand(&self, errand: Errand) -> Result<(), Errand> {
        {
            let mut errands = self.errands.lock().unwrap_or_else(PoisonError::into_inner);
            if errands.closed {
                return Err(errand);
            }
            errands.queue.push(errand);
        }
        self.push(TaskId::ERRANDS);
        Ok(())
    }

    /// The errands queued since the last call (the runtime's own thread,
    /// when it finds `TaskId::ERRANDS` among its wakes).
    pub(super) fn take_errands(&self) -> Vec<Errand> {
        let mut errands = self.errands.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut errands.queue)
    }

    /// The runtime is ending: from now on an errand is handed back to its
    /// sender. Returns those still queued, for the caller to drop once the
    /// lock is released (an errand holds a closure of the program's, whose
    /// drop may do anything, send an errand included).
    #[must_use = "the errands returned are to be dropped outside the lock"]
    pub(super) fn close_errands(&self) -> Vec<Errand> {
        let mut errands = self.errands.lock().unwrap_or_else(PoisonError::into_inner);
        errands.closed = true;
        std::mem::take(&mut errands.queue)
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
    /// (and stays awake) if an unpark is already pending — or, where
    /// `until_unheld` (the runtime found an `Unparker` held, and has nothing
    /// else to wait for), if none is held any more: the loop must go round
    /// and report the deadlock rather than sleep through it.
    pub(super) fn prepare_to_sleep(&self, until_unheld: bool) -> bool {
        // The runtime's half of the Dekker pair (see the module docs).
        self.sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.pending() || (until_unheld && !self.held_outside()) {
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
/// thread that has finished, or whose runtime has ended, does nothing (and
/// keeps no memory: an `Unparker` may outlive its runtime).
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
    pub(super) remote: Outside,
    pub(super) task: TaskId,
}

/// A reference to a runtime's remote queue from outside its loop — what an
/// [`Unparker`] holds — counted in [`Remote::held_outside`]: while one is
/// left, a runtime with nothing else to wait for sleeps rather than report a
/// deadlock, since the holder may unpark a thread.
///
/// So dropping the last one must wake a runtime asleep for that reason, or
/// it would sleep for ever. Its drop is the other half of a Dekker pair like
/// the unpark's (see the module docs): it decrements the count, then a
/// sequentially consistent fence, then reads `sleeping`, and writes the
/// eventfd only if it is set; the runtime sets `sleeping`, then its fence,
/// then reads the count (`prepare_to_sleep`), and sleeps only if an
/// `Outside` is left. Only the last drop of all, and only while the runtime
/// sleeps, costs a system call; every other drop is the decrement alone.
pub(super) struct Outside(Arc<Remote>);

impl Outside {
    pub(super) fn new(remote: &Arc<Remote>) -> Outside {
        // Relaxed, as `Arc::clone`: a count of zero matters only to the
        // runtime, and only its own OS thread makes the first one.
        remote.outside.fetch_add(1, Ordering::Relaxed);
        Outside(remote.clone())
    }
}

impl Clone for Outside {
    fn clone(&self) -> Outside {
        Outside::new(&self.0)
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        // Release: the unparks made through this one are seen by the
        // runtime that sees the count (`held_outside`'s acquire).
        if self.0.outside.fetch_sub(1, Ordering::Release) == 1 {
            self.0.wake_if_sleeping();
        }
    }
}

impl Deref for Outside {
    type Target = Arc<Remote>;

    fn deref(&self) -> &Arc<Remote> {
        &self.0
    }
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

#[cfg(all(test, not(fibra_loom)))]
mod tests {
    use super::*;
    use crate::runtime::ring::SLOTS;

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
}

/// The model checker's view of the remote queue (built with `--cfg
/// fibra_loom`; `scripts/model-check.sh` runs it): the real `Remote`, `Ring`
/// and `Unparker`, with loom's atomics, lock and cell (`sync_prims.rs`), a
/// poller modelled as a flag that a sleeping runtime waits on, and the
/// runtime's loop reduced to its calls on the queue.
#[cfg(fibra_loom)]
pub(crate) mod model_check {
    #[cfg(test)]
    use super::{Outside, Remote, TaskId, Unparker};
    use loom::sync::{Condvar, Mutex};
    #[cfg(test)]
    use std::sync::Arc;

    /// The poller's eventfd: a wake sets the flag, a sleep waits until it is
    /// set and clears it. A runtime that sleeps through a wake therefore
    /// waits with nothing left to wake it, which loom reports as a deadlock.
    #[derive(Default)]
    pub(crate) struct Poller {
        written: Mutex<bool>,
        changed: Condvar,
    }

    impl Poller {
        pub(super) fn wake(&self) -> std::io::Result<()> {
            *self.written.lock().unwrap() = true;
            self.changed.notify_one();
            Ok(())
        }

        #[cfg(test)]
        fn sleep(&self) {
            let mut written = self.written.lock().unwrap();
            while !*written {
                written = self.changed.wait(written).unwrap();
            }
            *written = false;
        }
    }

    /// A runtime, reduced to what its loop does with the remote queue
    /// (`Scheduler::run_until`, `wait_for_events`, `nobody_else_can_wake`,
    /// the same calls in the same order), and waiting for nothing else: no
    /// timer, no socket, so that it sleeps whenever the queue is empty.
    #[cfg(test)]
    pub(crate) struct Runtime {
        remote: Arc<Remote>,
    }

    #[cfg(test)]
    impl Runtime {
        pub(crate) fn new() -> Runtime {
            Runtime {
                remote: Arc::new(Remote::with_waker(Poller::default())),
            }
        }

        /// An `Unparker` of this runtime's thread number `index`.
        pub(crate) fn unparker(&self, index: usize) -> Unparker {
            Unparker {
                remote: Outside::new(&self.remote),
                task: id(index),
            }
        }

        /// Runs the loop until no `Unparker` is left (where the scheduler
        /// reports a deadlock, its threads all parked), sleeping whenever
        /// the queue is empty; returns every id it took, in order.
        pub(crate) fn run(&self) -> Vec<usize> {
            self.run_with_errands().0
        }

        /// [`run`](Self::run), taking errands as `take_remote_wakes` does
        /// (whenever `TaskId::ERRANDS` is among the wakes taken); returns
        /// the ids of threads it took and how many errands.
        pub(crate) fn run_with_errands(&self) -> (Vec<usize>, usize) {
            let mut taken = Vec::new();
            let mut errands = 0;
            let mut take = |taken: &mut Vec<TaskId>| {
                let before = taken.len();
                self.remote.take(taken);
                if taken[before..].contains(&TaskId::ERRANDS) {
                    errands += self.remote.take_errands().len();
                }
            };
            loop {
                take(&mut taken);
                if !self.remote.held_outside() {
                    // `nobody_else_can_wake`: every unpark made is visible.
                    take(&mut taken);
                    let threads = taken
                        .iter()
                        .filter(|&&task| task != TaskId::ERRANDS)
                        .map(|task| task.index)
                        .collect();
                    return (threads, errands);
                }
                if self.remote.prepare_to_sleep(true) {
                    self.remote.waker.sleep();
                    self.remote.woke_up();
                }
            }
        }

        /// Sends an errand, as `Handle::spawn` does; returns whether it was
        /// queued (not refused).
        pub(crate) fn send_errand(&self) -> bool {
            self.remote.send_errand(Box::new(|| {})).is_ok()
        }

        /// Closes the errand queue, as the runtime's shutdown does; returns
        /// how many errands it dropped.
        pub(crate) fn close_errands(&self) -> usize {
            self.remote.close_errands().len()
        }

        /// Ends the runtime (`Scheduler::drop`).
        pub(crate) fn end(&self) {
            self.remote.end();
        }

        /// The wakes kept beyond the ring.
        pub(crate) fn overflowed(&self) -> usize {
            self.remote.overflow.lock().unwrap().ids.len()
        }
    }

    #[cfg(test)]
    fn id(index: usize) -> TaskId {
        TaskId {
            index,
            serial: index as u64 + 1,
        }
    }

    /// How many times loom may preempt a thread in one interleaving, unless
    /// `LOOM_MAX_PREEMPTIONS` says otherwise: every interleaving with at
    /// most this many preemptions is explored (tokio's CI runs its loom
    /// tests with 2; bugs of lost wakes need one or two). Unbounded, the
    /// models with three threads run for hours on two cores.
    #[cfg(test)]
    const PREEMPTIONS: usize = 2;

    /// Runs `model` under loom, over every interleaving within the
    /// preemption bound, and prints how many it explored.
    #[cfg(test)]
    pub(crate) fn check(name: &str, model: impl Fn() + Send + Sync + 'static) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = builder.preemption_bound.or(Some(PREEMPTIONS));
        let bound = builder.preemption_bound;
        builder.check(move || {
            counted.fetch_add(1, Ordering::Relaxed);
            model();
        });
        eprintln!(
            "model_check {name}: {} interleavings explored (at most {bound:?} preemptions)",
            runs.load(Ordering::Relaxed)
        );
    }

    #[cfg(test)]
    mod tests {
        use super::{Runtime, check};
        use loom::thread;
        use std::sync::Arc;

        /// Two OS threads unpark three threads (more than the model's two-slot
        /// ring holds: the overflow list too) and drop their `Unparker`s,
        /// while the runtime takes wakes and sleeps whenever it finds none:
        /// every wake is taken once, and the runtime never sleeps through one
        /// (a lost wake would deadlock the model).
        #[test]
        fn unparks_from_two_threads_are_all_taken_and_none_is_slept_through() {
            check("unparks_from_two_threads", || {
                let runtime = Runtime::new();
                let one = runtime.unparker(0);
                let (two, three) = (runtime.unparker(1), runtime.unparker(2));
                let producers = [
                    thread::spawn(move || one.unpark()),
                    thread::spawn(move || {
                        two.unpark();
                        three.unpark();
                    }),
                ];
                let mut taken = runtime.run();
                producers.into_iter().for_each(|p| p.join().unwrap());
                taken.sort_unstable();
                assert_eq!(taken, [0, 1, 2]);
            });
        }

        /// One thread woken three times while the runtime is busy or asleep:
        /// it is taken at least once, and the overflow list never holds it
        /// twice.
        #[test]
        fn repeated_unparks_of_one_thread_are_taken() {
            check("repeated_unparks", || {
                let runtime = Arc::new(Runtime::new());
                let unparker = runtime.unparker(7);
                let watcher = runtime.clone();
                let producer = thread::spawn(move || {
                    for _ in 0..3 {
                        unparker.unpark();
                        assert!(watcher.overflowed() <= 1);
                    }
                });
                let taken = runtime.run();
                producer.join().unwrap();
                assert!(!taken.is_empty() && taken.iter().all(|&t| t == 7));
            });
        }

        /// The last two `Unparker`s, dropped on two OS threads at once
        /// without unparking, while the runtime waits for them: one of the
        /// drops wakes it (or it sees none left before it sleeps), and it
        /// reports the deadlock (the model ends) instead of sleeping on.
        #[test]
        fn the_last_unparker_dropped_wakes_the_runtime() {
            check("last_unparker_dropped", || {
                let runtime = Runtime::new();
                let droppers: Vec<_> = [runtime.unparker(0), runtime.unparker(1)]
                    .into_iter()
                    .map(|unparker| thread::spawn(move || drop(unparker)))
                    .collect();
                assert_eq!(runtime.run(), Vec::<usize>::new());
                droppers.into_iter().for_each(|d| d.join().unwrap());
            });
        }

        /// An errand sent from another OS thread while the runtime sleeps,
        /// that OS thread then dropping the `Unparker` that kept the runtime
        /// waiting: the runtime is woken (or never sleeps) and takes the
        /// errand before it finds nobody left to wake it — never sleeping
        /// through it, never missing it in its last look.
        #[test]
        fn an_errand_sent_to_a_sleeping_runtime_is_taken() {
            check("errand_taken", || {
                let runtime = Arc::new(Runtime::new());
                let keeps_it_waiting = runtime.unparker(0);
                let sender = runtime.clone();
                let producer = thread::spawn(move || {
                    assert!(sender.send_errand());
                    drop(keeps_it_waiting);
                });
                let (threads, errands) = runtime.run_with_errands();
                producer.join().unwrap();
                assert_eq!((threads, errands), (Vec::new(), 1));
                assert_eq!(runtime.close_errands(), 0, "nothing left queued");
            });
        }

        /// An errand racing the end of the runtime: it is either refused
        /// (sent after) or dropped by the end (sent before), never left
        /// queued where nobody would run it.
        #[test]
        fn an_errand_racing_the_end_is_refused_or_dropped() {
            check("errand_racing_the_end", || {
                let runtime = Arc::new(Runtime::new());
                let sender = runtime.clone();
                let producer = thread::spawn(move || sender.send_errand());
                let dropped = runtime.close_errands();
                let sent = producer.join().unwrap();
                assert_eq!(usize::from(sent), dropped);
                assert!(!runtime.send_errand(), "refused once ended");
            });
        }

        /// A wake that races the end of the runtime, with the ring full: it
        /// is dropped or freed by the end, never left queued.
        #[test]
        fn a_wake_racing_the_end_is_not_kept() {
            check("wake_racing_the_end", || {
                let runtime = Arc::new(Runtime::new());
                let unparker = runtime.unparker(9);
                (0..2).for_each(|_| runtime.unparker(8).unpark());
                let producer = thread::spawn(move || unparker.unpark());
                runtime.end();
                producer.join().unwrap();
                assert_eq!(runtime.overflowed(), 0);
            });
        }
    }
}

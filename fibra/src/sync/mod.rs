//! Synchronisation for green threads: [`Mutex`], [`Condvar`], and
//! [`channel`]s with [`Select`]; [`RwLock`], [`Semaphore`], [`Barrier`],
//! [`Notify`], [`WaitGroup`], [`OnceCell`] and [`broadcast`] channels; and,
//! between any threads, [`Queue`], [`SizedQueue`], [`oneshot`] and [`watch`]
//! (see [below](#runtime-local-and-cross-thread)).
//!
//! Waiting on any of them parks only the calling green thread; the others run
//! meanwhile, and the OS thread never blocks. [`Mutex`], [`Condvar`] and the
//! channels serve the green threads of one runtime, which all run on one OS
//! thread, so they are `!Sync` (channel
//! handles are `!Send` too): the compiler keeps them from being shared across
//! OS threads. Share them between green threads with an [`Rc`](std::rc::Rc),
//! or by moving clones into [`spawn`](crate::spawn)ed closures.
//!
//! Every primitive here is fair (waiters are served in arrival order) and
//! keeps its promises when a waiting green thread is
//! [cancelled](crate::JoinHandle::cancel) (or its
//! [`timeout`](crate::time::timeout) expires): a lock or permits handed to it
//! pass to the next waiter, a notification goes to the next waiter, a
//! message handed to it goes to the next receiver or back to the channel, a
//! [`OnceCell`] it was to initialise is initialised by the next waiter, and a
//! [`Barrier`] it waited at takes its arrival back.
//!
//! ```
//! use fibra::sync::{Mutex, channel};
//! use std::rc::Rc;
//!
//! fibra::run(|| {
//!     let total = Rc::new(Mutex::new(0));
//!     let (tx, rx) = channel::unbounded();
//!     for n in 1..=10 {
//!         let (total, tx) = (total.clone(), tx.clone());
//!         fibra::spawn(move || {
//!             *total.lock() += n;
//!             tx.send(n).unwrap();
//!         });
//!     }
//!     drop(tx);
//!     assert_eq!(rx.iter().sum::<i32>(), 55);
//!     assert_eq!(*total.lock(), 55);
//! });
//! ```
//!
//! # Runtime-local and cross-thread
//!
//! The green threads of a runtime all run on its one OS thread, so what
//! serves only them needs no atomic and no lock: [`Mutex`], [`Condvar`],
//! [`channel`] and the primitives after them in the list above are
//! runtime-local (`!Send`/`!Sync`), the cheapest way for those threads to
//! share and talk, and the compiler keeps them there (see [why](#why-they-are-runtime-local)).
//!
//! What must cross OS threads — a plain OS thread feeding a green thread, a
//! [`blocking`](crate::blocking()) job streaming results back, two runtimes
//! (each in its own [`run`](crate::run)) talking, a Ractor body handing work
//! out — is `Send + Sync`, and pays a lock and, to wake a waiter on another
//! OS thread, that thread's wake path:
//!
//! - [`Queue`] and [`SizedQueue`]: Ruby's `Thread::Queue` and
//!   `Thread::SizedQueue` (close independent of the producers, pop drains
//!   then reports the close, `num_waiting`, `clear`, `max=`);
//! - [`oneshot`]: one value from one thread to another (its receiver is also
//!   a `Future`);
//! - [`watch`]: a value that one thread sets and others follow.
//!
//! Their waits work from anywhere: a green thread parks (only it; the other
//! green threads of its runtime run on) and is woken through its runtime's
//! wake path, from whatever OS thread wakes it; a plain OS thread (`main`, a
//! `blocking` job, a Ractor body's OS thread outside a green thread) blocks.
//! They keep the promises above: fair, and a cancelled waiter loses nothing.
//!
//! ```
//! use fibra::sync::{Queue, oneshot};
//!
//! let jobs = Queue::new();
//! let (done_tx, done_rx) = oneshot::channel();
//! let worker_jobs = jobs.clone();
//! // Another runtime, on another OS thread, serves the jobs.
//! let worker = std::thread::spawn(move || {
//!     fibra::run(move || {
//!         let total: u64 = worker_jobs.iter().sum();
//!         done_tx.send(total).unwrap();
//!     })
//! });
//! fibra::run(move || {
//!     (1..=10).for_each(|n| jobs.push(n).unwrap());
//!     jobs.close();
//!     assert_eq!(done_rx.recv(), Ok(55));
//! });
//! worker.join().unwrap();
//! ```
//!
//! # Why they are runtime-local
//!
//! Each runtime-local primitive coordinates the green threads of one runtime, and
//! those all run on one OS thread. So each is runtime-local — neither `Send`
//! nor `Sync` — and costs no atomic operation and no lock of the OS: its state
//! is plain `Cell`s and a queue of parked threads, changed only between two
//! switches of that one OS thread. The compiler keeps them there: an `Arc` of
//! one cannot go to another OS thread, and a green thread never changes OS
//! thread, so no wait can be woken from the wrong one.
//!
//! ```compile_fail,E0277
//! let permits = std::sync::Arc::new(fibra::sync::Semaphore::new(1));
//! std::thread::spawn(move || drop(permits.try_acquire())); // Semaphore is not Sync
//! ```
//!
//! None of them needs to be `Send` to be useful: the waits they offer are
//! between threads that share a runtime. What must cross OS threads — to
//! another runtime, a plain OS thread, a [`blocking`](crate::blocking) job or
//! a Ractor — goes through the cross-thread types built for it ([`Queue`],
//! [`oneshot`], [`watch`], Ractor messages), which pay for their atomics
//! only there.
//!
//! So each of the newer primitives is runtime-local too, each for the same reason:
//! [`RwLock`] and [`Semaphore`] guard what the threads of one runtime share
//! (an `Rc`'d cache, a pool of connections); [`Barrier`], [`Notify`] and
//! [`WaitGroup`] order those threads; [`OnceCell`] initialises a value they
//! share (a value for the whole process, read from every OS thread, is
//! `std::sync::OnceLock`'s or `LazyLock`'s, whose initialiser runs without
//! parking); and [`broadcast`] fans messages out among them (across OS
//! threads, send to each Ractor).
//!
//! # Ruby names
//!
//! | Ruby | fibra |
//! |---|---|
//! | `Thread::Mutex.new`, `m.synchronize { … }` | [`Mutex::new`], `{ let g = m.lock(); … }` |
//! | `m.try_lock` | [`Mutex::try_lock`] |
//! | `m.locked?` | [`Mutex::is_locked`] |
//! | `m.owned?` | [`Mutex::is_owned`] |
//! | `m.lock` twice in one thread: `ThreadError` "deadlock; recursive locking" | a panic with the same words |
//! | `ConditionVariable#wait(m)`, `#signal`, `#broadcast` | [`Condvar::wait`], [`Condvar::notify_one`], [`Condvar::notify_all`] |
//! | `Thread::Queue.new`, `Thread::SizedQueue.new(max)` | [`Queue::new`], [`SizedQueue::new`]; between the green threads of one runtime, [`channel::unbounded`] and [`channel::bounded`] are the cheaper way |
//! | `q.push(v)`, `q << v`, `q.pop`, `q.pop(true)`, `q.pop(timeout: t)` | [`Queue::push`], [`Queue::pop`] (`None` for `nil`), [`Queue::try_pop`], [`Queue::pop_timeout`] |
//! | `sq.push(v, true)`, `sq.push(v, timeout: t)`, `sq.max`, `sq.max = n` | [`SizedQueue::try_push`], [`SizedQueue::push_timeout`], [`SizedQueue::max`], [`SizedQueue::set_max`] |
//! | `q.close`, `q.closed?`, `ClosedQueueError` | [`Queue::close`], [`Queue::is_closed`], [`PushError`] |
//! | `q.length`, `q.empty?`, `q.clear`, `q.num_waiting` | [`Queue::len`], [`Queue::is_empty`], [`Queue::clear`], [`Queue::num_waiting`] |
//!
//! Ruby has no readers-writer lock, semaphore, barrier, wait group or
//! broadcast channel in its core; fibra's follow std's, tokio's and Go's
//! names:
//!
//! | std, tokio or Go | fibra |
//! |---|---|
//! | `std::sync::RwLock` (`read`, `write`, `try_read`, `try_write`) | [`RwLock`], served in arrival order as tokio's |
//! | `tokio::sync::Semaphore` (`acquire`, `acquire_many`, `try_acquire`, `add_permits`, `close`) | [`Semaphore`], same names |
//! | `std::sync::Barrier`, `BarrierWaitResult::is_leader` | [`Barrier`], [`BarrierWaitResult::is_leader`] |
//! | `tokio::sync::Notify` (`notify_one`, `notify_waiters`, `notified().await`) | [`Notify`], `notified()` parks |
//! | Go's `sync.WaitGroup` (`Add`, `Done`, `Wait`) | [`WaitGroup::add`], [`WaitGroup::done`], [`WaitGroup::wait`]; [`WaitGroup::guard`] calls `done` on drop |
//! | `std::cell::OnceCell`, `tokio::sync::OnceCell` (`get_or_init`, `get_or_try_init`, `set`) | [`OnceCell`], whose initialiser may park |
//! | `tokio::sync::broadcast` (`channel`, `subscribe`, `RecvError::Lagged`) | [`broadcast`], same names |

mod barrier;
mod condvar;
pub(crate) mod drop_all;
mod mutex;
mod notify;
mod once_cell;
mod owner;
mod rwlock;
mod semaphore;
mod wait_group;
pub(crate) mod waiters;
mod waitlist;

pub mod broadcast;
pub mod channel;
pub mod oneshot;
pub mod queue;
pub mod watch;

pub use barrier::{Barrier, BarrierWaitResult};
pub use channel::{Select, SelectedOperation};
pub use condvar::Condvar;
pub use mutex::{Mutex, MutexGuard};
pub use notify::Notify;
pub use once_cell::OnceCell;
pub use queue::{
    PopTimeoutError, PushError, PushTimeoutError, Queue, SizedQueue, TryPopError, TryPushError,
};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use semaphore::{
    AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit, TryAcquireError,
};
pub use wait_group::{WaitGroup, WaitGroupGuard};

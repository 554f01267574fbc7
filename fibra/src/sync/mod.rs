//! Synchronisation for green threads: [`Mutex`], [`Condvar`], and
//! [`channel`]s with [`Select`]; and, between any threads, [`Queue`],
//! [`SizedQueue`], [`oneshot`] and [`watch`] (see [below](#runtime-local-and-cross-thread)).
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
//! [cancelled](crate::JoinHandle::cancel): a lock handed to it passes to the
//! next waiter, a notification goes to the next waiter, a message handed to it
//! goes to the next receiver or back to the channel.
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
//! serves only them needs no atomic and no lock: [`Mutex`], [`Condvar`] and
//! [`channel`] are runtime-local (`!Send`/`!Sync`), the cheapest way for
//! those threads to share and talk, and the compiler keeps them there.
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
//! # Ruby names
//!
//! | Ruby | fibra |
//! |---|---|
//! | `Thread::Mutex.new`, `m.synchronize { … }` | [`Mutex::new`], `{ let g = m.lock(); … }` |
//! | `m.try_lock` | [`Mutex::try_lock`] |
//! | `m.locked?` | [`Mutex::is_locked`] |
//! | `ConditionVariable#wait(m)`, `#signal`, `#broadcast` | [`Condvar::wait`], [`Condvar::notify_one`], [`Condvar::notify_all`] |
//! | `Thread::Queue.new`, `Thread::SizedQueue.new(max)` | [`Queue::new`], [`SizedQueue::new`]; between the green threads of one runtime, [`channel::unbounded`] and [`channel::bounded`] are the cheaper way |
//! | `q.push(v)`, `q << v`, `q.pop`, `q.pop(true)`, `q.pop(timeout: t)` | [`Queue::push`], [`Queue::pop`] (`None` for `nil`), [`Queue::try_pop`], [`Queue::pop_timeout`] |
//! | `sq.push(v, true)`, `sq.push(v, timeout: t)`, `sq.max`, `sq.max = n` | [`SizedQueue::try_push`], [`SizedQueue::push_timeout`], [`SizedQueue::max`], [`SizedQueue::set_max`] |
//! | `q.close`, `q.closed?`, `ClosedQueueError` | [`Queue::close`], [`Queue::is_closed`], [`PushError`] |
//! | `q.length`, `q.empty?`, `q.clear`, `q.num_waiting` | [`Queue::len`], [`Queue::is_empty`], [`Queue::clear`], [`Queue::num_waiting`] |

mod condvar;
pub(crate) mod drop_all;
mod mutex;
mod waitlist;

pub mod channel;
pub mod oneshot;
pub mod queue;
pub mod watch;

pub use channel::{Select, SelectedOperation};
pub use condvar::Condvar;
pub use mutex::{Mutex, MutexGuard};
pub use queue::{
    PopTimeoutError, PushError, PushTimeoutError, Queue, SizedQueue, TryPopError, TryPushError,
};

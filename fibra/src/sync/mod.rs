//! Synchronisation for green threads: [`Mutex`], [`Condvar`], and
//! [`channel`]s with [`Select`].
//!
//! Waiting on any of them parks only the calling green thread; the others run
//! meanwhile, and the OS thread never blocks. They serve the green threads of
//! one runtime, which all run on one OS thread, so they are `!Sync` (channel
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
//! # Ruby names
//!
//! | Ruby | fibra |
//! |---|---|
//! | `Thread::Mutex.new`, `m.synchronize { … }` | [`Mutex::new`], `{ let g = m.lock(); … }` |
//! | `m.try_lock` | [`Mutex::try_lock`] |
//! | `m.locked?` | [`Mutex::is_locked`] |
//! | `ConditionVariable#wait(m)`, `#signal`, `#broadcast` | [`Condvar::wait`], [`Condvar::notify_one`], [`Condvar::notify_all`] |
//! | `Thread::Queue`, `Thread::SizedQueue` | [`channel::unbounded`], [`channel::bounded`] |

mod condvar;
pub(crate) mod drop_all;
mod mutex;
mod waitlist;

pub mod channel;

pub use channel::{Select, SelectedOperation};
pub use condvar::Condvar;
pub use mutex::{Mutex, MutexGuard};

//! A value that one thread updates and any number of others watch, between
//! any threads: [`channel`] makes a [`Sender`] and a [`Receiver`] (cloned,
//! or made with [`Sender::subscribe`], for each watcher). The shape of
//! tokio's `watch`, with a [`changed`](Receiver::changed) that parks a green
//! thread (only it) or blocks an OS thread instead of being awaited.
//!
//! Receivers see the latest value, not every value: a receiver that looks
//! less often than the sender sends skips those in between.
//!
//! ```
//! use fibra::sync::watch;
//!
//! let (tx, mut rx) = watch::channel("starting");
//! // A green thread follows the state that a plain OS thread sets.
//! let follower = std::thread::spawn(move || {
//!     fibra::run(move || {
//!         let mut seen = vec![*rx.borrow()];
//!         while rx.changed().is_ok() {
//!             seen.push(*rx.borrow_and_update());
//!         }
//!         seen
//!     })
//! });
//! tx.send_replace("running");
//! tx.send_replace("done");
//! drop(tx); // the follower's loop ends once it has seen the last value
//! let seen = follower.join().unwrap();
//! // Whatever it looked at, it saw in the order set, and the last value
//! // (it may have started after "starting", or looked after "done" only).
//! let order = ["starting", "running", "done"];
//! assert!(seen.is_sorted_by_key(|s| order.iter().position(|o| o == s)));
//! assert_eq!(seen.last(), Some(&"done"));
//! ```
//!
//! **Borrows.** [`Receiver::borrow`] and [`Sender::borrow`] return a [`Ref`],
//! a read guard on the value: while one is alive, a send waits for it (an
//! OS-thread lock). Hold it briefly, and never across a wait of any kind
//! (a park, a sleep, IO): a send from another green thread of the same
//! runtime would then block the OS thread that the guard's holder needs to
//! run, and the runtime would hang. Copy or clone out what is needed
//! instead.
//!
//! The error types are [`sync::channel`](crate::sync::channel)'s:
//! [`SendError`] when every receiver is gone, [`RecvError`] when the sender
//! is.

pub use crate::sync::channel::{RecvError, SendError};

use super::waiters::{Place, Registration, Waiters, Watched};
use crate::runtime::WaitReason;
use crate::runtime::waiter;
use crate::sync_prims::{AtomicUsize, Mutex, RwLock, RwLockReadGuard};
use std::fmt;
use std::mem;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

/// A sender and a receiver of a value that starts as `init`; the receiver
/// has seen it.
pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        value: RwLock::new(init),
        version: AtomicUsize::new(0),
        receivers: AtomicUsize::new(1),
        state: Mutex::new(State {
            closed: false,
            waiters: Waiters::default(),
        }),
    });
    let receiver = Receiver {
        shared: shared.clone(),
        seen: 0,
    };
    (Sender { shared }, receiver)
}

struct Shared<T> {
    value: RwLock<T>,
    /// How many values were sent: bumped under the write lock, with the
    /// value, so that a reader under the read lock sees the two agree.
    version: AtomicUsize,
    /// Receivers alive.
    receivers: AtomicUsize,
    state: Mutex<State>,
}

/// The receivers waiting in `changed`, and whether the sender is gone.
struct State {
    closed: bool,
    waiters: Waiters,
}

impl<T> Shared<T> {
    fn lock(&self) -> impl DerefMut<Target = State> + '_ {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A read guard on the value. A `send_modify` whose closure panicked
    /// poisons the lock; the value is as the closure left it, and is read
    /// so.
    fn read(&self) -> Ref<'_, T> {
        Ref(self.value.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Changes the value with `f` under the write lock and counts the
    /// change, then wakes every waiting receiver.
    fn modify<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let result = {
            let mut value = self.value.write().unwrap_or_else(PoisonError::into_inner);
            let result = f(&mut value);
            // Release: a receiver that sees the count (acquire) sees the value.
            self.version.fetch_add(1, Ordering::Release);
            result
        };
        // After the count: a receiver that looks under this lock after us
        // sees it; one that looked before is registered, and woken here.
        let woken = self.lock().waiters.take();
        woken.wake();
        result
    }

    /// A value newer than `seen` (its version), or the sender gone; `None`
    /// if neither.
    fn news(&self, seen: usize, state: &State) -> Option<Result<usize, RecvError>> {
        let version = self.version.load(Ordering::Acquire);
        if version != seen {
            Some(Ok(version))
        } else if state.closed {
            Some(Err(RecvError))
        } else {
            None
        }
    }

    /// The [`news`](Shared::news), under the lock; if there is none,
    /// registers the calling thread to be woken by the next.
    fn look(
        &self,
        seen: usize,
        registration: &mut Option<Registration>,
    ) -> Option<Result<usize, RecvError>> {
        let mut state = self.lock();
        let news = self.news(seen, &state);
        if news.is_none() {
            state.waiters.register_current(registration);
        }
        news
    }
}

impl<T> Watched for Shared<T> {
    fn forget(&self, registration: Registration) {
        self.lock().waiters.remove(registration);
    }
}

/// A read guard on a watched value (see the [module docs](self) on holding
/// it briefly).
pub struct Ref<'a, T>(RwLockReadGuard<'a, T>);

impl<T> Deref for Ref<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// Sets the watched value (see the [module docs](self)). `Send` and `Sync`
/// where `T` is. Dropping it closes the channel: receivers still read the
/// last value, and [`changed`](Receiver::changed) reports the close once
/// they have seen it.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Sender<T> {
    /// Sets the value and wakes the waiting receivers, unless every receiver
    /// is gone.
    ///
    /// # Errors
    ///
    /// [`SendError`], with the value, if there is no receiver (then the
    /// value is unchanged; [`send_replace`](Sender::send_replace) sets it
    /// regardless, for receivers [subscribed](Sender::subscribe) later).
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        if self.receiver_count() == 0 {
            return Err(SendError(value));
        }
        drop(self.send_replace(value));
        Ok(())
    }

    /// Sets the value, whether or not a receiver is left, wakes the waiting
    /// receivers, and returns the value it replaced.
    pub fn send_replace(&self, value: T) -> T {
        self.shared.modify(|old| mem::replace(old, value))
    }

    /// Changes the value in place with `modify`, then wakes the waiting
    /// receivers, whether or not a receiver is left. If `modify` panics, the
    /// change is not announced (receivers that look see what it left).
    pub fn send_modify(&self, modify: impl FnOnce(&mut T)) {
        self.shared.modify(modify);
    }

    /// A read guard on the value.
    pub fn borrow(&self) -> Ref<'_, T> {
        self.shared.read()
    }

    /// A new receiver, which has seen the current value.
    pub fn subscribe(&self) -> Receiver<T> {
        self.shared.receivers.fetch_add(1, Ordering::Relaxed);
        // Read under the read lock: the version of the value there now.
        let seen = {
            let _value = self.shared.read();
            self.shared.version.load(Ordering::Acquire)
        };
        Receiver {
            shared: self.shared.clone(),
            seen,
        }
    }

    /// How many receivers there are.
    pub fn receiver_count(&self) -> usize {
        self.shared.receivers.load(Ordering::Acquire)
    }

    /// Whether every receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.receiver_count() == 0
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let woken = {
            let mut state = self.shared.lock();
            state.closed = true;
            state.waiters.take()
        };
        woken.wake();
    }
}

impl<T: fmt::Debug> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("value", &*self.borrow())
            .field("receivers", &self.receiver_count())
            .finish()
    }
}

/// Watches the value (see the [module docs](self)): reads it, and waits for
/// it to change. Cloning makes another receiver that has seen what this one
/// has. `Send` and `Sync` where `T` is.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// The version of the newest value this receiver has seen.
    seen: usize,
}

impl<T> Receiver<T> {
    /// A read guard on the value, without marking it seen.
    pub fn borrow(&self) -> Ref<'_, T> {
        self.shared.read()
    }

    /// A read guard on the value, marking it seen: [`changed`](Receiver::changed)
    /// then waits for a newer one.
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        let value = self.shared.read();
        // Under the read lock: the version of the value in the guard.
        self.seen = self.shared.version.load(Ordering::Acquire);
        value
    }

    /// Whether there is a value this receiver has not seen.
    ///
    /// # Errors
    ///
    /// [`RecvError`] if there is none and the sender is gone (none will
    /// come).
    pub fn has_changed(&self) -> Result<bool, RecvError> {
        match self.shared.news(self.seen, &self.shared.lock()) {
            Some(Ok(_)) => Ok(true),
            Some(Err(RecvError)) => Err(RecvError),
            None => Ok(false),
        }
    }

    /// Waits until there is a value newer than the last this receiver has
    /// seen, and marks it seen (read it with [`borrow`](Receiver::borrow)).
    /// Returns at once if there is one already. A green thread parks, any
    /// other thread blocks.
    ///
    /// # Errors
    ///
    /// [`RecvError`] once the sender is gone and this receiver has seen its
    /// last value.
    ///
    /// # Panics
    ///
    /// Unwinds if the calling green thread is cancelled, or its
    /// [`timeout`](crate::time::timeout) expires, while it waits; panics if it
    /// must wait inside a [`Fiber`](crate::Fiber) that a green thread resumed.
    pub fn changed(&mut self) -> Result<(), RecvError> {
        let seen = self.seen;
        let mut place = Place::new(&*self.shared);
        let mut outcome = None;
        waiter::wait_until(WaitReason::WatchChanged, None, || {
            outcome = place.look(|shared, registration| shared.look(seen, registration));
            outcome.is_some()
        });
        drop(place);
        self.seen = outcome.expect("a wait without a deadline ends with an outcome")?;
        Ok(())
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Receiver<T> {
        self.shared.receivers.fetch_add(1, Ordering::Relaxed);
        Receiver {
            shared: self.shared.clone(),
            seen: self.seen,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // Release: pairs with `receiver_count`'s acquire.
        self.shared.receivers.fetch_sub(1, Ordering::Release);
    }
}

impl<T: fmt::Debug> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("value", &*self.borrow())
            .field("has_changed", &self.has_changed())
            .finish()
    }
}

/// The watch's wake under the model checker (`scripts/model-check.sh`): the
/// real channel, with loom's locks, atomics and OS thread park; a lost wake
/// leaves the receiver parked with nobody to unpark it, which loom reports as
/// a deadlock.
#[cfg(all(test, fibra_loom))]
mod model_check {
    use super::{RecvError, channel};
    use crate::runtime::model_check::check;
    use loom::thread;

    /// A send, then the sender's drop, on another thread while the receiver
    /// waits: it sees the sent value, then the close.
    #[test]
    fn a_send_and_the_close_wake_the_receiver() {
        check("watch_send_wakes", || {
            let (tx, mut rx) = channel(0u8);
            let other = thread::spawn(move || {
                tx.send(1).unwrap();
                drop(tx);
            });
            assert_eq!(rx.changed(), Ok(()));
            assert_eq!(*rx.borrow(), 1);
            assert_eq!(rx.changed(), Err(RecvError));
            other.join().unwrap();
        });
    }
}

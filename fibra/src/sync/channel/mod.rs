//! Channels between the green threads of one runtime: [`unbounded`],
//! [`bounded`] with back-pressure, and [`rendezvous`]; and [`Select`], which
//! waits on several channel operations at once.
//!
//! A channel has any number of [`Sender`]s and [`Receiver`]s (both are
//! [`Clone`]): each message goes to exactly one receiver. Messages from one
//! sender are received in the order it sent them. A blocking operation parks
//! only the calling green thread.
//!
//! - **Disconnection.** When every receiver is gone, sending fails with the
//!   message handed back ([`SendError`]), and the messages still buffered are
//!   dropped. When every sender is gone, receivers still get the buffered
//!   messages, then [`RecvError`]; iterating a [`Receiver`] ends there.
//! - **Fairness.** Waiting senders and waiting receivers are each served in
//!   arrival order, and an operation completes as soon as its counterpart
//!   arrives (the message is handed over directly), so no waiter is overtaken.
//! - **Cancellation.** A green thread [cancelled](crate::JoinHandle::cancel)
//!   while it waits loses nothing: a waiting sender's message was either
//!   delivered (the send happened) or is dropped with the cancelled thread (it
//!   did not); a message that had just been handed to a cancelled receiver goes
//!   to the next waiting receiver, or back to the front of the channel.
//!
//! The handles are `!Send`: all green threads of a runtime share one OS thread,
//! and a channel serves them. Messages between OS threads (Ractors) travel by
//! other means.
//!
//! ```
//! use fibra::sync::channel;
//!
//! fibra::run(|| {
//!     let (tx, rx) = channel::bounded(2);
//!     for id in 0..3 {
//!         let tx = tx.clone();
//!         fibra::spawn(move || {
//!             for n in 0..3 {
//!                 tx.send((id, n)).unwrap(); // parks while 2 messages wait
//!             }
//!         });
//!     }
//!     drop(tx); // the loop below ends once every sender is gone
//!     let mut got: Vec<(i32, i32)> = rx.iter().collect();
//!     got.sort();
//!     assert_eq!(got.len(), 9);
//!     assert_eq!(got[0], (0, 0));
//! });
//! ```
//!
//! # Go and Ruby names
//!
//! | Go | Ruby | fibra |
//! |---|---|---|
//! | `make(chan T)` | — | [`rendezvous`] |
//! | `make(chan T, n)` | `SizedQueue.new(n)` | [`bounded`]`(n)` |
//! | — | `Queue.new` | [`unbounded`] |
//! | `ch <- v` | `q.push(v)` | [`Sender::send`] |
//! | `v, ok := <-ch` | `q.pop` | [`Receiver::recv`] |
//! | `close(ch)` | `q.close` | drop every [`Sender`] |
//! | `for v := range ch` | `while v = q.pop` | `for v in rx` |
//! | `select { … default: … }` | — | [`Select`], [`Select::try_wait`] |

mod chan;
mod error;
mod select;

pub use error::{
    RecvError, RecvTimeoutError, SelectTimeoutError, SendError, SendTimeoutError, TryRecvError,
    TrySelectError, TrySendError,
};
pub use select::{Select, SelectedOperation};

use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use crate::sync::drop_all::drop_all;
use crate::sync::waitlist::Sleeper;
use crate::time::deadline_after;
use chan::{Chan, Status, Waiter};
use std::fmt;
use std::iter::FusedIterator;
use std::mem;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A channel that holds any number of messages: sending never parks.
///
/// ```
/// fibra::run(|| {
///     let (tx, rx) = fibra::sync::channel::unbounded();
///     for n in 0..1000 {
///         tx.send(n).unwrap();
///     }
///     assert_eq!(rx.len(), 1000);
///     assert_eq!(rx.recv(), Ok(0));
/// });
/// ```
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    channel(None)
}

/// A channel that holds at most `cap` messages: a sender parks while it is full
/// and resumes, in turn, as receivers make room. `bounded(0)` is a
/// [`rendezvous`] channel.
///
/// ```
/// use fibra::sync::channel::{self, TrySendError};
///
/// fibra::run(|| {
///     let (tx, rx) = channel::bounded(1);
///     tx.send(1).unwrap();
///     assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
///     let sender = fibra::spawn(move || tx.send(2)); // parks: the channel is full
///     assert_eq!(rx.recv(), Ok(1)); // makes room: the waiting message moves in
///     assert_eq!(rx.recv(), Ok(2));
///     sender.join().unwrap().unwrap();
/// });
/// ```
pub fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    channel(Some(cap))
}

/// A channel that holds no message: a send completes only when a receiver
/// takes the message, so sender and receiver meet (Go's unbuffered channel).
///
/// ```
/// use std::cell::Cell;
/// use std::rc::Rc;
///
/// fibra::run(|| {
///     let (tx, rx) = fibra::sync::channel::rendezvous();
///     let sent = Rc::new(Cell::new(false));
///     let flag = sent.clone();
///     let sender = fibra::spawn(move || {
///         tx.send("hello").unwrap();
///         flag.set(true);
///     });
///     fibra::runtime::yield_now(); // the sender runs, and waits for a receiver
///     assert!(!sent.get());
///     assert_eq!(rx.recv(), Ok("hello"));
///     sender.join().unwrap();
///     assert!(sent.get());
/// });
/// ```
pub fn rendezvous<T>() -> (Sender<T>, Receiver<T>) {
    channel(Some(0))
}

fn channel<T>(cap: Option<usize>) -> (Sender<T>, Receiver<T>) {
    let chan = Rc::new(Chan::new(cap));
    (Sender { chan: chan.clone() }, Receiver { chan })
}

/// The sending side of a channel. Clone it for more senders; when the last
/// one is dropped, receivers see the channel disconnected once it is empty.
///
/// `!Send`: it serves the green threads of one runtime.
///
/// ```compile_fail
/// fn send_across<T: Send>(_: T) {}
/// send_across(fibra::sync::channel::unbounded::<u8>().0);
/// ```
pub struct Sender<T> {
    chan: Rc<Chan<T>>,
}

/// The receiving side of a channel. Clone it for more receivers (each message
/// goes to one of them); when the last one is dropped, senders see the channel
/// disconnected and the buffered messages are dropped.
///
/// Iterating it (`for msg in &rx`, [`iter`](Receiver::iter)) receives until the
/// channel is empty and every sender is gone.
pub struct Receiver<T> {
    chan: Rc<Chan<T>>,
}

/// Which queue of waiters a blocking operation is in.
#[derive(Clone, Copy)]
enum Side {
    Send,
    Recv,
}

impl<T> Sender<T> {
    /// Sends `msg`, parking while the channel is full (for a rendezvous
    /// channel: until a receiver takes it).
    ///
    /// # Errors
    ///
    /// [`SendError`], with the message, if every receiver is gone — before, or
    /// while it waited.
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits: the message was then either
    /// delivered already or is dropped unsent.
    #[track_caller]
    pub fn send(&self, msg: T) -> Result<(), SendError<T>> {
        self.send_until(msg, None).map_err(|err| match err {
            SendTimeoutError::Disconnected(msg) | SendTimeoutError::Timeout(msg) => SendError(msg),
        })
    }

    /// Sends `msg` if that needs no waiting: a receiver is waiting, or the
    /// buffer has room.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] (for a rendezvous channel: no receiver waits) or
    /// [`TrySendError::Disconnected`], with the message.
    pub fn try_send(&self, msg: T) -> Result<(), TrySendError<T>> {
        self.chan.state.borrow_mut().try_send(msg)
    }

    /// Like [`send`](Sender::send), but gives up once `timeout` has passed.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] or [`SendTimeoutError::Disconnected`], with
    /// the message.
    #[track_caller]
    pub fn send_timeout(&self, msg: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        self.send_until(msg, Some(deadline_after(Instant::now(), timeout)))
    }

    #[track_caller]
    fn send_until(&self, msg: T, deadline: Option<Instant>) -> Result<(), SendTimeoutError<T>> {
        let chan = &*self.chan;
        let attempt = chan.state.borrow_mut().try_send(msg);
        let msg = match attempt {
            Ok(()) => return Ok(()),
            Err(TrySendError::Disconnected(msg)) => {
                return Err(SendTimeoutError::Disconnected(msg));
            }
            Err(TrySendError::Full(msg)) => msg,
        };
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(SendTimeoutError::Timeout(msg));
        }
        let scheduler = scheduler::current_for("fibra::sync::channel::Sender::send");
        let key = chan
            .state
            .borrow_mut()
            .send_waiters
            .push_back(Waiter::new(Some(Sleeper::running(&scheduler)), Some(msg)));
        let waiting = Waiting {
            chan,
            key,
            side: Side::Send,
        };
        let _timer = deadline.map(|deadline| scheduler.arm_timer(deadline));
        loop {
            let status = chan.state.borrow().send_waiters.get(key).status;
            match status {
                Status::Done => {
                    waiting.finish();
                    return Ok(());
                }
                Status::Disconnected => {
                    let msg = waiting.finish().msg.expect("an unsent message");
                    return Err(SendTimeoutError::Disconnected(msg));
                }
                Status::Waiting | Status::Spent => {}
            }
            if let Some(deadline) = deadline
                && Instant::now() >= deadline
            {
                let msg = waiting.finish().msg.expect("an unsent message");
                return Err(SendTimeoutError::Timeout(msg));
            }
            scheduler.park_on(WaitReason::ChannelSend);
        }
    }

    /// How many messages wait in the channel.
    pub fn len(&self) -> usize {
        self.chan.state.borrow().len()
    }

    /// Whether no message waits in the channel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The channel's capacity: `None` if unbounded, `Some(0)` for rendezvous.
    pub fn capacity(&self) -> Option<usize> {
        self.chan.state.borrow().capacity()
    }

    /// Whether every receiver is gone (sending fails).
    pub fn is_disconnected(&self) -> bool {
        self.chan.state.borrow().is_disconnected_for_senders()
    }

    /// Whether `self` and `other` send on the same channel.
    pub fn same_channel(&self, other: &Sender<T>) -> bool {
        Rc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Receiver<T> {
    /// Receives a message, parking while the channel is empty.
    ///
    /// # Errors
    ///
    /// [`RecvError`] once the channel is empty and every sender is gone.
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits; a message handed to it just
    /// then goes to the next receiver, or back to the front of the channel.
    #[track_caller]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.recv_until(None).map_err(|_| RecvError)
    }

    /// Receives a message if one is there, without waiting.
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`], or [`TryRecvError::Disconnected`] if the
    /// channel is empty and every sender is gone.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.chan.state.borrow_mut().try_recv()
    }

    /// Like [`recv`](Receiver::recv), but gives up once `timeout` has passed.
    ///
    /// ```
    /// use fibra::sync::channel::{self, RecvTimeoutError};
    /// use std::time::Duration;
    ///
    /// fibra::run(|| {
    ///     let (_tx, rx) = channel::unbounded::<i32>();
    ///     assert_eq!(rx.recv_timeout(Duration::from_millis(5)), Err(RecvTimeoutError::Timeout));
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// [`RecvTimeoutError::Timeout`], or [`RecvTimeoutError::Disconnected`].
    #[track_caller]
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_until(Some(deadline_after(Instant::now(), timeout)))
    }

    #[track_caller]
    fn recv_until(&self, deadline: Option<Instant>) -> Result<T, RecvTimeoutError> {
        let chan = &*self.chan;
        let attempt = chan.state.borrow_mut().try_recv();
        match attempt {
            Ok(msg) => return Ok(msg),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {}
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(RecvTimeoutError::Timeout);
        }
        let scheduler = scheduler::current_for("fibra::sync::channel::Receiver::recv");
        let key = chan
            .state
            .borrow_mut()
            .recv_waiters
            .push_back(Waiter::new(Some(Sleeper::running(&scheduler)), None));
        let waiting = Waiting {
            chan,
            key,
            side: Side::Recv,
        };
        let _timer = deadline.map(|deadline| scheduler.arm_timer(deadline));
        loop {
            let status = chan.state.borrow().recv_waiters.get(key).status;
            match status {
                Status::Done => return Ok(waiting.finish().msg.expect("a delivered message")),
                Status::Disconnected => {
                    waiting.finish();
                    // A message given back by a cancelled receiver since the
                    // disconnection was reported is still there to take.
                    let retry = chan.state.borrow_mut().try_recv();
                    return retry.map_err(|_| RecvTimeoutError::Disconnected);
                }
                Status::Waiting | Status::Spent => {}
            }
            if let Some(deadline) = deadline
                && Instant::now() >= deadline
            {
                waiting.finish();
                return Err(RecvTimeoutError::Timeout);
            }
            scheduler.park_on(WaitReason::ChannelReceive);
        }
    }

    /// An iterator that [`recv`](Receiver::recv)s until the channel is empty
    /// and every sender is gone.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { rx: self }
    }

    /// An iterator over the messages there now, without waiting.
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { rx: self }
    }

    /// How many messages wait in the channel.
    pub fn len(&self) -> usize {
        self.chan.state.borrow().len()
    }

    /// Whether no message waits in the channel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The channel's capacity: `None` if unbounded, `Some(0)` for rendezvous.
    pub fn capacity(&self) -> Option<usize> {
        self.chan.state.borrow().capacity()
    }

    /// Whether every sender is gone (once the channel is empty, receiving
    /// fails).
    pub fn is_disconnected(&self) -> bool {
        self.chan.state.borrow().is_disconnected_for_receivers()
    }

    /// Whether `self` and `other` receive from the same channel.
    pub fn same_channel(&self, other: &Receiver<T>) -> bool {
        Rc::ptr_eq(&self.chan, &other.chan)
    }
}

/// A blocking operation's place in its queue. Dropping it — when the operation
/// unwinds out of `park` — removes the place and settles the outcome: a message
/// delivered to a receiver that is leaving is given back to the channel; an
/// unsent message is dropped (after the channel's state is released, since its
/// destructor may use the channel).
struct Waiting<'a, T> {
    chan: &'a Chan<T>,
    key: usize,
    side: Side,
}

impl<T> Waiting<'_, T> {
    /// Removes the place of an operation that ends normally, returning what is
    /// in it.
    fn finish(self) -> Waiter<T> {
        let waiter = self.remove();
        mem::forget(self);
        waiter
    }

    fn remove(&self) -> Waiter<T> {
        let mut state = self.chan.state.borrow_mut();
        match self.side {
            Side::Send => state.send_waiters.remove(self.key),
            Side::Recv => state.recv_waiters.remove(self.key),
        }
    }
}

impl<T> Drop for Waiting<'_, T> {
    fn drop(&mut self) {
        let mut waiter = self.remove();
        let leftover = match (self.side, waiter.status, waiter.msg.take()) {
            (Side::Recv, Status::Done, Some(msg)) => self.chan.state.borrow_mut().give_back(msg),
            (_, _, msg) => msg,
        };
        drop(waiter);
        drop(leftover);
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.state.borrow_mut().add_sender();
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.chan.state.borrow_mut().add_receiver();
        Receiver {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.state.borrow_mut().remove_sender();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let undeliverable = self.chan.state.borrow_mut().remove_receiver();
        drop_all(undeliverable);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

/// Receives until the channel is disconnected; see [`Receiver::iter`].
#[derive(Debug)]
pub struct Iter<'a, T> {
    rx: &'a Receiver<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<T> FusedIterator for Iter<'_, T> {}

/// The messages there now; see [`Receiver::try_iter`].
#[derive(Debug)]
pub struct TryIter<'a, T> {
    rx: &'a Receiver<T>,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.try_recv().ok()
    }
}

/// Receives until the channel is disconnected, owning the receiver.
#[derive(Debug)]
pub struct IntoIter<T> {
    rx: Receiver<T>,
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<T> FusedIterator for IntoIter<T> {}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> IntoIter<T> {
        IntoIter { rx: self }
    }
}

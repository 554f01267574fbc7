//! A channel for one value, between any two threads: [`channel`] makes a
//! [`Sender`] and a [`Receiver`], both `Send`, that may go to different OS
//! threads or runtimes. The shape of tokio's `oneshot`, with waits that
//! park a green thread (only it) or block an OS thread; the [`Receiver`] is
//! also a [`Future`], for an async task or [`block_on`](crate::block_on()).
//!
//! ```
//! use fibra::sync::oneshot;
//!
//! let (tx, rx) = oneshot::channel();
//! // A plain OS thread answers a green thread.
//! let answer = std::thread::spawn(move || tx.send(42).unwrap());
//! assert_eq!(fibra::run(move || rx.recv()), Ok(42));
//! answer.join().unwrap();
//! ```
//!
//! A sender dropped without sending is reported to the receiver
//! ([`RecvError`]); a send after the receiver is gone hands the value back.
//! The error types are [`sync::channel`](crate::sync::channel)'s: a oneshot
//! is a channel whose sender sends once.

pub use crate::sync::channel::{RecvError, RecvTimeoutError, TryRecvError};

use crate::runtime::WaitReason;
use crate::runtime::waiter::{self, Waiter};
use crate::sync_prims::Mutex;
use crate::time::deadline_after;
use std::fmt;
use std::future::Future;
use std::ops::DerefMut;
use std::pin::Pin;
use std::sync::{Arc, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// A sender and a receiver of one value.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            value: None,
            sender: true,
            receiver: true,
            waiter: None,
        }),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

struct State<T> {
    /// Sent and not yet received.
    value: Option<T>,
    /// The sender is alive (it has not sent, nor been dropped).
    sender: bool,
    /// The receiver is alive.
    receiver: bool,
    /// Wakes the receiver while it waits.
    waiter: Option<Waiter>,
}

impl<T> Shared<T> {
    /// The state, locked (no user code runs under the lock, so a poisoned one
    /// is whole).
    fn lock(&self) -> impl DerefMut<Target = State<T>> + '_ {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Sends the one value (see the [module docs](self)). `Send` where `T` is.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Sender<T> {
    /// Sends `value`, waking the receiver if it waits. Never waits.
    ///
    /// # Errors
    ///
    /// The value, if the receiver is gone.
    pub fn send(self, value: T) -> Result<(), T> {
        let waiter = {
            let mut state = self.shared.lock();
            if !state.receiver {
                return Err(value);
            }
            state.value = Some(value);
            state.sender = false;
            state.waiter.take()
        };
        if let Some(waiter) = waiter {
            waiter.wake();
        }
        Ok(())
    }

    /// Whether the receiver is gone (a send would fail).
    pub fn is_closed(&self) -> bool {
        !self.shared.lock().receiver
    }
}

impl<T> Drop for Sender<T> {
    /// Without a send: the receiver learns that no value will come.
    fn drop(&mut self) {
        let waiter = {
            let mut state = self.shared.lock();
            if !state.sender {
                return;
            }
            state.sender = false;
            state.waiter.take()
        };
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// Receives the one value (see the [module docs](self)): by waiting
/// ([`recv`](Receiver::recv)), by looking ([`try_recv`](Receiver::try_recv)),
/// or as a [`Future`]. `Send` where `T` is.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Receiver<T> {
    /// Waits for the value: a green thread parks, another thread blocks.
    ///
    /// # Errors
    ///
    /// [`RecvError`] if the sender was dropped without sending.
    ///
    /// # Panics
    ///
    /// Unwinds if the calling green thread is cancelled, or its
    /// [`timeout`](crate::time::timeout) expires, while it waits; panics if it
    /// must wait inside a [`Fiber`](crate::Fiber) that a green thread resumed.
    pub fn recv(self) -> Result<T, RecvError> {
        self.recv_until(None).map_err(|_| RecvError)
    }

    /// Like [`recv`](Receiver::recv), but gives up once `timeout` has passed;
    /// the receiver stays usable.
    ///
    /// ```
    /// use fibra::sync::oneshot::{self, RecvTimeoutError};
    /// use std::time::Duration;
    ///
    /// let (tx, mut rx) = oneshot::channel();
    /// assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Err(RecvTimeoutError::Timeout));
    /// tx.send("late").unwrap();
    /// assert_eq!(rx.recv_timeout(Duration::ZERO), Ok("late"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`RecvTimeoutError::Timeout`], or [`RecvTimeoutError::Disconnected`]
    /// if the sender was dropped without sending.
    ///
    /// # Panics
    ///
    /// As [`recv`](Receiver::recv).
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_until(Some(deadline_after(Instant::now(), timeout)))
    }

    /// The value, if it has been sent, without waiting.
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`] if it has not been sent yet, or
    /// [`TryRecvError::Disconnected`] if it never will be (the sender was
    /// dropped without sending, or the value was received already).
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        match self.look(|_| {}) {
            Some(Ok(value)) => Ok(value),
            Some(Err(RecvError)) => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    fn recv_until(&self, deadline: Option<Instant>) -> Result<T, RecvTimeoutError> {
        let registered = Registered(&self.shared);
        let mut outcome = None;
        waiter::wait_until(WaitReason::OneshotReceive, deadline, || {
            outcome = self.look(|waiter| {
                if !waiter.as_ref().is_some_and(Waiter::is_current) {
                    *waiter = Some(Waiter::current());
                }
            });
            outcome.is_some()
        });
        drop(registered);
        match outcome {
            Some(Ok(value)) => Ok(value),
            Some(Err(RecvError)) => Err(RecvTimeoutError::Disconnected),
            None => Err(RecvTimeoutError::Timeout),
        }
    }

    /// The outcome if there is one: the value, or `Err` if the sender is
    /// gone without sending; else `register`s the caller to be woken.
    fn look(&self, register: impl FnOnce(&mut Option<Waiter>)) -> Option<Result<T, RecvError>> {
        let mut state = self.shared.lock();
        if let Some(value) = state.value.take() {
            return Some(Ok(value));
        }
        if !state.sender {
            return Some(Err(RecvError));
        }
        register(&mut state.waiter);
        None
    }
}

/// The receiver's registration while it waits: gone with the wait, on every
/// path out of it (a timeout, an unwind), so that nothing keeps waking (nor
/// keeps a runtime awake for) a thread that no longer waits.
struct Registered<'a, T>(&'a Shared<T>);

impl<T> Drop for Registered<'_, T> {
    fn drop(&mut self) {
        let waiter = self.0.lock().waiter.take();
        drop(waiter);
    }
}

/// Awaits the value: `Err` if the sender was dropped without sending (or the
/// value was received already).
impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, RecvError>> {
        let outcome = self.look(|waiter| match waiter {
            Some(Waiter::Task(registered)) => registered.clone_from(cx.waker()),
            _ => *waiter = Some(Waiter::Task(cx.waker().clone())),
        });
        match outcome {
            Some(outcome) => Poll::Ready(outcome),
            None => Poll::Pending,
        }
    }
}

impl<T> Drop for Receiver<T> {
    /// A value sent and not received is dropped (after the lock is released).
    fn drop(&mut self) {
        let (value, waiter) = {
            let mut state = self.shared.lock();
            state.receiver = false;
            (state.value.take(), state.waiter.take())
        };
        drop(waiter);
        drop(value);
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("Receiver")
            .field("sent", &state.value.is_some())
            .field("sender_alive", &state.sender)
            .finish()
    }
}

/// The oneshot's wake under the model checker (`scripts/model-check.sh`): the
/// real channel, with loom's lock and OS thread park; a lost wake leaves the
/// receiver parked with nobody to unpark it, which loom reports as a
/// deadlock.
#[cfg(all(test, fibra_loom))]
mod model_check {
    use super::{RecvError, channel};
    use crate::runtime::model_check::check;
    use loom::thread;

    /// A send from another thread while the receiver registers and parks.
    #[test]
    fn a_send_wakes_the_receiver() {
        check("oneshot_send_wakes", || {
            let (tx, rx) = channel();
            let other = thread::spawn(move || tx.send(7u8).unwrap());
            assert_eq!(rx.recv(), Ok(7));
            other.join().unwrap();
        });
    }

    /// The sender dropped on another thread without sending: the receiver
    /// learns it instead of waiting for ever.
    #[test]
    fn a_dropped_sender_wakes_the_receiver() {
        check("oneshot_drop_wakes", || {
            let (tx, rx) = channel::<u8>();
            let other = thread::spawn(move || drop(tx));
            assert_eq!(rx.recv(), Err(RecvError));
            other.join().unwrap();
        });
    }
}

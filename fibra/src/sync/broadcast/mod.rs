//! A broadcast channel between the green threads of one runtime: every
//! [`Receiver`] sees every message, in the order sent (tokio's
//! `sync::broadcast`).
//!
//! [`channel`]`(capacity)` keeps the last `capacity` messages that some
//! receiver has not received yet; sending never parks. A receiver that falls
//! further behind loses the oldest ones: its next receive returns
//! [`RecvError::Lagged`]`(n)`, `n` the number it missed, and the one after it
//! the oldest message still kept. A message is dropped as soon as every
//! receiver has received it (the last one takes it without a clone).
//!
//! A receiver made by [`Sender::subscribe`] or [`Receiver::resubscribe`] sees
//! the messages sent after it was made. When every [`Sender`] is gone, a
//! receiver still gets the messages kept for it, then [`RecvError::Closed`].
//! Sending with no receiver fails and gives the message back.
//!
//! A receiver [cancelled](crate::JoinHandle::cancel) while it waits loses
//! nothing: messages stay in the channel until it receives them.
//!
//! The handles are `!Send`, for the green threads of one runtime.
//!
//! ```
//! use fibra::sync::broadcast::{self, RecvError};
//!
//! fibra::run(|| {
//!     let (tx, mut rx1) = broadcast::channel(16);
//!     let mut rx2 = tx.subscribe();
//!     let listener = fibra::spawn(move || {
//!         let mut got = Vec::new();
//!         while let Ok(n) = rx2.recv() {
//!             got.push(n);
//!         }
//!         got
//!     });
//!     for n in 1..=3 {
//!         tx.send(n).unwrap();
//!     }
//!     drop(tx);
//!     assert_eq!(rx1.recv(), Ok(1));
//!     assert_eq!(listener.join().unwrap(), [1, 2, 3]);
//!     assert_eq!((rx1.recv(), rx1.recv(), rx1.recv()), (Ok(2), Ok(3), Err(RecvError::Closed)));
//! });
//! ```

mod error;

pub use error::{RecvError, SendError, TryRecvError};

use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use crate::sync::drop_all::drop_all;
use crate::sync::waitlist::{Sleeper, WaitList};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;

/// A broadcast channel that keeps up to `capacity` messages for receivers
/// that have not received them yet (see the [module docs](self)).
///
/// ```
/// use fibra::sync::broadcast::{self, RecvError};
///
/// let (tx, mut rx) = broadcast::channel(2);
/// for n in 1..=5 {
///     tx.send(n).unwrap();
/// }
/// // Only the last two are kept: 1, 2 and 3 were overwritten.
/// assert_eq!(rx.try_recv(), Err(broadcast::TryRecvError::Lagged(3)));
/// assert_eq!(rx.try_recv(), Ok(4));
/// assert_eq!(rx.try_recv(), Ok(5));
/// ```
///
/// # Panics
///
/// If `capacity` is 0.
pub fn channel<T: Clone>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(
        capacity > 0,
        "fibra: a broadcast channel's capacity must be at least 1"
    );
    let shared = Rc::new(Shared {
        state: RefCell::new(State {
            slots: VecDeque::new(),
            capacity,
            head: 0,
            senders: 1,
            receivers: 1,
            waiters: WaitList::new(),
        }),
    });
    let rx = Receiver {
        shared: shared.clone(),
        next: 0,
    };
    (Sender { shared }, rx)
}

/// Sends to every [`Receiver`] of a [`broadcast`](self) channel. Clone it for
/// more senders; the channel closes when the last is dropped.
pub struct Sender<T> {
    shared: Rc<Shared<T>>,
}

/// Receives every message of a [`broadcast`](self) channel sent since it was
/// made. Make more with [`Sender::subscribe`] or
/// [`Receiver::resubscribe`].
pub struct Receiver<T> {
    shared: Rc<Shared<T>>,
    /// The number of the next message it receives.
    next: u64,
}

struct Shared<T> {
    state: RefCell<State<T>>,
}

struct State<T> {
    /// The messages kept, oldest first; some receiver has not received each.
    slots: VecDeque<Slot<T>>,
    capacity: usize,
    /// The number of the oldest kept message, `slots[0]`.
    head: u64,
    senders: usize,
    receivers: usize,
    /// Receivers parked until a message comes or the last sender goes.
    waiters: WaitList<Sleeper>,
}

struct Slot<T> {
    value: T,
    /// How many receivers have yet to receive it. Receivers take messages in
    /// order, and a receiver that goes counts itself off every message it
    /// had not received, so this reaches 0 first at the oldest message.
    unread: usize,
}

impl<T> State<T> {
    /// The number the next message sent will have.
    fn tail(&self) -> u64 {
        self.head + self.slots.len() as u64
    }

    fn wake_waiters(&mut self) {
        while let Some(key) = self.waiters.pop_front() {
            self.waiters.get(key).wake();
        }
    }
}

impl<T> Sender<T> {
    /// Sends `value` to every receiver, and returns how many there are. The
    /// oldest kept message is overwritten if `capacity` are kept already. Never
    /// parks.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value if there is no receiver.
    pub fn send(&self, value: T) -> Result<usize, SendError<T>> {
        let mut state = self.shared.state.borrow_mut();
        let receivers = state.receivers;
        if receivers == 0 {
            return Err(SendError(value));
        }
        let overwritten = if state.slots.len() == state.capacity {
            state.head += 1;
            state.slots.pop_front()
        } else {
            None
        };
        state.slots.push_back(Slot {
            value,
            unread: receivers,
        });
        state.wake_waiters();
        drop(state);
        // Its destructor may use the channel.
        drop(overwritten);
        Ok(receivers)
    }

    /// A new receiver, which gets the messages sent from now on.
    pub fn subscribe(&self) -> Receiver<T> {
        new_receiver(&self.shared)
    }

    /// How many receivers there are.
    pub fn receiver_count(&self) -> usize {
        self.shared.state.borrow().receivers
    }

    /// How many messages are kept: sent, and not yet received by every
    /// receiver (at most the capacity).
    pub fn len(&self) -> usize {
        self.shared.state.borrow().slots.len()
    }

    /// Whether every receiver has received every message sent.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `self` and `other` send on the same channel.
    pub fn same_channel(&self, other: &Sender<T>) -> bool {
        Rc::ptr_eq(&self.shared, &other.shared)
    }
}

fn new_receiver<T>(shared: &Rc<Shared<T>>) -> Receiver<T> {
    let mut state = shared.state.borrow_mut();
    state.receivers += 1;
    Receiver {
        shared: shared.clone(),
        next: state.tail(),
    }
}

impl<T: Clone> Receiver<T> {
    /// Receives the next message, parking the calling green thread until one
    /// is sent.
    ///
    /// # Errors
    ///
    /// [`RecvError::Lagged`]`(n)` if this receiver missed `n` messages,
    /// overwritten before it received them (the next call returns the oldest
    /// one kept); [`RecvError::Closed`] once every sender is gone and every
    /// message kept for it is received.
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits; the messages stay in the
    /// channel.
    #[track_caller]
    pub fn recv(&mut self) -> Result<T, RecvError> {
        loop {
            match self.try_recv() {
                Ok(value) => return Ok(value),
                Err(TryRecvError::Lagged(missed)) => return Err(RecvError::Lagged(missed)),
                Err(TryRecvError::Closed) => return Err(RecvError::Closed),
                Err(TryRecvError::Empty) => {}
            }
            let scheduler = scheduler::current_for("fibra::sync::broadcast::Receiver::recv");
            let key = self
                .shared
                .state
                .borrow_mut()
                .waiters
                .push_back(Sleeper::running(&scheduler));
            let _waiting = Waiting {
                shared: &self.shared,
                key,
            };
            scheduler.park_on(WaitReason::BroadcastReceive);
        }
    }

    /// Receives the next message if one is there, without waiting.
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`], [`TryRecvError::Lagged`] or
    /// [`TryRecvError::Closed`] (see [`recv`](Receiver::recv)).
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let mut state = self.shared.state.borrow_mut();
        if self.next < state.head {
            let missed = state.head - self.next;
            self.next = state.head;
            return Err(TryRecvError::Lagged(missed));
        }
        let index = (self.next - state.head) as usize;
        let Some(slot) = state.slots.get_mut(index) else {
            return Err(if state.senders == 0 {
                TryRecvError::Closed
            } else {
                TryRecvError::Empty
            });
        };
        self.next += 1;
        if slot.unread > 1 {
            slot.unread -= 1;
            return Ok(slot.value.clone());
        }
        // The last receiver to take it: it is the oldest one kept.
        debug_assert_eq!(index, 0, "a broadcast message read by all is the oldest");
        state.head += 1;
        let slot = state.slots.pop_front().expect("the slot just read");
        Ok(slot.value)
    }

    /// A new receiver of the same channel, which gets the messages sent from
    /// now on (tokio's `resubscribe`; receivers are not `Clone`, as a clone
    /// would have to copy this one's place).
    pub fn resubscribe(&self) -> Receiver<T> {
        new_receiver(&self.shared)
    }
}

impl<T> Receiver<T> {
    /// How many messages were sent that this receiver has not received (those
    /// it lagged behind on included).
    pub fn len(&self) -> usize {
        (self.shared.state.borrow().tail() - self.next) as usize
    }

    /// Whether it has received every message sent.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every sender is gone (once it has received what is kept for
    /// it, receiving fails).
    pub fn is_closed(&self) -> bool {
        self.shared.state.borrow().senders == 0
    }

    /// Whether `self` and `other` receive from the same channel.
    pub fn same_channel(&self, other: &Receiver<T>) -> bool {
        Rc::ptr_eq(&self.shared, &other.shared)
    }
}

/// A parked receive's place in the queue, removed however the park ends.
struct Waiting<'a, T> {
    shared: &'a Shared<T>,
    key: usize,
}

impl<T> Drop for Waiting<'_, T> {
    fn drop(&mut self) {
        self.shared.state.borrow_mut().waiters.remove(self.key);
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.state.borrow_mut().senders += 1;
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.shared.state.borrow_mut();
        state.senders -= 1;
        if state.senders == 0 {
            state.wake_waiters();
        }
    }
}

impl<T> Drop for Receiver<T> {
    /// Counts itself off every message it had not received; those that every
    /// receiver has now had are dropped.
    fn drop(&mut self) {
        let mut state = self.shared.state.borrow_mut();
        state.receivers -= 1;
        let first = self.next.saturating_sub(state.head) as usize;
        for slot in state.slots.iter_mut().skip(first) {
            slot.unread -= 1;
        }
        let read = state.slots.iter().take_while(|s| s.unread == 0).count();
        state.head += read as u64;
        let done: Vec<Slot<T>> = state.slots.drain(..read).collect();
        drop(state);
        drop_all(done.into_iter().map(|slot| slot.value));
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

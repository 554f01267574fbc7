//! Ruby's `Thread::Queue` and `Thread::SizedQueue`, between any threads:
//! [`Queue`] and [`SizedQueue`] (also at [`fibra::sync`](crate::sync)), their
//! errors, and the iterators that pop until the queue is closed.
//!
//! Use them where work crosses OS threads — green threads of different
//! runtimes, plain threads, Ractor bodies; between the green threads of one
//! runtime a [`channel`](crate::sync::channel) is cheaper. A [`SizedQueue`]
//! makes a fast producer wait for a slow consumer:
//!
//! ```
//! use fibra::sync::SizedQueue;
//!
//! let queue = SizedQueue::new(2); // at most two items wait
//! let feeder = queue.clone();
//! let total = fibra::run(move || {
//!     let producer = fibra::spawn(move || {
//!         for n in 1..=10 {
//!             feeder.push(n).unwrap(); // parks while two items wait
//!         }
//!         feeder.close();
//!     });
//!     let total: u32 = queue.iter().sum(); // pops until closed and empty
//!     producer.join().unwrap();
//!     total
//! });
//! assert_eq!(total, 55);
//! ```

mod error;
mod shared;

pub use error::{PopTimeoutError, PushError, PushTimeoutError, TryPopError, TryPushError};

use crate::time::deadline_after;
use shared::Shared;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why an operation gave up, inside the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// Nothing to pop, or no room to push (now, or before the deadline).
    Nothing,
    Closed,
}

/// How a waiting thread's entry was settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Not yet.
    Waiting,
    /// A popper was handed an item; a pusher's item moved in.
    Done,
    /// The queue was closed.
    Closed,
}

/// A first-in, first-out queue that any thread may push to and pop from —
/// green threads of any runtime, plain OS threads, [`blocking`](crate::blocking())
/// jobs, Ractor bodies — with Ruby's `Thread::Queue` semantics. `Send` and
/// `Sync`; a clone is another handle on the same queue (one `Arc`).
///
/// A [`pop`](Queue::pop) on an empty queue waits: a green thread parks (only
/// it: the other green threads of its runtime run on) and is woken through
/// its runtime's wake path; any other thread blocks. [`push`](Queue::push)
/// never waits (a [`SizedQueue`] is one with a limit).
///
/// ```
/// use fibra::sync::Queue;
///
/// let queue = Queue::new();
/// let feeder = queue.clone();
/// // A plain OS thread feeds a green thread.
/// let producer = std::thread::spawn(move || {
///     for n in 1..=100 {
///         feeder.push(n).unwrap();
///     }
///     feeder.close(); // the consumer's loop ends once it has popped the rest
/// });
/// let sum: i32 = fibra::run(move || queue.iter().sum());
/// assert_eq!(sum, 5050);
/// producer.join().unwrap();
/// ```
///
/// **Closing.** [`close`](Queue::close) is independent of how many handles
/// exist (unlike a [`channel`](crate::sync::channel), which closes when its
/// last sender is dropped): after it, a push fails with the item handed back
/// ([`PushError`], Ruby's `ClosedQueueError`), while pops still take what was
/// pushed before, then report the close — [`pop`](Queue::pop) with `None`
/// (Ruby's `nil`), which ends the [iterators](Queue::iter). Every waiting
/// thread is woken by it.
///
/// **Fairness.** Waiting poppers are served in arrival order, and an item
/// pushed while one waits is handed straight to the first (a thread that
/// comes later cannot take it first); the same holds for a [`SizedQueue`]'s
/// waiting pushers and the room a pop makes.
///
/// **Cancellation loses nothing.** A waiting green thread that is
/// [cancelled](crate::JoinHandle::cancel), or whose
/// [`timeout`](crate::time::timeout) expires, unwinds out of the wait; an
/// item that was just handed to it goes to the next waiting popper, or back to
/// the front of the queue. A pusher cancelled while it waits for room has
/// either pushed its item or not (then the item is dropped with it).
///
/// **Versus a channel.** [`sync::channel`](crate::sync::channel)'s channels
/// serve the green threads of one runtime and are cheaper there (no lock, no
/// atomic); a `Queue` crosses OS threads. A runtime whose green threads all
/// wait on `Queue`s is not reported as deadlocked: another OS thread may
/// still push.
pub struct Queue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Queue<T> {
    /// An empty, open queue.
    pub fn new() -> Queue<T> {
        Queue::with_max(None)
    }

    fn with_max(max: Option<usize>) -> Queue<T> {
        Queue {
            shared: Arc::new(Shared::new(max)),
        }
    }

    /// Adds `item` at the back (Ruby's `push`, `<<`, `enq`), or hands it to
    /// the first thread waiting in a pop. Never waits on a `Queue` (on a
    /// [`SizedQueue`], which derefs to one, it waits while the queue is full).
    ///
    /// # Errors
    ///
    /// [`PushError`], with the item, if the queue is closed.
    pub fn push(&self, item: T) -> Result<(), PushError<T>> {
        self.shared
            .push(item, true, None)
            .map_err(|(item, _)| PushError(item))
    }

    /// Takes the item at the front, waiting while the queue is empty and open
    /// (Ruby's `pop`, `shift`, `deq`); `None` once the queue is closed and
    /// empty (Ruby's `nil`).
    ///
    /// ```
    /// use fibra::sync::Queue;
    ///
    /// let queue = Queue::new();
    /// queue.push("a").unwrap();
    /// queue.close();
    /// assert!(queue.push("b").is_err());
    /// assert_eq!(queue.pop(), Some("a")); // what was pushed before the close
    /// assert_eq!(queue.pop(), None);
    /// ```
    ///
    /// # Panics
    ///
    /// Unwinds if the calling green thread is cancelled, or its
    /// [`timeout`](crate::time::timeout) expires, while it waits (losing
    /// nothing: see the type's docs); panics if it must wait inside a
    /// [`Fiber`](crate::Fiber) that a green thread resumed.
    pub fn pop(&self) -> Option<T> {
        self.shared.pop(true, None).ok()
    }

    /// Takes the item at the front if there is one, without waiting (Ruby's
    /// `pop(true)`, which raises where this returns `Err`).
    ///
    /// # Errors
    ///
    /// [`TryPopError::Empty`], or [`TryPopError::Closed`] if the queue is
    /// closed and empty.
    pub fn try_pop(&self) -> Result<T, TryPopError> {
        self.shared.pop(false, None).map_err(|stop| match stop {
            Stop::Nothing => TryPopError::Empty,
            Stop::Closed => TryPopError::Closed,
        })
    }

    /// Like [`pop`](Queue::pop), but gives up once `timeout` has passed
    /// (Ruby's `pop(timeout:)`). An item that is there is taken even with a
    /// zero `timeout`.
    ///
    /// ```
    /// use fibra::sync::{PopTimeoutError, Queue};
    /// use std::time::Duration;
    ///
    /// let queue = Queue::<u8>::new();
    /// assert_eq!(queue.pop_timeout(Duration::from_millis(1)), Err(PopTimeoutError::Timeout));
    /// queue.close();
    /// assert_eq!(queue.pop_timeout(Duration::from_secs(60)), Err(PopTimeoutError::Closed));
    /// ```
    ///
    /// # Errors
    ///
    /// [`PopTimeoutError::Timeout`], or [`PopTimeoutError::Closed`] if the
    /// queue is (or is while it waits) closed and empty.
    ///
    /// # Panics
    ///
    /// As [`pop`](Queue::pop).
    pub fn pop_timeout(&self, timeout: Duration) -> Result<T, PopTimeoutError> {
        let deadline = deadline_after(Instant::now(), timeout);
        self.shared
            .pop(true, Some(deadline))
            .map_err(|stop| match stop {
                Stop::Nothing => PopTimeoutError::Timeout,
                Stop::Closed => PopTimeoutError::Closed,
            })
    }

    /// Closes the queue (Ruby's `close`): pushes fail from now on, pops take
    /// what is left and then report the close, and every waiting thread is
    /// woken. Closing a closed queue does nothing.
    pub fn close(&self) {
        self.shared.close();
    }

    /// Whether the queue is closed (Ruby's `closed?`).
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// How many items wait in the queue (Ruby's `length`, `size`).
    pub fn len(&self) -> usize {
        self.shared.len()
    }

    /// Whether no item waits in the queue (Ruby's `empty?`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes (and drops) every item (Ruby's `clear`); on a [`SizedQueue`],
    /// waiting pushers then move in.
    pub fn clear(&self) {
        self.shared.clear();
    }

    /// How many threads wait on the queue: to pop, or (on a [`SizedQueue`])
    /// to push (Ruby's `num_waiting`).
    pub fn num_waiting(&self) -> usize {
        self.shared.num_waiting()
    }

    /// An iterator that [`pop`](Queue::pop)s until the queue is closed and
    /// empty.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { queue: self }
    }
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Queue<T> {
        Queue {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Default for Queue<T> {
    fn default() -> Queue<T> {
        Queue::new()
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (len, closed, waiting) = self.shared.snapshot();
        let mut out = f.debug_struct("Queue");
        if let Some(max) = self.shared.max() {
            out.field("max", &max);
        }
        out.field("len", &len)
            .field("closed", &closed)
            .field("num_waiting", &waiting)
            .finish()
    }
}

/// A [`Queue`] that holds at most `max` items: a push waits while it is full
/// (Ruby's `Thread::SizedQueue`). It derefs to a `Queue` — as Ruby's
/// `SizedQueue` is a `Queue` — so every `Queue` method works on it (`pop`,
/// `close`, `len`, …), and a `&SizedQueue` passes where a `&Queue` is wanted,
/// where its push still waits for room.
///
/// ```
/// use fibra::sync::{SizedQueue, TryPushError};
///
/// fibra::run(|| {
///     let queue = SizedQueue::new(2);
///     queue.push(1).unwrap();
///     queue.push(2).unwrap();
///     assert_eq!(queue.try_push(3), Err(TryPushError::Full(3)));
///     let pusher = queue.clone();
///     let late = fibra::spawn(move || pusher.push(3)); // parks: the queue is full
///     assert_eq!(queue.pop(), Some(1)); // makes room: the waiting item moves in
///     late.join().unwrap().unwrap();
///     assert_eq!(queue.iter().take(2).collect::<Vec<_>>(), [2, 3]);
/// });
/// ```
pub struct SizedQueue<T> {
    queue: Queue<T>,
}

impl<T> SizedQueue<T> {
    /// An empty, open queue that holds at most `max` items.
    ///
    /// # Panics
    ///
    /// If `max` is 0 (as Ruby raises `ArgumentError`): a queue that holds
    /// nothing could never take a push.
    pub fn new(max: usize) -> SizedQueue<T> {
        assert_positive(max);
        SizedQueue {
            queue: Queue::with_max(Some(max)),
        }
    }

    /// Adds `item` at the back, or hands it to the first thread waiting in a
    /// pop; waits while the queue is full (a green thread parks, another
    /// thread blocks), and waiting pushers go in in arrival order.
    ///
    /// # Errors
    ///
    /// [`PushError`], with the item, if the queue is closed, or is closed
    /// while the push waits.
    ///
    /// # Panics
    ///
    /// As [`Queue::pop`]: unwinds if the calling green thread is cancelled
    /// (or its `timeout` expires) while it waits; its item is then dropped,
    /// not pushed.
    pub fn push(&self, item: T) -> Result<(), PushError<T>> {
        self.queue.push(item)
    }

    /// Adds `item` if there is room (or a popper waits), without waiting
    /// (Ruby's `push(item, true)`, which raises where this returns `Err`).
    ///
    /// # Errors
    ///
    /// [`TryPushError::Full`] or [`TryPushError::Closed`], with the item.
    pub fn try_push(&self, item: T) -> Result<(), TryPushError<T>> {
        self.queue
            .shared
            .push(item, false, None)
            .map_err(|(item, stop)| match stop {
                Stop::Nothing => TryPushError::Full(item),
                Stop::Closed => TryPushError::Closed(item),
            })
    }

    /// Like [`push`](SizedQueue::push), but gives up once `timeout` has
    /// passed (Ruby's `push(item, timeout:)`).
    ///
    /// # Errors
    ///
    /// [`PushTimeoutError::Timeout`] or [`PushTimeoutError::Closed`], with
    /// the item.
    ///
    /// # Panics
    ///
    /// As [`push`](SizedQueue::push).
    pub fn push_timeout(&self, item: T, timeout: Duration) -> Result<(), PushTimeoutError<T>> {
        let deadline = deadline_after(Instant::now(), timeout);
        self.queue
            .shared
            .push(item, true, Some(deadline))
            .map_err(|(item, stop)| match stop {
                Stop::Nothing => PushTimeoutError::Timeout(item),
                Stop::Closed => PushTimeoutError::Closed(item),
            })
    }

    /// The most items the queue holds (Ruby's `max`).
    pub fn max(&self) -> usize {
        self.queue.shared.max().expect("a sized queue has a max")
    }

    /// Changes the most items the queue holds (Ruby's `max=`). Raising it
    /// lets waiting pushers in at once, as many as now fit; lowering it below
    /// the length keeps the items, and pushes wait until pops bring the
    /// length under it.
    ///
    /// # Panics
    ///
    /// If `max` is 0, as [`new`](SizedQueue::new).
    pub fn set_max(&self, max: usize) {
        assert_positive(max);
        self.queue.shared.set_max(max);
    }
}

fn assert_positive(max: usize) {
    assert!(max > 0, "fibra: a SizedQueue's max must be at least 1");
}

impl<T> Deref for SizedQueue<T> {
    type Target = Queue<T>;

    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T> Clone for SizedQueue<T> {
    fn clone(&self) -> SizedQueue<T> {
        SizedQueue {
            queue: self.queue.clone(),
        }
    }
}

impl<T> fmt::Debug for SizedQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (len, closed, waiting) = self.shared.snapshot();
        f.debug_struct("SizedQueue")
            .field("max", &self.max())
            .field("len", &len)
            .field("closed", &closed)
            .field("num_waiting", &waiting)
            .finish()
    }
}

/// An iterator that [`pop`](Queue::pop)s until the queue is closed and empty
/// (see [`Queue::iter`]).
#[derive(Debug)]
pub struct Iter<'a, T> {
    queue: &'a Queue<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.queue.pop()
    }
}

/// An owning iterator that [`pop`](Queue::pop)s until the queue is closed and
/// empty.
#[derive(Debug)]
pub struct IntoIter<T> {
    queue: Queue<T>,
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.queue.pop()
    }
}

impl<T> IntoIterator for Queue<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> IntoIter<T> {
        IntoIter { queue: self }
    }
}

impl<'a, T> IntoIterator for &'a Queue<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> IntoIterator for SizedQueue<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> IntoIter<T> {
        self.queue.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a SizedQueue<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.queue.iter()
    }
}

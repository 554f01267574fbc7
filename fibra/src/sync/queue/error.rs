//! Why a queue operation did not happen. Errors of pushes give the item back.

use std::error::Error;
use std::fmt;

/// [`Queue::push`](super::Queue::push) (or
/// [`SizedQueue::push`](super::SizedQueue::push)) failed because the queue is
/// closed (Ruby's `ClosedQueueError`); the item is returned.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PushError<T>(pub T);

impl<T> PushError<T> {
    /// The item that was not pushed.
    pub fn into_inner(self) -> T {
        self.0
    }
}

/// Why [`SizedQueue::try_push`](super::SizedQueue::try_push) did not push; the
/// item is returned.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TryPushError<T> {
    /// The queue is full.
    Full(T),
    /// The queue is closed.
    Closed(T),
}

impl<T> TryPushError<T> {
    /// The item that was not pushed.
    pub fn into_inner(self) -> T {
        match self {
            TryPushError::Full(item) | TryPushError::Closed(item) => item,
        }
    }

    /// Whether the queue was full.
    pub fn is_full(&self) -> bool {
        matches!(self, TryPushError::Full(_))
    }

    /// Whether the queue was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, TryPushError::Closed(_))
    }
}

/// Why [`SizedQueue::push_timeout`](super::SizedQueue::push_timeout) did not
/// push; the item is returned.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PushTimeoutError<T> {
    /// The time ran out while the queue stayed full.
    Timeout(T),
    /// The queue is closed (or was closed while the push waited).
    Closed(T),
}

impl<T> PushTimeoutError<T> {
    /// The item that was not pushed.
    pub fn into_inner(self) -> T {
        match self {
            PushTimeoutError::Timeout(item) | PushTimeoutError::Closed(item) => item,
        }
    }

    /// Whether the time ran out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, PushTimeoutError::Timeout(_))
    }

    /// Whether the queue was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, PushTimeoutError::Closed(_))
    }
}

/// Why [`Queue::try_pop`](super::Queue::try_pop) returned no item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryPopError {
    /// No item now, but the queue is open: one may still be pushed.
    Empty,
    /// No item, and the queue is closed: none will ever come.
    Closed,
}

impl TryPopError {
    /// Whether the queue was only empty for now.
    pub fn is_empty(&self) -> bool {
        matches!(self, TryPopError::Empty)
    }

    /// Whether the queue was closed (and empty).
    pub fn is_closed(&self) -> bool {
        matches!(self, TryPopError::Closed)
    }
}

/// Why [`Queue::pop_timeout`](super::Queue::pop_timeout) returned no item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopTimeoutError {
    /// The time ran out while the queue stayed empty.
    Timeout,
    /// No item, and the queue is closed: none will ever come.
    Closed,
}

impl PopTimeoutError {
    /// Whether the time ran out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, PopTimeoutError::Timeout)
    }

    /// Whether the queue was closed (and empty).
    pub fn is_closed(&self) -> bool {
        matches!(self, PopTimeoutError::Closed)
    }
}

// The messages do not require `T: Debug`: they say what failed, not with what.
impl<T> fmt::Debug for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PushError").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPushError::Full(_) => f.write_str("Full(..)"),
            TryPushError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

impl<T> fmt::Debug for PushTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushTimeoutError::Timeout(_) => f.write_str("Timeout(..)"),
            PushTimeoutError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

const PUSH_CLOSED: &str = "pushing to a closed queue";
const POP_CLOSED: &str = "popping from a closed, empty queue";

impl<T> fmt::Display for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PUSH_CLOSED)
    }
}

impl<T> fmt::Display for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPushError::Full(_) => f.write_str("pushing to a full queue"),
            TryPushError::Closed(_) => f.write_str(PUSH_CLOSED),
        }
    }
}

impl<T> fmt::Display for PushTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushTimeoutError::Timeout(_) => {
                f.write_str("timed out pushing to a queue that stayed full")
            }
            PushTimeoutError::Closed(_) => f.write_str(PUSH_CLOSED),
        }
    }
}

impl fmt::Display for TryPopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryPopError::Empty => f.write_str("popping from an empty queue"),
            TryPopError::Closed => f.write_str(POP_CLOSED),
        }
    }
}

impl fmt::Display for PopTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PopTimeoutError::Timeout => {
                f.write_str("timed out popping from a queue that stayed empty")
            }
            PopTimeoutError::Closed => f.write_str(POP_CLOSED),
        }
    }
}

impl<T> Error for PushError<T> {}
impl<T> Error for TryPushError<T> {}
impl<T> Error for PushTimeoutError<T> {}
impl Error for TryPopError {}
impl Error for PopTimeoutError {}

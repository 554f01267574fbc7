//! What can go wrong between Ractors, as values: nothing hangs and nothing is
//! lost without an error.

use std::any::Any;
use std::fmt;

/// A send to a Ractor whose incoming port is closed (it closed it, or it has
/// finished). The message comes back.
#[derive(PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the Ractor's incoming port is closed")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// A port is closed. For a `yield_value`, the value comes back in it.
#[derive(Debug, PartialEq, Eq)]
pub struct Closed<T = ()>(pub T);

impl<T> fmt::Display for Closed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the port is closed")
    }
}

impl<T: fmt::Debug> std::error::Error for Closed<T> {}

/// Why a `take` got no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakeError {
    /// The Ractor closed its outgoing port, or finished, and offers nothing
    /// more (Ruby's `Ractor::ClosedError`).
    Closed,
    /// The Ractor panicked (Ruby's `Ractor::RemoteError`); the panic message.
    Panicked(String),
    /// The Ractor was cancelled (its pool was dropped).
    Cancelled,
}

impl fmt::Display for TakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TakeError::Closed => f.write_str("the Ractor's outgoing port is closed"),
            TakeError::Panicked(message) => write!(f, "the Ractor panicked: {message}"),
            TakeError::Cancelled => f.write_str("the Ractor was cancelled"),
        }
    }
}

impl std::error::Error for TakeError {}

/// Why a Ractor gave no final value (Ruby's `Ractor::RemoteError`).
pub enum RemoteError {
    /// Its body panicked; the payload is what it panicked with.
    Panicked(Box<dyn Any + Send>),
    /// It was cancelled: its pool was dropped while it ran.
    Cancelled,
    /// Another handle of the same Ractor has already joined it and taken the
    /// value.
    AlreadyJoined,
}

impl RemoteError {
    /// The panic message, when the payload is a string.
    pub fn message(&self) -> Option<&str> {
        match self {
            RemoteError::Panicked(payload) => panic_message(&**payload),
            _ => None,
        }
    }

    /// The panic's payload, to re-raise it with `std::panic::resume_unwind`.
    pub fn into_panic(self) -> Option<Box<dyn Any + Send>> {
        match self {
            RemoteError::Panicked(payload) => Some(payload),
            _ => None,
        }
    }
}

pub(super) fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

impl fmt::Debug for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteError::Panicked(_) => f
                .debug_tuple("Panicked")
                .field(&self.message().unwrap_or(".."))
                .finish(),
            RemoteError::Cancelled => f.write_str("Cancelled"),
            RemoteError::AlreadyJoined => f.write_str("AlreadyJoined"),
        }
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteError::Panicked(_) => match self.message() {
                Some(message) => write!(f, "the Ractor panicked: {message}"),
                None => f.write_str("the Ractor panicked"),
            },
            RemoteError::Cancelled => f.write_str("the Ractor was cancelled"),
            RemoteError::AlreadyJoined => {
                f.write_str("the Ractor was already joined through another handle")
            }
        }
    }
}

impl std::error::Error for RemoteError {}

//! Why a broadcast operation did not happen.

use std::error::Error;
use std::fmt;

/// [`Sender::send`](super::Sender::send) failed because no
/// [`Receiver`](super::Receiver) exists; the message is returned.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> SendError<T> {
    /// The message that was not sent.
    pub fn into_inner(self) -> T {
        self.0
    }
}

/// Why [`Receiver::recv`](super::Receiver::recv) returned no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvError {
    /// Every sender is gone, and this receiver has received every message
    /// that was kept for it.
    Closed,
    /// The receiver fell behind: this many of the oldest messages it had not
    /// received were overwritten by newer ones, and it will not see them. Its
    /// next receive gives the oldest message still kept.
    Lagged(u64),
}

/// Why [`Receiver::try_recv`](super::Receiver::try_recv) returned no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryRecvError {
    /// No message now, but a sender may still send one.
    Empty,
    /// Every sender is gone, and every message has been received.
    Closed,
    /// The receiver fell behind by this many messages (see
    /// [`RecvError::Lagged`]).
    Lagged(u64),
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

const NO_RECEIVER: &str = "sending on a broadcast channel with no receiver";
const CLOSED: &str = "receiving on a closed broadcast channel";

fn lagged(f: &mut fmt::Formatter<'_>, missed: u64) -> fmt::Result {
    write!(f, "the receiver lagged behind and missed {missed} messages")
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(NO_RECEIVER)
    }
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvError::Closed => f.write_str(CLOSED),
            RecvError::Lagged(missed) => lagged(f, *missed),
        }
    }
}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryRecvError::Empty => f.write_str("receiving on an empty broadcast channel"),
            TryRecvError::Closed => f.write_str(CLOSED),
            TryRecvError::Lagged(missed) => lagged(f, *missed),
        }
    }
}

impl<T> Error for SendError<T> {}
impl Error for RecvError {}
impl Error for TryRecvError {}

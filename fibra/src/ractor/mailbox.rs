//! A Ractor's incoming port (Ruby's `Ractor#send` / `Ractor.receive`): a queue
//! that any thread may push to and the Ractor pops from, in order.
//!
//! One lock per mailbox, held for a push or a pop and never while anyone
//! sleeps; there is no lock shared between mailboxes.

use super::error::{Closed, SendError};
use crate::runtime::WaitReason;
use crate::runtime::waiter::{self, Waiter};
use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

pub(super) struct Mailbox<T> {
    state: Mutex<State<T>>,
}

struct State<T> {
    queue: VecDeque<T>,
    closed: bool,
    /// The Ractor's thread, while it waits for a message.
    receiver: Option<Waiter>,
}

impl<T> Mailbox<T> {
    pub(super) fn new() -> Mailbox<T> {
        Mailbox {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                closed: false,
                receiver: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `message`, or hands it back if the port is closed.
    pub(super) fn send(&self, message: T) -> Result<(), SendError<T>> {
        let receiver = {
            let mut state = self.lock();
            if state.closed {
                return Err(SendError(message));
            }
            state.queue.push_back(message);
            state.receiver.take()
        };
        if let Some(receiver) = receiver {
            receiver.wake();
        }
        Ok(())
    }

    /// The next message, waiting for one; `Err(Closed)` once the port is closed
    /// and every message sent before has been received.
    pub(super) fn receive(&self) -> Result<T, Closed> {
        loop {
            {
                let mut state = self.lock();
                if let Some(message) = state.queue.pop_front() {
                    return Ok(message);
                }
                if state.closed {
                    return Err(Closed(()));
                }
                state.receiver = Some(Waiter::current());
            }
            waiter::wait(WaitReason::RactorReceive);
        }
    }

    /// The next message if one is there.
    pub(super) fn try_receive(&self) -> Result<Option<T>, Closed> {
        let mut state = self.lock();
        match state.queue.pop_front() {
            Some(message) => Ok(Some(message)),
            None if state.closed => Err(Closed(())),
            None => Ok(None),
        }
    }

    /// Closes the port: later sends fail; messages already queued can still be
    /// received. Returns whether it was open.
    pub(super) fn close(&self) -> bool {
        let (was_open, receiver) = {
            let mut state = self.lock();
            (
                !std::mem::replace(&mut state.closed, true),
                state.receiver.take(),
            )
        };
        if let Some(receiver) = receiver {
            receiver.wake();
        }
        was_open
    }
}

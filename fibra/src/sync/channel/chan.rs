//! The state a channel's handles share, and the operations on it.
//!
//! Operations complete by hand-off, as Go's channels do: a sender that finds a
//! receiver waiting gives it the message directly, a receiver that frees a slot
//! of a full bounded channel moves the first waiting sender's message into it,
//! and a receiver of a rendezvous channel takes the message from the first
//! waiting sender. So an operation is complete the moment its counterpart
//! arrives, and a woken waiter only collects its verdict: nobody overtakes a
//! waiter, and a waiter that unwinds (is cancelled) knows exactly what happened
//! to its message. Invariants, between operations:
//!
//! - receivers wait only while the buffer is empty;
//! - senders wait only while the buffer is full (or the channel is a
//!   rendezvous one), so a new sender cannot overtake them.
//!
//! A waiter that belongs to a [`Select`](super::Select) carries the select's
//! token: the first counterpart to claim it completes that operation, and the
//! select's other waiters are skipped until the select withdraws them.

use super::error::{TryRecvError, TrySendError};
use crate::sync::waitlist::{Sleeper, WaitList};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::mem;
use std::rc::Rc;

pub(super) struct Chan<T> {
    pub(super) state: RefCell<State<T>>,
}

pub(super) struct State<T> {
    buffer: VecDeque<T>,
    /// `None`: unbounded; `Some(0)`: rendezvous.
    cap: Option<usize>,
    senders: usize,
    receivers: usize,
    pub(super) send_waiters: WaitList<Waiter<T>>,
    pub(super) recv_waiters: WaitList<Waiter<T>>,
}

/// The operation a select performed, shared by all its waiters: the first
/// counterpart that claims one of them writes its index here.
pub(super) type Token = Rc<Cell<Option<usize>>>;

pub(super) struct Waiter<T> {
    /// Whom to wake (set when the waiter is queued).
    pub(super) sleeper: Option<Sleeper>,
    /// For a select's operation: its token and its index in the select.
    pub(super) select: Option<(Token, usize)>,
    /// A waiting sender's message; the message delivered to a receiver.
    pub(super) msg: Option<T>,
    pub(super) status: Status,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    /// Not complete yet.
    Waiting,
    /// Sent, or received (the message is in `msg`).
    Done,
    /// The other side disconnected (a sender's message is still in `msg`).
    Disconnected,
    /// A select's send whose outcome has been collected.
    Spent,
}

impl<T> Waiter<T> {
    pub(super) fn new(sleeper: Option<Sleeper>, msg: Option<T>) -> Waiter<T> {
        Waiter {
            sleeper,
            select: None,
            msg,
            status: Status::Waiting,
        }
    }

    /// Marks the waiter taken by this operation: always for a plain one, for a
    /// select's only if none of the select's other operations was taken.
    fn claim(&self) -> bool {
        match &self.select {
            None => true,
            Some((token, index)) => {
                token.get().is_none() && {
                    token.set(Some(*index));
                    true
                }
            }
        }
    }

    fn complete(&mut self, status: Status) {
        self.status = status;
        if let Some(sleeper) = &self.sleeper {
            sleeper.wake();
        }
    }
}

/// Unlinks the first waiter that can still be taken and claims it; a select's
/// waiter whose select already has its operation is dropped from the queue.
fn pop_claimed<T>(list: &mut WaitList<Waiter<T>>) -> Option<&mut Waiter<T>> {
    while let Some(key) = list.pop_front() {
        if list.get(key).claim() {
            return Some(list.get_mut(key));
        }
    }
    None
}

impl<T> Chan<T> {
    pub(super) fn new(cap: Option<usize>) -> Chan<T> {
        Chan {
            state: RefCell::new(State {
                buffer: VecDeque::new(),
                cap,
                senders: 1,
                receivers: 1,
                send_waiters: WaitList::new(),
                recv_waiters: WaitList::new(),
            }),
        }
    }
}

impl<T> State<T> {
    /// Sends without waiting: to the first waiting receiver, else into the
    /// buffer if it has room.
    pub(super) fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        if self.receivers == 0 {
            return Err(TrySendError::Disconnected(msg));
        }
        if let Some(receiver) = pop_claimed(&mut self.recv_waiters) {
            receiver.msg = Some(msg);
            receiver.complete(Status::Done);
            return Ok(());
        }
        if self.cap.is_none_or(|cap| self.buffer.len() < cap) {
            self.buffer.push_back(msg);
            return Ok(());
        }
        Err(TrySendError::Full(msg))
    }

    /// Receives without waiting: from the buffer (letting the first waiting
    /// sender into the room made), else from the first waiting sender.
    pub(super) fn try_recv(&mut self) -> Result<T, TryRecvError> {
        if let Some(msg) = self.buffer.pop_front() {
            if self.cap.is_some_and(|cap| self.buffer.len() < cap)
                && let Some(sender) = pop_claimed(&mut self.send_waiters)
            {
                let next = sender.msg.take().expect("a waiting sender has a message");
                sender.complete(Status::Done);
                self.buffer.push_back(next);
            }
            return Ok(msg);
        }
        if let Some(sender) = pop_claimed(&mut self.send_waiters) {
            let msg = sender.msg.take().expect("a waiting sender has a message");
            sender.complete(Status::Done);
            return Ok(msg);
        }
        if self.senders == 0 {
            Err(TryRecvError::Disconnected)
        } else {
            Err(TryRecvError::Empty)
        }
    }

    /// Takes back a message delivered to a receiver that left without it (it
    /// was cancelled): it goes to the next waiting receiver, or to the front of
    /// the queue, where it was. Returns it if no receiver is left at all, to be
    /// dropped once the state is no longer borrowed.
    pub(super) fn give_back(&mut self, msg: T) -> Option<T> {
        if self.receivers == 0 {
            return Some(msg);
        }
        if let Some(receiver) = pop_claimed(&mut self.recv_waiters) {
            receiver.msg = Some(msg);
            receiver.complete(Status::Done);
        } else {
            self.buffer.push_front(msg);
        }
        None
    }

    pub(super) fn len(&self) -> usize {
        self.buffer.len()
    }

    pub(super) fn capacity(&self) -> Option<usize> {
        self.cap
    }

    pub(super) fn add_sender(&mut self) {
        self.senders += 1;
    }

    pub(super) fn add_receiver(&mut self) {
        self.receivers += 1;
    }

    /// A sender is gone; if it was the last, every waiting receiver learns that
    /// no message will come.
    pub(super) fn remove_sender(&mut self) {
        self.senders -= 1;
        if self.senders == 0 {
            while let Some(receiver) = pop_claimed(&mut self.recv_waiters) {
                receiver.complete(Status::Disconnected);
            }
        }
    }

    /// A receiver is gone; if it was the last, every waiting sender gets its
    /// message back, and the buffered messages, which nobody can receive now,
    /// are returned to be dropped once the state is no longer borrowed.
    #[must_use]
    pub(super) fn remove_receiver(&mut self) -> VecDeque<T> {
        self.receivers -= 1;
        if self.receivers > 0 {
            return VecDeque::new();
        }
        while let Some(sender) = pop_claimed(&mut self.send_waiters) {
            sender.complete(Status::Disconnected);
        }
        mem::take(&mut self.buffer)
    }

    pub(super) fn is_disconnected_for_receivers(&self) -> bool {
        self.senders == 0
    }

    pub(super) fn is_disconnected_for_senders(&self) -> bool {
        self.receivers == 0
    }
}

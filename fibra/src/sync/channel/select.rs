//! Waiting on several channel operations at once.

use super::chan::{Chan, Status, Token, Waiter};
use super::error::{RecvError, SelectTimeoutError, SendError, TryRecvError, TrySelectError};
use super::{Receiver, Sender};
use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use crate::sync::waitlist::Sleeper;
use crate::time::deadline_after;
use std::cell::Cell;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Waits until one of several channel operations can complete, and completes
/// exactly that one (Go's `select`, crossbeam-channel's `Select`).
///
/// Add operations with [`recv`](Select::recv) and [`send`](Select::send); each
/// returns the operation's index. [`wait`](Select::wait) parks the green thread
/// until one of them completes and returns a [`SelectedOperation`]: look at its
/// [`index`](SelectedOperation::index), then collect the outcome with
/// [`SelectedOperation::recv`] or [`SelectedOperation::send`], passing the same
/// channel handle (the handle gives the outcome its type). Only the selected
/// operation happens; the others leave their channels untouched.
/// [`try_wait`](Select::try_wait) (Go's `default:`) and
/// [`wait_timeout`](Select::wait_timeout) bound the wait.
///
/// A send operation owns its message from the start. If another operation is
/// selected, the message stays in the `Select`: the send remains armed for the
/// next `wait`, and dropping the `Select` drops the message. A completed send
/// is spent: later `wait`s skip it. A receive stays armed after it completes,
/// so a `Select` of receives can serve a loop.
///
/// An operation on a disconnected channel is ready at once: its outcome is the
/// error ([`RecvError`], or [`SendError`] with the message).
///
/// When several operations are ready, one is picked at random, each with
/// equal chance, so that a busy channel does not starve the others; when the
/// select waits and its counterpart could complete several of its operations
/// (several sends on one channel, say), it completes one of them at random
/// too.
///
/// ```
/// use fibra::sync::channel::{self, Select};
/// use std::time::Duration;
///
/// fibra::run(|| {
///     let (jobs_tx, jobs_rx) = channel::rendezvous();
///     let (quit_tx, quit_rx) = channel::unbounded::<()>();
///     let worker = fibra::spawn(move || {
///         let mut done = Vec::new();
///         loop {
///             let mut sel = Select::new();
///             let job = sel.recv(&jobs_rx);
///             let quit = sel.recv(&quit_rx);
///             let op = sel.wait();
///             match op.index() {
///                 i if i == job => done.push(op.recv(&jobs_rx).unwrap()),
///                 i if i == quit => {
///                     op.recv(&quit_rx).unwrap();
///                     return done;
///                 }
///                 _ => unreachable!(),
///             }
///         }
///     });
///     for n in 1..=3 {
///         jobs_tx.send(n).unwrap(); // a rendezvous: returns once the worker has it
///     }
///     quit_tx.send(()).unwrap();
///     assert_eq!(worker.join().unwrap(), [1, 2, 3]);
///
///     // Sends, and a timeout.
///     let (tx, rx) = channel::bounded(1);
///     let mut sel = Select::new();
///     let first = sel.send(&tx, "first");
///     let second = sel.send(&tx, "second");
///     let op = sel.wait_timeout(Duration::from_millis(10)).unwrap();
///     let sent = op.index();
///     assert!(sent == first || sent == second);
///     op.send(&tx).unwrap();
///     // The channel is full now: the other send cannot complete.
///     assert!(sel.wait_timeout(Duration::from_millis(10)).is_err());
///     drop(sel); // drops the unsent message
///     assert_eq!(rx.try_recv().unwrap(), if sent == first { "first" } else { "second" });
/// });
/// ```
///
/// `Select` is `!Send`, like the handles it borrows.
pub struct Select<'a> {
    cases: Vec<Box<dyn Case + 'a>>,
    /// The indices of `cases`, shuffled anew at each look (see `select`).
    order: Vec<usize>,
    token: Token,
}

/// The operation a [`Select`] performed. Collect its outcome with
/// [`recv`](SelectedOperation::recv) or [`send`](SelectedOperation::send),
/// according to its [`index`](SelectedOperation::index).
///
/// If it is dropped uncollected, the operation stays complete: the next
/// [`Select::wait`] returns it again at once, and dropping the `Select` gives a
/// received message back to its channel (to the next receiver, or to the front
/// of the queue).
#[must_use = "the outcome of the selected operation should be collected with `recv` or `send`"]
pub struct SelectedOperation<'s, 'a> {
    select: &'s mut Select<'a>,
    index: usize,
}

impl<'a> Select<'a> {
    /// A select with no operations yet.
    pub fn new() -> Select<'a> {
        Select {
            cases: Vec::new(),
            order: Vec::new(),
            token: Rc::new(Cell::new(None)),
        }
    }

    /// Adds an operation that receives from `rx`, and returns its index.
    pub fn recv<T>(&mut self, rx: &'a Receiver<T>) -> usize {
        let index = self.cases.len();
        let key = rx.chan.state.borrow_mut().recv_waiters.insert(Waiter {
            select: Some((self.token.clone(), index)),
            ..Waiter::new(None, None)
        });
        self.order.push(index);
        self.cases.push(Box::new(RecvCase {
            chan: &rx.chan,
            key,
        }));
        index
    }

    /// Adds an operation that sends `msg` on `tx`, and returns its index. The
    /// message is sent only if this operation is selected.
    pub fn send<T>(&mut self, tx: &'a Sender<T>, msg: T) -> usize {
        let index = self.cases.len();
        let key = tx.chan.state.borrow_mut().send_waiters.insert(Waiter {
            select: Some((self.token.clone(), index)),
            ..Waiter::new(None, Some(msg))
        });
        self.order.push(index);
        self.cases.push(Box::new(SendCase {
            chan: &tx.chan,
            key,
        }));
        index
    }

    /// Parks until one of the operations completes, and returns it.
    ///
    /// # Panics
    ///
    /// If there is no armed operation (none was added, or every one is a spent
    /// send), since nothing could end the wait; if it must wait and the caller
    /// is not a green thread. Unwinds if the calling thread is cancelled while
    /// it waits; no operation then happened.
    pub fn wait(&mut self) -> SelectedOperation<'_, 'a> {
        assert!(
            self.cases.iter().any(|case| !case.is_spent()),
            "fibra: Select::wait with no operation to wait for would wait forever"
        );
        let index = self.select(Deadline::Never).expect("no deadline");
        self.selected(index)
    }

    /// Completes an operation that can complete without waiting, if any (Go's
    /// `select` with a `default:` arm).
    ///
    /// # Errors
    ///
    /// [`TrySelectError`] if no operation is ready.
    pub fn try_wait(&mut self) -> Result<SelectedOperation<'_, 'a>, TrySelectError> {
        match self.select(Deadline::Now) {
            Some(index) => Ok(self.selected(index)),
            None => Err(TrySelectError),
        }
    }

    /// Like [`wait`](Select::wait), but gives up once `timeout` has passed.
    ///
    /// # Errors
    ///
    /// [`SelectTimeoutError`] if no operation completed in time.
    pub fn wait_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<SelectedOperation<'_, 'a>, SelectTimeoutError> {
        self.wait_deadline(deadline_after(Instant::now(), timeout))
    }

    /// Like [`wait`](Select::wait), but gives up at `deadline`.
    ///
    /// # Errors
    ///
    /// [`SelectTimeoutError`] if no operation completed in time.
    pub fn wait_deadline(
        &mut self,
        deadline: Instant,
    ) -> Result<SelectedOperation<'_, 'a>, SelectTimeoutError> {
        match self.select(Deadline::At(deadline)) {
            Some(index) => Ok(self.selected(index)),
            None => Err(SelectTimeoutError),
        }
    }

    fn selected(&mut self, index: usize) -> SelectedOperation<'_, 'a> {
        SelectedOperation {
            select: self,
            index,
        }
    }

    /// The index of the operation completed, or `None` at the deadline.
    fn select(&mut self, deadline: Deadline) -> Option<usize> {
        // An operation completed earlier whose outcome was not collected.
        if let Some(index) = self.cases.iter().position(|case| case.is_complete()) {
            return Some(index);
        }
        loop {
            // The operations are looked at in a random order, drawn step by
            // step (Fisher–Yates) until one completes: the first ready one in
            // a uniformly random order is each of the ready ones with equal
            // chance, however many are not ready and wherever they are.
            let count = self.order.len();
            for i in 0..count {
                self.order.swap(i, i + random_below(count - i));
                let index = self.order[i];
                if self.cases[index].try_complete() {
                    return Some(index);
                }
            }
            let deadline = match deadline {
                Deadline::Now => return None,
                Deadline::At(at) if Instant::now() >= at => return None,
                Deadline::At(at) => Some(at),
                Deadline::Never => None,
            };
            let scheduler = scheduler::current();
            self.token.set(None);
            let sleeper = Sleeper::running(&scheduler);
            let queued = Queued(&self.cases);
            // Queued in that random order too: a counterpart takes the first
            // waiter of its channel's queue, so several operations of this
            // select on one channel are each chosen with equal chance.
            for &index in &self.order {
                self.cases[index].queue(&sleeper);
            }
            let _timer = deadline.map(|deadline| scheduler.arm_timer(deadline));
            scheduler.park_on(WaitReason::ChannelSelect);
            drop(queued);
            if let Some(index) = self.token.get() {
                return Some(index);
            }
        }
    }
}

impl Default for Select<'_> {
    fn default() -> Self {
        Select::new()
    }
}

impl fmt::Debug for Select<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Select")
            .field("operations", &self.cases.len())
            .finish()
    }
}

impl<'s, 'a> SelectedOperation<'s, 'a> {
    /// The index of the operation, as [`Select::recv`] or [`Select::send`]
    /// returned it.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The outcome of the selected receive: the message, or [`RecvError`] if
    /// the channel was empty and disconnected.
    ///
    /// # Errors
    ///
    /// [`RecvError`] if the channel was empty and every sender gone.
    ///
    /// # Panics
    ///
    /// If the selected operation is not a receive from `rx`'s channel.
    pub fn recv<T>(self, rx: &Receiver<T>) -> Result<T, RecvError> {
        let key = self.check(
            false,
            Rc::as_ptr(&rx.chan).cast(),
            "a receive from this receiver",
        );
        let mut state = rx.chan.state.borrow_mut();
        let waiter = state.recv_waiters.get_mut(key);
        // Re-arm the receive for the next wait.
        let status = std::mem::replace(&mut waiter.status, Status::Waiting);
        match status {
            Status::Done => Ok(waiter.msg.take().expect("a received message")),
            // See `Receiver::recv`: a message may have been given back since.
            Status::Disconnected => state.try_recv().map_err(|_| RecvError),
            status => unreachable!("a selected receive is {status:?}"),
        }
    }

    /// The outcome of the selected send: `Ok` if the message was sent, or
    /// [`SendError`] with the message if every receiver was gone.
    ///
    /// # Errors
    ///
    /// [`SendError`], with the message, if every receiver was gone.
    ///
    /// # Panics
    ///
    /// If the selected operation is not a send on `tx`'s channel.
    pub fn send<T>(self, tx: &Sender<T>) -> Result<(), SendError<T>> {
        let key = self.check(true, Rc::as_ptr(&tx.chan).cast(), "a send on this sender");
        let mut state = tx.chan.state.borrow_mut();
        let waiter = state.send_waiters.get_mut(key);
        let status = std::mem::replace(&mut waiter.status, Status::Spent);
        match status {
            Status::Done => Ok(()),
            Status::Disconnected => Err(SendError(waiter.msg.take().expect("an unsent message"))),
            status => unreachable!("a selected send is {status:?}"),
        }
    }

    /// The key of the selected operation's waiter, if it is a send (or not) on
    /// the channel at `chan`.
    fn check(&self, send: bool, chan: *const (), what: &str) -> usize {
        let case = &self.select.cases[self.index];
        assert!(
            case.is_send() == send && case.chan() == chan,
            "fibra: the selected operation (index {}) is not {what}",
            self.index
        );
        case.key()
    }
}

impl fmt::Debug for SelectedOperation<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectedOperation")
            .field("index", &self.index)
            .finish()
    }
}

#[derive(Clone, Copy)]
enum Deadline {
    Now,
    At(Instant),
    Never,
}

/// Withdraws a select's waiters from their queues however its park ends.
struct Queued<'c, 'a>(&'c [Box<dyn Case + 'a>]);

impl Drop for Queued<'_, '_> {
    fn drop(&mut self) {
        for case in self.0 {
            case.withdraw();
        }
    }
}

/// One operation of a select, whatever its message type. Its waiter lives in
/// its channel from the moment it is added until the select is dropped; it is
/// queued only while the select parks.
trait Case {
    /// Completes the operation if it can without waiting; whether it is
    /// complete (now, or from before).
    fn try_complete(&self) -> bool;
    /// Whether it has completed and its outcome is not collected yet.
    fn is_complete(&self) -> bool;
    /// A send whose outcome was collected: it takes no part any more.
    fn is_spent(&self) -> bool;
    /// Queues the waiter (unless spent), to wake `sleeper`.
    fn queue(&self, sleeper: &Sleeper);
    /// Takes the waiter out of its queue if it is still there.
    fn withdraw(&self);
    fn is_send(&self) -> bool;
    fn chan(&self) -> *const ();
    fn key(&self) -> usize;
}

struct RecvCase<'a, T> {
    chan: &'a Rc<Chan<T>>,
    key: usize,
}

struct SendCase<'a, T> {
    chan: &'a Rc<Chan<T>>,
    key: usize,
}

impl<T> Case for RecvCase<'_, T> {
    fn try_complete(&self) -> bool {
        let mut state = self.chan.state.borrow_mut();
        if state.recv_waiters.get(self.key).status != Status::Waiting {
            return true;
        }
        let outcome = state.try_recv();
        let waiter = state.recv_waiters.get_mut(self.key);
        match outcome {
            Ok(msg) => {
                waiter.msg = Some(msg);
                waiter.status = Status::Done;
            }
            Err(TryRecvError::Disconnected) => waiter.status = Status::Disconnected,
            Err(TryRecvError::Empty) => return false,
        }
        true
    }

    fn is_complete(&self) -> bool {
        let state = self.chan.state.borrow();
        matches!(
            state.recv_waiters.get(self.key).status,
            Status::Done | Status::Disconnected
        )
    }

    fn is_spent(&self) -> bool {
        false
    }

    fn queue(&self, sleeper: &Sleeper) {
        let mut state = self.chan.state.borrow_mut();
        state.recv_waiters.get_mut(self.key).sleeper = Some(sleeper.clone());
        state.recv_waiters.link_back(self.key);
    }

    fn withdraw(&self) {
        let mut state = self.chan.state.borrow_mut();
        state.recv_waiters.unlink(self.key);
        state.recv_waiters.get_mut(self.key).sleeper = None;
    }

    fn is_send(&self) -> bool {
        false
    }

    fn chan(&self) -> *const () {
        Rc::as_ptr(self.chan).cast()
    }

    fn key(&self) -> usize {
        self.key
    }
}

impl<T> Drop for RecvCase<'_, T> {
    fn drop(&mut self) {
        let mut state = self.chan.state.borrow_mut();
        let mut waiter = state.recv_waiters.remove(self.key);
        // A message received but never collected goes back to the channel.
        let leftover = waiter.msg.take().and_then(|msg| state.give_back(msg));
        drop(state);
        drop(waiter);
        drop(leftover);
    }
}

impl<T> Case for SendCase<'_, T> {
    fn try_complete(&self) -> bool {
        let mut state = self.chan.state.borrow_mut();
        let waiter = state.send_waiters.get_mut(self.key);
        match waiter.status {
            Status::Waiting => {}
            Status::Spent => return false,
            Status::Done | Status::Disconnected => return true,
        }
        let msg = waiter.msg.take().expect("an unsent message");
        let outcome = state.try_send(msg);
        let waiter = state.send_waiters.get_mut(self.key);
        match outcome {
            Ok(()) => waiter.status = Status::Done,
            Err(super::TrySendError::Disconnected(msg)) => {
                waiter.msg = Some(msg);
                waiter.status = Status::Disconnected;
            }
            Err(super::TrySendError::Full(msg)) => {
                waiter.msg = Some(msg);
                return false;
            }
        }
        true
    }

    fn is_complete(&self) -> bool {
        let state = self.chan.state.borrow();
        matches!(
            state.send_waiters.get(self.key).status,
            Status::Done | Status::Disconnected
        )
    }

    fn is_spent(&self) -> bool {
        self.chan.state.borrow().send_waiters.get(self.key).status == Status::Spent
    }

    fn queue(&self, sleeper: &Sleeper) {
        let mut state = self.chan.state.borrow_mut();
        let waiter = state.send_waiters.get_mut(self.key);
        if waiter.status == Status::Spent {
            return;
        }
        waiter.sleeper = Some(sleeper.clone());
        state.send_waiters.link_back(self.key);
    }

    fn withdraw(&self) {
        let mut state = self.chan.state.borrow_mut();
        state.send_waiters.unlink(self.key);
        state.send_waiters.get_mut(self.key).sleeper = None;
    }

    fn is_send(&self) -> bool {
        true
    }

    fn chan(&self) -> *const () {
        Rc::as_ptr(self.chan).cast()
    }

    fn key(&self) -> usize {
        self.key
    }
}

impl<T> Drop for SendCase<'_, T> {
    fn drop(&mut self) {
        // An unsent message is dropped once the channel is released.
        let waiter = self.chan.state.borrow_mut().send_waiters.remove(self.key);
        drop(waiter);
    }
}

/// A number below `n`, from a per-thread xorshift generator.
fn random_below(n: usize) -> usize {
    thread_local! {
        static STATE: Cell<u64> = Cell::new(RandomState::new().hash_one(0u8) | 1);
    }
    STATE.with(|state| {
        let mut x = state.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        state.set(x);
        ((x >> 32) as usize) % n
    })
}

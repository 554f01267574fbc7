//! A Ractor's incoming port (Ruby's `Ractor#send` / `Ractor.receive`): a queue
//! that any thread may push to and the Ractor pops from, in order.
//!
//! # The queue
//!
//! Lock-free, many producers and one consumer, after Dmitry Vyukov's intrusive
//! MPSC queue: a singly linked list of nodes, one per message (the message and
//! a pointer: memory per queued message is bounded by the message's size plus
//! one word and the allocator's header), with a *stub* at its head whose
//! message has already been taken. A sender allocates its node, swaps it into
//! `tail` (one read-modify-write) and links the node it displaced to it (one
//! store); the receiver follows `next` from its stub, moves the message out of
//! the next node, which becomes the stub, and frees the old one (or
//! keeps it for the next sender: below). A node is
//! freed only by the receiver, and only once it has moved past it — which
//! needs the node's `next`, which only the one sender that displaced it
//! writes, and then never touches it again.
//!
//! One consumer: only [`Context`](super::Context) calls [`Mailbox::receive`]
//! and [`Mailbox::try_receive`] (they are `unsafe` with that contract), and
//! `Context` is neither `Send` nor `Sync` and is only lent to the body, so
//! every call comes from the body's own OS thread; and no two overlap there,
//! since neither runs any code of the user's, and the only switch inside them
//! parks the body's green thread, which no other green thread can reach the
//! `Context` from (their closures are `'static`).
//!
//! # The state word, and waking the receiver
//!
//! `state` holds `CLOSED`, `WAITING` (the receiver is parked, or about to, and
//! `waiter` wakes it), the number of `WAKERS` (threads reading `waiter` to
//! wake the receiver) and, above them, the number of senders in flight. Every sender adds itself before it
//! looks at `CLOSED` and removes itself after it has linked its node; that
//! last read-modify-write is also its look at `WAITING`. The receiver sets
//! `WAITING` with a read-modify-write and then looks at the queue. All of
//! these are read-modify-writes on one atomic, so they are totally ordered and
//! no wake is lost: if the sender's removal comes after the receiver's
//! `WAITING`, the sender sees it and wakes the receiver; if it comes before,
//! the receiver's read-modify-write reads a value of the release sequence the
//! sender's removal is in, so (acquire) its node is linked and visible. A
//! sender still in flight (its node not yet linked, so the queue may look
//! empty or cut short) will see `WAITING` when it leaves. Likewise the count
//! makes `close` exact: a send either fails, or counts itself before `CLOSED`
//! is set, and the receiver reports the port closed only once it has seen
//! `CLOSED` with no sender in flight and then found the queue empty — so a
//! send that returned `Ok` is always received, never lost.
//!
//! The waiter is never read while the receiver writes it: a thread *claims*
//! the wake by clearing `WAITING` and counting itself among the `WAKERS` in
//! one compare-and-swap (so one registration is claimed once), wakes through
//! a reference and leaves the count (release). The receiver keeps its waiter
//! from one wait to the next, so a wait makes no new `Unparker` and touches
//! no reference count shared with other cores; it sets `WAITING` again at
//! once, even while a waker of its last wait is still leaving, since the
//! waiter that waker reads stays as it is. It writes `waiter` only when a
//! different thread receives (or its `Context` goes), and then only once it
//! has seen (acquire) no `WAITING` and no waker: none reads the slot, and
//! none can start to before `WAITING` is set again.
//!
//! Nodes: the receiver keeps the last stub it is done with as a *spare*
//! that the next sender takes (a swap) instead of allocating, so two Ractors
//! that talk back and forth allocate nothing per message — with two threads
//! each allocating what the other frees, the allocator's per-thread caches
//! fill up on one side and empty on the other, and every message would pay
//! for the allocator's locked slow path.
//!
//! What senders touch — `tail`, `state`, `waiter` and `spare` — shares one
//! cache line on purpose: a message between two Ractors moves that line to
//! the sender and back once, rather than several lines once each. The
//! receiver's `head` has a line of its own, so that taking a message that has
//! just arrived starts with a load that hits, not with a miss on the line the
//! sender wrote last; and the stub it is done with goes back as the spare (a
//! compare-and-swap on the senders' line) only when it next waits, off the
//! path from a message's arrival to its receipt.

use super::error::{Closed, SendError};
use crate::runtime::WaitReason;
use crate::runtime::spin::{self, GaveUp};
use crate::runtime::waiter::{self, Waiter};
use crossbeam_utils::Backoff;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// The port is closed: sends fail.
const CLOSED: usize = 1;
/// The receiver is parked (or about to park) and `waiter` wakes it.
const WAITING: usize = 2;
/// One thread that claimed a wake and is reading `waiter` (a count in bits
/// 2 to 21: one claimer per thread at most, so it cannot overflow).
const WAKER: usize = 1 << 2;
const WAKERS: usize = ((1 << 20) - 1) * WAKER;
/// One sender in flight (a count in the bits above).
const SENDER: usize = 1 << 22;
// The sender count has the 42 bits above `SENDER` on a 64-bit target, more than
// there can be threads; on a 32-bit one it would have 10 and could wrap.
const _: () = assert!(
    usize::BITS == 64,
    "the mailbox's sender count needs a 64-bit usize"
);

struct Node<T> {
    next: AtomicPtr<Node<T>>,
    /// Initialised from the send until the receiver moves it out (the stub's
    /// is not).
    message: MaybeUninit<T>,
}

impl<T> Node<T> {
    fn alloc(message: MaybeUninit<T>) -> *mut Node<T> {
        Box::into_raw(Box::new(Node {
            next: AtomicPtr::new(ptr::null_mut()),
            message,
        }))
    }
}

/// Two cache lines: what senders touch, then what only the receiver does
/// (see the module docs).
#[repr(C, align(64))]
pub(super) struct Mailbox<T> {
    /// The node sent last (the stub when the queue is empty).
    tail: AtomicPtr<Node<T>>,
    state: AtomicUsize,
    /// A node the receiver is done with, for the next sender to reuse (or
    /// null): two Ractors that talk back and forth allocate nothing.
    spare: AtomicPtr<Node<T>>,
    /// Wakes the receiver (written by the receiver only; see the module docs).
    waiter: UnsafeCell<Option<Waiter>>,
    /// The receiver's own line.
    receiver: ReceiverSide<T>,
    /// The mailbox owns the messages queued in it.
    _messages: PhantomData<T>,
}

/// What only the receiver touches, on a line of its own.
#[repr(align(64))]
struct ReceiverSide<T> {
    /// The stub: the one node whose message is taken.
    head: UnsafeCell<*mut Node<T>>,
    /// The stub before it, not yet handed back as the spare (null if none):
    /// that takes a compare-and-swap on the senders' line, done when the
    /// receiver next waits rather than before it returns a message.
    retired: UnsafeCell<*mut Node<T>>,
}

// SAFETY: `receiver` and the nodes from its `head` on are touched only by the one consumer
// (see the module docs on why there is one); `tail` and `next` are atomics and
// a node is freed only when no sender can reach it; `waiter` is written by the
// consumer only while no thread may read it, and otherwise only read (the
// WAITING/WAKERS protocol); the spare node belongs to whoever swapped it
// out. So a `Mailbox` is shared as the messages it carries move: from any thread to the consumer's. `Waiter` is `Send + Sync`.
unsafe impl<T: Send> Send for Mailbox<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Mailbox<T> {}

impl<T> Mailbox<T> {
    pub(super) fn new() -> Mailbox<T> {
        let stub = Node::alloc(MaybeUninit::uninit());
        Mailbox {
            tail: AtomicPtr::new(stub),
            state: AtomicUsize::new(0),
            spare: AtomicPtr::new(ptr::null_mut()),
            waiter: UnsafeCell::new(None),
            receiver: ReceiverSide {
                head: UnsafeCell::new(stub),
                retired: UnsafeCell::new(ptr::null_mut()),
            },
            _messages: PhantomData,
        }
    }

    /// Queues `message`, or hands it back if the port is closed.
    pub(super) fn send(&self, message: T) -> Result<(), SendError<T>> {
        let state = self.state.fetch_add(SENDER, Ordering::Acquire);
        if state & CLOSED != 0 {
            self.leave();
            return Err(SendError(message));
        }
        let node = self.node_for(message);
        // Release: the next sender, which links its node to ours, sees ours
        // initialised; acquire: ours to the one we displace.
        let prev = self.tail.swap(node, Ordering::AcqRel);
        // Release: the receiver that loads this pointer sees the message.
        // SAFETY: `prev` is alive: the receiver frees a node only after moving
        // past it, which needs its `next`, which only this store sets (we are
        // the one sender that displaced it).
        unsafe { (*prev).next.store(node, Ordering::Release) };
        self.leave();
        Ok(())
    }

    /// A node holding `message`: the spare one if there is one (acquire: the
    /// receiver is done with it), else a new one.
    fn node_for(&self, message: T) -> *mut Node<T> {
        let spare = self.spare.swap(ptr::null_mut(), Ordering::Acquire);
        if spare.is_null() {
            return Node::alloc(MaybeUninit::new(message));
        }
        // SAFETY: the swap made the spare node ours alone: the receiver put it
        // there when it was unreachable from the queue, and no other sender can
        // take it now.
        unsafe {
            (*spare).next = AtomicPtr::new(ptr::null_mut());
            (*spare).message = MaybeUninit::new(message);
        }
        spare
    }

    /// A sender is done (its node linked, or refused): removes it from the
    /// count and wakes the receiver if it waits.
    fn leave(&self) {
        if self.state.fetch_sub(SENDER, Ordering::AcqRel) & WAITING != 0 {
            self.wake_receiver();
        }
    }

    /// Claims the wake of a waiting receiver and wakes it; does nothing if the
    /// receiver does not wait or another thread has claimed it.
    fn wake_receiver(&self) {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & WAITING == 0 {
                return;
            }
            // Acquire: the value read carries the receiver's release of its
            // WAITING (read-modify-writes continue a release sequence), so the
            // waiter it wrote before is visible.
            match self.state.compare_exchange_weak(
                state,
                (state & !WAITING) + WAKER,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => state = now,
            }
        }
        // SAFETY: we count among the wakers: until we leave, the receiver
        // does not write `waiter` (other wakers may read it too).
        if let Some(waiter) = unsafe { &*self.waiter.get() } {
            waiter.wake();
        }
        // Release: our read of `waiter` happens before the receiver's next
        // write of it.
        self.state.fetch_sub(WAKER, Ordering::Release);
    }

    /// The next message, waiting for one; `Err(Closed)` once the port is closed
    /// and every message sent before has been received.
    ///
    /// # Safety
    ///
    /// No other call of `receive`, `try_receive` or `forget_receiver` on this
    /// mailbox may run at the same time (the single consumer: see the module
    /// docs).
    pub(super) unsafe fn receive(&self) -> Result<T, Closed> {
        loop {
            // SAFETY: the single consumer, the caller's contract.
            if let Some(message) = unsafe { self.pop() } {
                return Ok(message);
            }
            // SAFETY: the single consumer, the caller's contract.
            if let Ok(message) = unsafe { self.spin_for_message() } {
                return Ok(message);
            }
            // SAFETY: the single consumer, the caller's contract.
            let state = unsafe { self.register() };
            // SAFETY: the single consumer, the caller's contract.
            if let Some(message) = unsafe { self.pop() } {
                self.unregister();
                return Ok(message);
            }
            if state & CLOSED != 0 && state < SENDER {
                // Closed with no sender in flight (seen with acquire): nothing
                // more can come, and the queue is drained.
                self.unregister();
                return Err(Closed(()));
            }
            waiter::wait(WaitReason::RactorReceive);
        }
    }

    /// Looks for a message for a little while before the receiver parks, if
    /// its worker has nothing else to do (see `runtime::spin`): a sender
    /// that finds the receiver not `WAITING` wakes nobody, so the message's
    /// own cache lines are all that cross. Hands the last stub back as the
    /// spare first, while no message is on its way to being received.
    ///
    /// # Safety
    ///
    /// The single consumer only.
    unsafe fn spin_for_message(&self) -> Result<T, GaveUp> {
        // SAFETY (both): the caller's.
        unsafe { self.recycle_retired() };
        spin::poll_while_idle(spin::SPIN_FOR_MESSAGE, || unsafe { self.pop() })
    }

    /// The next message if one is there.
    ///
    /// # Safety
    ///
    /// As for [`Mailbox::receive`].
    pub(super) unsafe fn try_receive(&self) -> Result<Option<T>, Closed> {
        // SAFETY (this and the one below): the caller's.
        if let Some(message) = unsafe { self.pop() } {
            return Ok(Some(message));
        }
        let state = self.state.load(Ordering::Acquire);
        if state & CLOSED != 0 && state < SENDER {
            // Every send that succeeded has linked its node (acquire): one more
            // look settles it.
            // SAFETY: the single consumer, the caller's contract.
            return unsafe { self.pop() }.map(Some).ok_or(Closed(()));
        }
        Ok(None)
    }

    /// Drops the receiver's waiter (when its `Context` goes), so that a
    /// mailbox that outlives its Ractor keeps no `Unparker` alive.
    ///
    /// # Safety
    ///
    /// As for [`Mailbox::receive`].
    pub(super) unsafe fn forget_receiver(&self) {
        // SAFETY (both): the caller's; `quiesce` made the slot ours.
        unsafe {
            self.quiesce();
            *self.waiter.get() = None;
        }
    }

    /// Closes the port: later sends fail; messages already queued can still be
    /// received. Returns whether it was open.
    pub(super) fn close(&self) -> bool {
        let state = self.state.fetch_or(CLOSED, Ordering::AcqRel);
        if state & WAITING != 0 {
            self.wake_receiver();
        }
        state & CLOSED == 0
    }

    /// How many messages are queued: sent, linked, and not yet received (a
    /// send still in flight, its node not linked yet, is not counted). For a
    /// [dump](crate::runtime::dump()), which asks on the receiver's worker;
    /// senders pay nothing for it (no counter on their path).
    ///
    /// # Safety
    ///
    /// As for [`Mailbox::receive`], and not while one of those calls is
    /// suspended inside it either: the caller is the receiver's OS thread, and
    /// the receiver is not in the middle of a pop. (A receiver parked in
    /// `receive` is between two pops, so the queue from `head` is as the last
    /// pop left it.)
    pub(super) unsafe fn queued(&self) -> usize {
        // Acquire: the nodes up to `last` are initialised (each sender's
        // release of the tail), though some may not be linked yet.
        let last = self.tail.load(Ordering::Acquire);
        // The walk stops at `last` (a node that existed when it began), or at
        // a link not yet made, so senders that keep sending cannot make it
        // endless.
        // SAFETY: only the consumer moves `head` or frees a node, and it is
        // not running (the caller's): every node from `head` on stays alive.
        unsafe {
            let mut node = *self.receiver.head.get();
            let mut queued = 0;
            while node != last {
                node = (*node).next.load(Ordering::Acquire);
                if node.is_null() {
                    break;
                }
                queued += 1;
            }
            queued
        }
    }

    /// Takes the message after the stub, if it is linked.
    ///
    /// # Safety
    ///
    /// The single consumer only (as for [`Mailbox::receive`]).
    unsafe fn pop(&self) -> Option<T> {
        // SAFETY: only the consumer touches `head`, and the stub it points to
        // is alive (only the consumer frees nodes: below).
        let stub = unsafe { *self.receiver.head.get() };
        // Acquire: pairs with the sender's release of this link.
        // SAFETY: the stub is alive, as above.
        let next = unsafe { (*stub).next.load(Ordering::Acquire) };
        if next.is_null() {
            return None;
        }
        // `next` becomes the stub, whose message counts as taken. The old
        // stub is unreachable now (its sender linked it and left, and `head`
        // no longer points to it): it is retired, and the one retired before
        // it handed back.
        // SAFETY: `next` is linked, so its sender initialised its message and
        // is done with it; only the consumer touches `head` and `retired`.
        let (message, older) = unsafe {
            *self.receiver.head.get() = next;
            (
                (*next).message.assume_init_read(),
                std::mem::replace(&mut *self.receiver.retired.get(), stub),
            )
        };
        if !older.is_null() {
            self.recycle(older);
        }
        Some(message)
    }

    /// Hands the retired stub back as the spare (or frees it).
    ///
    /// # Safety
    ///
    /// The single consumer only.
    unsafe fn recycle_retired(&self) {
        // SAFETY: only the consumer touches `retired`.
        let retired = std::mem::replace(
            unsafe { &mut *self.receiver.retired.get() },
            ptr::null_mut(),
        );
        if !retired.is_null() {
            self.recycle(retired);
        }
    }

    /// Keeps `node` (unreachable, its message taken) as the spare if there is
    /// none, else frees it.
    fn recycle(&self, node: *mut Node<T>) {
        // Release: a sender that takes it (acquire) sees us done with it.
        if self
            .spare
            .compare_exchange(ptr::null_mut(), node, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: nothing reaches `node` any more (the caller's), and it
            // did not become the spare.
            drop(unsafe { Box::from_raw(node) });
        }
    }

    /// Waits until no waker reads `waiter` and withdraws WAITING: the slot is
    /// then the consumer's to write until it sets WAITING again. Returns the
    /// state seen (no WAITING, no waker).
    ///
    /// # Safety
    ///
    /// The single consumer only.
    unsafe fn quiesce(&self) -> usize {
        let backoff = Backoff::new();
        // Acquire (here and below): pairs with the release of every waker
        // that left, so their reads of `waiter` happen before our write.
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & WAKERS != 0 {
                // A thread between its claim and its release (a few
                // instructions, unless the OS preempts it there).
                backoff.snooze();
                state = self.state.load(Ordering::Acquire);
            } else if state & WAITING != 0 {
                // Left by a wait that ended without a wake (woken spuriously,
                // or unwound by a cancellation).
                match self.state.compare_exchange_weak(
                    state,
                    state & !WAITING,
                    Ordering::Acquire,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return state & !WAITING,
                    Err(now) => state = now,
                }
            } else {
                return state;
            }
        }
    }

    /// Records the calling thread as the one to wake and sets WAITING; returns
    /// the state with WAITING set.
    ///
    /// # Safety
    ///
    /// The single consumer only.
    unsafe fn register(&self) -> usize {
        // SAFETY: the caller's.
        unsafe { self.recycle_retired() };
        // SAFETY: reading the slot races only with other reads (wakers');
        // only the consumer — us — writes it.
        let current = unsafe { &*self.waiter.get() }
            .as_ref()
            .is_some_and(Waiter::is_current);
        let mut state = if current {
            // The usual case: the same thread waits again. Its waiter stays,
            // so wakers still reading it from the last wait are no obstacle.
            self.state.load(Ordering::Relaxed)
        } else {
            // SAFETY: the caller's; `quiesce` leaves no reader and lets none
            // start before WAITING is set below.
            unsafe {
                let state = self.quiesce();
                *self.waiter.get() = Some(Waiter::current());
                state
            }
        };
        loop {
            // Release: a waker that claims the wake sees the slot written;
            // acquire: see the module docs (no wake is lost).
            match self.state.compare_exchange_weak(
                state,
                state | WAITING,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return state | WAITING,
                Err(now) => state = now,
            }
        }
    }

    /// Withdraws WAITING after a wait that found a message without parking. A
    /// sender that claimed the wake meanwhile still wakes the receiver: its
    /// next park then returns at once, and every park site re-checks.
    fn unregister(&self) {
        self.state.fetch_and(!WAITING, Ordering::Relaxed);
    }
}

impl<T> Drop for Mailbox<T> {
    fn drop(&mut self) {
        /// Drops the messages left and frees the nodes when dropped, so that
        /// it still does when a message's destructor panics in the loop
        /// below (a second panic then aborts, as in a `Vec`).
        struct Rest<'a, T>(&'a Mailbox<T>);
        impl<T> Drop for Rest<'_, T> {
            fn drop(&mut self) {
                // SAFETY: the mailbox is being dropped (`&mut self` above):
                // nobody else can reach it, so this is its only consumer.
                while unsafe { self.0.pop() }.is_some() {}
                // SAFETY: the stub is the last node, and the retired and
                // spare nodes (if any) are not in the queue; nothing points
                // to any of them now.
                unsafe {
                    drop(Box::from_raw(*self.0.receiver.head.get()));
                    let spare = self.0.spare.load(Ordering::Relaxed);
                    for node in [*self.0.receiver.retired.get(), spare] {
                        if !node.is_null() {
                            drop(Box::from_raw(node));
                        }
                    }
                }
            }
        }
        let rest = Rest(self);
        // SAFETY: as in `Rest::drop`. The loop drops the messages never
        // received; `rest` frees the nodes.
        while unsafe { rest.0.pop() }.is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    // These run on plain OS threads (a receiver parks with
    // `std::thread::park`), so Miri can run them: keep them small.

    #[test]
    fn messages_arrive_in_order_and_closing_drains_first() {
        let mailbox = Mailbox::new();
        for i in 0..5 {
            mailbox.send(i).unwrap();
        }
        assert!(mailbox.close());
        assert!(!mailbox.close(), "closed once");
        assert_eq!(mailbox.send(9).unwrap_err().0, 9);
        // SAFETY: this thread is the only consumer.
        unsafe {
            assert_eq!(mailbox.try_receive(), Ok(Some(0)));
            for i in 1..5 {
                assert_eq!(mailbox.receive(), Ok(i));
            }
            assert_eq!(mailbox.receive(), Err(Closed(())));
            assert_eq!(mailbox.try_receive(), Err(Closed(())));
        }
    }

    #[test]
    fn queued_counts_what_is_sent_and_not_received() {
        let mailbox = Mailbox::new();
        // SAFETY: this thread is the only consumer (here and below).
        assert_eq!(unsafe { mailbox.queued() }, 0);
        for i in 0..3 {
            mailbox.send(i).unwrap();
        }
        // SAFETY: the only consumer.
        assert_eq!(unsafe { mailbox.queued() }, 3);
        // SAFETY: the only consumer.
        assert_eq!(unsafe { mailbox.try_receive() }, Ok(Some(0)));
        // SAFETY: the only consumer.
        assert_eq!(unsafe { mailbox.queued() }, 2);
    }

    /// The receiver counts while senders append: it sees a prefix of what
    /// was sent, never more, and all of it once they are done.
    #[test]
    fn queued_is_sound_while_senders_send() {
        let each: usize = if cfg!(miri) { 20 } else { 10_000 };
        let mailbox = Arc::new(Mailbox::new());
        let senders: Vec<_> = (0..2)
            .map(|_| {
                let mailbox = mailbox.clone();
                thread::spawn(move || (0..each).for_each(|i| mailbox.send(i).unwrap()))
            })
            .collect();
        let mut seen = 0;
        while senders.iter().any(|s| !s.is_finished()) {
            // SAFETY: this thread is the only consumer, between pops.
            let now = unsafe { mailbox.queued() };
            assert!(seen <= now && now <= 2 * each, "{seen} then {now}");
            seen = now;
        }
        senders.into_iter().for_each(|s| s.join().unwrap());
        // SAFETY: as above.
        assert_eq!(unsafe { mailbox.queued() }, 2 * each);
    }

    #[test]
    fn messages_never_received_are_dropped_with_the_mailbox() {
        let counted = Arc::new(());
        let mailbox = Mailbox::new();
        for _ in 0..3 {
            mailbox.send(counted.clone()).unwrap();
        }
        // SAFETY: this thread is the only consumer.
        drop(unsafe { mailbox.receive() });
        drop(mailbox);
        assert_eq!(Arc::strong_count(&counted), 1);
    }

    /// Senders on several threads, one receiver that parks when the queue is
    /// empty, and a close racing the last sends: every send that returned Ok
    /// is received once, in each sender's order, and the receiver ends.
    #[test]
    fn racing_senders_and_a_close_lose_nothing() {
        const SENDERS: usize = 3;
        let each: usize = if cfg!(miri) { 30 } else { 20_000 };
        let mailbox = Arc::new(Mailbox::new());
        let senders: Vec<_> = (0..SENDERS)
            .map(|s| {
                let mailbox = mailbox.clone();
                thread::spawn(move || {
                    let mut sent = 0;
                    for i in 0..each {
                        if mailbox.send((s, i)).is_err() {
                            break;
                        }
                        sent += 1;
                    }
                    sent
                })
            })
            .collect();
        let closer = {
            let mailbox = mailbox.clone();
            thread::spawn(move || {
                thread::yield_now();
                mailbox.close();
            })
        };
        let mut next = [0; SENDERS];
        // SAFETY: this thread is the only consumer.
        while let Ok((s, i)) = unsafe { mailbox.receive() } {
            assert_eq!(i, next[s], "sender {s}'s messages in order");
            next[s] += 1;
        }
        closer.join().unwrap();
        let sent: Vec<usize> = senders.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(next.to_vec(), sent, "every accepted message was received");
    }

    /// The receiver changes OS thread between waits (one at a time, as the
    /// contract allows; each one forgets its waiter when done, as a dropped
    /// `Context` does) while senders keep waking it: a new receiver writes
    /// `waiter` only once no waker of the last one still reads it.
    #[test]
    fn a_receiver_that_changes_thread_while_senders_wake_it() {
        const SENDERS: usize = 2;
        let each: usize = if cfg!(miri) { 12 } else { 20_000 };
        let mailbox = Arc::new(Mailbox::new());
        let senders: Vec<_> = (0..SENDERS)
            .map(|s| {
                let mailbox = mailbox.clone();
                thread::spawn(move || {
                    for i in 0..each {
                        mailbox.send((s, i)).unwrap();
                        if i % 4 == 0 {
                            thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let mut next = [0; SENDERS];
        let mut received = 0;
        while received < SENDERS * each {
            let chunk = (SENDERS * each - received).min(if cfg!(miri) { 3 } else { 97 });
            let mailbox = mailbox.clone();
            let mut seen = next;
            next = thread::spawn(move || {
                for _ in 0..chunk {
                    // SAFETY: one receiving thread at a time (joined below).
                    let (s, i) = unsafe { mailbox.receive() }.unwrap();
                    assert_eq!(i, seen[s]);
                    seen[s] += 1;
                }
                // SAFETY: as above.
                unsafe { mailbox.forget_receiver() };
                seen
            })
            .join()
            .unwrap();
            received += chunk;
        }
        senders.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(next, [each; SENDERS]);
    }

    /// Two threads bounce messages through two mailboxes, so each mailbox's
    /// spare node goes back and forth between its receiver and its sender,
    /// with a third thread sending too (contending for the spare).
    #[test]
    fn spare_nodes_bounce_between_a_receiver_and_senders() {
        let rounds: usize = if cfg!(miri) { 25 } else { 50_000 };
        let ping = Arc::new(Mailbox::new());
        let pong = Arc::new(Mailbox::new());
        let extra = {
            let ping = ping.clone();
            thread::spawn(move || {
                for i in 0..rounds {
                    ping.send(usize::MAX - i).unwrap();
                }
            })
        };
        let echo = {
            let (ping, pong) = (ping.clone(), pong.clone());
            thread::spawn(move || {
                let mut extras = 0;
                let mut echoed = 0;
                while echoed < rounds || extras < rounds {
                    // SAFETY: this thread is ping's only consumer.
                    let n = unsafe { ping.receive() }.unwrap();
                    if n > usize::MAX / 2 {
                        assert_eq!(n, usize::MAX - extras);
                        extras += 1;
                    } else {
                        assert_eq!(n, echoed);
                        echoed += 1;
                        pong.send(vec![n; 3]).unwrap();
                    }
                }
            })
        };
        for i in 0..rounds {
            ping.send(i).unwrap();
            // SAFETY: this thread is pong's only consumer.
            assert_eq!(unsafe { pong.receive() }, Ok(vec![i; 3]));
        }
        echo.join().unwrap();
        extra.join().unwrap();
    }

    /// A message whose destructor panics while the mailbox drops the messages
    /// never received: the others are still dropped (as a `Vec` or a
    /// `VecDeque` would), not leaked with their nodes.
    #[test]
    fn a_panicking_message_drop_leaks_nothing_else() {
        struct Bomb {
            panics: bool,
            _counted: Arc<()>,
        }
        impl Drop for Bomb {
            fn drop(&mut self) {
                if self.panics {
                    panic!("boom");
                }
            }
        }
        let counted = Arc::new(());
        let mailbox = Mailbox::new();
        for panics in [true, false, false, false] {
            let _counted = counted.clone();
            mailbox.send(Bomb { panics, _counted }).unwrap();
        }
        let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(mailbox)));
        assert!(dropped.is_err());
        assert_eq!(
            Arc::strong_count(&counted),
            1,
            "the other messages were dropped"
        );
    }
}

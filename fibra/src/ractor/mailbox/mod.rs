//! A Ractor's incoming port (Ruby's `Ractor#send` / `Ractor.receive`): a queue
//! that any thread may push to and the Ractor pops from, in order.
//!
//! # The queue
//!
//! Lock-free, many producers and one consumer: a linked list of *blocks*, each
//! an array of slots that senders fill in order (the idea of crossbeam's list
//! channel and of Vyukov's bounded queue, written here for one consumer). The
//! tail is a *position* — a block's lap times [`Block::LAP`] plus an offset —
//! and the block that holds it. A sender claims the next position with one
//! compare-and-swap on `tail`, moves its message into that slot and sets the
//! slot's `ready` flag (a release store); the receiver reads the slot at its
//! own `head` position, and if it is ready, moves the message out and steps
//! on. The sender that claims a block's last slot links and installs the next
//! block first (it takes the block before its claim, so that the others, who
//! see the position "installing" and wait, wait for three stores only). A
//! block is cleared and freed (or kept: below) only by the receiver, once it
//! has taken the block's last message — when every sender that had a slot in
//! it has written it and left.
//!
//! With blocks, the receiver writes nothing that a sender reads while it
//! takes a block's messages; an allocation (or the spare) and a free serve
//! a whole block; and consecutive messages share cache lines, so the receiver
//! misses once per line, not once per message, and the next slot's address is
//! known without a load. (Measured against the node per message it replaced:
//! `docs/internals/ractor-mailbox.md`.)
//!
//! Memory: a block holds as many slots as fit in [`BLOCK_BYTES`] (1 KiB), at
//! most [`MAX_SLOTS`] (32: a slot of a `u64` message is 16 bytes, so such a
//! block is 520), and at least one — so a queued message costs at most its
//! slot plus a block's header (when it alone is in a block), and never more
//! than a block of its slots: bounded, as the issue wants, with large messages
//! one to a block. An idle mailbox has no block: the first send installs one
//! (a compare-and-swap on the receiver's `head_block`, then one on
//! `tail_block`, so that no slot is claimed in a block the receiver cannot
//! find), so a Ractor that has never received costs the mailbox's two cache
//! lines only. After that the receiver keeps the block it is in.
//!
//! Blocks are recycled: the receiver keeps the last block it is done with as
//! the *spare* (a compare-and-swap on the senders' line, once per block) that
//! the sender which installs the next block takes (a swap) instead of
//! allocating, so two Ractors that talk back and forth allocate nothing once
//! both have a block.
//!
//! One consumer: only [`Context`](super::Context) calls [`Mailbox::receive`]
//! and [`Mailbox::try_receive`] (they are `unsafe` with that contract), and
//! `Context` is neither `Send` nor `Sync` and is only lent to the body, so
//! every call comes from the body's own OS thread; and no two overlap there,
//! since neither runs any code of the user's, and the only switch inside them
//! parks the body's green thread, which no other green thread can reach the
//! `Context` from (their closures are `'static`).
//!
//! # Closing, and waking the receiver
//!
//! `tail` holds `CLOSED` in its lowest bit, below the position. A claim
//! compares the whole word, so a send either claims its slot before the port
//! closes, or fails: it never sees an open port and then writes into a closed
//! one. The receiver reports the port closed once it has seen `CLOSED` and its
//! `head` has reached the tail's position — every slot claimed before the
//! close taken — so a send that returned `Ok` is always received, never lost.
//!
//! `state` holds `WAITING` (the receiver is parked, or about to, and `waiter`
//! wakes it) and, above it, the number of `WAKERS` (threads reading `waiter` to
//! wake the receiver). The receiver sets `WAITING` (a read-modify-write) and
//! then looks at the queue and at `tail`; a sender writes its slot's `ready`
//! flag and then loads `state`; a closer sets `CLOSED` and then loads `state`.
//! Each side is a write then a load of the other's location with a `SeqCst`
//! fence between them, so one of the two fences comes first in their single
//! total order, and no wake is lost: either the sender's (closer's) load sees
//! `WAITING` and it wakes the receiver, or the receiver's look comes after
//! its fence and sees every write that happened before the sender's (the
//! slot, and the first block's address in `head_block`; the close). A sender
//! still in flight — its slot claimed but not ready, so the queue may look
//! empty or cut short, and `head` stays behind the tail — will see `WAITING`
//! when it has written it. (Fences rather than `SeqCst` loads and stores:
//! the receiver's first look reads `head_block`, written by whichever sender
//! installed the first block, which the sender's own `SeqCst` store would
//! not order; the fence orders everything that happened before it.)
//!
//! (It replaced a count of senders in flight, with two read-modify-writes
//! per message on the senders' line: `docs/internals/ractor-mailbox.md`.)
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
//! What senders touch — `tail`, `tail_block`, `state`, `waiter` and `spare`
//! — shares one cache line on purpose: a message between two Ractors moves
//! that line to the sender and back once, rather than several lines once
//! each. The receiver's `head` has a line of its own, so that taking a
//! message that has just arrived starts with a load that hits, not with a
//! miss on the line the sender wrote last; the receiver touches the senders'
//! line only to wait (`WAITING`) and once per block (the spare).

use super::error::{Closed, SendError};
use crate::runtime::WaitReason;
use crate::runtime::spin::{self, GaveUp};
use crate::runtime::waiter::{self, Waiter};
use crate::sync::drop_all::drop_all;
use crate::sync_prims::{self, AtomicBool, AtomicPtr, AtomicUsize, Backoff, fence};
use std::alloc::{self, Layout};
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering;

/// In `tail`: the port is closed, sends fail.
const CLOSED: usize = 1;
/// In `tail`: one position (the bits above `CLOSED` count them).
const POSITION: usize = 2;
// A position must never wrap: a sender that read one before the wrap could
// claim a slot with a stale compare-and-swap. 63 bits do not wrap in any
// machine's life (one a nanosecond: 292 years); 31 would in seconds.
const _: () = assert!(
    usize::BITS == 64,
    "the mailbox's tail position needs a 64-bit usize"
);
/// In `state`: the receiver is parked (or about to park) and `waiter` wakes
/// it.
const WAITING: usize = 1;
/// In `state`: one thread that claimed a wake and is reading `waiter` (a
/// count in the bits above `WAITING`: one claimer per thread at most, so it
/// cannot overflow).
const WAKER: usize = 1 << 1;
const WAKERS: usize = !WAITING;

/// The most bytes of slots a block holds (unless one message is larger: a
/// block has at least one slot).
const BLOCK_BYTES: usize = 1024;
/// The most slots a block holds, however small the messages.
const MAX_SLOTS: usize = 32;

/// One message's place in a block.
struct Slot<T> {
    /// Initialised by the sender that claimed the slot, before `ready`; moved
    /// out by the receiver.
    message: MaybeUninit<T>,
    /// The message is written (release by its sender, acquire by the
    /// receiver).
    ready: AtomicBool,
}

/// A block of [`Block::SLOTS`] slots, filled in order, and a link to the next
/// one. Allocated with its slots after this header, so that the number of
/// slots can depend on `T`'s size (see the module docs).
#[repr(C)]
struct Block<T> {
    /// The next block: set by the sender that claims this block's last slot,
    /// before it writes that slot.
    next: AtomicPtr<Block<T>>,
    /// Where the slots begin.
    slots: [Slot<T>; 0],
}

impl<T> Block<T> {
    /// Slots per block: as many as fit in [`BLOCK_BYTES`], from 1 to
    /// [`MAX_SLOTS`].
    const SLOTS: usize = {
        let fit = BLOCK_BYTES / size_of::<Slot<T>>();
        if fit == 0 {
            1
        } else if fit > MAX_SLOTS {
            MAX_SLOTS
        } else {
            fit
        }
    };
    /// Positions per block in the tail's count: one per slot, then one that
    /// means "the next block is being installed".
    const LAP: usize = Self::SLOTS + 1;

    fn layout() -> Layout {
        let slots = Layout::array::<Slot<T>>(Self::SLOTS).expect("a block is at most a few KiB");
        Layout::new::<Block<T>>()
            .extend(slots)
            .expect("a block is at most a few KiB")
            .0
            .pad_to_align()
    }

    /// A block with no message, linked to nothing.
    fn alloc() -> *mut Block<T> {
        let layout = Self::layout();
        // SAFETY: the layout has a non-zero size (the header's `next`).
        let block = unsafe { alloc::alloc(layout) }.cast::<Block<T>>();
        if block.is_null() {
            alloc::handle_alloc_error(layout);
        }
        // The allocation holds the header and `SLOTS` slots after it (`slots`
        // is where `extend` put them: `repr(C)`, and the header's size is
        // already a multiple of a slot's alignment).
        // SAFETY: so each write is in bounds, and each is made before anything reads it.
        unsafe {
            ptr::addr_of_mut!((*block).next).write(AtomicPtr::new(ptr::null_mut()));
            for i in 0..Self::SLOTS {
                Self::slot(block, i).write(Slot {
                    message: MaybeUninit::uninit(),
                    ready: AtomicBool::new(false),
                });
            }
        }
        block
    }

    /// The `i`th slot of `block`.
    ///
    /// # Safety
    ///
    /// `block` is alive and `i < SLOTS`.
    unsafe fn slot(block: *mut Block<T>, i: usize) -> *mut Slot<T> {
        // SAFETY: the caller's; the pointer keeps the allocation's provenance
        // (no reference to the header is made on the way).
        unsafe { ptr::addr_of_mut!((*block).slots).cast::<Slot<T>>().add(i) }
    }

    /// Frees `block` without dropping any message in it.
    ///
    /// # Safety
    ///
    /// `block` came from [`Block::alloc`], no thread reaches it any more, and
    /// its messages were moved out (or are to leak).
    unsafe fn free(block: *mut Block<T>) {
        // SAFETY: the caller's; the slots need no drop of their own (a
        // `MaybeUninit` and an atomic).
        unsafe { alloc::dealloc(block.cast(), Self::layout()) }
    }
}

/// Two cache lines: what senders touch, then what only the receiver does
/// (see the module docs). No block until the first send: an idle mailbox is
/// these two lines and nothing else.
#[repr(C, align(64))]
pub(super) struct Mailbox<T> {
    /// The position the next sender claims: a block's lap times
    /// [`Block::LAP`] plus the slot's offset in it (or `SLOTS`: the next
    /// block is being installed).
    tail: AtomicUsize,
    /// The block that holds `tail`'s position (null until the first send).
    tail_block: AtomicPtr<Block<T>>,
    state: AtomicUsize,
    /// A block the receiver is done with, for the sender that installs the
    /// next one (or null): two Ractors that talk back and forth allocate
    /// nothing.
    spare: AtomicPtr<Block<T>>,
    /// Wakes the receiver (written by the receiver only; see the module docs).
    waiter: sync_prims::UnsafeCell<Option<Waiter>>,
    /// The receiver's own line.
    receiver: ReceiverSide<T>,
    /// The mailbox owns the messages queued in it.
    _messages: PhantomData<T>,
}

/// What only the receiver touches, on a line of its own.
#[repr(align(64))]
struct ReceiverSide<T> {
    /// The position of the next message to take (never a lap's last
    /// position, the one that means "installing").
    head: UnsafeCell<usize>,
    /// The block that holds `head`: null until the sender that installs the
    /// first block writes it here (once); the receiver's alone from then on.
    head_block: AtomicPtr<Block<T>>,
}

// SAFETY: `receiver` and the slots from its `head` on are touched only by the
// one consumer (see the module docs on why there is one), except that one
// sender writes `head_block` once, before the consumer can use it; a slot is
// written by the one sender that claimed it, and read after its `ready`; a
// block is freed only when no sender can reach it; `waiter` is written by the
// consumer only while no thread may read it, and otherwise only read (the
// WAITING/WAKERS protocol); the spare block belongs to whoever swapped it
// out. So a `Mailbox` is shared as the messages it carries move: from any
// thread to the consumer's. `Waiter` is `Send + Sync`.
unsafe impl<T: Send> Send for Mailbox<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Mailbox<T> {}

impl<T> Mailbox<T> {
    pub(super) fn new() -> Mailbox<T> {
        Mailbox {
            tail: AtomicUsize::new(0),
            tail_block: AtomicPtr::new(ptr::null_mut()),
            state: AtomicUsize::new(0),
            spare: AtomicPtr::new(ptr::null_mut()),
            waiter: sync_prims::UnsafeCell::new(None),
            receiver: ReceiverSide {
                head: UnsafeCell::new(0),
                head_block: AtomicPtr::new(ptr::null_mut()),
            },
            _messages: PhantomData,
        }
    }

    /// Queues `message`, or hands it back if the port is closed.
    pub(super) fn send(&self, message: T) -> Result<(), SendError<T>> {
        let Some((block, offset)) = self.claim() else {
            return Err(SendError(message));
        };
        // SAFETY: the slot is ours alone (`claim`) and its block stays alive
        // until the receiver has taken the message, which it does only after
        // the store below.
        unsafe {
            let slot = Block::slot(block, offset);
            ptr::addr_of_mut!((*slot).message).write(MaybeUninit::new(message));
            (*slot).ready.store(true, Ordering::Release);
        }
        // See the module docs on why no wake is lost.
        fence(Ordering::SeqCst);
        if self.state.load(Ordering::Relaxed) & WAITING != 0 {
            self.wake_receiver();
        }
        Ok(())
    }

    /// Claims the next slot for the calling sender (one compare-and-swap on
    /// `tail`, usually): its block and offset, or `None` if the port is
    /// closed. The sender that claims a block's last slot links the next
    /// block and makes it the tail's before it returns; others that come
    /// meanwhile wait for it (a few instructions, unless the OS preempts it
    /// there).
    fn claim(&self) -> Option<(*mut Block<T>, usize)> {
        let backoff = Backoff::new();
        // The next block, made ready before claiming a last slot so that the
        // others wait only for a few stores.
        let mut next: *mut Block<T> = ptr::null_mut();
        // Acquire (here and below): a position seen after the install of
        // its block comes with that block in `tail_block`.
        let mut tail = self.tail.load(Ordering::Acquire);
        loop {
            if tail & CLOSED != 0 {
                if !next.is_null() {
                    self.recycle(next);
                }
                return None;
            }
            let offset = tail / POSITION % Block::<T>::LAP;
            if offset == Block::<T>::SLOTS {
                backoff.snooze();
                tail = self.tail.load(Ordering::Acquire);
                continue;
            }
            // Acquire: the block is initialised (its installer's release).
            let mut block = self.tail_block.load(Ordering::Acquire);
            if block.is_null() {
                block = self.install_first();
            }
            let last = offset + 1 == Block::<T>::SLOTS;
            if last && next.is_null() {
                next = self.fresh_block();
            }
            // The block loaded above is the one of `tail`'s lap if this
            // succeeds: the tail moves to another block only after a claim of
            // this lap's last slot, which would have moved `tail` on first.
            match self.tail.compare_exchange_weak(
                tail,
                tail + POSITION,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if last {
                        // Release (all three): the next block initialised to
                        // the senders that load it and to the receiver. An
                        // add, not a store: a close may have set CLOSED since
                        // the claim.
                        self.tail_block.store(next, Ordering::Release);
                        self.tail.fetch_add(POSITION, Ordering::Release);
                        // SAFETY: `block` is alive: the receiver frees it only
                        // after taking its last slot's message, ours, not yet
                        // written.
                        unsafe { (*block).next.store(next, Ordering::Release) };
                    } else if !next.is_null() {
                        // Made ready for a last slot another sender claimed.
                        self.recycle(next);
                    }
                    return Some((block, offset));
                }
                Err(now) => {
                    tail = now;
                    backoff.spin();
                }
            }
        }
    }

    /// Installs the first block, or finds the one another sender installed,
    /// and returns the tail's block. The first block goes to the receiver's
    /// `head_block` before it becomes the tail's, so that no slot can be
    /// claimed in a block that the receiver cannot find.
    #[cold]
    fn install_first(&self) -> *mut Block<T> {
        let fresh = self.fresh_block();
        // Release: the block initialised, to the receiver; acquire: to us, if
        // another sender's block is there.
        let first = match self.receiver.head_block.compare_exchange(
            ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => fresh,
            Err(installed) => {
                // SAFETY: `fresh` never left this thread.
                unsafe { Block::free(fresh) };
                installed
            }
        };
        // Whichever sender gets here first makes it the tail's block (each
        // tries the same one); if the tail has moved on since, this fails
        // and returns the block it holds now, as a load would.
        match self.tail_block.compare_exchange(
            ptr::null_mut(),
            first,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => first,
            Err(now) => now,
        }
    }

    /// A block with no message: the spare one if there is one (acquire: the
    /// receiver is done with it), else a new one.
    fn fresh_block(&self) -> *mut Block<T> {
        let spare = self.spare.swap(ptr::null_mut(), Ordering::Acquire);
        match spare.is_null() {
            true => Block::alloc(),
            false => spare,
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
        self.waiter.with(|waiter| {
            // SAFETY: we count among the wakers: until we leave, the receiver
            // does not write `waiter` (other wakers may read it too).
            if let Some(waiter) = unsafe { &*waiter } {
                waiter.wake();
            }
        });
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
            unsafe { self.register() };
            // SAFETY: the single consumer, the caller's contract.
            if let Some(message) = unsafe { self.pop() } {
                self.unregister();
                return Ok(message);
            }
            // SAFETY: the single consumer, the caller's contract.
            if unsafe { self.closed_and_drained() } {
                self.unregister();
                return Err(Closed(()));
            }
            waiter::wait(WaitReason::RactorReceive);
        }
    }

    /// Looks for a message for a little while before the receiver parks, if
    /// its worker has nothing else to do (see `runtime::spin`): a sender
    /// that finds the receiver not `WAITING` wakes nobody, so the message's
    /// own cache lines are all that cross.
    ///
    /// # Safety
    ///
    /// The single consumer only.
    unsafe fn spin_for_message(&self) -> Result<T, GaveUp> {
        // SAFETY: the caller's.
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
        // SAFETY: the single consumer, the caller's contract.
        match unsafe { self.closed_and_drained() } {
            true => Err(Closed(())),
            false => Ok(None),
        }
    }

    /// Whether the port is closed and every message sent before has been
    /// taken: no slot was claimed after `CLOSED` (a claim compares the whole
    /// word), so once `head` has reached the tail's position nothing more
    /// can come. A slot claimed but not written yet keeps `head` behind.
    ///
    /// # Safety
    ///
    /// The single consumer only.
    unsafe fn closed_and_drained(&self) -> bool {
        // After the fence that follows the receiver's WAITING (see the
        // module docs: a close is not missed); acquire: every claim before
        // the position read is visible.
        let tail = self.tail.load(Ordering::Acquire);
        // SAFETY: only the consumer touches `head`.
        tail & CLOSED != 0 && tail / POSITION == unsafe { *self.receiver.head.get() }
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
            self.waiter.with_mut(|waiter| *waiter = None);
        }
    }

    /// Closes the port: later sends fail; messages already queued can still be
    /// received. Returns whether it was open.
    pub(super) fn close(&self) -> bool {
        let tail = self.tail.fetch_or(CLOSED, Ordering::AcqRel);
        // See the module docs on why no wake is lost.
        fence(Ordering::SeqCst);
        if self.state.load(Ordering::Relaxed) & WAITING != 0 {
            self.wake_receiver();
        }
        tail & CLOSED == 0
    }

    /// How many messages are queued: sent, written, and not yet received (a
    /// send still in flight, its slot not written yet, is not counted). For a
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
        // Acquire: the blocks of the positions before `tail` are linked.
        let tail = self.tail.load(Ordering::Acquire) / POSITION;
        // The walk stops at `tail` (a position claimed when it began), or at
        // a slot not written yet, so senders that keep sending cannot make it
        // endless.
        // SAFETY: only the consumer moves `head` or frees a block, and it is
        // not running (the caller's): every block from `head_block` on stays
        // alive, and each slot read is one the walk reached in order.
        unsafe {
            let mut block = self.receiver.head_block.load(Ordering::Acquire);
            let mut position = *self.receiver.head.get();
            let mut queued = 0;
            while !block.is_null() && position < tail {
                let offset = position % Block::<T>::LAP;
                if !(*Block::slot(block, offset)).ready.load(Ordering::Acquire) {
                    break;
                }
                queued += 1;
                position += 1;
                if offset + 1 == Block::<T>::SLOTS {
                    // Linked before the last slot was written (see `claim`).
                    block = (*block).next.load(Ordering::Acquire);
                    position += 1;
                }
            }
            queued
        }
    }

    /// Takes the message at `head`, if it is written.
    ///
    /// # Safety
    ///
    /// The single consumer only (as for [`Mailbox::receive`]).
    unsafe fn pop(&self) -> Option<T> {
        // Acquire: the first block is initialised (its installer's release);
        // after that, only the consumer writes this.
        let block = self.receiver.head_block.load(Ordering::Acquire);
        if block.is_null() {
            return None;
        }
        // `block` holds `head` and is alive (only the consumer frees blocks,
        // below); the slot's message is written once `ready` is (acquire: its
        // sender's release), and its sender is then done with it.
        // SAFETY: so, and only the consumer touches `head`.
        unsafe {
            let head = &mut *self.receiver.head.get();
            let offset = *head % Block::<T>::LAP;
            let slot = Block::slot(block, offset);
            // Acquire: pairs with the sender's release.
            if !(*slot).ready.load(Ordering::Acquire) {
                return None;
            }
            let message = ptr::addr_of!((*slot).message).read().assume_init();
            if offset + 1 == Block::<T>::SLOTS {
                // The block's last message: its sender linked the next block
                // before writing it (see `claim`), and every other sender
                // that had a slot here has written it and left the block.
                let next = (*block).next.load(Ordering::Acquire);
                self.receiver.head_block.store(next, Ordering::Relaxed);
                *head += 2;
                self.retire(block);
            } else {
                *head += 1;
            }
            Some(message)
        }
    }

    /// Clears a block whose messages are all taken and keeps it as the spare
    /// if there is none, else frees it.
    ///
    /// # Safety
    ///
    /// The single consumer only, with a block that no sender reaches any more
    /// (every slot of it taken).
    unsafe fn retire(&self, block: *mut Block<T>) {
        // SAFETY: the caller's: the block is ours alone.
        unsafe {
            (*block).next.store(ptr::null_mut(), Ordering::Relaxed);
            for i in 0..Block::<T>::SLOTS {
                (*Block::slot(block, i))
                    .ready
                    .store(false, Ordering::Relaxed);
            }
        }
        self.recycle(block);
    }

    /// Keeps `block` (no sender reaches it, no message in it) as the spare if
    /// there is none, else frees it.
    fn recycle(&self, block: *mut Block<T>) {
        // Release: a sender that takes it (acquire) sees it cleared.
        if self
            .spare
            .compare_exchange(ptr::null_mut(), block, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: nothing reaches `block` any more (the caller's), and it
            // did not become the spare.
            unsafe { Block::free(block) };
        }
    }

    /// Waits until no waker reads `waiter` and withdraws WAITING: the slot is
    /// then the consumer's to write until it sets WAITING again.
    ///
    /// # Safety
    ///
    /// The single consumer only.
    unsafe fn quiesce(&self) {
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
                    Ok(_) => return,
                    Err(now) => state = now,
                }
            } else {
                return;
            }
        }
    }

    /// Records the calling thread as the one to wake and sets WAITING.
    ///
    /// # Safety
    ///
    /// The single consumer only.
    unsafe fn register(&self) {
        let current = self.waiter.with(|waiter| {
            // SAFETY: reading the slot races only with other reads (wakers');
            // only the consumer — us — writes it.
            unsafe { &*waiter }.as_ref().is_some_and(Waiter::is_current)
        });
        if !current {
            // The unusual case: another thread waits now. (The same thread's
            // waiter stays, so wakers still reading it from the last wait
            // are no obstacle.)
            // SAFETY: the caller's; `quiesce` leaves no reader and lets none
            // start before WAITING is set below.
            unsafe {
                self.quiesce();
                self.waiter
                    .with_mut(|waiter| *waiter = Some(Waiter::current()));
            }
        }
        // Release: a waker that claims the wake sees the slot written.
        self.state.fetch_or(WAITING, Ordering::AcqRel);
        // Before the looks at the queue and the tail that follow: see the
        // module docs (no wake is lost).
        fence(Ordering::SeqCst);
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
        /// Frees the blocks when dropped, once every message is: also when
        /// the first panic of a message's destructor goes on below.
        struct Rest<'a, T>(&'a Mailbox<T>);
        impl<T> Drop for Rest<'_, T> {
            fn drop(&mut self) {
                // No send is in flight, so every claimed slot is written and
                // taken now, and the receiver's block is the tail's, the
                // last (a block is linked only when a slot of it is claimed).
                // SAFETY: nothing points to it or to the spare any more.
                unsafe {
                    let spare = self.0.spare.load(Ordering::Relaxed);
                    for block in [self.0.receiver.head_block.load(Ordering::Relaxed), spare] {
                        if !block.is_null() {
                            Block::free(block);
                        }
                    }
                }
            }
        }
        let rest = Rest(self);
        // Every message never received, even if some destructors panic;
        // `rest` then frees the blocks.
        // SAFETY: the mailbox is being dropped (`&mut self` above): nobody
        // else can reach it, so this is its only consumer.
        drop_all(std::iter::from_fn(|| unsafe { rest.0.pop() }));
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
    /// `wrap` makes sender `s`'s `i`th message, `unwrap` reads it back.
    fn race_senders_and_a_close<M: Send + 'static>(
        senders: usize,
        each: usize,
        wrap: fn(usize, usize) -> M,
        unwrap: fn(M) -> (usize, usize),
    ) {
        let mailbox = Arc::new(Mailbox::new());
        let threads: Vec<_> = (0..senders)
            .map(|s| {
                let mailbox = mailbox.clone();
                thread::spawn(move || {
                    let mut sent = 0;
                    for i in 0..each {
                        if mailbox.send(wrap(s, i)).is_err() {
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
        let mut next = vec![0; senders];
        // SAFETY: this thread is the only consumer.
        while let Ok(message) = unsafe { mailbox.receive() } {
            let (s, i) = unwrap(message);
            assert_eq!(i, next[s], "sender {s}'s messages in order");
            next[s] += 1;
        }
        closer.join().unwrap();
        let sent: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(next, sent, "every accepted message was received");
    }

    /// A receiver parked on an empty mailbox is woken by a close on another
    /// thread (the closer's load of `state` against the receiver's look at
    /// `tail`), whichever comes first.
    #[test]
    fn a_close_wakes_a_waiting_receiver() {
        for round in 0..if cfg!(miri) { 3 } else { 200 } {
            let mailbox = Arc::new(Mailbox::<u8>::new());
            if round % 2 == 1 {
                // A block installed, then drained: the positions are not 0.
                mailbox.send(1).unwrap();
                // SAFETY: this thread is the only consumer.
                assert_eq!(unsafe { mailbox.receive() }, Ok(1));
            }
            let closer = {
                let mailbox = mailbox.clone();
                thread::spawn(move || {
                    thread::yield_now();
                    assert!(mailbox.close());
                })
            };
            // SAFETY: this thread is the only consumer.
            assert_eq!(unsafe { mailbox.receive() }, Err(Closed(())));
            closer.join().unwrap();
        }
    }

    #[test]
    fn racing_senders_and_a_close_lose_nothing() {
        let each = if cfg!(miri) { 30 } else { 20_000 };
        race_senders_and_a_close(3, each, |s, i| (s, i), |m| m);
    }

    /// More senders than cores, each claiming slots while others install
    /// blocks.
    #[test]
    fn many_senders_across_many_blocks_lose_nothing() {
        let each = if cfg!(miri) { 10 } else { 5_000 };
        race_senders_and_a_close(16, each, |s, i| (s, i), |m| m);
    }

    /// Messages too large for two to share a block: every send claims a
    /// block's last slot and installs the next block.
    #[test]
    fn one_message_per_block_loses_nothing() {
        type Big = (usize, usize, [u8; 2 * BLOCK_BYTES]);
        assert_eq!(Block::<Big>::SLOTS, 1);
        let each = if cfg!(miri) { 10 } else { 5_000 };
        race_senders_and_a_close::<Box<Big>>(
            3,
            each,
            |s, i| Box::new((s, i, [7; 2 * BLOCK_BYTES])),
            |m| (m.0, m.1),
        );
    }

    /// An idle mailbox is two cache lines and allocates nothing: the first
    /// block comes with the first send.
    #[test]
    fn an_idle_mailbox_is_two_lines_and_no_block() {
        assert_eq!(size_of::<Mailbox<u64>>(), 128);
        assert_eq!(size_of::<Mailbox<[u8; 4096]>>(), 128);
        let mailbox = Mailbox::new();
        assert!(mailbox.tail_block.load(Ordering::Relaxed).is_null());
        mailbox.send(1u64).unwrap();
        assert!(!mailbox.tail_block.load(Ordering::Relaxed).is_null());
        assert_eq!(Block::<u64>::SLOTS, MAX_SLOTS);
        assert!(Block::<u64>::layout().size() <= BLOCK_BYTES + 64);
    }

    /// Messages left in several blocks (a block and a half taken, the rest
    /// not) are each dropped once with the mailbox, and `queued` counts them
    /// across the blocks' boundaries.
    #[test]
    fn messages_left_across_blocks_are_counted_and_dropped() {
        let slots = Block::<Arc<()>>::SLOTS;
        let counted = Arc::new(());
        let mailbox = Mailbox::new();
        for _ in 0..3 * slots + 5 {
            mailbox.send(counted.clone()).unwrap();
        }
        // SAFETY: this thread is the only consumer (here and below).
        assert_eq!(unsafe { mailbox.queued() }, 3 * slots + 5);
        for _ in 0..slots + slots / 2 {
            // SAFETY: as above.
            drop(unsafe { mailbox.try_receive() }.unwrap().unwrap());
        }
        let left = 3 * slots + 5 - slots - slots / 2;
        // SAFETY: as above.
        assert_eq!(unsafe { mailbox.queued() }, left);
        assert_eq!(Arc::strong_count(&counted), 1 + left);
        drop(mailbox);
        assert_eq!(Arc::strong_count(&counted), 1);
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
    /// spare block goes back and forth between its receiver and its senders,
    /// with a third thread sending too (contending for the spare).
    #[test]
    fn spare_blocks_bounce_between_a_receiver_and_senders() {
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

    /// Messages whose destructors panic while the mailbox drops the messages
    /// never received: the others (in their block and the next) are still
    /// dropped, not leaked with their blocks, and a second panic does not
    /// abort the process (as it would in a `Vec`): the first goes on.
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
        // The bombs are in the second block, with messages before them,
        // after them in their block, and in a third block.
        let slots = Block::<Bomb>::SLOTS;
        for k in 0..2 * slots + 3 {
            let _counted = counted.clone();
            let panics = k == slots + 1 || k == slots + 3;
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

/// The mailbox's wake under the model checker (`scripts/model-check.sh`): the
/// real `Mailbox`, with loom's atomics, cell and OS thread park; the
/// receiver is an OS thread outside any runtime, so it waits by parking
/// (`runtime/waiter.rs`), and a lost wake leaves it parked with nobody left
/// to unpark it, which loom reports as a deadlock.
#[cfg(all(test, fibra_loom))]
mod model_check {
    use super::Mailbox;
    use crate::runtime::model_check::check;
    use loom::thread;
    use std::sync::Arc;

    /// A send while the receiver registers (`WAITING`, the fence, its looks
    /// at the queue) and parks: the message is received.
    #[test]
    fn a_send_wakes_a_receiver_that_waits() {
        check("mailbox_send_wakes", || {
            let mailbox = Arc::new(Mailbox::new());
            let sender = mailbox.clone();
            let other = thread::spawn(move || sender.send(7u8).unwrap());
            // SAFETY: this thread is the only consumer.
            assert_eq!(unsafe { mailbox.receive() }, Ok(7));
            other.join().unwrap();
        });
    }

    /// Two senders and a close, racing a receiver that receives until the
    /// port is closed: every send that returned `Ok` is received, each once,
    /// and the receiver learns of the close (the `CLOSED` bit and the
    /// receiver's fence) instead of waiting for ever.
    #[test]
    fn a_close_wakes_the_receiver_and_no_sent_message_is_lost() {
        check("mailbox_close_wakes", || {
            let mailbox = Arc::new(Mailbox::new());
            let senders: Vec<_> = [1u8, 2]
                .into_iter()
                .map(|message| {
                    let mailbox = mailbox.clone();
                    thread::spawn(move || mailbox.send(message).is_ok().then_some(message))
                })
                .collect();
            let closer = mailbox.clone();
            let closing = thread::spawn(move || closer.close());
            let mut received = Vec::new();
            // Until `Err(Closed)`.
            // SAFETY: this thread is the only consumer.
            while let Ok(message) = unsafe { mailbox.receive() } {
                received.push(message);
            }
            let mut sent: Vec<u8> = senders
                .into_iter()
                .filter_map(|s| s.join().unwrap())
                .collect();
            assert!(closing.join().unwrap());
            received.sort_unstable();
            sent.sort_unstable();
            assert_eq!(received, sent);
        });
    }
}

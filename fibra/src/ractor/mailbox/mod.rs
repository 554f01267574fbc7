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
//! Blocks hold at most 1 KiB of slots (at least one slot, however large the
//! message), an idle mailbox has none, and the receiver keeps the last block
//! it is done with for the next sender that needs one: `block.rs` says how.
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
//! How a sender or a closer wakes a receiver that waits, with no lost wake
//! and no lock, is in `wake.rs`.
//!
//! What senders touch — `tail`, `tail_block`, `state`, `waiter` and `spare`
//! — shares one cache line on purpose: a message between two Ractors moves
//! that line to the sender and back once, rather than several lines once
//! each. The receiver's `head` has a line of its own, so that taking a
//! message that has just arrived starts with a load that hits, not with a
//! miss on the line the sender wrote last; the receiver touches the senders'
//! line only to wait (`WAITING`) and once per block (the spare).
//!
//! # Files
//!
//! - `block.rs`: a block of slots, its size, and the spare block;
//! - `send.rs`: the senders' side — claiming a slot, installing the next
//!   block, closing;
//! - `receive.rs`: the one consumer's side — taking messages, waiting for
//!   one, counting them for a dump;
//! - `wake.rs`: `WAITING` and the `WAKERS`, and the fences that keep a wake
//!   from being lost (with the model checker's tests of them);
//! - here: the mailbox's two cache lines, and dropping what is left in it.

mod block;
mod receive;
mod send;
mod wake;

use crate::runtime::waiter::Waiter;
use crate::sync::drop_all::drop_all;
use crate::sync_prims::{self, AtomicPtr, AtomicUsize};
use block::Block;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
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
    /// Wakes the receiver (written by the receiver only; see `wake`'s module
    /// docs).
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
    pub(in crate::ractor) fn new() -> Mailbox<T> {
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

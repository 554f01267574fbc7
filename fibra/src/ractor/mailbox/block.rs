//! The mailbox's blocks: arrays of slots that senders fill in order, linked
//! into the queue, and the spare block the receiver keeps for the next
//! sender that needs one.
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

use super::Mailbox;
use crate::sync_prims::{AtomicBool, AtomicPtr};
use std::alloc::{self, Layout};
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering;

/// The most bytes of slots a block holds (unless one message is larger: a
/// block has at least one slot).
pub(super) const BLOCK_BYTES: usize = 1024;
/// The most slots a block holds, however small the messages.
const MAX_SLOTS: usize = 32;

/// One message's place in a block.
pub(super) struct Slot<T> {
    /// Initialised by the sender that claimed the slot, before `ready`; moved
    /// out by the receiver.
    pub(super) message: MaybeUninit<T>,
    /// The message is written (release by its sender, acquire by the
    /// receiver).
    pub(super) ready: AtomicBool,
}

/// A block of [`Block::SLOTS`] slots, filled in order, and a link to the next
/// one. Allocated with its slots after this header, so that the number of
/// slots can depend on `T`'s size (see the module docs).
#[repr(C)]
pub(super) struct Block<T> {
    /// The next block: set by the sender that claims this block's last slot,
    /// before it writes that slot.
    pub(super) next: AtomicPtr<Block<T>>,
    /// Where the slots begin.
    slots: [Slot<T>; 0],
}

impl<T> Block<T> {
    /// Slots per block: as many as fit in [`BLOCK_BYTES`], from 1 to
    /// [`MAX_SLOTS`].
    pub(super) const SLOTS: usize = {
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
    pub(super) const LAP: usize = Self::SLOTS + 1;

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
    pub(super) unsafe fn slot(block: *mut Block<T>, i: usize) -> *mut Slot<T> {
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
    pub(super) unsafe fn free(block: *mut Block<T>) {
        // SAFETY: the caller's; the slots need no drop of their own (a
        // `MaybeUninit` and an atomic).
        unsafe { alloc::dealloc(block.cast(), Self::layout()) }
    }
}

impl<T> Mailbox<T> {
    /// A block with no message: the spare one if there is one (acquire: the
    /// receiver is done with it), else a new one.
    pub(super) fn fresh_block(&self) -> *mut Block<T> {
        let spare = self.spare.swap(ptr::null_mut(), Ordering::Acquire);
        match spare.is_null() {
            true => Block::alloc(),
            false => spare,
        }
    }

    /// Clears a block whose messages are all taken and keeps it as the spare
    /// if there is none, else frees it.
    ///
    /// # Safety
    ///
    /// The single consumer only, with a block that no sender reaches any more
    /// (every slot of it taken).
    pub(super) unsafe fn retire(&self, block: *mut Block<T>) {
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
    pub(super) fn recycle(&self, block: *mut Block<T>) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    // These run on plain OS threads (a receiver parks with
    // `std::thread::park`), so Miri can run them: keep them small.

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
}

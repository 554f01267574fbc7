//! The receiver's side: taking the message at `head` once its sender has
//! written it, stepping into the next block at a block's end, waiting when
//! the queue is empty, and counting what is queued for a dump. Only the one
//! consumer calls these (the mailbox's module docs say why there is one), so
//! the receiving methods are `unsafe` with that contract.

use super::block::Block;
use super::{CLOSED, Mailbox, POSITION};
use crate::ractor::Closed;
use crate::runtime::WaitReason;
use crate::runtime::spin::{self, GaveUp};
use crate::runtime::waiter::Caller;
use std::ptr;
use std::sync::atomic::Ordering;

impl<T> Mailbox<T> {
    /// The next message, waiting for one; `Err(Closed)` once the port is closed
    /// and every message sent before has been received.
    ///
    /// # Safety
    ///
    /// No other call of `receive`, `try_receive` or `forget_receiver` on this
    /// mailbox may run at the same time (the single consumer: see the
    /// mailbox's module docs).
    pub(in crate::ractor) unsafe fn receive(&self) -> Result<T, Closed> {
        // SAFETY: the single consumer, the caller's contract.
        if let Some(message) = unsafe { self.pop() } {
            return Ok(message);
        }
        // Looked up once for the spin, the registration and each park.
        let caller = Caller::get();
        loop {
            // SAFETY: the single consumer, the caller's contract.
            if let Ok(message) = unsafe { self.spin_for_message(&caller) } {
                return Ok(message);
            }
            // SAFETY: the single consumer, the caller's contract.
            unsafe { self.register(&caller) };
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
            caller.wait(WaitReason::RactorReceive);
            // SAFETY: the single consumer, the caller's contract.
            if let Some(message) = unsafe { self.pop() } {
                return Ok(message);
            }
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
    unsafe fn spin_for_message(&self, caller: &Caller) -> Result<T, GaveUp> {
        let Caller::Green(scheduler) = caller else {
            return Err(GaveUp::Busy);
        };
        // SAFETY: the caller's.
        spin::poll_while_idle(scheduler, spin::SPIN_FOR_MESSAGE, || unsafe { self.pop() })
    }

    /// The next message if one is there.
    ///
    /// # Safety
    ///
    /// As for [`Mailbox::receive`].
    pub(in crate::ractor) unsafe fn try_receive(&self) -> Result<Option<T>, Closed> {
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
        // After the fence that follows the receiver's WAITING (see `wake`'s
        // module docs: a close is not missed); acquire: every claim before
        // the position read is visible.
        let tail = self.tail.load(Ordering::Acquire);
        // SAFETY: only the consumer touches `head`.
        tail & CLOSED != 0 && tail / POSITION == unsafe { *self.receiver.head.get() }
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
    pub(in crate::ractor) unsafe fn queued(&self) -> usize {
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
    pub(super) unsafe fn pop(&self) -> Option<T> {
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
}

#[cfg(test)]
mod tests {
    use super::Mailbox;
    use crate::ractor::Closed;
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
}

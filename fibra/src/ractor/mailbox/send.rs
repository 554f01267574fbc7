//! The senders' side: claiming a slot with one compare-and-swap on `tail`,
//! writing the message into it, installing the next block when a block
//! fills, and closing the port — what any thread may do at once.

use super::block::Block;
use super::wake::WAITING;
use super::{CLOSED, Mailbox, POSITION};
use crate::ractor::SendError;
use crate::sync_prims::{Backoff, fence};
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering;

impl<T> Mailbox<T> {
    /// Queues `message`, or hands it back if the port is closed.
    pub(in crate::ractor) fn send(&self, message: T) -> Result<(), SendError<T>> {
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
        // See `wake`'s module docs on why no wake is lost.
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

    /// Closes the port: later sends fail; messages already queued can still be
    /// received. Returns whether it was open.
    pub(in crate::ractor) fn close(&self) -> bool {
        let tail = self.tail.fetch_or(CLOSED, Ordering::AcqRel);
        // See `wake`'s module docs on why no wake is lost.
        fence(Ordering::SeqCst);
        if self.state.load(Ordering::Relaxed) & WAITING != 0 {
            self.wake_receiver();
        }
        tail & CLOSED == 0
    }
}

#[cfg(test)]
mod tests {
    use super::Mailbox;
    use crate::ractor::mailbox::block::{BLOCK_BYTES, Block};
    use std::sync::Arc;
    use std::thread;

    // These run on plain OS threads (a receiver parks with
    // `std::thread::park`), so Miri can run them: keep them small.

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
}

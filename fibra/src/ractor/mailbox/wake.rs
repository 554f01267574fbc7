//! Waking the receiver: how a sender or a closer finds a receiver that
//! waits, and wakes it without a lost wake and without a lock.
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

use super::Mailbox;
use crate::runtime::waiter::Caller;
use crate::sync_prims::{Backoff, fence};
use std::sync::atomic::Ordering;

/// In `state`: the receiver is parked (or about to park) and `waiter` wakes
/// it.
pub(super) const WAITING: usize = 1;
/// In `state`: one thread that claimed a wake and is reading `waiter` (a
/// count in the bits above `WAITING`: one claimer per thread at most, so it
/// cannot overflow).
const WAKER: usize = 1 << 1;
const WAKERS: usize = !WAITING;

impl<T> Mailbox<T> {
    /// Claims the wake of a waiting receiver and wakes it; does nothing if the
    /// receiver does not wait or another thread has claimed it.
    pub(super) fn wake_receiver(&self) {
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

    /// Drops the receiver's waiter (when its `Context` goes), so that a
    /// mailbox that outlives its Ractor keeps no `Unparker` alive.
    ///
    /// # Safety
    ///
    /// As for [`Mailbox::receive`].
    pub(in crate::ractor) unsafe fn forget_receiver(&self) {
        // SAFETY (both): the caller's; `quiesce` made the slot ours.
        unsafe {
            self.quiesce();
            self.waiter.with_mut(|waiter| *waiter = None);
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

    /// Records the calling thread (`caller`) as the one to wake and sets
    /// WAITING.
    ///
    /// # Safety
    ///
    /// The single consumer only.
    pub(super) unsafe fn register(&self, caller: &Caller) {
        let current = self.waiter.with(|waiter| {
            // SAFETY: reading the slot races only with other reads (wakers');
            // only the consumer — us — writes it.
            unsafe { &*waiter }
                .as_ref()
                .is_some_and(|waiter| caller.is(waiter))
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
                    .with_mut(|waiter| *waiter = Some(caller.waiter()));
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
    pub(super) fn unregister(&self) {
        self.state.fetch_and(!WAITING, Ordering::Relaxed);
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

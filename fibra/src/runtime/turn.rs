//! A green thread's turn at a socket: one operation in one direction, from
//! its first try to its end, parked in the socket's queue in the reactor
//! while the socket is not ready (see "Many waiters on one socket" in
//! `reactor.rs`). Built on the reactor, which keeps the queues and the
//! readiness, and on the scheduler, which parks and wakes the thread.

use super::reactor::{Direction, IoKey, Ticket};
use super::scheduler::Scheduler;
use super::task::TaskId;
use super::wait::WaitReason;

/// One green thread's operation on a socket in one direction, from its first
/// try to its end, however it ends (a value, an error, a timeout, an unwind):
/// the unit of "Many waiters on one socket" (`reactor.rs`). The operation asks
/// [`is_ready`](Turn::is_ready) before each try, reports `WouldBlock` with
/// [`clear_ready`](Turn::clear_ready) and then [`wait`](Turn::wait)s; dropping
/// the turn takes the thread off the socket's queue if it is still in it
/// and, if the socket is still ready, hands the turn to the oldest waiter.
///
/// The operation tried after `is_ready` must not park (fibra's own are one
/// system call each): who is queued is read at `is_ready`, and must still be
/// who is queued when the operation ends.
pub(crate) struct Turn<'a> {
    scheduler: &'a Scheduler,
    key: IoKey,
    direction: Direction,
    /// While the thread is queued: its place.
    ticket: Option<Ticket>,
    /// Whether the turn must be handed on if it ends now: others were queued
    /// when the thread last looked at the socket, or it is leaving a wait.
    crowded: bool,
    /// The operation found `WouldBlock`, and the socket's entry does not say
    /// so yet: [`wait`](Turn::wait) clears its readiness as it queues the
    /// thread (one look at the entry for both), or the turn's end does.
    blocked: bool,
    /// Whether the socket may be ready, as `wait` saw it when the thread
    /// left the queue: what the [`is_ready`](Turn::is_ready) that follows at
    /// once answers, without looking again.
    seen: Option<bool>,
}

impl<'a> Turn<'a> {
    pub(crate) fn new(scheduler: &'a Scheduler, key: IoKey, direction: Direction) -> Turn<'a> {
        Turn {
            scheduler,
            key,
            direction,
            ticket: None,
            crowded: false,
            blocked: false,
            seen: None,
        }
    }

    /// Whether to try the operation: the socket may be ready (no operation
    /// has seen `WouldBlock` since the kernel last said it was), or is closed
    /// in this direction, or is gone (the operation then reports why).
    pub(crate) fn is_ready(&mut self) -> bool {
        // Back from `wait`, which looked as the thread left the queue:
        // nothing else ran since.
        if let Some(ready) = self.seen.take() {
            return ready;
        }
        let reactor = &self.scheduler.reactor;
        let Some((ready, crowded)) = reactor.readiness(self.key, self.direction) else {
            return true;
        };
        // Nothing else runs until the operation ends (it only makes a system
        // call), so who is queued now is who is queued then.
        self.crowded = crowded;
        ready
    }

    /// Records that the operation found the socket not ready (`WouldBlock`):
    /// its readiness is cleared by the [`wait`](Turn::wait) that follows, or
    /// by the end of the turn if none does (a timeout).
    pub(crate) fn clear_ready(&mut self) {
        self.blocked = true;
    }

    /// Parks the running green thread, `task`, in the socket's queue until
    /// readiness comes its turn, or until it is woken otherwise (a timer, a
    /// cancellation, spuriously); it leaves the queue either way.
    pub(crate) fn wait(&mut self, task: TaskId, reason: WaitReason) {
        let reactor = &self.scheduler.reactor;
        let blocked = std::mem::take(&mut self.blocked);
        self.ticket = reactor.queue(self.key, self.direction, task, blocked);
        // If the park unwinds (a cancellation), `drop` takes the thread off
        // the queue and hands the turn on: it may have been given it.
        self.crowded = true;
        self.scheduler.park_on(reason);
        // Back to try again: whether to hand the turn on is for the end of
        // the operation, by what the socket says now (a socket gone: try,
        // and the operation says why).
        let ticket = self.ticket.take();
        let (ready, crowded) = reactor
            .leave(self.key, self.direction, ticket)
            .unwrap_or((true, self.crowded));
        self.crowded = crowded;
        self.seen = Some(ready);
    }

    /// The end of a turn that found `WouldBlock` without waiting after it,
    /// or that may have to be handed on.
    #[inline(never)]
    fn end(&mut self) {
        let (scheduler, key, direction) = (self.scheduler, self.key, self.direction);
        if self.blocked {
            scheduler.reactor.clear_ready(key, direction);
        }
        if let Some(ticket) = self.ticket.take() {
            scheduler.reactor.leave(key, direction, Some(ticket));
        }
        if self.crowded {
            scheduler
                .reactor
                .hand_on(key, direction, |task| scheduler.try_wake(task));
        }
    }
}

impl Drop for Turn<'_> {
    /// Nothing to do for an operation that ended in its turn with nobody
    /// else queued (nearly all of them): that much in line, the rest not.
    #[inline]
    fn drop(&mut self) {
        if self.blocked || self.crowded || self.ticket.is_some() {
            self.end();
        }
    }
}

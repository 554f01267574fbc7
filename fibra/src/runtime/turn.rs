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
}

impl<'a> Turn<'a> {
    pub(crate) fn new(scheduler: &'a Scheduler, key: IoKey, direction: Direction) -> Turn<'a> {
        Turn {
            scheduler,
            key,
            direction,
            ticket: None,
            crowded: false,
        }
    }

    /// Whether to try the operation: the socket may be ready (no operation
    /// has seen `WouldBlock` since the kernel last said it was), or is closed
    /// in this direction, or is gone (the operation then reports why).
    pub(crate) fn is_ready(&mut self) -> bool {
        let reactor = &self.scheduler.reactor;
        let Some((ready, crowded)) = reactor.readiness(self.key, self.direction) else {
            return true;
        };
        // Nothing else runs until the operation ends (it only makes a system
        // call), so who is queued now is who is queued then.
        self.crowded = crowded;
        ready
    }

    /// Records that the operation found the socket not ready (`WouldBlock`).
    pub(crate) fn clear_ready(&self) {
        self.scheduler.reactor.clear_ready(self.key, self.direction);
    }

    /// Parks the running green thread, `task`, in the socket's queue until
    /// readiness comes its turn, or until it is woken otherwise (a timer, a
    /// cancellation, spuriously); it leaves the queue either way.
    pub(crate) fn wait(&mut self, task: TaskId, reason: WaitReason) {
        let reactor = &self.scheduler.reactor;
        self.ticket = reactor.queue(self.key, self.direction, task);
        // If the park unwinds (a cancellation), `drop` takes the thread off
        // the queue and hands the turn on: it may have been given it.
        self.crowded = true;
        self.scheduler.park_on(reason);
        // Back to try again: whether to hand the turn on is for the end of
        // the operation (`is_ready` looks again first).
        if let Some(ticket) = self.ticket.take() {
            reactor.leave(self.key, self.direction, ticket);
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let (scheduler, key, direction) = (self.scheduler, self.key, self.direction);
        if let Some(ticket) = self.ticket.take() {
            scheduler.reactor.leave(key, direction, ticket);
        }
        if self.crowded {
            scheduler
                .reactor
                .hand_on(key, direction, |task| scheduler.try_wake(task));
        }
    }
}

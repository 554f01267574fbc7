//! The green threads waiting on one socket in one direction, first come first
//! woken.
//!
//! Nearly always one thread waits (a connection's reader, its writer), so the
//! first waiter is kept inline, in the socket's entry: queueing and leaving
//! cost no allocation, and the entry stays small. The others (several threads
//! accepting on one shared listener, say) go to an overflow list, made the
//! first time the socket has two waiters and kept, with its capacity, for the
//! socket's life: a socket allocates only as it reaches a new highest count of
//! waiters, never per wait.
//!
//! Each waiter gets a ticket, and tickets grow in the order threads queue, so
//! the queue is sorted by ticket: a thread back from its park tells from its
//! ticket alone, without searching, whether it was taken off the queue (woken
//! for readiness) or is still in it (woken otherwise: a timer, a cancellation).

use crate::runtime::task::TaskId;
use std::collections::VecDeque;
use std::num::NonZeroU64;

/// A waiter's place in one [`Queue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(in crate::runtime) struct Ticket(NonZeroU64);

#[derive(Clone, Copy)]
struct Queued {
    task: TaskId,
    ticket: Ticket,
}

/// The threads waiting on one socket in one direction, oldest first.
pub(super) struct Queue {
    /// The oldest waiter; `None` only if `rest` is empty too.
    first: Option<Queued>,
    #[expect(
        clippy::box_collection,
        reason = "one pointer in every socket's entry, not a VecDeque's four words, for a list few sockets ever need"
    )]
    rest: Option<Box<VecDeque<Queued>>>,
    next_ticket: NonZeroU64,
}

impl Queue {
    pub(super) const fn new() -> Queue {
        Queue {
            first: None,
            rest: None,
            next_ticket: NonZeroU64::MIN,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// Queues `task` last.
    pub(super) fn push(&mut self, task: TaskId) -> Ticket {
        let ticket = Ticket(self.next_ticket);
        // A socket would need 2^64 waits to run out.
        self.next_ticket = self.next_ticket.saturating_add(1);
        let queued = Queued { task, ticket };
        if self.first.is_none() {
            self.first = Some(queued);
        } else {
            self.rest.get_or_insert_default().push_back(queued);
        }
        ticket
    }

    /// Takes the oldest waiter off the queue.
    pub(super) fn pop(&mut self) -> Option<TaskId> {
        let first = self.first.take()?;
        self.first = self.rest.as_mut().and_then(|rest| rest.pop_front());
        Some(first.task)
    }

    /// Takes the waiter holding `ticket` off the queue, if it is still in it;
    /// returns whether it was.
    pub(super) fn remove(&mut self, ticket: Ticket) -> bool {
        match self.first {
            // Every waiter left holds a later ticket than the oldest: one
            // older than that was popped (it cannot have left twice).
            Some(first) if ticket < first.ticket => false,
            Some(first) if ticket == first.ticket => {
                self.pop();
                true
            }
            Some(_) => {
                let Some(rest) = self.rest.as_mut() else {
                    return false;
                };
                match rest.binary_search_by_key(&ticket, |q| q.ticket) {
                    Ok(at) => {
                        rest.remove(at);
                        true
                    }
                    Err(_) => false,
                }
            }
            None => false,
        }
    }

    /// Takes every waiter off the queue, oldest first.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = TaskId> {
        let first = self.first.take();
        first
            .into_iter()
            .chain(self.rest.take().into_iter().flat_map(|rest| *rest))
            .map(|q| q.task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(index: usize) -> TaskId {
        TaskId {
            index,
            serial: index as u64 + 1,
        }
    }

    #[test]
    fn waiters_are_taken_oldest_first() {
        let mut queue = Queue::new();
        for i in 0..5 {
            queue.push(task(i));
        }
        let popped: Vec<_> = std::iter::from_fn(|| queue.pop()).collect();
        assert_eq!(popped, (0..5).map(task).collect::<Vec<_>>());
        assert!(queue.is_empty());
    }

    #[test]
    fn a_waiter_leaves_from_anywhere_and_knows_if_it_was_popped() {
        let mut queue = Queue::new();
        let tickets: Vec<_> = (0..5).map(|i| queue.push(task(i))).collect();
        assert_eq!(queue.pop(), Some(task(0)));
        assert!(!queue.remove(tickets[0]), "popped: no longer queued");
        assert!(queue.remove(tickets[3]), "from the overflow");
        assert!(!queue.remove(tickets[3]), "it left already");
        assert!(queue.remove(tickets[1]), "the first one");
        let later = queue.push(task(7));
        assert_eq!(
            queue.drain().collect::<Vec<_>>(),
            [task(2), task(4), task(7)]
        );
        assert!(queue.is_empty());
        assert!(!queue.remove(later), "drained");
    }

    #[test]
    fn a_queue_is_small() {
        // The first waiter inline, with no room lost to `Option`'s tag; the
        // overflow one pointer; the next ticket.
        assert!(
            std::mem::size_of::<Queue>()
                <= std::mem::size_of::<TaskId>() + 3 * std::mem::size_of::<u64>()
        );
    }

    #[test]
    fn one_waiter_at_a_time_allocates_nothing() {
        let mut queue = Queue::new();
        for i in 0..1000 {
            let ticket = queue.push(task(i));
            if i % 2 == 0 {
                assert_eq!(queue.pop(), Some(task(i)));
            } else {
                assert!(queue.remove(ticket));
            }
        }
        assert!(queue.rest.is_none());
    }
}

//! A FIFO queue of parked green threads with O(1) removal from the middle: a
//! doubly linked list threaded through a slab.
//!
//! A waiter's node belongs to the waiter; the queue only links it. Whoever wakes
//! a waiter unlinks it (`pop_front`) and leaves a verdict in the node (a lock
//! granted, a message delivered, ...); the waiter reads the verdict when it runs
//! and removes its node. A waiter that leaves early (cancelled, timed out)
//! removes its node, which unlinks it if it is still queued. So a node's key
//! stays valid exactly as long as its waiter needs it.

use crate::runtime::scheduler::{self, Scheduler};
use slab::Slab;
use std::fmt;
use std::rc::Rc;

/// A green thread that is about to park, as something that can wake it.
///
/// The scheduler names green threads with an id type private to the runtime; a
/// closure carries the id without naming it (one allocation per wait), with
/// the id of its runtime.
#[derive(Clone)]
pub(crate) struct Sleeper(Rc<dyn Fn(&Scheduler)>);

impl Sleeper {
    /// The green thread running on `scheduler`.
    pub(crate) fn running(scheduler: &Scheduler) -> Sleeper {
        let task = scheduler.running();
        let runtime = scheduler.id();
        Sleeper(Rc::new(move |scheduler| {
            if scheduler.id() == runtime {
                scheduler.wake(task);
            }
        }))
    }

    /// Makes the thread runnable (see `Scheduler::wake`). After its runtime
    /// has ended (a lock or channel may outlive it, and a thread abandoned at
    /// the end may still be listed), there is nobody left to wake: not even
    /// in the runtime running now, where its id names another thread.
    pub(crate) fn wake(&self) {
        if let Some(scheduler) = scheduler::try_current() {
            (self.0)(&scheduler);
        }
    }
}

impl fmt::Debug for Sleeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sleeper")
    }
}

pub(crate) struct WaitList<E> {
    nodes: Slab<Node<E>>,
    head: Option<usize>,
    tail: Option<usize>,
}

struct Node<E> {
    value: E,
    linked: bool,
    prev: Option<usize>,
    next: Option<usize>,
}

impl<E> Default for WaitList<E> {
    fn default() -> Self {
        WaitList::new()
    }
}

impl<E> WaitList<E> {
    pub(crate) const fn new() -> Self {
        WaitList {
            nodes: Slab::new(),
            head: None,
            tail: None,
        }
    }

    /// Adds a node that is not queued yet.
    pub(crate) fn insert(&mut self, value: E) -> usize {
        self.nodes.insert(Node {
            value,
            linked: false,
            prev: None,
            next: None,
        })
    }

    /// Adds a node at the back of the queue.
    pub(crate) fn push_back(&mut self, value: E) -> usize {
        let key = self.insert(value);
        self.link_back(key);
        key
    }

    /// Queues an unqueued node at the back.
    pub(crate) fn link_back(&mut self, key: usize) {
        let tail = self.tail;
        let node = &mut self.nodes[key];
        debug_assert!(!node.linked, "a waiter is queued twice");
        node.linked = true;
        node.prev = tail;
        node.next = None;
        match tail {
            Some(tail) => self.nodes[tail].next = Some(key),
            None => self.head = Some(key),
        }
        self.tail = Some(key);
    }

    /// Takes a node out of the queue (it stays in the list); nothing happens
    /// if it is not queued.
    pub(crate) fn unlink(&mut self, key: usize) {
        let node = &mut self.nodes[key];
        if !node.linked {
            return;
        }
        node.linked = false;
        let (prev, next) = (node.prev.take(), node.next.take());
        match prev {
            Some(prev) => self.nodes[prev].next = next,
            None => self.head = next,
        }
        match next {
            Some(next) => self.nodes[next].prev = prev,
            None => self.tail = prev,
        }
    }

    /// The first queued node's key, left queued.
    pub(crate) fn front(&self) -> Option<usize> {
        self.head
    }

    /// Unlinks the first queued node and returns its key.
    pub(crate) fn pop_front(&mut self) -> Option<usize> {
        let key = self.head?;
        self.unlink(key);
        Some(key)
    }

    /// Removes a node, unlinking it first if it is queued.
    pub(crate) fn remove(&mut self, key: usize) -> E {
        self.unlink(key);
        self.nodes.remove(key).value
    }

    pub(crate) fn get(&self, key: usize) -> &E {
        &self.nodes[key].value
    }

    pub(crate) fn get_mut(&mut self, key: usize) -> &mut E {
        &mut self.nodes[key].value
    }

    #[cfg(test)]
    pub(crate) fn is_linked(&self, key: usize) -> bool {
        self.nodes[key].linked
    }

    /// Whether no node is queued.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::WaitList;

    fn drain(list: &mut WaitList<u32>) -> Vec<u32> {
        std::iter::from_fn(|| list.pop_front().map(|k| list.remove(k))).collect()
    }

    #[test]
    fn fifo_with_removal_from_anywhere() {
        let mut list = WaitList::default();
        let keys: Vec<usize> = (0..5).map(|v| list.push_back(v)).collect();
        list.unlink(keys[2]);
        assert!(!list.is_linked(keys[2]));
        assert_eq!(list.remove(keys[0]), 0);
        assert_eq!(list.remove(keys[4]), 4);
        list.link_back(keys[2]);
        let late = list.insert(9);
        assert!(!list.is_linked(late));
        list.link_back(late);
        assert_eq!(drain(&mut list), [1, 3, 2, 9]);
        assert!(list.is_empty());
        assert_eq!(list.pop_front(), None);
    }

    #[test]
    fn popped_nodes_stay_until_removed() {
        let mut list = WaitList::default();
        let a = list.push_back(1);
        let b = list.push_back(2);
        assert_eq!(list.front(), Some(a));
        assert_eq!(list.pop_front(), Some(a));
        assert_eq!(list.front(), Some(b));
        *list.get_mut(a) += 10;
        assert_eq!(*list.get(a), 11);
        // Removing an unlinked node leaves the queue alone.
        assert_eq!(list.remove(a), 11);
        assert_eq!(list.pop_front(), Some(b));
        assert!(list.is_empty());
    }
}

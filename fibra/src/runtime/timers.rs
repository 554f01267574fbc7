//! Deadlines of sleeping green threads, in a heap ordered by time.
//!
//! An entry is not removed when its thread wakes for another reason: it fires
//! later as a spurious wake-up, which every parking site tolerates (it parks in
//! a loop that re-checks what it waits for). That keeps arming a timer at one
//! heap push.

use super::task::TaskId;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<(Instant, u64, TaskIdKey)>>,
    sequence: u64,
}

/// `TaskId` ordered by nothing in particular, so that it can sit in the heap.
#[derive(PartialEq, Eq)]
struct TaskIdKey(TaskId);

impl PartialOrd for TaskIdKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TaskIdKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.serial.cmp(&other.0.serial)
    }
}

impl Timers {
    /// Wakes `task` at `deadline` (or soon after).
    pub(super) fn insert(&mut self, deadline: Instant, task: TaskId) {
        self.sequence += 1;
        self.heap
            .push(Reverse((deadline, self.sequence, TaskIdKey(task))));
    }

    /// How long until the next deadline, if any (zero if one has passed).
    pub(super) fn next_timeout(&self, now: Instant) -> Option<Duration> {
        self.heap
            .peek()
            .map(|Reverse((deadline, _, _))| deadline.saturating_duration_since(now))
    }

    pub(super) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Removes the entries whose deadline has passed, earliest first.
    pub(super) fn expire(&mut self, now: Instant, mut wake: impl FnMut(TaskId)) {
        while let Some(Reverse((deadline, _, _))) = self.heap.peek() {
            if *deadline > now {
                break;
            }
            let Reverse((_, _, TaskIdKey(task))) = self.heap.pop().expect("peeked");
            wake(task);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(serial: u64) -> TaskId {
        TaskId {
            index: serial as usize,
            serial,
        }
    }

    #[test]
    fn expires_in_deadline_order_and_only_when_due() {
        let mut timers = Timers::default();
        let t0 = Instant::now();
        timers.insert(t0 + Duration::from_millis(30), id(3));
        timers.insert(t0 + Duration::from_millis(10), id(1));
        timers.insert(t0 + Duration::from_millis(20), id(2));
        assert_eq!(timers.next_timeout(t0), Some(Duration::from_millis(10)));
        let mut woken = Vec::new();
        timers.expire(t0 + Duration::from_millis(25), |t| woken.push(t.serial));
        assert_eq!(woken, [1, 2]);
        assert!(timers.next_timeout(t0).is_some());
        timers.expire(t0 + Duration::from_millis(30), |t| woken.push(t.serial));
        assert_eq!(woken, [1, 2, 3]);
        assert_eq!(timers.next_timeout(t0), None);
    }
}

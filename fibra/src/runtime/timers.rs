//! Deadlines of waiting green threads: the timers armed now, and a heap of
//! their deadlines.
//!
//! A timer belongs to one wait and goes with it: a wait that ends for another
//! reason (woken, timed out elsewhere, cancelled, unwinding) disarms it (see
//! `ArmedTimer`), so a timer never outlives its wait — no deadlock is hidden
//! behind one, the end of a runtime never waits for one, and memory stays flat
//! however many waits a thread makes.
//!
//! Most timers are disarmed rather than fired (a notified `wait_timeout`, a
//! `recv_timeout` that got its message, a `timeout` whose work finished), so
//! disarming must be as cheap as arming. A heap that tracks each entry's
//! position (to remove it in place) would pay bookkeeping on every sift of
//! every arm; instead disarming is lazy: the timer leaves the slab of armed
//! timers at once (O(1)), and its heap entry, now dead, is dropped when it
//! reaches the top, or when dead entries outnumber live ones and the heap is
//! rebuilt without them (O(live), so O(1) amortised per disarm). Arming stays
//! one slab insert and one heap push; the heap holds at most about twice the
//! timers armed; and its top is always live, so the next deadline and "is any
//! timer armed" are read without skipping anything.

use super::task::TaskId;
use slab::Slab;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct Timers {
    /// Deadlines, earliest first: (deadline, serial, slot in `armed`). An
    /// entry whose slot no longer holds its serial is dead (disarmed).
    heap: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    armed: Slab<Armed>,
    /// Numbers the timers, so that a disarmed timer's key never matches the
    /// one armed after it in the same slot.
    serial: u64,
}

struct Armed {
    serial: u64,
    task: TaskId,
}

/// Names one armed timer, to disarm it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TimerKey {
    slot: usize,
    serial: u64,
}

/// A timer armed for a green thread's wait (see
/// `Scheduler::arm_timer`): it wakes the thread at its deadline unless dropped
/// before, and dropping it — on whatever path the wait ends, unwinding
/// included — disarms it. Keep it for as long as the wait lasts, across its
/// spurious wake-ups: one timer per wait, not per park.
#[must_use = "the timer is disarmed when this is dropped"]
pub(crate) struct ArmedTimer<'a> {
    pub(super) timers: &'a RefCell<Timers>,
    pub(super) key: TimerKey,
}

impl Drop for ArmedTimer<'_> {
    fn drop(&mut self) {
        self.timers.borrow_mut().remove(self.key);
    }
}

impl Timers {
    /// Wakes `task` at `deadline` (or soon after), unless disarmed before.
    pub(super) fn insert(&mut self, deadline: Instant, task: TaskId) -> TimerKey {
        self.serial += 1;
        let serial = self.serial;
        let slot = self.armed.insert(Armed { serial, task });
        self.heap.push(Reverse((deadline, serial, slot)));
        TimerKey { slot, serial }
    }

    /// Disarms the timer `key` names; nothing if it has fired (or was
    /// disarmed) already.
    pub(super) fn remove(&mut self, key: TimerKey) {
        if !self.is_armed(key.slot, key.serial) {
            return;
        }
        self.armed.remove(key.slot);
        self.drop_dead();
    }

    /// Disarms every timer of `task`, a thread abandoned where it waits (see
    /// `Scheduler::cancel`): its stack is leaked, so its `ArmedTimer`s are
    /// never dropped. Rare, so a scan of the armed timers.
    pub(super) fn remove_all_of(&mut self, task: TaskId) {
        let before = self.armed.len();
        self.armed.retain(|_, armed| armed.task != task);
        if self.armed.len() != before {
            self.drop_dead();
        }
    }

    /// How long until the next deadline, if any (zero if one has passed).
    pub(super) fn next_timeout(&self, now: Instant) -> Option<Duration> {
        self.heap
            .peek()
            .map(|Reverse((deadline, _, _))| deadline.saturating_duration_since(now))
    }

    /// Whether no timer is armed.
    pub(super) fn is_empty(&self) -> bool {
        self.armed.is_empty()
    }

    /// How many timers are armed.
    pub(super) fn armed(&self) -> usize {
        self.armed.len()
    }

    /// How many entries the heap holds, live or dead: what the timers cost in
    /// memory.
    pub(super) fn entries(&self) -> usize {
        self.heap.len()
    }

    /// Fires the timers whose deadline has passed, earliest first.
    pub(super) fn expire(&mut self, now: Instant, mut wake: impl FnMut(TaskId)) {
        while let Some(&Reverse((deadline, serial, slot))) = self.heap.peek() {
            if deadline > now {
                break;
            }
            self.heap.pop();
            // The top is live (see `drop_dead_top`); checked all the same, as
            // the slot may hold a later timer if it is not.
            if self.is_armed(slot, serial) {
                wake(self.armed.remove(slot).task);
            }
            self.drop_dead_top();
        }
    }

    fn is_armed(&self, slot: usize, serial: u64) -> bool {
        Self::live(&self.armed, slot, serial)
    }

    fn live(armed: &Slab<Armed>, slot: usize, serial: u64) -> bool {
        armed.get(slot).is_some_and(|a| a.serial == serial)
    }

    /// After a disarm: keeps the top live, and dead entries no more numerous
    /// than live ones.
    fn drop_dead(&mut self) {
        self.drop_dead_top();
        if self.heap.len() > 2 * self.armed.len() {
            let armed = &self.armed;
            self.heap
                .retain(|Reverse((_, serial, slot))| Self::live(armed, *slot, *serial));
        }
    }

    /// Pops dead entries off the top, so that the top is live (or the heap
    /// empty).
    fn drop_dead_top(&mut self) {
        while let Some(&Reverse((_, serial, slot))) = self.heap.peek() {
            if self.is_armed(slot, serial) {
                break;
            }
            self.heap.pop();
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
        assert!(timers.is_empty());
    }

    #[test]
    fn a_disarmed_timer_never_fires_nor_counts() {
        let mut timers = Timers::default();
        let t0 = Instant::now();
        let early = timers.insert(t0 + Duration::from_millis(10), id(1));
        let late = timers.insert(t0 + Duration::from_millis(20), id(2));
        timers.remove(early);
        assert_eq!(timers.next_timeout(t0), Some(Duration::from_millis(20)));
        timers.remove(late);
        assert!(timers.is_empty());
        assert_eq!(timers.next_timeout(t0), None);
        let mut woken = Vec::new();
        timers.expire(t0 + Duration::from_secs(1), |t| woken.push(t.serial));
        assert!(woken.is_empty());
        // Disarming again, or after the slot was reused, touches nothing.
        let reused = timers.insert(t0 + Duration::from_millis(5), id(3));
        timers.remove(early);
        timers.remove(late);
        timers.expire(t0 + Duration::from_secs(1), |t| woken.push(t.serial));
        assert_eq!(woken, [3]);
        timers.remove(reused);
        assert!(timers.is_empty());
    }

    #[test]
    fn an_abandoned_threads_timers_all_go() {
        let mut timers = Timers::default();
        let t0 = Instant::now();
        timers.insert(t0 + Duration::from_millis(10), id(1));
        timers.insert(t0 + Duration::from_millis(20), id(2));
        timers.insert(t0 + Duration::from_millis(30), id(1));
        timers.remove_all_of(id(1));
        assert_eq!(timers.next_timeout(t0), Some(Duration::from_millis(20)));
        let mut woken = Vec::new();
        timers.expire(t0 + Duration::from_secs(1), |t| woken.push(t.serial));
        assert_eq!(woken, [2]);
        assert_eq!(timers.entries(), 0);
    }

    #[test]
    fn dead_entries_never_outnumber_live_ones() {
        let mut timers = Timers::default();
        let t0 = Instant::now();
        // A long timer stays armed at the top, so that dead entries below it
        // are not popped: only the rebuild removes them.
        let _first = timers.insert(t0, id(1));
        let keep: Vec<_> = (0..10)
            .map(|i| timers.insert(t0 + Duration::from_secs(1 + i), id(2)))
            .collect();
        for i in 0..if cfg!(miri) { 200 } else { 100_000u64 } {
            let key = timers.insert(t0 + Duration::from_secs(3600 + i), id(3));
            timers.remove(key);
            assert!(timers.entries() <= 2 * 11 + 1, "{}", timers.entries());
        }
        keep.into_iter().for_each(|key| timers.remove(key));
        assert_eq!(timers.entries(), 1);
    }
}

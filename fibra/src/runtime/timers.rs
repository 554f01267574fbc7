//! Deadlines of waiting green threads: the timers armed now, in a lane of
//! those armed in deadline order (each due no earlier than the one armed
//! before it) and a heap of the others.
//!
//! A timer belongs to one wait and goes with it: a wait that ends for another
//! reason (woken, timed out elsewhere, cancelled, unwinding) disarms it (see
//! `ArmedTimer`), so a timer never outlives its wait — no deadlock is hidden
//! behind one, the end of a runtime never waits for one, and memory stays flat
//! however many waits a thread makes.
//!
//! Most timers are disarmed rather than fired (a notified `wait_timeout`, a
//! `recv_timeout` that got its message, a read that got its data before the
//! socket's timeout), so disarming must be as cheap as arming; and most are
//! armed a fixed time from now (a socket's timeout, a connection's
//! keep-alive), so each is due no earlier than the one armed before it. Such
//! a timer joins the back of the lane, a list linked through the slab of
//! armed timers, and leaves it by unlinking, O(1) wherever it stands; in a
//! heap, the timer disarmed is usually the top (the connection that waited
//! longest gets the next request), and popping it is a sift of log n.
//! Measured (`scripts/http-instructions.sh`), arming and disarming the timer
//! of fibra-http's keep-alive read took ~300 of its 3,783 instructions a
//! request through the heap, and ~115 through the lane.
//!
//! A timer due before the lane's last goes to the heap (so a long timer at
//! the lane's back, a long sleep, sends those armed after it to the heap
//! until it goes: the heap's cost, no more), which disarms lazily: the timer
//! leaves the slab at once, and its heap entry, now dead, is dropped when it
//! reaches the top, or when dead entries outnumber live ones and the heap is
//! rebuilt without them (O(live), so O(1) amortised per disarm). The heap's
//! top is always live, and so is the lane's first, so the next deadline and
//! "is any timer armed" are read exactly, without skipping anything.

use super::task::TaskId;
use slab::Slab;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct Timers {
    /// The armed timers, each in the lane or in the heap.
    armed: Slab<Armed>,
    /// The lane's first and last timers (slots in `armed`): timers in
    /// deadline order, linked through their `Place::Lane`.
    first: Option<usize>,
    last: Option<usize>,
    /// Deadlines of the timers armed out of order, earliest first:
    /// (deadline, serial, slot in `armed`). An entry whose slot no longer
    /// holds its serial is dead (disarmed).
    heap: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    /// How many of the heap's entries are live.
    in_heap: usize,
    /// Numbers the timers, so that a disarmed timer's key never matches the
    /// one armed after it in the same slot.
    serial: u64,
}

struct Armed {
    serial: u64,
    task: TaskId,
    deadline: Instant,
    place: Place,
}

/// Where an armed timer is kept.
#[derive(Clone, Copy)]
enum Place {
    /// In the lane, between these neighbours (`None` at its ends).
    Lane {
        before: Option<usize>,
        after: Option<usize>,
    },
    Heap,
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
    #[inline]
    pub(super) fn insert(&mut self, deadline: Instant, task: TaskId) -> TimerKey {
        self.serial += 1;
        let serial = self.serial;
        let in_order = self
            .last
            .is_none_or(|last| self.armed[last].deadline <= deadline);
        let place = if in_order {
            Place::Lane {
                before: self.last,
                after: None,
            }
        } else {
            Place::Heap
        };
        let slot = self.armed.insert(Armed {
            serial,
            task,
            deadline,
            place,
        });
        if in_order {
            match self.last {
                Some(last) => self.set_after(last, Some(slot)),
                None => self.first = Some(slot),
            }
            self.last = Some(slot);
        } else {
            self.heap.push(Reverse((deadline, serial, slot)));
            self.in_heap += 1;
        }
        TimerKey { slot, serial }
    }

    /// Disarms the timer `key` names; nothing if it has fired (or was
    /// disarmed) already.
    pub(super) fn remove(&mut self, key: TimerKey) {
        if self.is_armed(key.slot, key.serial) {
            self.take(key.slot);
        }
    }

    /// Disarms every timer of `task`, a thread abandoned where it waits (see
    /// `Scheduler::cancel`): its stack is leaked, so its `ArmedTimer`s are
    /// never dropped. Rare, so a scan of the armed timers.
    pub(super) fn remove_all_of(&mut self, task: TaskId) {
        let slots: Vec<usize> = self
            .armed
            .iter()
            .filter(|(_, armed)| armed.task == task)
            .map(|(slot, _)| slot)
            .collect();
        for slot in slots {
            self.take(slot);
        }
    }

    /// How long until the next deadline, if any (zero if one has passed).
    pub(super) fn next_timeout(&self, now: Instant) -> Option<Duration> {
        self.next()
            .map(|(deadline, _)| deadline.saturating_duration_since(now))
    }

    /// Whether no timer is armed.
    pub(super) fn is_empty(&self) -> bool {
        self.armed.is_empty()
    }

    /// How many timers are armed.
    pub(super) fn armed(&self) -> usize {
        self.armed.len()
    }

    /// How many entries the timers hold, the armed ones and the heap's dead
    /// ones: what the timers cost in memory.
    pub(super) fn entries(&self) -> usize {
        self.armed.len() + self.heap.len() - self.in_heap
    }

    /// Fires the timers whose deadline has passed, earliest first.
    pub(super) fn expire(&mut self, now: Instant, mut wake: impl FnMut(TaskId)) {
        while let Some((deadline, slot)) = self.next() {
            if deadline > now {
                break;
            }
            wake(self.take(slot));
        }
    }

    /// The armed timer due first: its deadline and slot. The earlier of the
    /// lane's first and the heap's top, both live.
    fn next(&self) -> Option<(Instant, usize)> {
        let lane = self.first.map(|slot| (self.armed[slot].deadline, slot));
        let heap = self
            .heap
            .peek()
            .map(|&Reverse((deadline, _, slot))| (deadline, slot));
        match (lane, heap) {
            (Some(lane), Some(heap)) => Some(if heap.0 < lane.0 { heap } else { lane }),
            (lane, heap) => lane.or(heap),
        }
    }

    /// Disarms the armed timer in `slot`, taking it out of the lane or the
    /// heap; returns its task.
    #[inline]
    fn take(&mut self, slot: usize) -> TaskId {
        let armed = self.armed.remove(slot);
        match armed.place {
            Place::Lane { before, after } => {
                match before {
                    Some(before) => self.set_after(before, after),
                    None => self.first = after,
                }
                match after {
                    Some(after) => self.set_before(after, before),
                    None => self.last = before,
                }
            }
            Place::Heap => {
                self.in_heap -= 1;
                self.drop_dead();
            }
        }
        armed.task
    }

    /// Links lane timer `slot` to the one after it (a lane timer's
    /// neighbours are lane timers).
    fn set_after(&mut self, slot: usize, to: Option<usize>) {
        if let Place::Lane { after, .. } = &mut self.armed[slot].place {
            *after = to;
        }
    }

    /// Links lane timer `slot` to the one before it.
    fn set_before(&mut self, slot: usize, to: Option<usize>) {
        if let Place::Lane { before, .. } = &mut self.armed[slot].place {
            *before = to;
        }
    }

    fn is_armed(&self, slot: usize, serial: u64) -> bool {
        Self::live(&self.armed, slot, serial)
    }

    fn live(armed: &Slab<Armed>, slot: usize, serial: u64) -> bool {
        armed.get(slot).is_some_and(|a| a.serial == serial)
    }

    /// After a heap entry died: keeps the top live, and dead entries no more
    /// numerous than live ones.
    fn drop_dead(&mut self) {
        while let Some(&Reverse((_, serial, slot))) = self.heap.peek() {
            if self.is_armed(slot, serial) {
                break;
            }
            self.heap.pop();
        }
        if self.heap.len() > 2 * self.in_heap {
            let armed = &self.armed;
            self.heap
                .retain(|Reverse((_, serial, slot))| Self::live(armed, *slot, *serial));
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
        // The lane's last is due after every other timer, which all go to
        // the heap; an earlier one stays armed at the heap's top, so that
        // dead entries below it are not popped: only the rebuild removes
        // them.
        let _last = timers.insert(t0 + Duration::from_secs(1 << 30), id(4));
        let _first = timers.insert(t0, id(1));
        let keep: Vec<_> = (0..10)
            .map(|i| timers.insert(t0 + Duration::from_secs(1 + i), id(2)))
            .collect();
        for i in 0..if cfg!(miri) { 200 } else { 100_000u64 } {
            let key = timers.insert(t0 + Duration::from_secs(3600 + i), id(3));
            timers.remove(key);
            assert!(timers.entries() <= 2 * 12 + 1, "{}", timers.entries());
        }
        keep.into_iter().for_each(|key| timers.remove(key));
        assert_eq!(timers.entries(), 2);
    }

    #[test]
    fn timers_armed_in_order_and_out_of_order_fire_earliest_first() {
        let mut timers = Timers::default();
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        // 10, 20, 20, 40 join the lane; 5, 15 and 30 are earlier than its
        // last when armed, and go to the heap.
        for (n, task) in [(10, 1), (20, 2), (5, 3), (20, 4), (15, 5), (40, 6), (30, 7)] {
            timers.insert(ms(n), id(task));
        }
        assert_eq!(timers.entries(), 7);
        assert_eq!(timers.next_timeout(t0), Some(Duration::from_millis(5)));
        let mut woken = Vec::new();
        timers.expire(ms(20), |t| woken.push(t.serial));
        assert_eq!(woken, [3, 1, 5, 2, 4]);
        assert_eq!(timers.next_timeout(t0), Some(Duration::from_millis(30)));
        timers.expire(ms(39), |t| woken.push(t.serial));
        assert_eq!(woken, [3, 1, 5, 2, 4, 7]);
        timers.expire(ms(40), |t| woken.push(t.serial));
        assert_eq!(woken, [3, 1, 5, 2, 4, 7, 6]);
        assert!(timers.is_empty());
        assert_eq!(timers.entries(), 0);
    }

    #[test]
    fn a_timer_disarmed_anywhere_in_the_lane_leaves_it_linked() {
        let mut timers = Timers::default();
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let keys: Vec<_> = (1..=5).map(|n| timers.insert(ms(10 * n), id(n))).collect();
        // The middle, the first and the last.
        timers.remove(keys[2]);
        timers.remove(keys[0]);
        timers.remove(keys[4]);
        assert_eq!(timers.entries(), 2);
        assert_eq!(timers.next_timeout(t0), Some(Duration::from_millis(20)));
        // A timer armed after the last one left joins the lane behind the
        // one now last.
        timers.insert(ms(45), id(6));
        let mut woken = Vec::new();
        timers.expire(ms(100), |t| woken.push(t.serial));
        assert_eq!(woken, [2, 4, 6]);
        // Emptied, the lane takes any deadline.
        timers.insert(ms(1), id(7));
        assert_eq!(timers.next_timeout(t0), Some(Duration::from_millis(1)));
        timers.remove_all_of(id(7));
        assert!(timers.is_empty());
        assert_eq!(timers.next_timeout(t0), None);
    }

    #[test]
    fn keep_alive_waits_cost_no_heap_entry() {
        // Connections each waiting a fixed time from now, served in turn: each
        // re-arms behind the others.
        let mut timers = Timers::default();
        let t0 = Instant::now();
        let mut keys: Vec<_> = (0..10).map(|c| timers.insert(t0, id(c))).collect();
        for request in 0..1000u64 {
            let c = (request % 10) as usize;
            timers.remove(keys[c]);
            keys[c] = timers.insert(t0 + Duration::from_micros(request), id(c as u64));
            assert_eq!(timers.entries(), 10);
            assert_eq!(timers.heap.len(), 0);
        }
        let mut woken = Vec::new();
        timers.expire(t0 + Duration::from_secs(1), |t| woken.push(t.serial));
        assert_eq!(woken, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
}

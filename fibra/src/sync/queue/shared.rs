//! What the clones of a [`Queue`](super::Queue) share: its items, its limit
//! and the threads that wait on it, behind one lock that is never held
//! across a wait (nor while a user's item is dropped).
//!
//! # Handing over
//!
//! A push that finds a popper waiting puts the item in that popper's entry
//! and wakes it; a pop that makes room in a full queue moves the first
//! waiting pusher's item in and wakes it. So the woken thread's outcome is
//! settled before it runs — it never wakes to find the item taken by a
//! thread that came later — and waiters are served in arrival order, each
//! side. (Poppers wait only while the queue is empty, pushers only while it
//! is full, so an item never waits in the queue while a popper waits, nor
//! room while a pusher waits.)
//!
//! # Leaving early loses nothing
//!
//! A waiting green thread may leave without its outcome: cancelled
//! ([`JoinHandle::cancel`](crate::JoinHandle::cancel)), its
//! [`timeout`](crate::time::timeout) expired (both unwind out of the park), or
//! its own `pop_timeout`/`push_timeout` ran out. Its entry ([`Waiting`])
//! goes with it, under the lock, so that nobody hands it anything after; an
//! item that was handed to it before goes to the next waiting popper, or back
//! to the front of the queue; a pusher's item is either in the queue (the
//! push happened, and returns `Ok` if it was not an unwind) or back with its
//! caller (it did not).
//!
//! # No lost wake-up
//!
//! A waiter adds its entry under the lock and then asks, after every wake,
//! under the lock again, whether its entry is settled; whoever settles it
//! does so under the lock and wakes it after. The waiter's [`Waiter`] makes a
//! wake that comes before the park (a green thread's is remembered, an OS
//! thread's is std's unpark token) end that park at once. The model checker
//! (`model_check` below, `scripts/model-check.sh`) runs these paths with
//! every interleaving.

use super::{Stop, Verdict};
use crate::runtime::WaitReason;
use crate::runtime::waiter::{self, Waiter};
use crate::sync::drop_all::drop_all;
use crate::sync::waitlist::WaitList;
use crate::sync_prims::Mutex;
use std::collections::VecDeque;
use std::mem;
use std::ops::DerefMut;
use std::sync::PoisonError;
use std::time::Instant;

pub(super) struct Shared<T> {
    state: Mutex<State<T>>,
}

struct State<T> {
    items: VecDeque<T>,
    /// The most items a push adds without waiting; `None`: no limit.
    max: Option<usize>,
    closed: bool,
    poppers: WaitList<Entry<T>>,
    pushers: WaitList<Entry<T>>,
    /// Entries still waiting (queued in `poppers` or `pushers`).
    waiting: usize,
}

/// A waiting thread's entry: it belongs to that thread, which removes it when
/// it stops waiting; whoever settles it unlinks it from its list first.
struct Entry<T> {
    /// Wakes the thread; taken by whoever settles the entry.
    waiter: Option<Waiter>,
    /// A popper's: the item handed to it. A pusher's: its item, until it
    /// moves into the queue.
    item: Option<T>,
    verdict: Verdict,
}

/// Which list an entry is in.
#[derive(Clone, Copy)]
enum Side {
    Pop,
    Push,
}

impl<T> Shared<T> {
    pub(super) fn new(max: Option<usize>) -> Shared<T> {
        Shared {
            state: Mutex::new(State {
                items: VecDeque::new(),
                max,
                closed: false,
                poppers: WaitList::new(),
                pushers: WaitList::new(),
                waiting: 0,
            }),
        }
    }

    /// The state, locked. A thread that panicked holding it left it whole
    /// (no user code runs under it), so a poisoned lock is taken as it is.
    fn lock(&self) -> impl DerefMut<Target = State<T>> + '_ {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `item` at the back, or hands it to the first waiting popper.
    /// While the queue is full, waits for room until `deadline` (`None`:
    /// for as long as it takes) if `wait`; else gives up at once.
    pub(super) fn push(
        &self,
        item: T,
        wait: bool,
        deadline: Option<Instant>,
    ) -> Result<(), (T, Stop)> {
        let key = {
            let mut state = self.lock();
            if state.closed {
                return Err((item, Stop::Closed));
            }
            let item = match state.hand_over(item) {
                Ok(woken) => {
                    drop(state);
                    woken.wake();
                    return Ok(());
                }
                Err(item) => item,
            };
            if state.has_room() {
                state.items.push_back(item);
                return Ok(());
            }
            if !wait || passed(deadline) {
                return Err((item, Stop::Nothing));
            }
            state.enqueue(Side::Push, Some(item))
        };
        match Waiting::new(self, Side::Push, key).wait(WaitReason::QueuePush, deadline) {
            (Verdict::Done, _) => Ok(()),
            (verdict, item) => {
                let stop = match verdict {
                    Verdict::Closed => Stop::Closed,
                    _ => Stop::Nothing,
                };
                Err((item.expect("a waiting pusher's item"), stop))
            }
        }
    }

    /// Takes the item at the front. While the queue is empty and open, waits
    /// for one until `deadline` (`None`: for as long as it takes) if `wait`;
    /// else gives up at once.
    pub(super) fn pop(&self, wait: bool, deadline: Option<Instant>) -> Result<T, Stop> {
        let key = {
            let mut state = self.lock();
            if let Some(item) = state.items.pop_front() {
                let woken = state.admit();
                drop(state);
                if let Some(woken) = woken {
                    woken.wake();
                }
                return Ok(item);
            }
            if state.closed {
                return Err(Stop::Closed);
            }
            if !wait || passed(deadline) {
                return Err(Stop::Nothing);
            }
            state.enqueue(Side::Pop, None)
        };
        match Waiting::new(self, Side::Pop, key).wait(WaitReason::QueuePop, deadline) {
            (Verdict::Done, item) => Ok(item.expect("an item handed to a popper")),
            (Verdict::Closed, _) => Err(Stop::Closed),
            (Verdict::Waiting, _) => Err(Stop::Nothing),
        }
    }

    /// Closes the queue and wakes every waiter: poppers get `Closed` (the
    /// queue is empty, or they would not wait), pushers their item back.
    pub(super) fn close(&self) {
        let woken = {
            let mut state = self.lock();
            if state.closed {
                return;
            }
            state.closed = true;
            let mut woken = state.settle_all(Side::Pop, Verdict::Closed);
            woken.extend(state.settle_all(Side::Push, Verdict::Closed));
            woken
        };
        woken.iter().for_each(Waiter::wake);
    }

    /// Removes every item (dropped after the lock is released), then lets
    /// waiting pushers in.
    pub(super) fn clear(&self) {
        let (items, woken) = {
            let mut state = self.lock();
            let items = mem::take(&mut state.items);
            (items, state.admit_all())
        };
        woken.iter().for_each(Waiter::wake);
        drop_all(items);
    }

    /// Sets the limit, and lets in as many waiting pushers as it now has
    /// room for.
    pub(super) fn set_max(&self, max: usize) {
        let woken = {
            let mut state = self.lock();
            state.max = Some(max);
            state.admit_all()
        };
        woken.iter().for_each(Waiter::wake);
    }

    pub(super) fn max(&self) -> Option<usize> {
        self.lock().max
    }

    pub(super) fn len(&self) -> usize {
        self.lock().items.len()
    }

    pub(super) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    pub(super) fn num_waiting(&self) -> usize {
        self.lock().waiting
    }

    /// The length, whether closed, and how many wait, at one moment.
    pub(super) fn snapshot(&self) -> (usize, bool, usize) {
        let state = self.lock();
        (state.items.len(), state.closed, state.waiting)
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Every item's destructor runs, even if one panics (see `drop_all`).
        let items = mem::take(&mut self.lock().items);
        drop_all(items);
    }
}

impl<T> State<T> {
    fn has_room(&self) -> bool {
        self.max.is_none_or(|max| self.items.len() < max)
    }

    fn list(&mut self, side: Side) -> &mut WaitList<Entry<T>> {
        match side {
            Side::Pop => &mut self.poppers,
            Side::Push => &mut self.pushers,
        }
    }

    /// Queues an entry for the calling thread; returns its key.
    fn enqueue(&mut self, side: Side, item: Option<T>) -> usize {
        self.waiting += 1;
        self.list(side).push_back(Entry {
            waiter: Some(Waiter::current()),
            item,
            verdict: Verdict::Waiting,
        })
    }

    /// Unlinks the first waiting entry of `side` and settles it with
    /// `verdict`; returns it (still in the list, for its thread to remove).
    fn settle_first(&mut self, side: Side, verdict: Verdict) -> Option<&mut Entry<T>> {
        let key = self.list(side).pop_front()?;
        self.waiting -= 1;
        let entry = self.list(side).get_mut(key);
        entry.verdict = verdict;
        Some(entry)
    }

    /// Settles every waiting entry of `side` with `verdict`; returns their
    /// waiters.
    fn settle_all(&mut self, side: Side, verdict: Verdict) -> Vec<Waiter> {
        std::iter::from_fn(|| self.settle_first(side, verdict).map(|e| e.waiter.take()))
            .flatten()
            .collect()
    }

    /// Hands `item` to the first waiting popper; returns its waiter, or the
    /// item if none waits.
    fn hand_over(&mut self, item: T) -> Result<Woken, T> {
        match self.settle_first(Side::Pop, Verdict::Done) {
            Some(entry) => {
                entry.item = Some(item);
                Ok(Woken(entry.waiter.take()))
            }
            None => Err(item),
        }
    }

    /// Moves the first waiting pusher's item in, if there is room; returns
    /// its waiter.
    fn admit(&mut self) -> Option<Woken> {
        if !self.has_room() {
            return None;
        }
        let entry = self.settle_first(Side::Push, Verdict::Done)?;
        let item = entry.item.take().expect("a waiting pusher's item");
        let woken = Woken(entry.waiter.take());
        self.items.push_back(item);
        Some(woken)
    }

    /// Moves waiting pushers' items in while there is room; returns their
    /// waiters.
    fn admit_all(&mut self) -> Vec<Waiter> {
        std::iter::from_fn(|| self.admit())
            .filter_map(|w| w.0)
            .collect()
    }

    /// Removes the entry `key` of `side` (whose thread stops waiting), and
    /// says how it was settled, with its item.
    fn remove(&mut self, side: Side, key: usize) -> (Verdict, Option<T>) {
        let entry = self.list(side).remove(key);
        if entry.verdict == Verdict::Waiting {
            self.waiting -= 1;
        }
        (entry.verdict, entry.item)
    }
}

/// The waiter of an entry just settled, to wake once the lock is released.
struct Woken(Option<Waiter>);

impl Woken {
    fn wake(self) {
        if let Some(waiter) = self.0 {
            waiter.wake();
        }
    }
}

fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|deadline| Instant::now() >= deadline)
}

/// A waiting thread's entry, from when it is queued until the thread stops
/// waiting: removed by [`wait`](Waiting::wait) when the wait ends; dropped
/// instead — the thread unwinds out of its park — it gives away what it was
/// handed (see the module docs).
struct Waiting<'a, T> {
    shared: &'a Shared<T>,
    side: Side,
    key: usize,
}

impl<'a, T> Waiting<'a, T> {
    fn new(shared: &'a Shared<T>, side: Side, key: usize) -> Waiting<'a, T> {
        Waiting { shared, side, key }
    }

    /// Waits until the entry is settled, or `deadline` passes; removes it,
    /// and says how it was settled (`Waiting`: it was not, the deadline
    /// passed), with its item.
    fn wait(self, reason: WaitReason, deadline: Option<Instant>) -> (Verdict, Option<T>) {
        let mut outcome = None;
        waiter::wait_until(reason, deadline, || {
            outcome = self.take_outcome();
            outcome.is_some()
        });
        // Settled (`take_outcome` removed the entry), or the deadline passed
        // (the entry goes now; it may have been settled meanwhile).
        let outcome = outcome.unwrap_or_else(|| self.shared.lock().remove(self.side, self.key));
        mem::forget(self);
        outcome
    }

    /// If the entry is settled, removes it and says how, with its item (one
    /// lock for the look and the removal).
    fn take_outcome(&self) -> Option<(Verdict, Option<T>)> {
        let mut state = self.shared.lock();
        if state.list(self.side).get(self.key).verdict == Verdict::Waiting {
            return None;
        }
        Some(state.remove(self.side, self.key))
    }
}

impl<T> Drop for Waiting<'_, T> {
    fn drop(&mut self) {
        let (woken, leftover) = {
            let mut state = self.shared.lock();
            match state.remove(self.side, self.key) {
                // Handed an item it will not return: the next popper's, or
                // the queue's again, at the front, where it was.
                (Verdict::Done, Some(item)) => match state.hand_over(item) {
                    Ok(woken) => (Some(woken), None),
                    Err(item) => {
                        state.items.push_front(item);
                        (None, None)
                    }
                },
                // A pusher's item that never went in: not pushed, dropped
                // with the unwinding caller (after the lock is released).
                (_, item) => (None, item),
            }
        };
        if let Some(woken) = woken {
            woken.wake();
        }
        drop(leftover);
    }
}

/// The queue's wake paths under the model checker (`scripts/model-check.sh`):
/// the real `Shared`, with loom's lock and OS thread park; every thread is an
/// OS thread outside any runtime, so it waits by parking
/// (`runtime/waiter.rs`), and a lost wake leaves it parked with nobody left
/// to unpark it, which loom reports as a deadlock.
#[cfg(all(test, fibra_loom))]
mod model_check {
    use super::{Shared, Stop};
    use crate::runtime::model_check::check;
    use loom::thread;
    use std::sync::Arc;

    /// A push from another thread while the popper registers and parks: the
    /// item is popped.
    #[test]
    fn a_push_wakes_a_popper_that_waits() {
        check("queue_push_wakes_pop", || {
            let queue = Arc::new(Shared::new(None));
            let pusher = queue.clone();
            let other = thread::spawn(move || assert!(pusher.push(7u8, true, None).is_ok()));
            assert_eq!(queue.pop(true, None).ok(), Some(7));
            other.join().unwrap();
        });
    }

    /// Two poppers, a push and a close: the pushed item (if the push came
    /// before the close) is popped once, and every popper learns of the
    /// close instead of waiting for ever.
    #[test]
    fn a_close_wakes_every_popper_and_no_item_is_lost() {
        check("queue_close_wakes_pops", || {
            let queue = Arc::new(Shared::new(None));
            let poppers: Vec<_> = (0..2)
                .map(|_| {
                    let queue = queue.clone();
                    thread::spawn(move || queue.pop(true, None).ok())
                })
                .collect();
            let pushed = queue.push(1u8, false, None).is_ok();
            queue.close();
            let mut popped: Vec<u8> = poppers
                .into_iter()
                .filter_map(|p| p.join().unwrap())
                .collect();
            popped.extend(queue.pop(false, None).ok());
            assert_eq!(popped, if pushed { vec![1] } else { vec![] });
            assert!(matches!(queue.pop(false, None), Err(Stop::Closed)));
        });
    }

    /// A sized queue of one: the second push waits until a pop makes room
    /// (its item moved in), and both items are popped, in order.
    #[test]
    fn a_pop_wakes_a_pusher_that_waits_for_room() {
        check("queue_pop_wakes_push", || {
            let queue = Arc::new(Shared::new(Some(1)));
            let pusher = queue.clone();
            let other = thread::spawn(move || {
                assert!(pusher.push(1u8, true, None).is_ok());
                assert!(pusher.push(2u8, true, None).is_ok());
            });
            assert_eq!(queue.pop(true, None).ok(), Some(1));
            assert_eq!(queue.pop(true, None).ok(), Some(2));
            other.join().unwrap();
        });
    }
}

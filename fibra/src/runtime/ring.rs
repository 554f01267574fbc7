//! A bounded lock-free queue of small `Copy` values (after Dmitry Vyukov's
//! bounded MPMC queue): the runtime's remote queue of woken thread ids
//! (`remote/`).
//!
//! Each slot carries a sequence number that says whose turn it is: `seq ==
//! pos` — free, for the producer that claims position `pos`; `seq == pos + 1`
//! — full, for the consumer that claims position `pos`. A producer claims the
//! tail position with one compare-and-swap, writes the value and publishes it
//! by storing the slot's sequence number (release); a consumer claims the head
//! position the same way once that number says the slot is full (acquire),
//! reads it, and hands the slot back to the producers of the next lap by
//! storing `pos + N` (release). Claiming by compare-and-swap on both ends
//! makes any number of consumers sound too, though the runtime has one (then
//! its compare-and-swap is on a line no other core writes, and never fails).

use crate::sync_prims::{AtomicUsize, UnsafeCell};
use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;

/// Slots in a ring (two for the model checker, so that a few pushes reach a
/// full ring and the next lap).
pub(super) const SLOTS: usize = if cfg!(fibra_loom) { 2 } else { 64 };

struct Slot<T> {
    seq: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

pub(super) struct Ring<T> {
    /// The next position a producer claims.
    tail: CachePadded<AtomicUsize>,
    /// The next position a consumer claims.
    head: CachePadded<AtomicUsize>,
    slots: Box<[Slot<T>; SLOTS]>,
}

// SAFETY: a slot's value is written only by the producer whose
// compare-and-swap on `tail` claimed its position, and read only by the
// consumer whose compare-and-swap on `head` claimed the same position, after
// it saw (acquire) the sequence number that producer stored (release) after
// writing; the next producer writes it only after seeing (acquire) the number
// that consumer stored (release) after reading. So accesses to a value never
// overlap, and each happens-before the next. The values are `Copy` (nothing to
// drop) and `Send`.
unsafe impl<T: Copy + Send> Sync for Ring<T> {}
// SAFETY: as above; a ring owns its values, which are `Send`.
unsafe impl<T: Copy + Send> Send for Ring<T> {}

impl<T: Copy> Ring<T> {
    pub(super) fn new() -> Ring<T> {
        Ring {
            tail: CachePadded::new(AtomicUsize::new(0)),
            head: CachePadded::new(AtomicUsize::new(0)),
            slots: Box::new(std::array::from_fn(|pos| Slot {
                seq: AtomicUsize::new(pos),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            })),
        }
    }

    /// Adds `value` at the tail; false (and nothing added) if the ring is full.
    pub(super) fn push(&self, value: T) -> bool {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos % SLOTS];
            // Positions wrap after 2^64 operations; differences stay right.
            match slot.seq.load(Ordering::Acquire).wrapping_sub(pos) as isize {
                0 => match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: position `pos` is ours (see the `Sync` impl):
                        // nobody else touches the value until the store below.
                        slot.value.with_mut(|cell| unsafe { (*cell).write(value) });
                        slot.seq.store(pos.wrapping_add(1), Ordering::Release);
                        return true;
                    }
                    Err(now) => pos = now,
                },
                // The slot still holds the value of a lap ago: full.
                lap if lap < 0 => return false,
                // Another producer claimed `pos` first.
                _ => pos = self.tail.load(Ordering::Relaxed),
            }
        }
    }

    /// Takes the value at the head, if there is one.
    pub(super) fn pop(&self) -> Option<T> {
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos % SLOTS];
            match slot
                .seq
                .load(Ordering::Acquire)
                .wrapping_sub(pos.wrapping_add(1)) as isize
            {
                0 => match self.head.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: position `pos` is ours, and the acquire load
                        // saw its producer's store, made after writing the
                        // value (see the `Sync` impl).
                        let value = slot.value.with(|cell| unsafe { (*cell).assume_init() });
                        slot.seq.store(pos.wrapping_add(SLOTS), Ordering::Release);
                        return Some(value);
                    }
                    Err(now) => pos = now,
                },
                // Not written yet: empty.
                lap if lap < 0 => return None,
                // Another consumer claimed `pos` first.
                _ => pos = self.head.load(Ordering::Relaxed),
            }
        }
    }

    /// Moves every value in the ring to `into`, oldest first.
    pub(super) fn pop_all(&self, into: &mut Vec<T>) {
        while let Some(value) = self.pop() {
            into.push(value);
        }
    }

    /// Whether the slot at the head holds a value (the load an idle runtime
    /// spins on: the line a producer writes).
    pub(super) fn is_ready(&self) -> bool {
        let pos = self.head.load(Ordering::Relaxed);
        self.slots[pos % SLOTS].seq.load(Ordering::Acquire) == pos.wrapping_add(1)
    }
}

#[cfg(all(test, not(fibra_loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn values_come_out_in_order_and_a_full_ring_refuses() {
        let ring = Ring::new();
        for lap in 0..3 {
            for i in 0..SLOTS {
                assert!(ring.push(lap * SLOTS + i));
            }
            assert!(!ring.push(usize::MAX), "the ring is full");
            assert!(ring.is_ready());
            let mut out = Vec::new();
            ring.pop_all(&mut out);
            assert_eq!(out, (lap * SLOTS..(lap + 1) * SLOTS).collect::<Vec<_>>());
            assert!(!ring.is_ready());
            assert_eq!(ring.pop(), None);
        }
    }

    /// Producers on several threads, one consumer: every value arrives once,
    /// and each producer's values in the order it pushed them. (Small, so
    /// that Miri runs it in seconds.)
    #[test]
    fn many_producers_lose_and_duplicate_nothing() {
        const PRODUCERS: usize = 3;
        let each: usize = if cfg!(miri) { 40 } else { 20_000 };
        let ring = Arc::new(Ring::new());
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let ring = ring.clone();
                thread::spawn(move || {
                    for i in 0..each {
                        while !ring.push((p, i)) {
                            thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let mut next = [0; PRODUCERS];
        let mut got = 0;
        while got < PRODUCERS * each {
            match ring.pop() {
                Some((p, i)) => {
                    assert_eq!(i, next[p], "producer {p}'s values in order");
                    next[p] += 1;
                    got += 1;
                }
                None => thread::yield_now(),
            }
        }
        producers.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(ring.pop(), None);
    }
}

//! The per-thread stack pool.
//!
//! Fibers never leave the thread that made them, so neither do their stacks, and
//! the pool needs no lock. A freed stack goes on a free list and the next fiber
//! of the same size takes it without a system call, and with its memory still
//! mapped (a first touch of a page costs microseconds on a VM). Only when the
//! free list is empty does the pool carve a new slot from a chunk (guards are
//! installed a batch at a time), and only when the chunks are full does it
//! reserve another, each twice the size of the last so that a million stacks
//! take a few hundred mappings.
//!
//! Freed stacks keep their memory up to [`WARM_HIGH`] per size; past that, the
//! memory of the oldest is given back to the kernel in batches (one system call
//! for up to a thousand stacks), leaving [`WARM_LOW`] warm.

use super::advice::{self, MAX_RANGES};
use super::chunk::Chunk;
use super::{overflow, page_size};
use std::cell::RefCell;
use std::io;
use std::ptr::NonNull;

/// Free stacks of one size kept with their memory: when more than `WARM_HIGH`
/// are, the oldest give their memory back (their address space stays in the
/// pool) until `WARM_LOW` are left. A fiber usually touches one or two pages,
/// so this keeps some 10–30 MiB warm per stack size.
const WARM_HIGH: usize = 4096;
const WARM_LOW: usize = 2048;
/// Slots in a size class's first chunk; each later chunk doubles, up to
/// [`MAX_CHUNK_BYTES`].
const FIRST_CHUNK_SLOTS: usize = 16;
const MAX_CHUNK_BYTES: usize = 1 << 30;

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::new());
}

/// Takes a stack of exactly `size` usable bytes (a multiple of the page size).
///
/// # Errors
///
/// As [`Stack::new`](super::Stack::new); and during thread exit, once the pool
/// has been destroyed, an error that says so.
pub(super) fn take(size: usize) -> io::Result<NonNull<u8>> {
    POOL.try_with(|pool| pool.borrow_mut().take(size))
        .unwrap_or_else(|_| {
            Err(io::Error::other(
                "fibra: no fiber can be made while its OS thread exits (the stack pool is gone)",
            ))
        })
}

/// Gives back a stack that [`take`] returned on this thread.
pub(super) fn give_back(top: NonNull<u8>, size: usize) {
    // During thread exit the pool may already be gone; the stack's chunk was then
    // kept mapped (see `Pool::drop`), and the stack is simply not reused.
    let _ = POOL.try_with(|pool| pool.borrow_mut().give_back(top, size));
}

struct Pool {
    classes: Vec<SizeClass>,
    /// This thread's alternate signal stack, if fibra had to install one.
    _alt_stack: Option<overflow::AltStack>,
}

/// The stacks of one size.
struct SizeClass {
    size: usize,
    /// Free stacks, oldest first; those before `warm_from` have given their
    /// memory back.
    free: Vec<NonNull<u8>>,
    warm_from: usize,
    chunks: Vec<Chunk>,
    /// Stacks handed out and not yet given back.
    in_use: usize,
}

impl Pool {
    fn new() -> Pool {
        overflow::install_handler();
        Pool {
            classes: Vec::new(),
            _alt_stack: overflow::AltStack::ensure(),
        }
    }

    fn take(&mut self, size: usize) -> io::Result<NonNull<u8>> {
        let class = match self.classes.iter().position(|c| c.size == size) {
            Some(i) => &mut self.classes[i],
            None => {
                self.classes.push(SizeClass {
                    size,
                    free: Vec::new(),
                    warm_from: 0,
                    chunks: Vec::new(),
                    in_use: 0,
                });
                self.classes.last_mut().expect("just pushed")
            }
        };
        let top = match class.free.pop() {
            Some(top) => {
                class.warm_from = class.warm_from.min(class.free.len());
                top
            }
            None => class.carve()?,
        };
        class.in_use += 1;
        Ok(top)
    }

    fn give_back(&mut self, top: NonNull<u8>, size: usize) {
        let Some(class) = self.classes.iter_mut().find(|c| c.size == size) else {
            debug_assert!(false, "a stack came back to a pool that never made it");
            return;
        };
        debug_assert!(class.chunks.iter().any(|c| c.holds(top)));
        class.in_use -= 1;
        class.free.push(top);
        if class.free.len() - class.warm_from > WARM_HIGH {
            class.cool_down();
        }
    }
}

impl SizeClass {
    /// Gives back the memory of the oldest warm free stacks, leaving
    /// [`WARM_LOW`] warm.
    fn cool_down(&mut self) {
        let end = self.free.len() - WARM_LOW;
        for batch in self.free[self.warm_from..end].chunks(MAX_RANGES) {
            let ranges: Vec<libc::iovec> = batch
                .iter()
                .map(|top| advice::range(top.as_ptr().wrapping_sub(self.size), self.size))
                .collect();
            // SAFETY: each range is the usable part of a free stack, whose contents
            // are not needed again; dropping its pages (the next touch reads zeros,
            // or on macOS possibly the old bytes) leaves its guard page in place.
            if !unsafe { advice::advise_all(&ranges, advice::GIVE_BACK) } {
                for range in &ranges {
                    // SAFETY: as above, one stack at a time. Failure only means
                    // the memory stays resident, so the result is not checked.
                    unsafe { libc::madvise(range.iov_base, range.iov_len, advice::GIVE_BACK) };
                }
            }
        }
        self.warm_from = end;
    }

    fn carve(&mut self) -> io::Result<NonNull<u8>> {
        if let Some(top) = self.chunks.last_mut().and_then(Chunk::carve) {
            return top;
        }
        let slot_bytes = self
            .size
            .checked_add(page_size())
            .ok_or_else(|| super::too_large(self.size))?;
        let slots = match self.chunks.len() {
            0 => FIRST_CHUNK_SLOTS,
            n => (FIRST_CHUNK_SLOTS << n.min(20)).min((MAX_CHUNK_BYTES / slot_bytes).max(1)),
        };
        self.chunks.push(Chunk::reserve(self.size, slots)?);
        self.chunks
            .last_mut()
            .and_then(Chunk::carve)
            .expect("a new chunk has a free slot")
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for class in &mut self.classes {
            if class.in_use > 0 {
                // A fiber of this thread was leaked (mem::forget) or outlives the
                // pool in another thread-local: its stack must stay mapped.
                class.chunks.iter_mut().for_each(Chunk::keep_mapped);
            }
        }
    }
}

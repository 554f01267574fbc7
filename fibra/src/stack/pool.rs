//! The per-thread stack pool.
//!
//! Fibers never leave the thread that made them, so neither do their stacks, and
//! the pool needs no lock. A freed stack goes on a free list and the next fiber
//! of the same size takes it without a system call. Only when the free list is
//! empty does the pool carve a new slot from a chunk (one `madvise` for its guard),
//! and only when the chunks are full does it reserve another, each twice the size
//! of the last so that a million stacks take a few hundred mappings.

use super::chunk::Chunk;
use super::{overflow, page_size};
use std::cell::RefCell;
use std::io;
use std::ptr::NonNull;

/// Free stacks kept with their memory; past this many, a freed stack's pages are
/// returned to the kernel (its address space stays in the pool).
const WARM_STACKS: usize = 64;
/// Slots in a size class's first chunk; each later chunk doubles, up to
/// [`MAX_CHUNK_BYTES`].
const FIRST_CHUNK_SLOTS: usize = 16;
const MAX_CHUNK_BYTES: usize = 1 << 30;

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::new());
}

/// Takes a stack of exactly `size` usable bytes (a multiple of the page size).
pub(super) fn take(size: usize) -> io::Result<NonNull<u8>> {
    POOL.with(|pool| pool.borrow_mut().take(size))
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
    free: Vec<NonNull<u8>>,
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
                    chunks: Vec::new(),
                    in_use: 0,
                });
                self.classes.last_mut().expect("just pushed")
            }
        };
        let top = match class.free.pop() {
            Some(top) => top,
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
        if class.free.len() >= WARM_STACKS {
            let bottom = top.as_ptr().wrapping_sub(size);
            // SAFETY: [bottom, top) is the usable part of a stack that nothing uses
            // any more; MADV_DONTNEED drops its pages (the next touch reads zeros)
            // and leaves the guard page below it in place. Failure only means the
            // memory stays resident, so the result is not checked.
            unsafe { libc::madvise(bottom.cast(), size, libc::MADV_DONTNEED) };
        }
        class.free.push(top);
    }
}

impl SizeClass {
    fn carve(&mut self) -> io::Result<NonNull<u8>> {
        if let Some(top) = self.chunks.last_mut().and_then(Chunk::carve) {
            return top;
        }
        let slot_bytes = self.size + page_size();
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
                std::mem::forget(std::mem::take(&mut class.chunks));
            }
        }
    }
}

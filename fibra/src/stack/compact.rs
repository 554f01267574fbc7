//! Compaction: the used part of a suspended stack kept on the heap while its
//! pages go back to the kernel.
//!
//! A suspended fiber uses only the bytes from its saved stack pointer to the
//! top of its stack — a few hundred bytes for a green thread parked in a
//! sleep or a receive — but holds at least one whole page. [`Compacted`]
//! copies those bytes into a heap buffer of exactly their size and gives the
//! pages under them back (`MADV_DONTNEED` on Linux, `MADV_FREE` on macOS);
//! the address range stays reserved for the stack, and its guard page stays
//! where it is. The pages go back in batches ([`GiveBack`]): a sweep that
//! compacts many parked threads makes one `process_madvise` per
//! [`MAX_RANGES`] of them, not one `madvise` each (100,000 idle Ractors:
//! about a hundred system calls instead of 100,000). Dropping the [`Compacted`] copies the bytes back to the same
//! addresses, so every pointer into the stack — its frames' links, references
//! between its locals, the saved stack pointer itself — is valid again
//! before anything runs on it.
//!
//! # What it relies on
//!
//! - **Nothing below the saved stack pointer is live.** A context suspends by
//!   calling the switch, so every frame of it lies above the stack pointer the
//!   switch saves; the x86_64 red zone (128 bytes below the stack pointer) is
//!   only for leaf functions, and a function that calls the switch is not
//!   one; aarch64 has none. So the part of the lowest page below the saved
//!   stack pointer may be given back with the rest (it reads as zeros after),
//!   and only `[sp, top)` is copied. Signal handlers never run on a suspended
//!   stack: a signal runs on the stack that is running, or on the alternate
//!   signal stack.
//! - **Nothing reads or writes the bytes while they are compacted.** That is
//!   the caller's promise (see `Fiber::compact` and the runtime's
//!   [compaction docs](crate::runtime::Builder::compact_parked_after)): the
//!   fiber's header, at the top of its stack, is among the copied bytes, so
//!   even asking the fiber its status must wait for the restore.
//! - **The range stays the stack's.** The pages are advised, never unmapped:
//!   no other mapping can take the addresses, the guard below stays a guard
//!   (advice on the usable pages never touches it), and the stack is not given
//!   back to the pool while a [`Compacted`] of it lives (the fiber that owns
//!   the stack is kept alive by its owner, which drops the [`Compacted`]
//!   first).
//!
//! Valgrind's memcheck keeps its own idea of which bytes are defined: the
//! bytes written back are the ones copied out, with their definedness, so a
//! restored stack looks to it as it did.

use super::advice::{self, GIVE_BACK, MAX_RANGES};
use super::page_size;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// The used part of a suspended stack, kept on the heap; dropping it puts the
/// bytes back where they were.
pub(crate) struct Compacted {
    /// Where the bytes go back to: the saved stack pointer.
    low: NonNull<u8>,
    /// The bytes of `[low, top)`, exactly that many.
    bytes: Box<[MaybeUninit<u8>]>,
}

impl Compacted {
    /// Copies `[low, top)` to the heap. The pages stay resident until a
    /// [`GiveBack`] the value is added to gives them back.
    ///
    /// # Safety
    ///
    /// `[low, top)` must be the used part of a suspended stack — `low` its
    /// saved stack pointer, `top` its page-aligned top — that nothing reads or
    /// writes until the returned value is dropped, and whose mapping outlives
    /// it; nothing below `low` in that stack may be live.
    pub(crate) unsafe fn new(low: NonNull<u8>, top: NonNull<u8>) -> Compacted {
        let (low_addr, top_addr) = (low.as_ptr() as usize, top.as_ptr() as usize);
        debug_assert!(low_addr <= top_addr && top_addr.is_multiple_of(page_size()));
        let len = top_addr - low_addr;
        let mut bytes = Box::new_uninit_slice(len);
        // `MaybeUninit` bytes carry uninitialised ones (padding, unused slots)
        // as they are.
        // SAFETY: the caller gives `[low, top)` to this value until it is
        // dropped; the buffer is fresh and `len` long.
        unsafe {
            std::ptr::copy_nonoverlapping(
                low.as_ptr().cast::<MaybeUninit<u8>>(),
                bytes.as_mut_ptr(),
                len,
            );
        }
        Compacted { low, bytes }
    }

    /// The number of bytes kept: the used part of the stack.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The whole pages of the stack from the one that holds `low` up to the
    /// top: what lies below `low` in the lowest is dead (the contract of
    /// [`Compacted::new`]).
    fn pages(&self) -> libc::iovec {
        let low = self.low.as_ptr() as usize;
        let first_page = low - low % page_size();
        advice::range(first_page as *mut u8, low + self.len() - first_page)
    }
}

/// The pages of compacted stacks, given back to the kernel together: one
/// system call per [`MAX_RANGES`] stacks where the kernel takes a list
/// (`process_madvise`), else one `madvise` each. Dropping it gives back what
/// is queued.
#[derive(Default)]
pub(crate) struct GiveBack {
    ranges: Vec<libc::iovec>,
}

impl GiveBack {
    /// Queues the pages `compacted` holds the bytes of.
    ///
    /// # Safety
    ///
    /// `compacted` must outlive this batch's next [`flush`](Self::flush) (or
    /// its drop): its bytes go back over the pages when it is dropped, and
    /// giving the pages back after that would lose them.
    pub(crate) unsafe fn add(&mut self, compacted: &Compacted) {
        self.ranges.push(compacted.pages());
        if self.ranges.len() == MAX_RANGES {
            self.flush();
        }
    }

    /// Gives back every page queued.
    pub(crate) fn flush(&mut self) {
        // Miri has no madvise; the copies are what it checks.
        if self.ranges.is_empty() || cfg!(miri) {
            self.ranges.clear();
            return;
        }
        // Each range is the used pages of a suspended stack whose bytes a
        // `Compacted` holds and that nothing touches until that is dropped,
        // which `add`'s caller puts after this.
        // SAFETY: so, and the part of the lowest page below the stack pointer is dead.
        if !unsafe { advice::advise_all(&self.ranges, GIVE_BACK) } {
            for range in &self.ranges {
                // SAFETY: as above, one range at a time.
                unsafe { libc::madvise(range.iov_base, range.iov_len, GIVE_BACK) };
            }
        }
        self.ranges.clear();
    }
}

impl Drop for GiveBack {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Drop for Compacted {
    fn drop(&mut self) {
        // SAFETY: `[low, low + len)` is the stack range `new` was given, still
        // mapped and still untouched by anyone else (its contract); the pages
        // given back read as zeros, or as what they held, and are overwritten.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.bytes.as_ptr(),
                self.low.as_ptr().cast::<MaybeUninit<u8>>(),
                self.bytes.len(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::{MIN_STACK_SIZE, Stack};

    /// Fills `[low, top)` with a pattern that differs from byte to byte.
    fn pattern(at: usize) -> u8 {
        (at % 251) as u8
    }

    #[test]
    fn bytes_come_back_to_the_same_addresses() {
        let stack = Stack::new(MIN_STACK_SIZE).unwrap();
        let top = stack.top();
        for used in [
            0,
            16,
            300,
            page_size() - 8,
            page_size() + 24,
            3 * page_size(),
        ] {
            let low = top.wrapping_sub(used);
            // SAFETY: `[low, top)` lies in the stack, owned here and used by
            // nothing else.
            unsafe {
                for i in 0..used {
                    low.add(i).write(pattern(low as usize + i));
                }
                let compacted =
                    Compacted::new(NonNull::new(low).unwrap(), NonNull::new(top).unwrap());
                assert_eq!(compacted.len(), used);
                let mut batch = GiveBack::default();
                batch.add(&compacted);
                drop(batch);
                drop(compacted);
                for i in 0..used {
                    assert_eq!(
                        low.add(i).read(),
                        pattern(low as usize + i),
                        "byte {i} of {used}"
                    );
                }
            }
        }
    }

    /// More stacks than one call takes: every one's pages go back (Linux
    /// reads them as zeros then), and every one's bytes come back.
    #[test]
    fn pages_go_back_in_batches() {
        let used = 300;
        let stacks: Vec<Stack> = (0..MAX_RANGES + 5)
            .map(|_| Stack::new(MIN_STACK_SIZE).unwrap())
            .collect();
        let mut batch = GiveBack::default();
        let compacted: Vec<Compacted> = stacks
            .iter()
            .map(|stack| {
                let (top, low) = (stack.top(), stack.top().wrapping_sub(used));
                // SAFETY: `[low, top)` lies in the stack, owned here and used
                // by nothing else; each is added to the batch, which is
                // flushed before any is dropped.
                unsafe {
                    (0..used).for_each(|i| low.add(i).write(pattern(low as usize + i)));
                    let compacted =
                        Compacted::new(NonNull::new(low).unwrap(), NonNull::new(top).unwrap());
                    batch.add(&compacted);
                    compacted
                }
            })
            .collect();
        batch.flush();
        let read = |stack: &Stack, i: usize| {
            // SAFETY: in the stack's usable range, mapped and readable.
            unsafe { stack.top().wrapping_sub(used).add(i).read() }
        };
        if cfg!(target_os = "linux") && !cfg!(miri) {
            assert!(stacks.iter().all(|s| (0..used).all(|i| read(s, i) == 0)));
        }
        drop(compacted);
        for stack in &stacks {
            let low = stack.top().wrapping_sub(used) as usize;
            assert!((0..used).all(|i| read(stack, i) == pattern(low + i)));
        }
    }
}

//! Fiber stacks: memory from `mmap`, a guard page below each stack, and a
//! per-thread pool so that creating a fiber makes no system call on the fast path.
//!
//! # The map-count wall
//!
//! A guard page made with `mprotect` splits its mapping in two, so a process that
//! maps each stack on its own hits Linux's `vm.max_map_count` (65,530 areas by
//! default) near 32,700 stacks — where corosensei, `may` and Ruby stop. fibra
//! instead carves many stacks out of one large reservation (a [`chunk`]) and marks
//! each guard with `madvise(MADV_GUARD_INSTALL)` (Linux 6.13+), which does not split
//! the mapping: a million stacks take a few hundred map entries.
//!
//! On an older kernel (Debian 12's 6.1, Ubuntu 22.04 and 24.04) and under
//! qemu-user it falls back to `mprotect`, and each stack costs two entries
//! again. Taking them all would leave none for the rest of the process — the
//! next malloc arena, large allocation or OS thread would fail, and the process
//! abort — so fibra counts the entries its `mprotect` guards hold ([`map_count`]) and stops
//! short of the limit: it leaves an eighth of `vm.max_map_count` (at least
//! 4,096; 8,191 of the default 65,530) to the process, and a fiber stack past
//! that is refused with an `io::ErrorKind::OutOfMemory` error:
//!
//! ```text
//! fibra: no stack for another fiber: fibra's 28669 fiber stacks hold 57338 of
//! this process's vm.max_map_count (65530) memory map entries, and fibra leaves
//! the last 8191 to the rest of the process (threads, malloc, libraries); here
//! each stack's guard page is made with mprotect (no MADV_GUARD_INSTALL: Linux
//! before 6.13, or qemu-user), which costs two entries: raise vm.max_map_count
//! or hold fewer fibers at once
//! ```
//!
//! That is about 28,600 stacks held at once by default (stacks freed go back
//! to the pool and are reused without a new guard). [`fiber::Builder::build`]
//! returns the error (and [`Fiber::new`] panics with it, as
//! `std::thread::spawn` does when the OS refuses a thread); a green thread,
//! whose stack is taken when it first runs, ends with it (its
//! [`JoinHandle::join`] returns a [`JoinError`] that quotes it), and a
//! Ractor ends with it as its [`RemoteError`]. The process goes on. Where the
//! limit cannot be read, nothing is refused ahead, and the kernel's own
//! refusal (`ENOMEM`) is reported with `vm.max_map_count` named. Under
//! valgrind, which tracks at most 30,000 mappings, the limit is that (some
//! 12,900 stacks), and the error says so. macOS has no such limit.
//!
//! [`fiber::Builder::build`]: crate::fiber::Builder::build
//! [`Fiber::new`]: crate::Fiber::new
//! [`JoinHandle::join`]: crate::runtime::JoinHandle::join
//! [`JoinError`]: crate::runtime::JoinError
//! [`RemoteError`]: crate::ractor::RemoteError
//!
//! # Platforms
//!
//! The page size (and so the guard's size and the stack sizes' granule) comes
//! from `sysconf`: 4 KiB on x86_64 and most aarch64 Linux, 16 KiB on Apple
//! Silicon. Where `MADV_GUARD_INSTALL` does not make pages fault — macOS, Linux
//! before 6.13, qemu-user, which accepts the advice and ignores it — guards are
//! made with `mprotect` (probed once per process, `advice::guards_fault`); macOS
//! has no `vm.max_map_count` wall to name. `process_madvise`, `MAP_STACK` and
//! `/proc` are Linux's and used only there.
//!
//! # Compaction
//!
//! A suspended stack's used part can be moved to the heap and its pages
//! given back while the address range stays reserved: see [`compact`] (and
//! the runtime's `Builder::compact_parked_after`, which uses it for parked
//! green threads).
//!
//! # Overflow
//!
//! Touching a guard page faults (SIGSEGV on Linux, SIGBUS on macOS);
//! [`overflow`] catches the fault on an alternate signal stack, prints that a fiber's stack overflowed, and aborts, as Rust does
//! for a thread's stack.

mod advice;
mod chunk;
mod compact;
mod label;
mod map_count;
mod overflow;
mod pool;
mod valgrind;

pub(crate) use compact::{Compacted, GiveBack};
pub(crate) use label::{switched_into, switched_out};

use std::io;
use std::ptr::NonNull;

/// `MAP_STACK` where the OS has it (Linux: the mapping gets no transparent huge
/// pages); macOS has no such flag, and needs none.
#[cfg(target_os = "linux")]
const MAP_STACK: libc::c_int = libc::MAP_STACK;
#[cfg(not(target_os = "linux"))]
const MAP_STACK: libc::c_int = 0;

/// The usable size of a fiber stack when none is chosen: 256 KiB.
///
/// It is address space, not memory: only the pages a fiber touches become
/// resident (a parked fiber that ran a little holds one or two 4 KiB pages). It
/// is large enough for ordinary recursion and formatting, and small enough that a
/// million stacks fit in the address space many times over.
pub const DEFAULT_STACK_SIZE: usize = 256 * 1024;

/// The smallest usable stack size accepted: 32 KiB; a smaller request gets this.
///
/// A panic inside a fiber runs the panic hook on the fiber's stack, and with
/// `RUST_BACKTRACE` set the hook symbolises the backtrace there: on a 16 KiB
/// stack that overflowed (and aborted), on 24 KiB it fits. 32 KiB leaves room,
/// and costs nothing until touched: a stack is address space, and a fiber holds
/// only the pages it uses.
pub const MIN_STACK_SIZE: usize = 32 * 1024;

/// One fiber stack: `size` usable bytes below `top`, with a guard page below them.
/// Dropping it gives it back to the pool of the thread that made it.
pub(crate) struct Stack {
    top: NonNull<u8>,
    size: usize,
}

impl Stack {
    /// Takes a stack of at least `size` usable bytes from this thread's pool.
    ///
    /// # Errors
    ///
    /// `InvalidInput`, naming the size, if a stack that large (with its guard
    /// page, in a chunk of stacks) does not fit in the address space; the
    /// kernel's error if it refuses the memory.
    pub(crate) fn new(size: usize) -> io::Result<Stack> {
        let size = round_to_pages(size.max(MIN_STACK_SIZE)).ok_or_else(|| too_large(size))?;
        let top = pool::take(size)?;
        Ok(Stack { top, size })
    }

    /// The highest address of the stack (exclusive), 16-byte aligned.
    pub(crate) fn top(&self) -> *mut u8 {
        self.top.as_ptr()
    }

    /// The number of usable bytes below [`Stack::top`].
    pub(crate) fn size(&self) -> usize {
        self.size
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        pool::give_back(self.top, self.size);
    }
}

/// Checks ahead of time that a stack of `size` bytes, with its guard page, is
/// expressible (for a green thread whose stack is taken only when it first
/// runs); the kernel may still refuse the memory then.
///
/// # Errors
///
/// [`too_large`] if it is not.
pub(crate) fn check_size(size: usize) -> io::Result<()> {
    round_to_pages(size.max(MIN_STACK_SIZE))
        .and_then(|s| s.checked_add(page_size()))
        .filter(|&s| s <= isize::MAX as usize)
        .map(drop)
        .ok_or_else(|| too_large(size))
}

/// The size of a memory page.
pub(crate) fn page_size() -> usize {
    use std::sync::OnceLock;
    static PAGE: OnceLock<usize> = OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *PAGE.get_or_init(|| unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize)
}

/// `size` rounded up to whole pages, if that fits in a `usize`.
fn round_to_pages(size: usize) -> Option<usize> {
    size.checked_next_multiple_of(page_size())
}

/// The error for a stack size whose arithmetic overflows (rounding, the guard
/// page, a chunk of such stacks): every size is computed with checked
/// arithmetic, and one that does not fit is this error, never a wrapped value.
pub(crate) fn too_large(size: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("fibra: a fiber stack of {size} bytes does not fit in the address space"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_rounded_and_clamped() {
        let s = Stack::new(1).unwrap();
        assert_eq!(s.size(), MIN_STACK_SIZE);
        let s = Stack::new(MIN_STACK_SIZE + 1).unwrap();
        assert_eq!(s.size(), MIN_STACK_SIZE + page_size());
        assert_eq!(s.top() as usize % 16, 0);
    }

    #[test]
    fn a_stack_is_writable_from_top_to_bottom() {
        let s = Stack::new(MIN_STACK_SIZE).unwrap();
        let bottom = s.top().wrapping_sub(s.size());
        // SAFETY: [bottom, top) is the stack's usable memory, owned by `s`.
        unsafe {
            bottom.write_bytes(0xa5, s.size());
            assert_eq!(bottom.read(), 0xa5);
            assert_eq!(s.top().sub(1).read(), 0xa5);
        }
    }

    #[test]
    fn sizes_that_overflow_are_errors_not_wild_stacks() {
        for size in [
            usize::MAX,
            usize::MAX - page_size(),
            1 << 63,
            1 << 62,
            1 << 60,
        ] {
            let err = Stack::new(size).err().expect("no stack of that size");
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{size}: {err}");
            assert!(err.to_string().contains("does not fit"), "{err}");
        }
    }

    #[test]
    fn stacks_are_reused_by_the_pool() {
        let first = Stack::new(DEFAULT_STACK_SIZE).unwrap().top();
        let again = Stack::new(DEFAULT_STACK_SIZE).unwrap();
        assert_eq!(first, again.top());
    }

    #[test]
    fn many_stacks_are_distinct() {
        let stacks: Vec<Stack> = (0..100)
            .map(|_| Stack::new(MIN_STACK_SIZE).unwrap())
            .collect();
        let mut tops: Vec<usize> = stacks.iter().map(|s| s.top() as usize).collect();
        tops.sort();
        tops.dedup();
        assert_eq!(tops.len(), 100);
        for pair in tops.windows(2) {
            assert!(pair[1] - pair[0] >= MIN_STACK_SIZE + page_size());
        }
    }
}

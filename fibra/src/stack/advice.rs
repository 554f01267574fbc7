//! `madvise` over many ranges in one system call.
//!
//! Installing guard pages and giving back the memory of freed stacks are done a
//! few hundred stacks at a time: `process_madvise` on this process takes a
//! list of ranges, so a batch costs one system call instead of one per stack.
//! Kernels that refuse it (older than 6.13, or without `PIDFD_SELF`) get one
//! `madvise` per range.

use std::sync::atomic::{AtomicBool, Ordering};

/// `MADV_GUARD_INSTALL` (Linux 6.13): turn a range into guard pages that fault
/// on any access, without splitting the mapping. Not yet in every libc crate
/// release.
pub(super) const MADV_GUARD_INSTALL: libc::c_int = 102;

/// The most ranges one call takes (`IOV_MAX`).
pub(super) const MAX_RANGES: usize = 1024;

/// `PIDFD_SELF`: "this process" for `process_madvise`, without opening a pidfd.
const PIDFD_SELF: libc::c_int = -10000;

/// Set once the kernel has refused `process_madvise`, so that it is not tried
/// again.
static BATCH_UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// A range for [`advise_all`].
pub(super) fn range(start: *mut u8, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: start.cast(),
        iov_len: len,
    }
}

/// Applies `advice` to every range (at most [`MAX_RANGES`]) in one system call.
/// Returns false, having done nothing or only part, if the kernel cannot; the
/// caller then falls back to `madvise` per range (every advice used here may be
/// applied twice).
///
/// # Safety
///
/// The ranges must lie in mappings the stack module owns and that no live stack
/// uses in a way the advice would break (guards go on unused guard slots,
/// `MADV_DONTNEED` on free stacks).
pub(super) unsafe fn advise_all(ranges: &[libc::iovec], advice: libc::c_int) -> bool {
    debug_assert!(ranges.len() <= MAX_RANGES);
    // Miri has no madvise: advice (guards, giving memory back) changes what
    // the kernel does with pages, never the pool's bookkeeping that Miri checks.
    if ranges.is_empty() || cfg!(miri) {
        return true;
    }
    if BATCH_UNSUPPORTED.load(Ordering::Relaxed) {
        return false;
    }
    let bytes: usize = ranges.iter().map(|r| r.iov_len).sum();
    // SAFETY: the caller vouches for the ranges; the kernel only reads the list.
    let done = unsafe {
        libc::syscall(
            libc::SYS_process_madvise,
            PIDFD_SELF,
            ranges.as_ptr(),
            ranges.len(),
            advice,
            0,
        )
    };
    if done == bytes as libc::c_long {
        return true;
    }
    BATCH_UNSUPPORTED.store(true, Ordering::Relaxed);
    false
}

//! `madvise` over many ranges in one system call.
//!
//! Installing guard pages and giving back the memory of freed stacks are done a
//! few hundred stacks at a time: `process_madvise` on this process takes a
//! list of ranges, so a batch costs one system call instead of one per stack.
//! Kernels that refuse it (older than 6.13, or without `PIDFD_SELF`) get one
//! `madvise` per range, and so do qemu-user (which does not know the call) and
//! macOS (which has no such call).
//!
//! Whether `MADV_GUARD_INSTALL` really makes pages fault is probed once per
//! process ([`guards_fault`]): a kernel older than 6.13 refuses it, but qemu-user
//! answers every `madvise` it does not pass through with success and does
//! nothing, and a guard that does not fault would let an overflow run into the
//! next stack.

#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering};

/// `MADV_GUARD_INSTALL` (Linux 6.13): turn a range into guard pages that fault
/// on any access, without splitting the mapping. Not yet in every libc crate
/// release.
pub(super) const MADV_GUARD_INSTALL: libc::c_int = 102;

/// The most ranges one call takes (`IOV_MAX`).
pub(super) const MAX_RANGES: usize = 1024;

/// `PIDFD_SELF`: "this process" for `process_madvise`, without opening a pidfd.
#[cfg(target_os = "linux")]
const PIDFD_SELF: libc::c_int = -10000;

/// Set once the kernel has refused `process_madvise`, so that it is not tried
/// again.
#[cfg(target_os = "linux")]
static BATCH_UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// The advice that gives a free stack's memory back to the kernel. Linux drops
/// the pages at once with `MADV_DONTNEED`; on macOS that advice only deactivates
/// them, and `MADV_FREE` is the one that lets the kernel take them.
#[cfg(target_os = "linux")]
pub(super) const GIVE_BACK: libc::c_int = libc::MADV_DONTNEED;
#[cfg(not(target_os = "linux"))]
pub(super) const GIVE_BACK: libc::c_int = libc::MADV_FREE;

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
    // SAFETY: as this function's.
    unsafe { process_madvise(ranges, advice) }
}

/// Whether [`advise_all`] may do many ranges in one system call here: false
/// where there is no such call (macOS) and once the kernel has refused it, so
/// that callers do not gather ranges only to advise them one by one.
#[cfg(target_os = "linux")]
pub(super) fn batches() -> bool {
    !BATCH_UNSUPPORTED.load(Ordering::Relaxed)
}

/// macOS has no `process_madvise`: never in batches.
#[cfg(not(target_os = "linux"))]
pub(super) fn batches() -> bool {
    false
}

/// `process_madvise` on this process; false if the kernel refuses it.
///
/// # Safety
///
/// As [`advise_all`].
#[cfg(target_os = "linux")]
unsafe fn process_madvise(ranges: &[libc::iovec], advice: libc::c_int) -> bool {
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

/// macOS has no `process_madvise`: every range gets its own `madvise`.
///
/// # Safety
///
/// As [`advise_all`] (nothing is done).
#[cfg(not(target_os = "linux"))]
unsafe fn process_madvise(_ranges: &[libc::iovec], _advice: libc::c_int) -> bool {
    false
}

/// Whether `madvise(MADV_GUARD_INSTALL)` makes pages fault in this process,
/// probed once: a page is advised, then handed to `write` on a pipe, which fails
/// with `EFAULT` where the page is a guard (the kernel's own access faults as the
/// program's would). Where it is not — a kernel without the advice, qemu-user,
/// which answers success and does nothing, or macOS — guards are made with
/// `mprotect`. The probe costs a few system calls, once.
pub(super) fn guards_fault() -> bool {
    // Miri has no madvise, and `advise_all` does nothing under it.
    if cfg!(miri) {
        return true;
    }
    static FAULTS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FAULTS.get_or_init(probe_guards)
}

#[cfg(target_os = "linux")]
fn probe_guards() -> bool {
    let page = super::page_size();
    // SAFETY: a fresh anonymous mapping touches no existing memory.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return false;
    }
    let mut fds = [-1; 2];
    // SAFETY: the page is this function's own mapping, advised and unmapped here;
    // `write` only reads it (or fails); the pipe's two ends are closed here.
    unsafe {
        let mut faults = false;
        if libc::madvise(addr, page, MADV_GUARD_INSTALL) == 0
            && libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) == 0
        {
            let written = libc::write(fds[1], addr, 1);
            faults = written == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EFAULT);
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        libc::munmap(addr, page);
        faults
    }
}

/// macOS has no guard advice.
#[cfg(not(target_os = "linux"))]
fn probe_guards() -> bool {
    false
}

//! A chunk: one `mmap` reservation carved into equal slots, each a guard page
//! followed by a usable stack. Slots are carved lazily, so a chunk costs address
//! space until its stacks are used, and memory only for the pages fibers touch.

use super::advice::{self, MADV_GUARD_INSTALL};
use super::{MAP_STACK, map_count, overflow, page_size, too_large, valgrind};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once the kernel has refused `MADV_GUARD_INSTALL`, so that later guards go
/// straight to `mprotect`.
static GUARD_MADVISE_UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// How many guard pages one `process_madvise` call installs (at most `IOV_MAX`).
/// A batch costs page-table entries, not memory, for the slots not yet used.
const GUARD_BATCH: usize = 256;

pub(super) struct Chunk {
    base: NonNull<u8>,
    len: usize,
    /// Bytes per slot: one guard page plus the usable stack.
    slot: usize,
    carved: usize,
    /// Slots whose guard page is installed (carved or not yet).
    guarded: usize,
    /// Of those, the guards made with `mprotect`, whose map entries
    /// [`map_count`] counts until the chunk is unmapped.
    protected: usize,
    slots: usize,
    registration: overflow::Registration,
    /// The ids of the carved stacks, when running under valgrind (see
    /// [`valgrind`]); empty otherwise.
    valgrind_stacks: Option<Vec<usize>>,
    /// Set when the pool goes away while a stack of this chunk is still in use
    /// (see `Pool::drop`): the mapping, its guard registration and its valgrind
    /// stacks then stay for the rest of the process; only this record goes.
    keep_mapped: bool,
}

/// MAP_NORESERVE: the stacks are address space, not committed memory.
/// MAP_STACK: no transparent huge pages, so a parked fiber holds 4 KiB pages,
/// not 2 MiB (Linux; macOS has no such flag and no such pages). Miri accepts
/// only the two basic flags; neither changes what it checks.
const RESERVE_FLAGS: libc::c_int = if cfg!(miri) {
    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS
} else {
    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | MAP_STACK
};

impl Chunk {
    /// Reserves address space for `slots` stacks of `size` usable bytes each.
    ///
    /// # Errors
    ///
    /// [`too_large`] if the chunk's size overflows; the kernel's error if it
    /// refuses the reservation.
    pub(super) fn reserve(size: usize, slots: usize) -> io::Result<Chunk> {
        let slot = size
            .checked_add(page_size())
            .ok_or_else(|| too_large(size))?;
        let len = slot.checked_mul(slots).ok_or_else(|| too_large(size))?;
        // SAFETY: an anonymous private mapping at an address of the kernel's
        // choice touches no existing memory.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                RESERVE_FLAGS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let err = io::Error::last_os_error();
            return Err(io::Error::new(
                err.kind(),
                format!("fibra: cannot reserve {len} bytes for fiber stacks: {err}"),
            ));
        }
        let base = NonNull::new(base.cast::<u8>()).expect("mmap does not return null on success");
        let registration =
            overflow::Registration::new(base.as_ptr() as usize, len, slot, page_size());
        let valgrind_stacks = valgrind::running().then(Vec::new);
        Ok(Chunk {
            base,
            len,
            slot,
            carved: 0,
            guarded: 0,
            protected: 0,
            slots,
            registration,
            valgrind_stacks,
            keep_mapped: false,
        })
    }

    /// Carves the next unused slot and returns the top of its usable stack, or
    /// `None` when every slot has been carved.
    pub(super) fn carve(&mut self) -> Option<io::Result<NonNull<u8>>> {
        if self.carved == self.slots {
            return None;
        }
        if self.carved == self.guarded
            && let Err(err) = self.guard_next_slots()
        {
            return Some(Err(err));
        }
        // The slot's lowest page is its guard; the stack grows down towards it.
        let guard = self.base.as_ptr().wrapping_add(self.carved * self.slot);
        self.carved += 1;
        let top = guard.wrapping_add(self.slot);
        if let Some(ids) = &mut self.valgrind_stacks {
            ids.push(valgrind::register(
                guard as usize + page_size(),
                top as usize,
            ));
        }
        Some(Ok(
            NonNull::new(top).expect("a slot's top is above its base")
        ))
    }

    /// Installs the guard pages of the next slots: up to [`GUARD_BATCH`] of them
    /// in one `process_madvise` call where the kernel allows it, else the next
    /// one alone (without gathering the batch's ranges first: that would cost
    /// every stack a list of [`GUARD_BATCH`]).
    fn guard_next_slots(&mut self) -> io::Result<()> {
        let page = page_size();
        let guard = |i: usize| self.base.as_ptr().wrapping_add(i * self.slot);
        if advice::guards_fault() && advice::batches() {
            let count = (self.slots - self.guarded).min(GUARD_BATCH);
            let guards: Vec<libc::iovec> = (self.guarded..self.guarded + count)
                .map(|i| advice::range(guard(i), page))
                .collect();
            // SAFETY: the ranges are the guard pages of slots not carved yet.
            if unsafe { advice::advise_all(&guards, MADV_GUARD_INSTALL) } {
                self.guarded += count;
                return Ok(());
            }
        }
        if install_guard(guard(self.guarded), page)? == Guard::Protected {
            self.protected += 1;
        }
        self.guarded += 1;
        Ok(())
    }

    /// Keeps the chunk's mapping for the rest of the process when this record
    /// is dropped: a stack of it is still in use.
    pub(super) fn keep_mapped(&mut self) {
        self.keep_mapped = true;
    }

    /// Whether the stack whose top is `top` was carved from this chunk.
    pub(super) fn holds(&self, top: NonNull<u8>) -> bool {
        let base = self.base.as_ptr() as usize;
        (base + self.slot..=base + self.len).contains(&(top.as_ptr() as usize))
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        if self.keep_mapped {
            return;
        }
        self.registration.clear();
        for id in self.valgrind_stacks.iter().flatten() {
            valgrind::deregister(*id);
        }
        // SAFETY: [base, base + len) is the mapping made in `reserve`; the pool
        // drops a chunk only when none of its stacks is in use, unless it set
        // `keep_mapped`.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
        if self.protected > 0 {
            map_count::give_back(self.protected);
        }
    }
}

/// How a guard page was made.
#[derive(PartialEq)]
enum Guard {
    /// With `MADV_GUARD_INSTALL`, which costs no map entry.
    Advised,
    /// With `mprotect`, whose entries [`map_count`] counts.
    Protected,
}

/// Makes `[addr, addr + len)` fault on access.
///
/// # Errors
///
/// Where the guard would be made with `mprotect`: [`map_count`]'s error once
/// fibra's guards hold their share of `vm.max_map_count`; the kernel's own
/// refusal (`ENOMEM`, told with `vm.max_map_count` named too) if the rest of
/// the process took the entries first.
fn install_guard(addr: *mut u8, len: usize) -> io::Result<Guard> {
    if advice::guards_fault() && !GUARD_MADVISE_UNSUPPORTED.load(Ordering::Relaxed) {
        // SAFETY: the range lies inside a mapping this module owns and that no
        // stack uses yet.
        if unsafe { libc::madvise(addr.cast(), len, MADV_GUARD_INSTALL) } == 0 {
            return Ok(Guard::Advised);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINVAL) {
            return Err(err);
        }
        GUARD_MADVISE_UNSUPPORTED.store(true, Ordering::Relaxed);
    }
    map_count::take_guard()?;
    // SAFETY: as above.
    if unsafe { libc::mprotect(addr.cast(), len, libc::PROT_NONE) } == 0 {
        return Ok(Guard::Protected);
    }
    let err = io::Error::last_os_error();
    map_count::give_back(1);
    if cfg!(target_os = "linux") && err.raw_os_error() == Some(libc::ENOMEM) {
        return Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!(
                "fibra: the kernel refused another guard page ({err}); this kernel lacks \
                 MADV_GUARD_INSTALL, so each fiber stack costs two memory map entries: \
                 raise vm.max_map_count (now {}) or use fewer fibers",
                map_count::max_map_count().map_or_else(|| "unknown".to_string(), |n| n.to_string())
            ),
        ));
    }
    Err(err)
}

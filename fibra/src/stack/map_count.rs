//! fibra's share of the kernel's memory-map entries, where guard pages split
//! mappings.
//!
//! Where `MADV_GUARD_INSTALL` does not work (Linux before 6.13, qemu-user),
//! each stack's guard page is made with `mprotect`, which splits its chunk's
//! mapping: a stack costs two of the process's `vm.max_map_count` entries
//! (65,530 by default). Left alone, fibra would take them all, and then the
//! next thing that needs one — malloc growing an arena or mapping a large
//! block, a new OS thread's stack, the signal stack Rust gives that thread —
//! fails, and the process aborts. So fibra counts the entries its `mprotect`
//! guards hold ([`take_guard`], [`give_back`]) and refuses another guard, with
//! an error that says why, once they would pass the limit less a [`reserve`]
//! kept for the rest of the process.
//!
//! Only the `mprotect` path counts: guards made with `MADV_GUARD_INSTALL` do
//! not split mappings and cost nothing here. Under valgrind, whose own table
//! of mappings is smaller than the kernel's, the limit is valgrind's.

use super::valgrind;
use std::io;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Map entries one `mprotect` guard costs: the guard page and the stack above
/// it, each split off as an entry of its own (a chunk with `n` guards is `2n`
/// entries, its own entry included).
const PER_GUARD: usize = 2;

/// The fewest map entries left to the rest of the process (see [`reserve`]).
const MIN_RESERVE: usize = 4096;

/// The memory segments valgrind tracks (its `VG_N_SEGMENTS`: 30,000 on Linux,
/// as in 3.19): it stops the process ("FATAL: VG_N_SEGMENTS is too low") when
/// the program maps more, well before `vm.max_map_count`, so under valgrind
/// fibra takes its share of this instead (some 12,900 stacks with `mprotect`
/// guards).
const VALGRIND_SEGMENTS: usize = 30_000;

/// Map entries that fibra's `mprotect` guards hold, in every thread's chunks.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// Counts the map entries of one more `mprotect` guard, or refuses it when
/// fibra's guards would then hold more than the [`limit`] (`vm.max_map_count`)
/// less the [`reserve`]. Where the limit cannot be read (no `/proc`, or not
/// Linux), every guard is counted and none refused.
///
/// # Errors
///
/// `OutOfMemory`, naming `vm.max_map_count`, its value, the stacks fibra holds
/// and the entries it leaves to the process.
pub(super) fn take_guard() -> io::Result<()> {
    let held = HELD.fetch_add(PER_GUARD, Ordering::Relaxed) + PER_GUARD;
    match limit() {
        Some(limit) if held > limit.saturating_sub(reserve(limit)) => {
            give_back(1);
            Err(wall(held - PER_GUARD, limit, max_map_count()))
        }
        _ => Ok(()),
    }
}

/// Gives back the map entries of `guards` `mprotect` guards: their chunk is
/// unmapped, or the `mprotect` failed.
pub(super) fn give_back(guards: usize) {
    HELD.fetch_sub(guards * PER_GUARD, Ordering::Relaxed);
}

/// The map entries fibra leaves to the rest of the process: an eighth of the
/// limit, and at least [`MIN_RESERVE`] (8,191 of the default 65,530).
///
/// A Rust program with a few threads holds a few dozen entries (30 for one
/// thread, 54 with four, measured with `/proc/self/maps`), and each further
/// OS thread about five: its stack and guard, the signal stack Rust gives it
/// and its guard, a malloc arena's share. The reserve covers fibra's own
/// blocking pool at its largest (512 threads, some 2,600 entries), shared
/// libraries, chunks with no `mprotect` guard yet, and still leaves thousands
/// for the program's own large allocations, which malloc maps one by one.
fn reserve(limit: usize) -> usize {
    (limit / 8).max(MIN_RESERVE)
}

/// The error for a guard that would pass fibra's share of `limit`, which is
/// `vm.max_map_count` (`kernel`) or, under valgrind, the lower number of
/// segments valgrind tracks.
fn wall(held: usize, limit: usize, kernel: Option<usize>) -> io::Error {
    let of = match kernel {
        Some(max) if max == limit => {
            format!("this process's vm.max_map_count ({limit}) memory map entries")
        }
        _ => format!(
            "the {limit} memory map entries valgrind can track (fewer than \
             vm.max_map_count, {})",
            kernel.map_or_else(|| "unknown".to_string(), |n| n.to_string())
        ),
    };
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!(
            "fibra: no stack for another fiber: fibra's {stacks} fiber stacks hold \
             {held} of {of}, and fibra leaves the last {reserve} to the rest of the \
             process (threads, malloc, libraries); here each stack's guard page is \
             made with mprotect (no MADV_GUARD_INSTALL: Linux before 6.13, or \
             qemu-user), which costs two entries: raise vm.max_map_count or hold \
             fewer fibers at once",
            stacks = held / PER_GUARD,
            reserve = reserve(limit),
        ),
    )
}

/// The most map entries the process may hold, found once: `vm.max_map_count`,
/// and under valgrind no more than the [`VALGRIND_SEGMENTS`] it tracks.
/// `None` where neither applies (no `/proc`, or not Linux).
fn limit() -> Option<usize> {
    static LIMIT: OnceLock<Option<usize>> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let kernel = max_map_count();
        if valgrind::running() {
            Some(kernel.map_or(VALGRIND_SEGMENTS, |k| k.min(VALGRIND_SEGMENTS)))
        } else {
            kernel
        }
    })
}

/// Linux's limit on a process's memory map entries, read once; `None` where
/// it cannot be read.
pub(super) fn max_map_count() -> Option<usize> {
    static MAX: OnceLock<Option<usize>> = OnceLock::new();
    *MAX.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()?
            .trim()
            .parse()
            .ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_an_eighth_and_at_least_a_few_thousand() {
        assert_eq!(reserve(65_530), 8_191);
        assert_eq!(reserve(1 << 20), 1 << 17);
        assert_eq!(reserve(10_000), MIN_RESERVE);
        assert_eq!(reserve(0), MIN_RESERVE);
    }

    #[test]
    fn the_error_names_the_limit_and_what_fibra_holds() {
        let err = wall(57_338, 65_530, Some(65_530));
        assert_eq!(err.kind(), io::ErrorKind::OutOfMemory);
        let text = err.to_string();
        for part in [
            "28669 fiber stacks hold 57338 of this process's vm.max_map_count (65530)",
            "leaves the last 8191",
            "mprotect",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }

    #[test]
    fn under_valgrind_the_error_names_its_lower_limit() {
        let text = wall(25_904, VALGRIND_SEGMENTS, Some(65_530)).to_string();
        let part = "hold 25904 of the 30000 memory map entries valgrind can track \
                    (fewer than vm.max_map_count, 65530), and fibra leaves the last 4096";
        assert!(text.contains(part), "{text}");
    }
}

//! What a stack-overflow report says of the fiber that overflowed: the green
//! thread its runtime is running on this OS thread, if the overflow is on that
//! thread's stack, and the setting that sizes it.
//!
//! The overflow handler runs in a signal handler, so the scheduler writes what
//! the report needs here, in a per-OS-thread cell, at each switch into a green
//! thread — the thread's id, a pointer to its name's bytes and its stack's top
//! — and the handler only reads it back: no lock, no allocation, no lookup.

use std::cell::Cell;
use std::sync::Arc;

/// The green thread running on this OS thread, as the overflow handler reads
/// it.
#[derive(Clone, Copy)]
struct Running {
    /// Its id (`0`: no green thread runs).
    id: u64,
    /// Its name's bytes (null: it has none). They belong to an `Arc<str>` its
    /// runtime keeps until the thread has ended, so they outlive its runs.
    name: *const u8,
    name_len: usize,
    /// The top of its stack: names the slot it overflows.
    stack_top: usize,
}

impl Running {
    const NONE: Running = Running {
        id: 0,
        name: std::ptr::null(),
        name_len: 0,
        stack_top: 0,
    };
}

thread_local! {
    // Const-initialised, with no destructor: a read is a plain load from the
    // thread's TLS block, with no lazy initialisation or registration, which
    // a signal handler may make (see `on_overflow`).
    static RUNNING: Cell<Running> = const { Cell::new(Running::NONE) };
}

/// Records that green thread `id`, named `name`, on the stack whose top is
/// `stack_top`, runs on this OS thread from now on. `name` must stay alive
/// until [`switched_out`] (its runtime keeps it until the thread has ended).
#[inline]
pub(crate) fn switched_into(id: u64, name: Option<&Arc<str>>, stack_top: usize) {
    let (name, name_len) = name.map_or((std::ptr::null(), 0), |n| (n.as_ptr(), n.len()));
    RUNNING.set(Running {
        id,
        name,
        name_len,
        stack_top,
    });
}

/// Records that no green thread runs on this OS thread.
#[inline]
pub(crate) fn switched_out() {
    RUNNING.set(Running::NONE);
}

/// Who overflowed a stack slot.
pub(super) enum Overflowed<'a> {
    /// A green thread: its id and name.
    GreenThread { id: u64, name: Option<&'a [u8]> },
    /// A fiber (a [`Fiber`](crate::Fiber), a generator) on a stack of its own.
    Fiber,
}

/// Calls `report` with who overflowed the stack slot `[slot_start,
/// slot_end)`: the green thread recorded for this OS thread if its stack is
/// that slot, else a fiber. Async-signal-safe: it reads a const-initialised
/// thread-local, and the name it lends `report` is borrowed, not copied.
pub(super) fn on_overflow<R>(
    slot_start: usize,
    slot_end: usize,
    report: impl FnOnce(Overflowed<'_>) -> R,
) -> R {
    let running = RUNNING.try_with(Cell::get).unwrap_or(Running::NONE);
    if running.id == 0 || running.stack_top <= slot_start || running.stack_top > slot_end {
        return report(Overflowed::Fiber);
    }
    let name = (!running.name.is_null()).then(|| {
        // `name` points at the `name_len` bytes of an `Arc<str>` that its
        // runtime keeps until the thread has ended (`switched_into`); the
        // thread is running (it just faulted on its stack), so it has not,
        // and the borrow ends with `report`. Nothing writes to a `str` behind
        // an `Arc`.
        // SAFETY: so these bytes are live and unchanging (argued above).
        unsafe { std::slice::from_raw_parts(running.name, running.name_len) }
    });
    report(Overflowed::GreenThread {
        id: running.id,
        name,
    })
}

//! Which runtime runs on this OS thread: the `CURRENT` scheduler, set by
//! [`Installed`] while a runtime runs, and the questions the rest of fibra
//! asks of it without holding a scheduler (`current()`, a lock's holder, the
//! running thread's green-local values, whether an `Unparker` is local).

use super::{RuntimeId, Scheduler};
use crate::runtime::registry::Monitor;
use crate::runtime::remote::Unparker;
use crate::runtime::task::{Slots, TaskId};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

thread_local! {
    static CURRENT: RefCell<Option<Rc<Scheduler>>> = const { RefCell::new(None) };
}

/// The scheduler of the runtime running on this OS thread, if any.
pub(crate) fn try_current() -> Option<Rc<Scheduler>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The scheduler of the runtime running on this OS thread.
///
/// # Panics
///
/// Outside a runtime, with a message that says how to start one, at the
/// caller's caller (a public function of fibra marked `#[track_caller]`
/// points at the user's line).
#[track_caller]
pub(crate) fn current() -> Rc<Scheduler> {
    current_for("this fibra function")
}

/// [`current`], for the public function `operation` (as the user calls it:
/// `"fibra::spawn"`), which the panic message names.
///
/// # Panics
///
/// Outside a runtime, at the caller's `#[track_caller]` location.
#[track_caller]
pub(crate) fn current_for(operation: &str) -> Rc<Scheduler> {
    match try_current() {
        Some(scheduler) => scheduler,
        None => outside(operation),
    }
}

/// The panic of a call made outside a runtime.
#[cold]
#[track_caller]
fn outside(operation: &str) -> ! {
    panic!(
        "{operation} called outside a fibra runtime: it must run inside a fibra runtime \
         (fibra::run(|| ...), or a green thread spawned there)"
    )
}

/// Runtime `id`'s scheduler, if it is the one running on this OS thread.
/// What names a green thread on this side of the runtime (a `JoinHandle`, a
/// wait list's entry) is not `Send`, so it stays on its runtime's OS thread,
/// where that runtime is the current one from the moment it was made until
/// the runtime ends: `None` means the runtime has ended (or this OS thread is
/// ending, its thread-locals gone).
pub(crate) fn current_if(id: RuntimeId) -> Option<Rc<Scheduler>> {
    CURRENT
        .try_with(|c| c.borrow().as_ref().filter(|s| s.id == id).cloned())
        .ok()
        .flatten()
}

/// Whether runtime `id` runs on this OS thread (see [`current_if`]): `false`
/// once it has ended.
pub(crate) fn is_current(id: RuntimeId) -> bool {
    CURRENT
        .try_with(|c| c.borrow().as_ref().is_some_and(|s| s.id == id))
        .unwrap_or(false)
}

/// Wakes `unparker`'s green thread directly if it belongs to the runtime running
/// on this OS thread — straight into the run queue, without the remote queue's
/// lock or a wake of the poller — and returns whether it did. `false` means the
/// thread is another runtime's (or none runs here, or this OS thread is
/// ending and its thread-locals are gone): unpark it remotely.
pub(crate) fn wake_if_local(unparker: &Unparker) -> bool {
    CURRENT
        .try_with(|c| match &*c.borrow() {
            Some(scheduler) if Arc::ptr_eq(&scheduler.remote, &unparker.remote) => {
                scheduler.wake(unparker.task);
                true
            }
            _ => false,
        })
        .unwrap_or(false)
}

/// Calls `f` on the green-local values of the running green thread and
/// returns what it returns; `None` when no green thread runs on this OS thread
/// (outside a runtime, in the runtime's own loop, or while this OS thread
/// ends). `f` must not call back into the scheduler: the task table is
/// borrowed meanwhile.
pub(crate) fn with_running_locals<R>(f: impl FnOnce(&mut Slots) -> R) -> Option<R> {
    CURRENT
        .try_with(|c| {
            let current = c.borrow();
            let scheduler = current.as_ref()?;
            let task = scheduler.running.get()?;
            Some(f(&mut scheduler.tasks.borrow_mut()[task.index].locals))
        })
        .ok()
        .flatten()
}

/// The name of the running green thread, if it has one.
pub(crate) fn current_name() -> Option<Arc<str>> {
    let scheduler = try_current()?;
    scheduler.name(scheduler.running.get()?)
}

/// The green thread running on this OS thread, with its runtime's id, if one
/// runs (what a lock records as its holder: read without taking a reference
/// to the scheduler, as every uncontended lock asks).
#[inline]
pub(crate) fn running_thread() -> Option<(RuntimeId, TaskId)> {
    CURRENT
        .try_with(|c| {
            let current = c.borrow();
            let scheduler = current.as_ref()?;
            Some((scheduler.id, scheduler.running.get()?))
        })
        .ok()
        .flatten()
}

/// The monitor of the runtime running on this OS thread, if any, from
/// anywhere on it (a panic hook included: it never panics, even while the
/// scheduler is being installed or removed).
pub(in crate::runtime) fn current_monitor() -> Option<Arc<Monitor>> {
    CURRENT
        .try_with(|c| Some(c.try_borrow().ok()?.as_ref()?.monitor.clone()))
        .ok()
        .flatten()
}

/// Makes `scheduler` this thread's current one until the guard is dropped.
pub(in crate::runtime) struct Installed(());

impl Installed {
    #[track_caller]
    pub(in crate::runtime) fn new(scheduler: Rc<Scheduler>) -> Installed {
        // The panic is outside the closure, which has no caller location.
        let installed = CURRENT.with(|c| {
            let mut current = c.borrow_mut();
            let free = current.is_none();
            if free {
                *current = Some(scheduler);
            }
            free
        });
        assert!(
            installed,
            "fibra::run called inside a fibra runtime: a runtime is already running on \
             this OS thread (fibra::run does not nest; fibra::spawn starts a green thread \
             here, fibra::block_on waits for a future)"
        );
        Installed(())
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let scheduler = CURRENT.with(|c| c.borrow_mut().take());
        // The runtime has ended: dumps and the stall detector learn it now,
        // not when the scheduler is dropped — a green thread abandoned at the
        // end may hold an `Rc` of it on its leaked stack, and then never.
        if let Some(scheduler) = &scheduler {
            scheduler.monitor.ended();
        }
        drop(scheduler);
    }
}

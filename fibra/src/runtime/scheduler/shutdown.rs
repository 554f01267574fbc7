//! The end of a runtime: no more errands from other OS threads, then every
//! green thread cancelled and run until it has unwound (or abandoned, if it
//! cannot), then the threads joined through a `Handle` that were abandoned
//! reported to their joiners ([`RemoteJoins`]).

use super::Scheduler;
use super::cancel::abandon;
use crate::runtime::report::{Report, report};
use crate::runtime::task::TaskId;
use slab::Slab;
use std::cell::RefCell;
use std::sync::Arc;

impl Scheduler {
    /// Ends the runtime: from now on it takes no errand from another OS
    /// thread (a [`Handle::spawn`](crate::runtime::Handle::spawn) is refused, and
    /// those queued are dropped, which their joiners see); then it ends every
    /// green thread (`end_threads`); then those joined through a
    /// [`Handle`](crate::runtime::Handle) that were abandoned are reported cancelled.
    pub(in crate::runtime) fn shutdown(&self) {
        drop(self.remote.close_errands());
        self.end_threads();
        self.remote_joins.orphan_all();
    }

    /// Cancels every green thread and runs them until they have all unwound,
    /// including threads spawned meanwhile (by a destructor, say), which are
    /// cancelled in turn. Threads that then cannot end — every one parked, in
    /// a destructor that waits for what will never come, or after swallowing
    /// their `Cancelled` — are abandoned, and a line on stderr says how many.
    fn end_threads(&self) {
        loop {
            let spawned = self.next_serial.get();
            let all: Vec<TaskId> = self.task_ids();
            all.into_iter().for_each(|task| {
                self.cancel(task);
            });
            let outcome = self
                .run_until(|| self.tasks.borrow().is_empty() || self.next_serial.get() != spawned);
            if self.tasks.borrow().is_empty() {
                return;
            }
            if outcome.is_err() {
                break;
            }
        }
        let left = std::mem::take(&mut *self.tasks.borrow_mut());
        self.options.borrow_mut().clear();
        let line = format!(
            "fibra: {} green threads could not finish unwinding at the end of the runtime \
             (each is parked and nothing can wake it); they are abandoned, with the \
             rest of their destructors",
            left.len()
        );
        report(Report::Abandoned, self.monitor.to_stderr, &line);
        left.into_iter().for_each(|(_, task)| abandon(task));
    }

    fn task_ids(&self) -> Vec<TaskId> {
        self.tasks
            .borrow()
            .iter()
            .map(|(index, t)| TaskId {
                index,
                serial: t.serial,
            })
            .collect()
    }
}

/// A thread spawned through a `Handle`, as its runtime keeps it until it
/// finishes.
pub(crate) trait Orphan {
    /// Its runtime ended it without a word from the thread (abandoned it):
    /// its joiner is told it was cancelled.
    fn orphan(&self);
}

/// The threads of a runtime spawned through a `Handle` that have not
/// finished. A thread that the end of the runtime abandons (it cannot finish
/// unwinding) never finishes, and its body, on its leaked stack, is never
/// dropped: the runtime reports it to its joiner from here
/// (`Scheduler::shutdown`). Only the runtime's own OS thread touches it.
#[derive(Default)]
pub(crate) struct RemoteJoins(RefCell<Slab<Arc<dyn Orphan>>>);

impl RemoteJoins {
    /// Keeps `thread` until [`remove`](Self::remove) or the runtime's end;
    /// returns its key.
    pub(in crate::runtime) fn insert(&self, thread: Arc<dyn Orphan>) -> usize {
        self.0.borrow_mut().insert(thread)
    }

    /// The thread of `key` has finished.
    pub(in crate::runtime) fn remove(&self, key: usize) {
        self.0.borrow_mut().try_remove(key);
    }

    /// The runtime has ended: every thread still kept was abandoned.
    pub(in crate::runtime) fn orphan_all(&self) {
        let left = std::mem::take(&mut *self.0.borrow_mut());
        left.into_iter().for_each(|(_, thread)| thread.orphan());
    }
}

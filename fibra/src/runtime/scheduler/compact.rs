//! When parked threads are compacted (see `Builder::compact_parked_after`):
//! the queue of parks old enough to compact, the sweep that compacts them,
//! and the poller timeout that keeps an idle runtime's sweeps on time. How
//! compaction is made safe is in `docs/internals/compaction.md`.

use super::Scheduler;
use crate::runtime::task::{Code, State, TaskId};
use crate::stack::GiveBack;
use std::time::{Duration, Instant};

impl Scheduler {
    /// Compacts the stacks of the threads parked for `after` or longer (see
    /// `Builder::compact_parked_after`): those still parked in the park that
    /// queued them, not already compacted.
    #[cold]
    pub(super) fn compact_cold(&self, now: Instant, after: Duration) {
        let mut cold = self.cold.borrow_mut();
        let mut tasks = self.tasks.borrow_mut();
        // Declared after `tasks`, so dropped (and flushed) before it: no
        // compacted thread can be restored before its pages are given back.
        let mut given_back = GiveBack::default();
        while let Some(&(task, since, park)) = cold.front() {
            if now.saturating_duration_since(since) < after {
                break;
            }
            cold.pop_front();
            // Still in the park that queued the entry, and lending nothing
            // now: checked here, at the time of compaction, whatever was so
            // when the entry was queued.
            let Some(entry) = tasks.get_mut(task.index).filter(|t| {
                t.serial == task.serial
                    && t.state == State::Parked
                    && t.parks == park
                    && t.lending == 0
                    && t.compacted.is_none()
            }) else {
                continue;
            };
            if let Code::Started(fiber) = &entry.code {
                // The thread is parked, so its fiber is suspended (in
                // `suspend_running`, on its own stack: a park from a fiber it
                // resumed is refused) and nothing of fibra's touches the fiber
                // or its stack until `run_task` or `section` drops the
                // `Compacted` — they are the only places that switch into a
                // parked thread's fiber, and `Task` drops `compacted` before
                // `code`. Nothing outside reads or writes its stack: that is
                // what the `unsafe` of `Builder::compact_parked_after`
                // promised for user code, and fibra's own wait records are on
                // the heap (docs/internals/compaction.md gives the audit);
                // what fibra itself lends from a stack (a future that
                // `block_on` pinned there) keeps `lending` above zero for as
                // long as it is lent, checked just above.
                // SAFETY: so the fiber is suspended and kept off, as above.
                entry.compacted = unsafe { fiber.compact() };
                if let Some(compacted) = &entry.compacted {
                    // SAFETY: `given_back` is flushed when this sweep ends,
                    // while `tasks` is still borrowed here: nothing can drop
                    // (restore) a `Compacted` before.
                    unsafe { given_back.add(compacted) };
                }
            }
        }
    }

    /// Queues the park of `task` made at `since`, its park number `park`
    /// (`Task::parks`), to be compacted once it is old enough. The park
    /// number, not the time (two parks may read the same `clock`), tells this
    /// park from the thread's later ones. (It wraps after 2^32 parks: a stale
    /// entry that then matched would only compact a later park early, as
    /// every check of `compact_cold` but the age still holds.)
    pub(super) fn queue_cold(&self, task: TaskId, since: Instant, park: u32) {
        self.cold.borrow_mut().push_back((task, since, park));
    }

    /// The poller's timeout `next` (the next timer's), shortened to when the
    /// oldest park waiting to be compacted is due, so that an idle runtime
    /// compacts its parked threads on time.
    pub(super) fn until_next_compaction(
        &self,
        now: Instant,
        next: Option<Duration>,
    ) -> Option<Duration> {
        let (Some(after), Some(&(_, since, _))) = (self.compact_after, self.cold.borrow().front())
        else {
            return next;
        };
        let Some(due) = since.checked_add(after) else {
            return next;
        };
        let due = due.saturating_duration_since(now);
        Some(next.map_or(due, |next| next.min(due)))
    }
}

//! The scheduler's part of a dump: each green thread, resumed for an instant
//! on its own stack, tells what it waits for and where it is (its stack's
//! return addresses); the loop answers the dumps other OS threads ask for.
//! The dump itself (asking every runtime, symbolizing, printing) is
//! `observe/dump.rs`, which only reads what this makes (`section.rs`).

use super::Scheduler;
use crate::Fiber;
use crate::runtime::section::{RawThread, Section, ThreadState};
use crate::runtime::stack_trace;
use crate::runtime::task::{Code, State, TaskId};
use crate::runtime::wait::WaitReason;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

impl Scheduler {
    /// Answers the dumps other OS threads asked this runtime for, now that no
    /// green thread runs.
    #[cold]
    pub(super) fn answer_dumps(&self) {
        let requests = self.monitor.take_dump_requests();
        if requests.is_empty() {
            return;
        }
        let section = Arc::new(self.section());
        requests.into_iter().for_each(|r| r.answer(section.clone()));
    }

    /// This runtime's green threads, for a dump: what each is doing and,
    /// for those suspended, where. Runs on the runtime's own OS thread, from
    /// its loop or from one of its green threads (which then shows as the
    /// running one): each suspended thread is resumed for an instant to
    /// trace its own stack (see `stack_trace`).
    pub(in crate::runtime) fn section(&self) -> Section {
        // A compacted thread is put back to be traced, and queued to be
        // compacted again at the next sweep, as the same park.
        let since = self.clock.get();
        let restored: HashMap<TaskId, usize> = self
            .tasks
            .borrow_mut()
            .iter_mut()
            .filter_map(|(index, task)| {
                let bytes = task.compacted.take()?.len();
                let id = TaskId {
                    index,
                    serial: task.serial,
                };
                self.queue_cold(id, since, task.parks);
                Some((id, bytes))
            })
            .collect();
        let compacted = |id: TaskId| restored.get(&id).copied();
        let running = self.running.get();
        let threads: Vec<_> = self
            .tasks
            .borrow()
            .iter()
            .map(|(index, task)| {
                let id = TaskId {
                    index,
                    serial: task.serial,
                };
                let fiber = match &task.code {
                    Code::Started(fiber) => Some(fiber.clone()),
                    Code::Unstarted(_) => None,
                };
                let name = if task.has_options {
                    self.name(id)
                } else {
                    None
                };
                (id, name, task.state, fiber)
            })
            .collect();
        let now = Instant::now();
        let threads = threads
            .into_iter()
            .map(|(id, name, state, fiber)| {
                let (state, stack) = match (fiber, state) {
                    (None, _) => (ThreadState::NotStarted, Vec::new()),
                    (Some(fiber), State::Running) => {
                        // Only the thread taking the dump can be traced
                        // while it runs (another would be running a fiber
                        // of its own, on another stack).
                        let mut stack = Vec::new();
                        if Some(id) == running {
                            stack_trace::capture(fiber.stack_range(), &mut stack);
                        }
                        (ThreadState::Running, stack)
                    }
                    (Some(fiber), suspended) => {
                        self.tracing.set(true);
                        let traced = fiber.resume(());
                        self.tracing.set(false);
                        let trace = std::mem::take(&mut *self.trace.borrow_mut());
                        let state = match (suspended, trace.parked) {
                            (State::Parked, Some((reason, since))) if traced.is_ok() => {
                                ThreadState::Parked {
                                    reason,
                                    waited: now.saturating_duration_since(since),
                                }
                            }
                            _ => ThreadState::Ready,
                        };
                        (state, trace.stack)
                    }
                };
                RawThread {
                    id: id.serial,
                    name,
                    state,
                    stack,
                    compacted: compacted(id),
                }
            })
            .collect();
        let ractors = self
            .ractors
            .get()
            .map_or_else(Vec::new, |describe| describe());
        Section { threads, ractors }
    }

    /// Tells a dump, which resumed this suspended thread to ask, what it waits
    /// for, since when, and where (its stack, traced from here).
    #[cold]
    #[inline(never)]
    pub(super) fn tell_dump(&self, fiber: &Fiber, wait: WaitReason, since: Instant) {
        let mut trace = self.trace.borrow_mut();
        trace.parked = Some((wait, since));
        stack_trace::capture(fiber.stack_range(), &mut trace.stack);
    }
}

/// What a suspended thread, resumed by a dump, tells of itself.
#[derive(Default)]
pub(super) struct Trace {
    /// What it waits for and since when (its `suspend_running`'s arguments).
    parked: Option<(WaitReason, Instant)>,
    /// Its stack's return addresses.
    stack: Vec<usize>,
}

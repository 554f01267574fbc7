//! A green thread as the scheduler sees it: its fiber, where it is in its life,
//! and whether a wake-up arrived while it was running.

use crate::Fiber;
use crate::stack::Compacted;
use std::any::Any;
use std::fmt;
use std::io;
use std::rc::Rc;
use std::sync::Arc;

/// Names a green thread of one runtime. The serial number makes an id that
/// outlives its thread harmless: the slot may be reused, the serial is not.
/// Within its runtime only: the next runtime on the same OS thread numbers its
/// threads from 1 again, so an id kept outside the scheduler is kept with its
/// runtime's [`RuntimeId`](super::scheduler::RuntimeId).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TaskId {
    pub(super) index: usize,
    pub(super) serial: u64,
}

impl TaskId {
    /// An id that names no thread (serials start at 1): waking it wakes only
    /// the runtime's loop.
    pub(super) const NOBODY: TaskId = TaskId {
        index: usize::MAX,
        serial: 0,
    };

    /// Names no thread either: found among the wakes of the remote queue, it
    /// tells the runtime's loop to run the errands other OS threads queued
    /// (see `Remote::send_errand`).
    pub(super) const ERRANDS: TaskId = TaskId {
        index: usize::MAX,
        serial: u64::MAX,
    };
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "green thread #{}", self.serial)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// In the run queue.
    Runnable,
    /// Its fiber is running (or has resumed a fiber of its own).
    Running,
    /// Suspended until a wake-up.
    Parked,
}

/// How a green thread's body is started: what it does with its code.
pub(crate) enum Started {
    /// On its own fiber: it runs its code.
    Run,
    /// On its own fiber, cancelled before it ever ran: it drops its code
    /// unrun (there, so that those destructors may block) and ends
    /// cancelled.
    Cancelled,
    /// On the scheduler's stack, when no stack could be had: it drops its
    /// code and reports the failure to its joiner instead of vanishing.
    NoStack(io::Error),
}

/// What a green thread runs. It is told how it starts ([`Started`]).
pub(crate) enum Body {
    /// A closure: a Ractor's, boxed by its creator on another OS thread.
    Boxed(Box<dyn FnOnce(Started)>),
    /// A thread with a [`JoinHandle`](super::JoinHandle): its closure and
    /// the slot its handle reads, in one allocation (see `join.rs`).
    Joined(Joined),
}

impl Body {
    /// A body that does nothing, and costs no allocation: what stands in
    /// the task for a body taken out to run.
    pub(super) fn empty() -> Body {
        Body::Boxed(Box::new(|_| {}))
    }

    /// Runs the thread's code, or ends it as `started` says.
    pub(super) fn run(self, started: Started) {
        match self {
            Body::Boxed(f) => f(started),
            Body::Joined(mut joined) => match joined.0.take() {
                Some(start) => start.start(started),
                None => unreachable!("fibra: a green thread's body ran twice"),
            },
        }
    }
}

/// A spawned thread's shared allocation, seen from the scheduler: run once
/// with [`Start::start`], or, if the thread never runs, its closure dropped
/// by [`Start::discard`] when its body is (the slot lives on while a handle
/// holds it).
pub(crate) trait Start {
    fn start(self: Rc<Self>, started: Started);
    fn discard(&self);
}

/// [`Body::Joined`]'s allocation; dropping it unrun drops the closure then.
pub(crate) struct Joined(pub(super) Option<Rc<dyn Start>>);

impl Drop for Joined {
    fn drop(&mut self) {
        if let Some(start) = self.0.take() {
            start.discard();
        }
    }
}

/// A green thread's code: a closure until it first runs, then a fiber.
///
/// The stack is taken when the thread first runs, not when it is spawned: a
/// thread spawned faster than threads run holds no stack while it waits, and
/// one that finishes before the next starts hands its stack, still warm, to
/// it. Spawning many short threads then touches no new memory.
pub(super) enum Code {
    Unstarted(Body),
    /// Shared so that the scheduler can resume it, and the thread park
    /// itself, without keeping the task table borrowed.
    Started(Rc<Fiber>),
}

impl Code {
    /// The fiber of a thread that has started.
    pub(super) fn fiber(&self) -> &Rc<Fiber> {
        match self {
            Code::Started(fiber) => fiber,
            Code::Unstarted(_) => unreachable!("fibra: a green thread that never ran is running"),
        }
    }
}

pub(super) struct Task {
    pub(super) serial: u64,
    /// While the thread is parked and compacted (see
    /// [`Builder::compact_parked_after`](super::Builder::compact_parked_after)):
    /// the used part of its stack. Declared before `code` so that a task
    /// dropped while compacted puts its stack back before its fiber is dropped
    /// (and unwound).
    pub(super) compacted: Option<Compacted>,
    pub(super) code: Code,
    /// Whether the scheduler keeps `Options` for this thread (beside the
    /// task table: see `scheduler`).
    pub(super) has_options: bool,
    /// Its name, if it was given one (the same as its `Options`'): what a
    /// stack-overflow report names it by, told at each switch into it
    /// without a lookup (see `stack::label`).
    pub(super) name: Option<Arc<str>>,
    pub(super) state: State,
    /// A wake-up that came while the thread was running: its next park returns
    /// at once instead of sleeping through it.
    pub(super) notified: bool,
    /// Whether the thread was cancelled, and whether it has been told.
    pub(super) cancel: Cancel,
    /// Counts the thread's parks while its runtime compacts: names the park
    /// a compaction-queue entry was made for (see `Scheduler::queue_cold`).
    pub(super) parks: u32,
    /// How many frames on the thread's stack lend memory there to something
    /// that may touch it while the thread is parked (see
    /// `Scheduler::lend`): while it is not zero, the thread is never
    /// compacted.
    pub(super) lending: u32,
    /// How many frames on the thread's stack shield it from unwinds (see
    /// `Scheduler::shield`): while it is not zero, no cancel or deadline is
    /// delivered at its parks (they are delivered at its first park after).
    pub(super) shielded: u32,
    /// Its green-local values (see `green_local.rs`); dropped by the thread
    /// itself when it ends.
    pub(super) locals: Slots,
    /// The span the thread runs in (`ThreadBuilder::span`): entered each time
    /// the scheduler switches into the thread, exited when it switches back.
    /// Boxed: a thread with none pays one word.
    #[cfg(feature = "tracing")]
    pub(super) span: Option<Box<tracing::Span>>,
}

/// A green thread's cancellation. It is delivered once: the [`Cancelled`]
/// unwind starts at the thread's next park (or the one it is in), and from then
/// on its parks are ordinary parks, so the destructors that run during that
/// unwind may wait — for a lock, a channel, a timer, a socket — and complete.
///
/// [`Cancelled`]: super::Cancelled
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cancel {
    /// Not cancelled.
    No,
    /// Cancelled; the thread unwinds at its next park (under `panic = "abort"`:
    /// it never runs again).
    Requested,
    /// The `Cancelled` unwind has begun.
    Delivered,
}

/// The green-local values of one green thread, or of the code outside green
/// threads on one OS thread, by key index (see `green_local.rs`, which reads
/// and writes them). Kept here, with the task that owns them: the scheduler
/// holds a thread's in its entry and leaks them with an abandoned thread.
#[derive(Default)]
pub(crate) struct Slots {
    pub(super) values: Vec<Option<Rc<dyn Any>>>,
    /// The thread's end has begun: its values are being dropped, and none can
    /// be had or made any more.
    pub(super) ended: bool,
}

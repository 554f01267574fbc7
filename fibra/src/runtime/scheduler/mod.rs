//! The per-worker scheduler (Go's `proc.go`): the green threads of one OS
//! thread, the queue of those ready to run, and the loop that runs them, then
//! sleeps in the reactor until a socket, a timer or another OS thread wakes one.
//!
//! Green threads park and are woken by id. A wake-up that arrives while the
//! thread runs is remembered (`notified`), so a thread that arranges to be woken
//! and then parks never sleeps through it. Parking may also end spuriously, so
//! every parking site in fibra parks in a loop that re-checks its condition.
//!
//! Cancelling a thread (`JoinHandle::cancel`, the end of the runtime) marks it
//! and wakes it; its next park, or the one it is in, unwinds its stack with a
//! [`Cancelled`] panic, so its destructors run. That happens once ([`Cancel`]):
//! the parks made by those destructors are ordinary parks, and complete.
//!
//! A thread inside a [`timeout`](crate::time::timeout) has deadlines
//! (`deadline.rs`): each of its parks arms a timer at the nearest, and a park
//! at or after one unwinds it with an [`Expired`](crate::time::Expired) panic
//! that names the outermost deadline passed.
//!
//! A thread is never handed a second unwind: while its OS thread unwinds
//! (`thread::panicking()`), a park may be in a destructor that runs during the
//! unwind, and an unwind out of it would abort the process. A cancel or a
//! deadline that comes then is *owed*: the thread is woken once the unwind has
//! ended and takes it at that park — or never, if the unwind in flight was its
//! own and ends it (see `interrupt`).
//!
//! Under `panic = "abort"` nothing can unwind, so a cancelled thread is
//! *abandoned* instead: it never runs again, and its stack and everything on it
//! are leaked (no destructor runs), as [`std::mem::forget`] would. Its
//! [`JoinHandle::join`](super::JoinHandle::join) returns `Cancelled` all the same.

//!
//! # Where each part is
//!
//! - `mod.rs` (here): the scheduler's state (its task table, run queue,
//!   timers, reactor and remote side) and the making of threads.
//! - `current.rs`: which runtime runs on this OS thread.
//! - `run_loop.rs`: the loop that runs threads and sleeps in the reactor.
//! - `park.rs`: parking, waking, timers of waits, marks on a thread's stack.
//! - `cancel.rs`: cancellation and `timeout` deadlines: the unwinds owed.
//! - `compact.rs`: when parked threads' stacks are compacted.
//! - `deadlock.rs`: when nothing can ever wake a thread again.
//! - `shutdown.rs`: the end of a runtime.
//! - `describe.rs`: what the runtime tells a dump about its threads.
//!
//! This is the core of the runtime: it imports nothing built on it (joins,
//! scopes, wait lists) nor what observes it (`observe/`: the dump, the stall
//! detector and the metrics, which read it through the [`Monitor`] and
//! [`section`](super::section)).

mod cancel;
mod compact;
mod current;
mod deadlock;
mod describe;
mod park;
mod run_loop;
mod shutdown;

pub use cancel::Cancelled;
pub(in crate::runtime) use current::{Installed, current_monitor};
pub(crate) use current::{
    current, current_for, current_if, current_name, is_current, running_thread, try_current,
    wake_if_local, with_running_locals,
};
pub(crate) use run_loop::SPIN_BEFORE_SLEEP;
pub(in crate::runtime) use shutdown::Orphan;

use super::deadline::Deadlines;
use super::reactor::Reactor;
use super::registry::{Listed, Monitor};
use super::remote::{Outside, Remote, Unparker};
use super::section::DescribeRactors;
use super::task::{Body, Cancel, Code, Slots, State, Task, TaskId};
use super::timers::Timers;
use describe::Trace;
use shutdown::RemoteJoins;
use slab::Slab;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// How many runtimes this process has started (see [`RuntimeId`]).
static STARTED: AtomicU64 = AtomicU64::new(0);

/// Names one runtime among all those the process ever runs (never reused).
/// What a green thread is named by outside the scheduler — a [`TaskId`] in a
/// `JoinHandle` or in a wait list — is kept with its runtime's id, so that it
/// is never resolved in another runtime: a `TaskId` alone (a slot and a
/// serial) names some thread of the next runtime on the same OS thread too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RuntimeId(u64);

impl RuntimeId {
    /// The runtime's number, as [`Handle::id`](super::Handle::id) tells it.
    pub(crate) fn number(self) -> u64 {
        self.0
    }
}

/// What a thread spawned through a [`ThreadBuilder`](super::ThreadBuilder)
/// was given. Kept beside the task table, not in it, so that a thread spawned
/// plainly (the common, fast case) neither carries nor drops any of it.
#[derive(Debug, Default)]
pub(crate) struct Options {
    /// Shared with the stall detector's watchdog, which names the thread from
    /// another OS thread.
    pub(crate) name: Option<Arc<str>>,
    pub(crate) stack_size: Option<usize>,
    /// Keeps the name listed for the stall detector while the thread lives.
    pub(super) listed: Option<Listed>,
    /// The span to run the thread in; moved to its [`Task`] when it is
    /// spawned.
    #[cfg(feature = "tracing")]
    pub(crate) span: Option<tracing::Span>,
}

pub(crate) struct Scheduler {
    id: RuntimeId,
    tasks: RefCell<Slab<Task>>,
    queue: RefCell<VecDeque<TaskId>>,
    running: Cell<Option<TaskId>>,
    timers: RefCell<Timers>,
    pub(crate) reactor: Reactor,
    remote: Arc<Remote>,
    next_serial: Cell<u64>,
    stack_size: usize,
    /// What threads spawned through a `ThreadBuilder` were given, by serial.
    options: RefCell<HashMap<u64, Options>>,
    /// This runtime as other OS threads see it (the stall detector, dumps).
    monitor: Arc<Monitor>,
    /// The switches into green threads made so far (see `Monitor::switches`).
    switches: Cell<u64>,
    /// A recent time, read where the loop reads the clock anyway: what a
    /// thread that parks records as when it parked, without a clock read of
    /// its own (see `tick`).
    clock: Cell<Instant>,
    passes: Cell<u32>,
    /// A thread yielded in this pass of the loop (`yield_now`): the pass
    /// ends with the threads that were ready when it began (see `ROUND`).
    yielded: Cell<bool>,
    /// Set while a dump resumes parked threads to trace them (see
    /// `stack_trace`); what they tell goes into `trace`.
    tracing: Cell<bool>,
    trace: RefCell<Trace>,
    /// Lists the Ractors hosted here, for a dump (a Ractor worker's).
    ractors: Cell<Option<DescribeRactors>>,
    /// How long a thread stays parked before its stack is compacted; `None`:
    /// never (see `Builder::compact_parked_after`).
    compact_after: Option<Duration>,
    /// The parks to compact once they are old enough, oldest first: each
    /// thread, when it parked, and which of its parks that was (`Task::parks`:
    /// an entry for a park the thread has been woken from since is skipped).
    cold: RefCell<VecDeque<(TaskId, Instant, u32)>>,
    /// When a green thread began a spin for a wake that ran its full time,
    /// if one did since the loop last looked: the loop's own spin before it
    /// sleeps counts from there (see `SPIN_BEFORE_SLEEP`). (A thread whose
    /// message came just after it gave up, so that it ran on instead of
    /// parking, leaves this behind: the loop then spins less, or not at all,
    /// once — a sleep sooner, never a wake lost.)
    spun_since: Cell<Option<Instant>>,
    /// The deadlines of the `timeout`s each thread is inside.
    deadlines: RefCell<Deadlines>,
    /// Threads owed an unwind (a cancel, or a deadline that passed) that
    /// their OS thread could not start when they parked because it was
    /// unwinding: woken once it no longer is, to take it then (see
    /// `interrupt`).
    owed: RefCell<HashSet<TaskId>>,
    /// The threads spawned through a `Handle` that have not finished.
    remote_joins: RemoteJoins,
}

impl Scheduler {
    pub(super) fn new(
        stack_size: usize,
        stall_threshold: Option<Duration>,
        to_stderr: bool,
        compact_after: Option<Duration>,
        io_uring: bool,
    ) -> io::Result<Scheduler> {
        let (reactor, waker) = Reactor::new(io_uring)?;
        let remote = Arc::new(Remote::new(waker));
        Ok(Scheduler {
            id: RuntimeId(STARTED.fetch_add(1, Relaxed)),
            monitor: Monitor::register(stall_threshold, to_stderr, Arc::downgrade(&remote)),
            switches: Cell::new(0),
            options: RefCell::new(HashMap::new()),
            clock: Cell::new(Instant::now()),
            passes: Cell::new(0),
            yielded: Cell::new(false),
            tracing: Cell::new(false),
            trace: RefCell::new(Trace::default()),
            ractors: Cell::new(None),
            compact_after,
            cold: RefCell::new(VecDeque::new()),
            spun_since: Cell::new(None),
            deadlines: RefCell::new(Deadlines::default()),
            owed: RefCell::new(HashSet::new()),
            remote_joins: RemoteJoins::default(),
            tasks: RefCell::new(Slab::new()),
            queue: RefCell::new(VecDeque::new()),
            running: Cell::new(None),
            timers: RefCell::new(Timers::default()),
            reactor,
            remote,
            next_serial: Cell::new(0),
            stack_size,
        })
    }

    /// Makes a green thread that will run `body`, ready to run (its stack is
    /// taken when it first runs: see [`Code`]).
    pub(crate) fn spawn(&self, body: Body, options: Option<Options>) -> TaskId {
        let serial = self.next_serial.get() + 1;
        self.next_serial.set(serial);
        let has_options = options.is_some();
        let name = options.as_ref().and_then(|o| o.name.clone());
        #[cfg(feature = "tracing")]
        let mut span = None;
        if let Some(mut options) = options {
            #[cfg(feature = "tracing")]
            {
                span = options.span.take().map(Box::new);
            }
            if let Some(name) = &options.name {
                options.listed = Some(self.monitor.list_name(serial, name.clone()));
            }
            self.options.borrow_mut().insert(serial, options);
        }
        let index = self.tasks.borrow_mut().insert(Task {
            serial,
            compacted: None,
            code: Code::Unstarted(body),
            has_options,
            name,
            state: State::Runnable,
            notified: false,
            cancel: Cancel::No,
            parks: 0,
            lending: 0,
            shielded: 0,
            locals: Slots::default(),
            #[cfg(feature = "tracing")]
            span,
        });
        let id = TaskId { index, serial };
        self.queue.borrow_mut().push_back(id);
        self.monitor.counters.spawns.add(1);
        id
    }

    /// Which runtime this is.
    pub(crate) fn id(&self) -> RuntimeId {
        self.id
    }

    /// The green thread running now.
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    #[track_caller]
    pub(crate) fn running(&self) -> TaskId {
        self.running.get().expect(
            "fibra: this must be called from a green thread, not from the runtime's own loop",
        )
    }

    /// Whether a green thread is running (rather than the scheduler's own loop).
    pub(crate) fn is_running_a_thread(&self) -> bool {
        self.running.get().is_some()
    }

    /// The name `task` was spawned with, if any (and if it is still alive).
    pub(crate) fn name(&self, task: TaskId) -> Option<Arc<str>> {
        self.options.borrow().get(&task.serial)?.name.clone()
    }

    /// Drops what was kept beside the task table for a thread that is gone.
    #[cold]
    fn forget_options(&self, serial: u64) -> Option<Options> {
        self.options.borrow_mut().remove(&serial)
    }

    pub(crate) fn unparker(&self, task: TaskId) -> Unparker {
        Unparker {
            remote: Outside::new(&self.remote),
            task,
        }
    }

    /// This runtime's side that other OS threads reach (what a
    /// [`Handle`](super::Handle) holds).
    pub(super) fn remote(&self) -> &Arc<Remote> {
        &self.remote
    }

    /// The threads spawned through a [`Handle`](super::Handle) that have not
    /// finished (see `RemoteJoins`).
    pub(super) fn remote_joins(&self) -> &RemoteJoins {
        &self.remote_joins
    }

    /// Its threads alive, those ready to run, and its armed timers, now.
    pub(super) fn gauges(&self) -> (u64, u64, u64) {
        (
            self.tasks.borrow().len() as u64,
            self.queue.borrow().len() as u64,
            self.timers.borrow().armed() as u64,
        )
    }

    /// Publishes [`gauges`](Self::gauges) for other OS threads' metrics:
    /// when the loop finds nothing ready (before it may sleep), every
    /// `CLOCK_EVERY` passes of a busy loop (`run_loop.rs`), and at the end.
    pub(super) fn publish_gauges(&self) {
        let (alive, ready, timers) = self.gauges();
        let counters = &self.monitor.counters;
        counters.alive.set(alive);
        counters.ready.set(ready);
        counters.timers_armed.set(timers);
    }

    /// This runtime as other OS threads see it.
    pub(super) fn monitor(&self) -> &Arc<Monitor> {
        &self.monitor
    }

    /// Whether `monitor` is this runtime's.
    pub(super) fn is_monitored_by(&self, monitor: &Arc<Monitor>) -> bool {
        Arc::ptr_eq(&self.monitor, monitor)
    }

    /// Makes dumps list the Ractors `describe` finds here.
    pub(super) fn describe_ractors_with(&self, describe: DescribeRactors) {
        self.ractors.set(Some(describe));
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.remote.end();
        // Closed at shutdown already, unless the runtime unwound before.
        drop(self.remote.close_errands());
        self.monitor.ended();
    }
}

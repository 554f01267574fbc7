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

use super::deadline::{Deadline, Deadlines};
use super::dump::{DescribeRactors, RawThread, Section, ThreadState};
use super::green_local::Slots;
use super::metrics::Counter;
use super::reactor::Reactor;
use super::registry::Monitor;
use super::remote::{Outside, Remote, Unparker};
use super::remote_join::RemoteJoins;
use super::report::{Report, report};
use super::stack_trace;
use super::stall;
use super::task::{Body, Cancel, Code, Options, State, Task, TaskId};
use super::timers::{ArmedTimer, Timers};
use super::wait::WaitReason;
use crate::Fiber;
use crate::fiber::Step;
use crate::stack::{self, GiveBack, Stack};
use slab::Slab;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::panic;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// How long an idle runtime spins for a wake from another OS thread before it
/// sleeps in the poller: about what sleeping and being woken cost (on the
/// 2-core VM of `fibra-bench`, `strace -c` of a Ractor ping-pong averages
/// 5–15 µs per `epoll_wait` that slept and 2–7 µs per eventfd write), so a
/// runtime that then sleeps anyway has spent at most about twice the least it
/// could have (the two-competitive rule for spin-then-block), and one whose
/// peer answers within it — a chatty Ractor's reply, in well under 1 µs — pays
/// no system call at all. Bounded by the next timer; skipped while a thread
/// waits on a socket (the poller is where that wake comes from).
///
/// A green thread that spins for a message first (see `spin.rs`) spends this
/// same budget: the worker spins this long in all, in the thread and then in
/// the loop, before it sleeps.
pub(crate) const SPIN_BEFORE_SLEEP: Duration = Duration::from_micros(20);

/// The most green threads one pass of the loop runs before it looks at the
/// reactor again (tokio's current-thread runtime polls every 61 tasks). With
/// many sockets busy, a long pass lets hundreds of readiness events pile up,
/// and the `epoll_wait` that collects them then touches sockets long gone
/// from the cache: in `fibra-bench echo` (1,000 connections), passes of up to
/// 2,000 threads spent about 5 % of the time in `epoll_wait`, passes of 64
/// about 3.6 % (`perf record -e cpu-clock`), for one more `epoll_wait` every
/// 64 threads run — a few hundredths of a system call per round trip. (End to
/// end that is within the noise of a shared VM: see the reactor's docs.)
const ROUND: usize = 64;

/// How many passes of a busy runtime's loop may go by without a clock read
/// (see `Scheduler::tick`).
const CLOCK_EVERY: u32 = 64;

thread_local! {
    static CURRENT: RefCell<Option<Rc<Scheduler>>> = const { RefCell::new(None) };
}

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

/// The panic payload that unwinds a cancelled green thread
/// ([`JoinHandle::cancel`](super::JoinHandle::cancel), the end of
/// [`run`](super::run)).
///
/// Code that catches panics with [`std::panic::catch_unwind`] inside a green
/// thread — a server isolating its handlers, say — must let this one go on, or
/// the thread would outlive its cancellation; and so the expiry of a
/// [`timeout`](crate::time::timeout) ([`Expired`](crate::time::Expired)), or
/// the work would outlive its limit:
///
/// ```
/// use std::panic::{self, AssertUnwindSafe};
///
/// fn isolate(work: impl FnOnce()) -> Result<(), String> {
///     panic::catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
///         if payload.is::<fibra::runtime::Cancelled>() || payload.is::<fibra::time::Expired>() {
///             panic::resume_unwind(payload);
///         }
///         "the work panicked".to_string()
///     })
/// }
/// # fibra::run(|| assert!(isolate(|| panic!("boom")).is_err()));
/// ```
#[derive(Debug)]
pub struct Cancelled;

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
pub(super) fn current_monitor() -> Option<Arc<Monitor>> {
    CURRENT
        .try_with(|c| Some(c.try_borrow().ok()?.as_ref()?.monitor.clone()))
        .ok()
        .flatten()
}

/// Makes `scheduler` this thread's current one until the guard is dropped.
pub(super) struct Installed(());

impl Installed {
    #[track_caller]
    pub(super) fn new(scheduler: Rc<Scheduler>) -> Installed {
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

/// A frame of a green thread's stack that lends memory there (see
/// `Scheduler::lend`), or that shields the thread from unwinds (see
/// `Scheduler::shield`): one count of its task's, taken back when this is
/// dropped. It names its thread, so it takes back the right one's count
/// wherever it is dropped; it does not keep the runtime alive (a thread
/// abandoned in `block_on` leaks it with its stack).
pub(crate) struct Mark {
    scheduler: std::rc::Weak<Scheduler>,
    task: TaskId,
    count: fn(&mut Task) -> &mut u32,
}

impl Drop for Mark {
    fn drop(&mut self) {
        let Some(scheduler) = self.scheduler.upgrade() else {
            return;
        };
        let mut tasks = scheduler.tasks.borrow_mut();
        if let Some(entry) = tasks
            .get_mut(self.task.index)
            .filter(|t| t.serial == self.task.serial)
        {
            *(self.count)(entry) -= 1;
        }
    }
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
    ) -> io::Result<Scheduler> {
        let (reactor, waker) = Reactor::new()?;
        let remote = Arc::new(Remote::new(waker));
        Ok(Scheduler {
            id: RuntimeId(STARTED.fetch_add(1, Relaxed)),
            monitor: Monitor::register(stall_threshold, to_stderr, Arc::downgrade(&remote)),
            switches: Cell::new(0),
            options: RefCell::new(HashMap::new()),
            clock: Cell::new(Instant::now()),
            passes: Cell::new(0),
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

    /// How long the running green thread may spin for a wake from another OS
    /// thread (see `spin.rs`), at most `limit` from the returned start (the
    /// time now): `None` when it may not, because no green thread runs,
    /// another could run, or a thread waits on a socket (the poller must be
    /// asked) or a timer is due; shortened to the next timer. The clock is
    /// read only once the rest allows a spin: a receiver whose worker has
    /// another thread to run (the peer of a pair placed on one worker, which
    /// it has just woken) gives way without reading it.
    pub(crate) fn idle_spin_budget(&self, limit: Duration) -> Option<(Instant, Duration)> {
        if !self.is_running_a_thread() || self.reactor.has_waiters() || self.has_other_work() {
            return None;
        }
        let now = Instant::now();
        let next_timer = self.timers.borrow().next_timeout(now);
        let budget = next_timer.map_or(limit, |next| next.min(limit));
        (!budget.is_zero()).then_some((now, budget))
    }

    /// Records that the running thread spun for a wake from `since` and none
    /// came: the loop's spin before it sleeps is shortened by as much.
    pub(crate) fn spun_in_vain(&self, since: Instant) {
        self.spun_since.set(Some(since));
    }

    /// Whether this runtime has something to do besides the running thread: a
    /// thread ready to run, a wake from another OS thread not yet taken, or a
    /// dump to answer. (Each a load of a line other cores write only to make
    /// it so: cheap to ask while spinning.)
    pub(crate) fn has_other_work(&self) -> bool {
        !self.queue.borrow().is_empty() || self.remote.pending() || self.monitor.dump_asked()
    }

    /// Whether `unparker` wakes the green thread running now (so that a wait
    /// site may keep the one it has instead of making another).
    pub(crate) fn unparks_running(&self, unparker: &Unparker) -> bool {
        self.running.get() == Some(unparker.task) && Arc::ptr_eq(&unparker.remote, &self.remote)
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

    /// Makes `task` runnable if it is parked; if it is running, its next park
    /// returns at once. A finished task is ignored.
    pub(crate) fn wake(&self, task: TaskId) {
        self.try_wake(task);
    }

    /// [`wake`](Self::wake)s `task`, and says whether it will run again (not
    /// if it is finished or abandoned): the reactor then hands a socket's
    /// readiness to the next waiter instead.
    pub(crate) fn try_wake(&self, task: TaskId) -> bool {
        self.wake_counted(task, &self.monitor.counters.local_wakes)
    }

    /// [`try_wake`](Self::try_wake), counting in `wakes` the wake of a
    /// parked thread.
    #[inline(always)]
    fn wake_counted(&self, task: TaskId, wakes: &Counter) -> bool {
        let mut tasks = self.tasks.borrow_mut();
        let Some(entry) = tasks
            .get_mut(task.index)
            .filter(|t| t.serial == task.serial)
        else {
            return false;
        };
        match entry.state {
            // An abandoned thread (`panic = "abort"`) never runs again.
            _ if cfg!(panic = "abort") && entry.cancel != Cancel::No => return false,
            State::Parked => {
                entry.state = State::Runnable;
                self.queue.borrow_mut().push_back(task);
                wakes.add(1);
            }
            State::Running => entry.notified = true,
            State::Runnable => {}
        }
        true
    }

    /// Parks the running green thread until it is woken; `wait` says what it
    /// waits for, for dumps (a single store: it costs the park nothing more).
    ///
    /// # Panics
    ///
    /// Unwinds with [`Cancelled`] if the thread is cancelled; panics if called
    /// from a fiber that the green thread resumed (it cannot suspend the thread
    /// from another stack).
    pub(crate) fn park_on(&self, wait: WaitReason) {
        self.suspend_running(State::Parked, wait, true);
    }

    /// Parks the running green thread like [`park_on`](Self::park_on), but
    /// never unwinds it: a cancel or a passed deadline stays owed until
    /// [`unwind_if_owed`](Self::unwind_if_owed). For a thread whose stack
    /// work on another OS thread borrows (`hop`), which must not be unwound
    /// before that work has ended.
    pub(crate) fn park_uninterruptible(&self, wait: WaitReason) {
        self.suspend_running(State::Parked, wait, false);
    }

    /// Starts the unwind that the running thread owes, if any (its cancel,
    /// or a passed deadline): what its [`park_uninterruptible`](Self::park_uninterruptible)s held back.
    pub(crate) fn unwind_if_owed(&self) {
        let task = self.running();
        if self.may_owe_unwind(task) {
            self.interrupt(task);
        }
    }

    /// Puts the running green thread at the back of the run queue.
    pub(crate) fn yield_now(&self) {
        self.suspend_running(State::Runnable, WaitReason::Park, true);
    }

    /// Suspends the running thread in `state`. What it waits for (`wait`,
    /// unused for a yield) and since when stay here, on its stack, and are only
    /// read by a dump (which has the thread tell them): parking stores nothing
    /// more than it did without dumps. An `interruptible` park delivers the
    /// unwind the thread owes, and arms its deadline; any other leaves both.
    fn suspend_running(&self, state: State, wait: WaitReason, interruptible: bool) {
        let since = self.clock.get();
        let task = self.running();
        if interruptible && self.may_owe_unwind(task) {
            self.interrupt(task);
        }
        let fiber = {
            let mut tasks = self.tasks.borrow_mut();
            let entry = &mut tasks[task.index];
            if state == State::Parked && std::mem::take(&mut entry.notified) {
                return;
            }
            if interruptible && state == State::Parked && !self.deadlines.borrow().is_empty() {
                self.arm_deadline(task);
            }
            entry.state = state;
            if state == State::Runnable {
                self.queue.borrow_mut().push_back(task);
                self.monitor.counters.yields.add(1);
            } else {
                self.monitor.counters.parks.add(1);
            }
            if state == State::Parked && self.compact_after.is_some() {
                entry.parks = entry.parks.wrapping_add(1);
                // A thread that lends part of its stack (see `lend`) is
                // never compacted: its park is not even queued.
                if entry.lending == 0 {
                    self.queue_cold(task, since, entry.parks);
                }
            }
            entry.code.fiber().clone()
        };
        // tokio's current runtime, entered for a poll under
        // `fibra::tokio::block_on`, is the running thread's alone: off the
        // OS thread while the others run, back when this one runs again (or
        // unwinds).
        #[cfg(feature = "tokio")]
        let _tokio = crate::tokio::leave();
        if fiber.suspend(()).is_err() {
            self.tasks.borrow_mut()[task.index].state = State::Running;
            panic!(
                "fibra: a green thread can only block (park, sleep, IO, join, ...) on its own stack, \
                 not from inside a fiber it resumed"
            );
        }
        // Resumed by a dump to say where it waits, not woken: trace this
        // stack, from here, and suspend again.
        while self.tracing.get() {
            self.tell_dump(&fiber, wait, since);
            // Cannot fail: it did just above, on this same stack.
            let _ = fiber.suspend(());
        }
        drop(fiber);
        if interruptible && self.may_owe_unwind(task) {
            self.interrupt(task);
        }
    }

    /// Whether the running `task` may owe an unwind: it was cancelled, or it
    /// is inside a `timeout` (whose deadline may have passed). The fast path
    /// of every park: two flags.
    #[inline(always)]
    fn may_owe_unwind(&self, task: TaskId) -> bool {
        (self.tasks.borrow()[task.index].cancel == Cancel::Requested && !cfg!(panic = "abort"))
            || !self.deadlines.borrow().is_empty()
    }

    /// Starts the unwind the running `task` owes, if any: its cancel, else
    /// the expiry of the outermost of its deadlines that has passed.
    ///
    /// Not while its OS thread is unwinding: a park made then may be in a
    /// destructor that runs during an unwind, and an unwind out of it would
    /// abort the process ("panic in a destructor during cleanup"). A thread is
    /// never handed a second unwind; the destructors that run during one may
    /// wait and complete. std counts panics per OS thread, not per stack, so
    /// `thread::panicking()` is also true while *another* green thread of
    /// this runtime is parked in the middle of its own unwind (or while the
    /// OS thread that called `run` unwinds): fibra cannot tell those apart
    /// (std keeps the count private), so such a thread waits for its unwind
    /// too. Either way the thread is listed in `owed` and woken once its OS
    /// thread no longer unwinds (`wake_owed`), and its unwind starts at that
    /// park — or never, if the unwind in flight was its own and ends it.
    ///
    /// Nor while the thread is shielded (`shield`): its cancel or deadline
    /// stays as it is, and is delivered at its first park after.
    #[cold]
    #[inline(never)]
    fn interrupt(&self, task: TaskId) {
        if self.tasks.borrow()[task.index].shielded > 0 {
            return;
        }
        let cancelled =
            self.tasks.borrow()[task.index].cancel == Cancel::Requested && !cfg!(panic = "abort");
        let expired = if cancelled {
            None
        } else {
            match self.deadlines.borrow().expired(task, Instant::now) {
                Some(expired) => Some(expired),
                None => return,
            }
        };
        if std::thread::panicking() {
            self.owed.borrow_mut().insert(task);
            return;
        }
        match expired {
            None => self.deliver_cancel(task),
            Some(expired) => panic::resume_unwind(Box::new(expired)),
        }
    }

    /// Wakes the threads owed an unwind that they could not take (see
    /// `interrupt`), once their OS thread no longer unwinds.
    #[cold]
    fn wake_owed(&self) {
        if std::thread::panicking() {
            return;
        }
        let owed = std::mem::take(&mut *self.owed.borrow_mut());
        owed.into_iter().for_each(|task| self.wake(task));
    }

    /// Puts `at` in force as the running thread's innermost deadline (see
    /// [`time::timeout`](crate::time::timeout)), until the returned guard is
    /// dropped. `None` where no deadline can be enforced: under `panic =
    /// "abort"` (nothing can unwind), and on the stack of a fiber that the
    /// thread resumed (nothing there can park).
    pub(crate) fn start_deadline(&self, at: Instant) -> Option<Deadline> {
        if cfg!(panic = "abort") {
            return None;
        }
        if !self.on_own_stack() {
            return None;
        }
        let task = self.running();
        let id = self.deadlines.borrow_mut().push(task, at);
        Some(Deadline::new(task, id))
    }

    /// Whether the caller runs on the running green thread's own stack, not
    /// on the stack of a fiber that the thread resumed (nothing there can
    /// park, and that fiber may be dropped or leaked while the thread goes
    /// on).
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    pub(crate) fn on_own_stack(&self) -> bool {
        let task = self.running();
        // The address of a local says which stack this code runs on (this
        // frame is on the caller's stack).
        let local = 0u8;
        let here = std::ptr::from_ref(&local) as usize;
        self.tasks.borrow()[task.index]
            .code
            .fiber()
            .stack_range()
            .contains(&here)
    }

    /// Whether the caller can park the running green thread: a green thread
    /// runs, and this code runs on its own stack.
    pub(crate) fn can_park_here(&self) -> bool {
        self.is_running_a_thread() && self.on_own_stack()
    }

    /// Takes deadline `id` of `task` out of force.
    pub(super) fn end_deadline(&self, task: TaskId, id: u64) {
        let stale = self.deadlines.borrow_mut().remove(task, id);
        if let Some(key) = stale {
            self.timers.borrow_mut().remove(key);
        }
    }

    /// Arms a wake-up of the running `task`, about to park, at its nearest
    /// deadline, unless one is armed for it already (see `Deadlines::arm`).
    /// The one place a deadline becomes a timer.
    #[cold]
    fn arm_deadline(&self, task: TaskId) {
        let stale = self
            .deadlines
            .borrow_mut()
            .arm(task, |at| self.timers.borrow_mut().insert(at, task));
        if let Some(key) = stale {
            self.timers.borrow_mut().remove(key);
        }
    }

    /// Tells a dump, which resumed this suspended thread to ask, what it waits
    /// for, since when, and where (its stack, traced from here).
    #[cold]
    #[inline(never)]
    fn tell_dump(&self, fiber: &Fiber, wait: WaitReason, since: Instant) {
        let mut trace = self.trace.borrow_mut();
        trace.parked = Some((wait, since));
        stack_trace::capture(fiber.stack_range(), &mut trace.stack);
    }

    /// Starts the running thread's `Cancelled` unwind (once: see [`Cancel`]).
    fn deliver_cancel(&self, task: TaskId) -> ! {
        self.tasks.borrow_mut()[task.index].cancel = Cancel::Delivered;
        panic::resume_unwind(Box::new(Cancelled));
    }

    /// Parks the running green thread until `deadline`.
    pub(crate) fn sleep_until(&self, deadline: Instant) {
        if Instant::now() >= deadline {
            return;
        }
        let _timer = self.arm_timer(deadline);
        // The timer fires only once `deadline` has passed (`expire` compares
        // with a clock read no later than this one): one timer serves every
        // spurious wake-up before it.
        while Instant::now() < deadline {
            self.park_on(WaitReason::Sleep { deadline });
        }
    }

    /// Wakes the running green thread at `deadline` (or soon after), unless
    /// the returned timer is dropped before: a wait with a time limit arms
    /// one before it parks and keeps it until it ends, so that the timer goes
    /// with the wait on every path out of it (see `timers`).
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    pub(crate) fn arm_timer(&self, deadline: Instant) -> ArmedTimer<'_> {
        let key = self.timers.borrow_mut().insert(deadline, self.running());
        ArmedTimer {
            timers: &self.timers,
            key,
        }
    }

    /// How many entries the timer heap holds, armed or disarmed (see
    /// `runtime::timer_entries`).
    pub(crate) fn timer_entries(&self) -> usize {
        self.timers.borrow().entries()
    }

    /// Cancels `task`: it unwinds the next time it runs (under `panic =
    /// "abort"`, it is abandoned: see the module docs). A finished task, or one
    /// cancelled before, is ignored. Returns whether the task is gone now (only
    /// an abandoned one is; one that unwinds goes when it has).
    pub(crate) fn cancel(&self, task: TaskId) -> bool {
        let mut tasks = self.tasks.borrow_mut();
        let Some(entry) = tasks
            .get_mut(task.index)
            .filter(|t| t.serial == task.serial && t.cancel == Cancel::No)
        else {
            return false;
        };
        entry.cancel = Cancel::Requested;
        if cfg!(panic = "abort") {
            // A running thread is abandoned where it next parks (`wake` then
            // ignores it); any other at once.
            if entry.state == State::Running {
                return false;
            }
            let abandoned = tasks.remove(task.index);
            drop(tasks);
            // Its waits will never end: their timers go now.
            self.timers.borrow_mut().remove_all_of(task);
            if abandoned.has_options {
                self.forget_options(abandoned.serial);
            }
            abandon(abandoned);
            return true;
        }
        drop(tasks);
        self.wake(task);
        false
    }

    /// Runs green threads until `finished` says so, sleeping in the reactor when
    /// none is ready.
    ///
    /// # Errors
    ///
    /// [`Deadlock`] if every green thread is parked and nothing (no timer, no
    /// socket, no other OS thread) can ever wake one.
    pub(super) fn run_until(&self, finished: impl Fn() -> bool) -> Result<(), Deadlock> {
        let mut woken = Vec::new();
        loop {
            // Run what is ready, but poll between rounds so that a thread that
            // keeps yielding does not starve sockets and timers.
            let round = self.queue.borrow().len().min(ROUND);
            for _ in 0..round {
                let Some(task) = self.queue.borrow_mut().pop_front() else {
                    break;
                };
                self.run_task(task);
            }
            if !self.owed.borrow().is_empty() {
                self.wake_owed();
            }
            self.monitor.in_loop();
            if self.monitor.stalled.load(Relaxed) {
                stall::ended(&self.monitor);
            }
            self.tick();
            if finished() {
                return Ok(());
            }
            if let Some(after) = self.compact_after {
                self.compact_cold(self.clock.get(), after);
            }
            self.take_remote_wakes(&mut woken);
            let mut timeout = if !self.queue.borrow().is_empty() {
                // Threads are ready: only a look at the sockets (which
                // `wait_for_events` skips when no thread waits on one).
                Some(Duration::ZERO)
            } else {
                let now = Instant::now();
                self.clock.set(now);
                self.publish_gauges();
                let next = self.timers.borrow().next_timeout(now);
                if next.is_none()
                    && !self.reactor.has_waiters()
                    && self.nobody_else_can_wake(&mut woken)
                {
                    return Err(Deadlock {
                        parked: self.tasks.borrow().len(),
                    });
                }
                // The check above may have moved a wake left by a dropped
                // Unparker into the run queue: then do not sleep.
                if self.queue.borrow().is_empty() {
                    self.until_next_compaction(now, next)
                } else {
                    Some(Duration::ZERO)
                }
            };
            // A dump asked since the last time round is answered before the
            // runtime sleeps: its wake may already have been taken above.
            if self.monitor.dump_asked() {
                self.answer_dumps();
                // Answering may have made a thread ready (a Ractor worker
                // drops on one what its census took): then do not sleep.
                if !self.queue.borrow().is_empty() {
                    timeout = Some(Duration::ZERO);
                }
            }
            let woke = self.wait_for_events(timeout);
            self.take_remote_wakes(&mut woken);
            let timers = !self.timers.borrow().is_empty();
            if woke.is_some() || timers {
                let now = woke.unwrap_or_else(Instant::now);
                self.clock.set(now);
                if timers {
                    self.timers.borrow_mut().expire(now, |task| self.wake(task));
                }
            }
        }
    }

    /// Compacts the stacks of the threads parked for `after` or longer (see
    /// `Builder::compact_parked_after`): those still parked in the park that
    /// queued them, not already compacted.
    #[cold]
    fn compact_cold(&self, now: Instant, after: Duration) {
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
    fn queue_cold(&self, task: TaskId, since: Instant, park: u32) {
        self.cold.borrow_mut().push_back((task, since, park));
    }

    /// Marks the running green thread as lending memory of its stack to
    /// something that may read or write it while the thread is parked (a
    /// future pinned there by `block_on`, which its waker's source may touch
    /// from another OS thread), until the guard is dropped: meanwhile none of
    /// its parks is compacted. Frames nest; each counts.
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    pub(crate) fn lend(self: &Rc<Self>) -> Mark {
        self.mark(|task| &mut task.lending)
    }

    /// Shields the running green thread from unwinds until the guard is
    /// dropped: meanwhile its parks deliver no cancel and no expired
    /// deadline (they stay owed, for its first park after). For a wait that
    /// must complete whatever comes — `scope`'s for its threads, once it
    /// has caught an unwind that it will resume when they have ended.
    ///
    /// # Panics
    ///
    /// If called from the runtime's own loop rather than a green thread.
    pub(crate) fn shield(self: &Rc<Self>) -> Mark {
        self.mark(|task| &mut task.shielded)
    }

    /// Counts one more of `count` on the running thread, until the guard is
    /// dropped.
    fn mark(self: &Rc<Self>, count: fn(&mut Task) -> &mut u32) -> Mark {
        let task = self.running();
        *count(&mut self.tasks.borrow_mut()[task.index]) += 1;
        Mark {
            scheduler: Rc::downgrade(self),
            task,
            count,
        }
    }

    /// The poller's timeout `next` (the next timer's), shortened to when the
    /// oldest park waiting to be compacted is due, so that an idle runtime
    /// compacts its parked threads on time.
    fn until_next_compaction(&self, now: Instant, next: Option<Duration>) -> Option<Duration> {
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

    /// Polls the reactor for ready sockets, sleeping up to `timeout` if it is
    /// not zero. A runtime with no socket to wait for first spins a little for
    /// a wake from another OS thread (a message between Ractors), which is far
    /// cheaper than sleeping and being woken; and it makes no `epoll_wait`
    /// that cannot sleep (an `epoll_wait` for nothing would be a system call
    /// per turn of a busy loop). Returns when it woke, if it slept: the
    /// clock read that measures the sleep serves the loop's clock too.
    fn wait_for_events(&self, timeout: Option<Duration>) -> Option<Instant> {
        let blocking = timeout != Some(Duration::ZERO);
        let budget = self.spun_since.take().map_or(SPIN_BEFORE_SLEEP, |since| {
            SPIN_BEFORE_SLEEP.saturating_sub(since.elapsed())
        });
        let spin = timeout.map_or(budget, |t| t.min(budget));
        if blocking && !self.reactor.has_waiters() && self.remote.spin(spin) {
            return None;
        }
        // With no timer and no socket, the loop found an `Unparker` held
        // (else it would have reported a deadlock): then the drop of the last
        // one must end the sleep, so that the loop reports it (`Outside`).
        let until_unheld = timeout.is_none() && !self.reactor.has_waiters();
        let asleep = blocking && self.remote.prepare_to_sleep(until_unheld);
        if !asleep && !self.reactor.has_waiters() {
            // Not sleeping (threads are ready, or a wake came just before),
            // and no thread waits on a socket: nothing for epoll to say.
            return None;
        }
        let timeout = if asleep {
            timeout
        } else {
            Some(Duration::ZERO)
        };
        let counters = &self.monitor.counters;
        let slept_at = asleep.then(Instant::now);
        self.reactor
            .poll(timeout, |task| {
                counters.reactor_events.add(1);
                self.try_wake(task)
            })
            .unwrap_or_else(|err| {
                panic!("fibra: the IO reactor failed: {err}");
            });
        slept_at.map(|slept_at| {
            let woke = Instant::now();
            let slept = woke.saturating_duration_since(slept_at);
            counters
                .idle_nanos
                .add(u64::try_from(slept.as_nanos()).unwrap_or(u64::MAX));
            self.remote.woke_up();
            woke
        })
    }

    /// Counts a pass of the loop, and keeps `clock` within
    /// [`CLOCK_EVERY`] passes of the time: a runtime reads the clock anyway
    /// before it sleeps, after it wakes and when it has timers, so only one
    /// that is never idle and has no timer needs this.
    #[inline(always)]
    fn tick(&self) {
        let passes = self.passes.get().wrapping_add(1);
        self.passes.set(passes);
        self.monitor.counters.passes.add(1);
        if passes.is_multiple_of(CLOCK_EVERY) {
            self.clock.set(Instant::now());
            self.publish_gauges();
        }
    }

    /// Wakes the threads that other OS threads unparked, and runs the
    /// errands they queued (see `Remote::send_errand`).
    fn take_remote_wakes(&self, buffer: &mut Vec<TaskId>) {
        self.remote.take(buffer);
        let mut errands = false;
        buffer.drain(..).for_each(|task| {
            if task == TaskId::ERRANDS {
                errands = true;
            } else {
                self.wake_counted(task, &self.monitor.counters.remote_wakes);
            }
        });
        if errands {
            self.run_errands();
        }
    }

    /// Runs the errands other OS threads queued, here in the loop.
    #[cold]
    fn run_errands(&self) {
        self.remote
            .take_errands()
            .into_iter()
            .for_each(|errand| errand(self));
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

    /// Whether no `Unparker` is left outside and none of those dropped left a
    /// wake-up behind (then, with no timer or socket to wait for, no thread can
    /// ever run again).
    /// (A runtime asleep when the last `Unparker` goes is woken to ask
    /// again: see `Outside`.)
    fn nobody_else_can_wake(&self, buffer: &mut Vec<TaskId>) -> bool {
        if self.remote.held_outside() {
            return false;
        }
        // Every unpark the dropped `Unparker`s made is visible now.
        self.take_remote_wakes(buffer);
        self.queue.borrow().is_empty()
    }

    fn run_task(&self, task: TaskId) {
        // The thread's span, if it has one, out of the task while the thread
        // runs, and entered around the switch into it: the one place a
        // thread is switched into to run its code.
        #[cfg(feature = "tracing")]
        let span: Option<Box<tracing::Span>>;
        let fiber = {
            let mut tasks = self.tasks.borrow_mut();
            let entry = match tasks.get_mut(task.index) {
                Some(entry) if entry.serial == task.serial && entry.state == State::Runnable => {
                    entry
                }
                _ => return,
            };
            if entry.compacted.is_some() {
                // Its stack back in place before anything touches its fiber.
                entry.compacted = None;
            }
            entry.state = State::Running;
            #[cfg(feature = "tracing")]
            {
                span = entry.span.take();
            }
            let fiber = match &mut entry.code {
                Code::Started(fiber) => fiber.clone(),
                Code::Unstarted(body) => {
                    // A closure that captures nothing takes no allocation to
                    // box: this placeholder is free.
                    let body = std::mem::replace(body, Box::new(|_| {}));
                    let own_size = if entry.has_options {
                        self.options.borrow()[&task.serial].stack_size
                    } else {
                        None
                    };
                    let size = own_size.unwrap_or(self.stack_size);
                    match Stack::new(size) {
                        Ok(stack) => {
                            let fiber = Fiber::on_stack(stack, move |_, ()| body(Ok(())));
                            let fiber = Rc::new(fiber);
                            entry.code = Code::Started(fiber.clone());
                            fiber
                        }
                        Err(err) => {
                            let gone = tasks.remove(task.index);
                            drop(tasks);
                            let options = if gone.has_options {
                                self.forget_options(gone.serial)
                            } else {
                                None
                            };
                            let err = match options.and_then(|o| o.name) {
                                Some(name) => io::Error::new(
                                    err.kind(),
                                    format!("{err} (green thread '{name}')"),
                                ),
                                None => err,
                            };
                            body(Err(err));
                            return;
                        }
                    }
                }
            };
            // Its name lives in the task until the thread has ended.
            stack::switched_into(task.serial, entry.name.as_ref(), fiber.stack_range().end);
            fiber
        };
        self.running.set(Some(task));
        let switches = self.switches.get() + 1;
        self.switches.set(switches);
        self.monitor.switched_into(switches, task.serial);
        let step = {
            #[cfg(feature = "tracing")]
            let _entered = span.as_deref().map(tracing::Span::enter);
            fiber.resume(())
        };
        stack::switched_out();
        self.running.set(None);
        // A thread that parked or yielded gets its span back; that of one
        // that has ended is dropped here, which closes it.
        #[cfg(feature = "tracing")]
        if let (Ok(Step::Yield(())), Some(span)) = (&step, span) {
            self.tasks.borrow_mut()[task.index].span = Some(span);
        }
        match step {
            // Parked or yielded: `suspend_running` recorded which.
            Ok(Step::Yield(())) => {}
            Ok(Step::Return(())) => {
                let finished = self.tasks.borrow_mut().remove(task.index);
                if finished.has_options {
                    self.forget_options(finished.serial);
                }
                drop(finished);
            }
            Err(err) => unreachable!("fibra: a runnable green thread could not be resumed: {err}"),
        }
    }

    /// Ends the runtime: from now on it takes no errand from another OS
    /// thread (a [`Handle::spawn`](super::Handle::spawn) is refused, and
    /// those queued are dropped, which their joiners see); then it ends every
    /// green thread (`end_threads`); then those joined through a
    /// [`Handle`](super::Handle) that were abandoned are reported cancelled.
    pub(super) fn shutdown(&self) {
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

impl Scheduler {
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
    /// [`CLOCK_EVERY`] passes of a busy loop, and at the end.
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

    /// Answers the dumps other OS threads asked this runtime for, now that no
    /// green thread runs.
    #[cold]
    fn answer_dumps(&self) {
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
    pub(super) fn section(&self) -> Section {
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
}

/// What a suspended thread, resumed by a dump, tells of itself.
#[derive(Default)]
struct Trace {
    /// What it waits for and since when (its `suspend_running`'s arguments).
    parked: Option<(WaitReason, Instant)>,
    /// Its stack's return addresses.
    stack: Vec<usize>,
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.remote.end();
        // Closed at shutdown already, unless the runtime unwound before.
        drop(self.remote.close_errands());
        self.monitor.ended();
    }
}

/// Leaves a green thread where it is, for good: its fiber (stack and all) is
/// leaked rather than unwound, so nothing on it runs again — for `panic =
/// "abort"`, where nothing can unwind, and for threads that cannot end at
/// shutdown. A thread that never started just drops its closure.
fn abandon(task: Task) {
    // Its green-local values are its too: leaked with its stack.
    std::mem::forget(task.locals);
    match task.code {
        Code::Started(fiber) => std::mem::forget(fiber),
        Code::Unstarted(body) => drop(body),
    }
}

/// Every green thread is parked and nothing can wake one.
#[derive(Debug)]
pub(super) struct Deadlock {
    pub(super) parked: usize,
}

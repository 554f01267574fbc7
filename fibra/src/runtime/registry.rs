//! The runtimes alive in this process, and what other OS threads may see of
//! each: the stall detector's watchdog reads it, and [`dump`](super::dump)
//! walks it.
//!
//! Each runtime publishes a [`Monitor`] when it starts and marks it ended when
//! its `run` ends; the list holds weak references, so a runtime that ends
//! leaves only a dead or ended entry, skipped by every walk and dropped the
//! next time a runtime starts (even if something, such as a green thread
//! abandoned at the end, still holds its scheduler).
//!
//! The [`Monitor`] is the seam between a runtime's core and what observes it
//! (`observe/`): the runtime writes it (counters, its switch count, the end
//! of a stall the watchdog saw) and answers the dumps left in it; the
//! observers read it from their own OS threads, and the core calls none of
//! their code.

use super::counters::Counters;
use super::os_thread::OsThread;
use super::remote::Remote;
use super::report::{Report, report};
use super::section::Section;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError, Weak};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

static RUNTIMES: Mutex<Vec<Weak<Monitor>>> = Mutex::new(Vec::new());

/// What other OS threads may read of one runtime. Its owner writes the two
/// counters with relaxed stores when it switches into a green thread (no clock
/// is read there: the watchdog samples them, see `stall`).
pub(crate) struct Monitor {
    /// The OS thread the runtime runs on.
    pub(super) thread: Thread,
    /// The same, as the OS names it: what the watchdog asks what the thread
    /// is doing (see `os_thread.rs`).
    os_thread: OsThread,
    /// Whether the runtime's reports go to stderr (see `report`).
    pub(super) to_stderr: bool,
    /// Its [metrics](super::metrics()), written by its own OS thread.
    pub(super) counters: Counters,
    /// When it started (its busy time is the rest of the time since).
    pub(super) started: Instant,
    /// Counts the Ractors placed on it, if it is a Ractor worker.
    ractors: OnceLock<Box<dyn Fn() -> usize + Send + Sync>>,
    /// How many times the runtime has resumed a green thread: the switch
    /// epoch. Unchanged between two samples while a thread is running means
    /// that thread held the OS thread all along.
    pub(super) switches: AtomicU64,
    /// The serial of the green thread the runtime last switched into, or 0
    /// while it runs (or sleeps in) its own loop.
    pub(super) running: AtomicU64,
    /// One more than the switch count at which a green thread of this
    /// runtime last panicked (0: none did), written by the panic hook (see
    /// `stall::hook_panics`): the stall detector does not count the rest of
    /// that run, the backtrace and the unwind.
    pub(super) panicked_in: AtomicU64,
    /// How long a thread may run before the stall line; `None`: never.
    pub(super) stall_threshold: Option<Duration>,
    /// Set by the watchdog when it reports a stall, so that the runtime,
    /// when the thread comes back to it, reports the end.
    pub(super) stalled: AtomicBool,
    /// Who stalled ("green thread … on OS thread …") and when it began (as
    /// the watchdog saw it), for the line at its end.
    pub(super) stall_since: Mutex<Option<(String, Instant)>>,
    /// The names of the runtime's named threads alive, by serial, for the
    /// watchdog (the task table is the runtime's own). Unnamed threads are not
    /// listed, so spawning one costs nothing here.
    names: Mutex<HashMap<u64, Arc<str>>>,
    /// Wakes the runtime, to ask it for its part of a dump. Weak: the
    /// runtime's deadlock check counts the strong references to it.
    pub(super) remote: Weak<Remote>,
    /// Dumps waiting for this runtime to describe itself, and whether there
    /// are any (read once per pass of its loop).
    dumps: Mutex<Vec<Arc<Request>>>,
    dump_asked: AtomicBool,
    /// Set when the runtime ends: a dump skips it.
    ended: AtomicBool,
}

impl Monitor {
    /// A monitor for a runtime starting on this OS thread, listed until it is
    /// dropped.
    pub(super) fn register(
        stall_threshold: Option<Duration>,
        to_stderr: bool,
        remote: Weak<Remote>,
    ) -> Arc<Monitor> {
        let monitor = Arc::new(Monitor {
            thread: thread::current(),
            os_thread: OsThread::current(),
            to_stderr,
            counters: Counters::default(),
            started: Instant::now(),
            ractors: OnceLock::new(),
            switches: AtomicU64::new(0),
            running: AtomicU64::new(0),
            panicked_in: AtomicU64::new(0),
            stall_threshold,
            stalled: AtomicBool::new(false),
            stall_since: Mutex::new(None),
            names: Mutex::new(HashMap::new()),
            remote,
            dumps: Mutex::new(Vec::new()),
            dump_asked: AtomicBool::new(false),
            ended: AtomicBool::new(false),
        });
        let mut runtimes = lock(&RUNTIMES);
        runtimes.retain(|r| r.upgrade().is_some_and(|m| !m.has_ended()));
        runtimes.push(Arc::downgrade(&monitor));
        drop(runtimes);
        monitor
    }

    /// Records the switch into green thread `serial`, the `switches`-th.
    #[inline(always)]
    pub(super) fn switched_into(&self, switches: u64, serial: u64) {
        self.switches.store(switches, Relaxed);
        self.running.store(serial, Relaxed);
    }

    /// Records that the runtime is in its own loop, between rounds of threads.
    #[inline(always)]
    pub(super) fn in_loop(&self) {
        self.running.store(0, Relaxed);
    }

    /// The green thread running now, if one is.
    pub(super) fn running_thread(&self) -> Option<u64> {
        Some(self.running.load(Relaxed)).filter(|&serial| serial != 0)
    }

    /// How long the running thread has held the OS thread, as far as the
    /// stall detector knows (zero when it has reported nothing).
    pub(super) fn held_for(&self) -> Duration {
        lock(&self.stall_since)
            .as_ref()
            .map_or(Duration::ZERO, |(_, since)| since.elapsed())
    }

    /// Reports the end of the stall the watchdog reported on this runtime
    /// (see `stall.rs`); called by the runtime, on its own OS thread, when a
    /// thread comes back to it and `stalled` is set.
    #[cold]
    pub(super) fn report_stall_end(&self) {
        if !self.stalled.swap(false, Acquire) {
            return;
        }
        if let Some((who, since)) = lock(&self.stall_since).take() {
            let line = format!(
                "fibra: {who} parked or yielded after {} ms",
                since.elapsed().as_millis()
            );
            report(Report::StallEnded, self.to_stderr, &line);
        }
    }

    /// Leaves `request` for the runtime to answer at its next pass through its
    /// loop (the caller then wakes it).
    pub(super) fn ask_dump(&self, request: Arc<Request>) {
        let mut dumps = lock(&self.dumps);
        // Under the lock that `ended` takes after it sets `ended`: a runtime
        // that ended since the dump looked is not left a request it would
        // never answer.
        if self.has_ended() {
            drop(dumps);
            request.drop_unanswered();
            return;
        }
        dumps.push(request);
        self.dump_asked.store(true, Release);
    }

    /// Whether a dump waits for this runtime (one load, once per pass of its
    /// loop).
    #[inline(always)]
    pub(super) fn dump_asked(&self) -> bool {
        self.dump_asked.load(Acquire)
    }

    /// The dumps to answer now: those not given up on.
    pub(super) fn take_dump_requests(&self) -> Vec<Arc<Request>> {
        self.dump_asked.store(false, Relaxed);
        let mut requests = std::mem::take(&mut *lock(&self.dumps));
        requests.retain(|r| r.start());
        requests
    }

    /// Marks the runtime ended, and frees the dumps still waiting for it.
    /// Called when its `run` ends, and again (doing nothing more) when its
    /// scheduler is dropped.
    pub(super) fn ended(&self) {
        self.ended.store(true, Release);
        std::mem::take(&mut *lock(&self.dumps))
            .into_iter()
            .for_each(|r| r.drop_unanswered());
    }

    pub(super) fn has_ended(&self) -> bool {
        self.ended.load(Acquire)
    }

    /// Lists `name` as thread `serial`'s until the returned guard is dropped
    /// (with the thread).
    pub(super) fn list_name(self: &Arc<Monitor>, serial: u64, name: Arc<str>) -> Listed {
        lock(&self.names).insert(serial, name);
        Listed {
            monitor: self.clone(),
            serial,
        }
    }

    /// The name of thread `serial`, if it has one and is alive.
    pub(super) fn name_of(&self, serial: u64) -> Option<Arc<str>> {
        lock(&self.names).get(&serial).cloned()
    }

    /// What the runtime's OS thread is doing now ("blocked in futex (a std
    /// lock, condvar or channel?)"), where the OS can tell.
    pub(super) fn os_thread_doing(&self) -> Option<String> {
        self.os_thread.doing()
    }

    /// Makes the metrics count the Ractors on this runtime with `count` (a
    /// Ractor worker's, once).
    pub(super) fn count_ractors_with(&self, count: Box<dyn Fn() -> usize + Send + Sync>) {
        let _ = self.ractors.set(count);
    }

    /// The Ractors placed on this runtime and not finished.
    pub(super) fn ractors_alive(&self) -> u64 {
        self.ractors.get().map_or(0, |count| count() as u64)
    }

    /// "OS thread 'name'", or "OS thread ThreadId(n)" for an unnamed one.
    pub(super) fn os_thread(&self) -> String {
        match self.thread.name() {
            Some(name) => format!("OS thread '{name}'"),
            None => format!("OS thread {:?}", self.thread.id()),
        }
    }

    /// "green thread 'name' (#serial)", or "green thread #serial".
    pub(super) fn green_thread(&self, serial: u64) -> String {
        match self.name_of(serial) {
            Some(name) => format!("green thread '{name}' (#{serial})"),
            None => format!("green thread #{serial}"),
        }
    }
}

/// Keeps a named thread's name listed in its runtime's [`Monitor`].
#[derive(Debug)]
pub(crate) struct Listed {
    monitor: Arc<Monitor>,
    serial: u64,
}

impl Drop for Listed {
    fn drop(&mut self) {
        lock(&self.monitor.names).remove(&self.serial);
    }
}

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor")
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}

/// A dump's request to one runtime, and its answer.
/// (The dump makes it and waits on it: `dump::ask`.)
pub(crate) struct Request {
    pub(super) answer: Mutex<Answer>,
    pub(super) changed: Condvar,
}

pub(super) enum Answer {
    Asked,
    /// The runtime has begun to describe itself.
    Started,
    Done(Arc<Section>),
    /// The dump stopped waiting (it reported the runtime busy), or the
    /// runtime ended.
    Gone,
}

impl Request {
    /// Takes the request up, unless the dump gave up on it; the runtime then
    /// owes it an [`answer`](Request::answer).
    pub(crate) fn start(&self) -> bool {
        let mut answer = lock(&self.answer);
        if matches!(*answer, Answer::Asked) {
            *answer = Answer::Started;
            true
        } else {
            false
        }
    }

    pub(crate) fn answer(&self, section: Arc<Section>) {
        *lock(&self.answer) = Answer::Done(section);
        self.changed.notify_all();
    }

    /// The runtime has ended without answering.
    pub(crate) fn drop_unanswered(&self) {
        *lock(&self.answer) = Answer::Gone;
        self.changed.notify_all();
    }
}

/// The runtimes alive now, in the order they started. A runtime that has
/// ended is not one, even while something keeps its monitor.
pub(super) fn runtimes() -> Vec<Arc<Monitor>> {
    lock(&RUNTIMES)
        .iter()
        .filter_map(Weak::upgrade)
        .filter(|monitor| !monitor.has_ended())
        .collect()
}

/// Locks `mutex`, ignoring poisoning: what these locks guard stays consistent
/// (each critical section is a single insert, remove or copy).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

//! What a runtime has done and holds, as counters that any OS thread may read
//! while it runs: [`metrics`] for the calling runtime's, [`Handle::metrics`]
//! for another's.
//!
//! Each counter (`counters.rs`, in the runtime's core) has one writer, the
//! runtime's own OS thread, which adds to it with a relaxed load and store
//! (no read-modify-write, no fence); readers load it relaxed. So a count
//! costs the path that makes it a load and a store, and a reader sees each
//! counter as it was a moment ago — counters read together are not one
//! instant's. The gauges (threads alive, ready,
//! parked; timers armed) are exact for the runtime's own threads; the
//! runtime publishes them for other OS threads when its loop finds nothing
//! ready to run (before it may sleep), every 64 passes of a busy loop, and
//! when it ends, so a reader there sees them as of then.

use crate::runtime::handle::Handle;
use crate::runtime::registry::Monitor;
use crate::runtime::scheduler;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// A snapshot of a runtime's counters, from [`metrics`] or
/// [`Handle::metrics`]. Counts are totals since the runtime started; the
/// gauges (`*_alive`, `*_ready`, `*_parked`, `timers_armed`, `blocking_*`)
/// are what is so now.
///
/// Print them every second from an OS thread of its own (a green thread
/// would do as well, sleeping with [`time::sleep`](crate::time::sleep)):
///
/// ```
/// use std::time::Duration;
///
/// fibra::run(|| {
///     let runtime = fibra::runtime::handle();
///     let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
///     let stopped = stop.clone();
///     let printer = std::thread::spawn(move || {
///         while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
///             let m = runtime.metrics();
///             println!(
///                 "alive {} ready {} parked {} | spawns {} parks {} wakes {}+{} | busy {:?} idle {:?}",
///                 m.green_threads_alive, m.green_threads_ready, m.green_threads_parked,
///                 m.spawns, m.parks, m.local_wakes, m.remote_wakes, m.busy, m.idle,
///             );
///             std::thread::sleep(Duration::from_secs(1));
///         }
///     });
///     for _ in 0..3 {
///         fibra::spawn(|| fibra::time::sleep(Duration::from_millis(10)));
///     }
///     fibra::time::sleep(Duration::from_millis(50));
///     stop.store(true, std::sync::atomic::Ordering::Relaxed);
///     fibra::blocking(move || printer.join().unwrap());
/// });
/// ```
///
/// **Compared with tokio's [`RuntimeMetrics`]**: tokio counts per worker of
/// a multi-threaded runtime (its stable part: workers, alive tasks, the
/// global queue's depth, each worker's park count and busy duration; more
/// behind `tokio_unstable`: polls, steals, schedules, the blocking pool,
/// poll-time histograms). A fibra runtime is one OS thread, so these are one
/// worker's: `green_threads_alive` is `num_alive_tasks`,
/// `green_threads_ready` the worker's local queue depth, `busy`
/// `worker_total_busy_duration`, `passes` and `idle` what tokio's
/// `worker_park_count` and busy time tell together, `switches` tokio's
/// `worker_poll_count`, `remote_wakes` its `remote_schedule_count`,
/// `reactor_events` its `io_driver_ready_count`, and the `blocking_*`
/// figures its blocking-pool ones (process-wide here: fibra has one pool).
/// fibra adds what stackful threads make visible: parks and yields by the
/// threads themselves, the parked count, armed timers, and a Ractor
/// worker's Ractors. No histograms: a stalled thread is named by the stall
/// detector and a [`dump`](crate::runtime::dump()) says where each thread waits.
///
/// Not here: the depth of Ractors' mailboxes. A mailbox's depth can only be
/// read on its own worker (a dump reads and shows it), and a total kept for
/// every mailbox would cost each message a read-modify-write shared by its
/// sender's and receiver's cores.
///
/// [`RuntimeMetrics`]: https://docs.rs/tokio/latest/tokio/runtime/struct.RuntimeMetrics.html
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeMetrics {
    /// Green threads spawned and not yet finished.
    pub green_threads_alive: u64,
    /// Of those, the ones in the run queue.
    pub green_threads_ready: u64,
    /// Of those, the ones parked (neither ready nor running).
    pub green_threads_parked: u64,
    /// Green threads spawned (on the runtime or through a [`Handle`]).
    pub spawns: u64,
    /// Times a green thread parked: waited for IO, a timer, a lock, a
    /// channel, a join, [`park`](crate::runtime::park) and the like.
    pub parks: u64,
    /// Times a green thread yielded ([`yield_now`](crate::runtime::yield_now)).
    pub yields: u64,
    /// Parked green threads made ready by this runtime's OS thread: another
    /// green thread, a timer, the reactor.
    pub local_wakes: u64,
    /// Parked green threads made ready by another OS thread (an
    /// [`Unparker`](crate::runtime::Unparker) used there: a Ractor's message, the
    /// blocking pool's answer, a cross-thread channel).
    pub remote_wakes: u64,
    /// Switches into green threads (each run of one, until it parks, yields
    /// or ends).
    pub switches: u64,
    /// Passes of the scheduler's loop (each runs up to 64 ready threads,
    /// then looks at the reactor, timers and other OS threads' wakes).
    pub passes: u64,
    /// Readiness events the reactor handed to waiting green threads.
    pub reactor_events: u64,
    /// Timers armed now (each wait with a time limit arms one).
    pub timers_armed: u64,
    /// Ractors placed on this runtime and not finished, if it is a Ractor
    /// worker (0 otherwise).
    pub ractors_alive: u64,
    /// Time the runtime's OS thread spent asleep in the poller, waiting
    /// for something to do.
    pub idle: Duration,
    /// The rest of the time since the runtime started: running green threads
    /// and its loop (the short spin for another OS thread's wake before it
    /// sleeps included).
    pub busy: Duration,
    /// OS threads of the blocking pool ([`blocking`](crate::blocking), and
    /// fibra's file and process doors) running a job now. Process-wide: one
    /// pool serves every runtime.
    pub blocking_threads_busy: u64,
    /// Jobs waiting for a blocking-pool thread. Process-wide.
    pub blocking_queued: u64,
}

/// The metrics of the runtime running on this OS thread.
///
/// # Panics
///
/// Outside a runtime.
///
/// ```
/// fibra::run(|| {
///     let before = fibra::runtime::metrics();
///     fibra::spawn(|| ()).join().unwrap();
///     let after = fibra::runtime::metrics();
///     assert_eq!(after.spawns - before.spawns, 1);
/// });
/// ```
#[track_caller]
pub fn metrics() -> RuntimeMetrics {
    let scheduler = scheduler::current_for("fibra::runtime::metrics");
    let mut metrics = snapshot(scheduler.monitor());
    // Here, the gauges are read exactly, not as of the last pass.
    let (alive, ready, timers) = scheduler.gauges();
    fill_gauges(&mut metrics, alive, ready, timers, true);
    metrics
}

impl Handle {
    /// The metrics of this handle's runtime, from any OS thread, read
    /// without stopping it (see [`RuntimeMetrics`]; from another OS thread
    /// the gauges are as of the runtime's last look: when it last ran out of
    /// ready threads, or at most 64 passes of its loop ago). After the
    /// runtime has ended, its last counts.
    pub fn metrics(&self) -> RuntimeMetrics {
        let monitor = self.monitor();
        let c = &monitor.counters;
        let mut metrics = snapshot(monitor);
        let running = monitor.running_thread().is_some();
        fill_gauges(
            &mut metrics,
            c.alive.get(),
            c.ready.get(),
            c.timers_armed.get(),
            running,
        );
        metrics
    }
}

/// The counters of `monitor`'s runtime, gauges aside.
fn snapshot(monitor: &Monitor) -> RuntimeMetrics {
    let c = &monitor.counters;
    let idle = Duration::from_nanos(c.idle_nanos.get());
    let (blocking_threads_busy, blocking_queued) = crate::blocking::pool().load();
    RuntimeMetrics {
        spawns: c.spawns.get(),
        parks: c.parks.get(),
        yields: c.yields.get(),
        local_wakes: c.local_wakes.get(),
        remote_wakes: c.remote_wakes.get(),
        switches: monitor.switches.load(Relaxed),
        passes: c.passes.get(),
        reactor_events: c.reactor_events.get(),
        ractors_alive: monitor.ractors_alive(),
        idle,
        busy: monitor.started.elapsed().saturating_sub(idle),
        blocking_threads_busy,
        blocking_queued,
        ..RuntimeMetrics::default()
    }
}

/// Sets the gauges: `alive` threads, `ready` of them queued, one running
/// if `running`, the rest parked.
fn fill_gauges(metrics: &mut RuntimeMetrics, alive: u64, ready: u64, timers: u64, running: bool) {
    metrics.green_threads_alive = alive;
    metrics.green_threads_ready = ready;
    metrics.green_threads_parked = alive.saturating_sub(ready + u64::from(running));
    metrics.timers_armed = timers;
}

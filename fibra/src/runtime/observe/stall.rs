//! The stall detector: a line on stderr when a green thread holds its OS
//! thread too long without parking or yielding (a blocking `std` call, a long
//! computation), since every other green thread of its runtime waits
//! meanwhile.
//!
//! It costs the switch path two relaxed stores and a load, and no clock read:
//! each runtime counts the switches it makes into green threads (its
//! [`Monitor`]), and one watchdog OS thread per process, started with the
//! first runtime that has detection on, samples every such runtime each half
//! threshold. A count that has not moved while a thread runs for a threshold
//! is a stall: the watchdog writes the line. When the thread comes back to its
//! scheduler, the runtime writes the second line, with the total (its own
//! half, `Monitor::report_stall_end`, in the core: the runtime's loop calls
//! nothing of this file).
//!
//! The watchdog only sees a thread from its first sample, so a stall is
//! reported between one and one and a half thresholds after it began, and the
//! durations it gives are lower bounds, short by up to half a threshold.
//!
//! A green thread that panics runs the panic hook, then unwinds, on its
//! runtime's OS thread and without switching: with `RUST_BACKTRACE=1` the
//! hook symbolizes and prints a backtrace, which takes hundreds of
//! milliseconds in a debug build (and the unwind takes long too under an
//! emulator). The switch count cannot tell that from a blocking call, so
//! fibra wraps the panic hook in place when the watchdog starts
//! ([`hook_panics`]): the hook records the runtime's switch count, and the
//! rest of that run of the thread — backtrace, unwind, and whatever runs
//! after a `catch_unwind` until the thread parks, yields or ends — is not
//! counted; the threshold starts again at its next switch. (A hook the
//! program sets after that replaces the wrapper: then that time counts
//! again.)

use crate::runtime::registry::{self, Monitor, lock};
use crate::runtime::report::{Report, report};
use std::sync::atomic::Ordering::{Relaxed, Release};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// The environment variable that sets the threshold, in milliseconds (0 turns
/// the detector off), for runtimes whose [`Builder`](crate::runtime::Builder) does not.
pub(in crate::runtime) const ENV: &str = "FIBRA_STALL_MS";

/// The threshold when neither the builder nor the environment sets one: on in
/// every build, 100 ms in debug builds and 1 s in release builds.
///
/// On costs the switch nothing more than off: each runtime writes its switch
/// count whether it is watched or not (two relaxed stores); what on adds is
/// the watchdog thread, which wakes every half threshold (2 times a second
/// in a release build) and reads two counters per runtime. 1 s in release:
/// production servers see rare long system calls (a `std::fs` call on a
/// slow disk, a DNS lookup) that are worth a line when they freeze every
/// green thread for a second, and few lines when they do not; 100 ms in
/// debug builds, where a test or a developer wants to hear of a blocking
/// call early (a debug build runs 10–50 times slower, so a true stall takes
/// longer there too).
const DEFAULT: Option<Duration> = Some(if cfg!(debug_assertions) {
    Duration::from_millis(100)
} else {
    Duration::from_secs(1)
});

/// The threshold of a runtime: the builder's if it set one, else the
/// environment's, else the default.
pub(in crate::runtime) fn threshold(configured: Option<Option<Duration>>) -> Option<Duration> {
    configured.unwrap_or_else(|| *from_env())
}

fn from_env() -> &'static Option<Duration> {
    static FROM_ENV: OnceLock<Option<Duration>> = OnceLock::new();
    FROM_ENV.get_or_init(|| {
        let Some(value) = std::env::var_os(ENV) else {
            return DEFAULT;
        };
        match value.to_str().map(str::trim).map(str::parse::<u64>) {
            Some(Ok(0)) => None,
            Some(Ok(ms)) => Some(Duration::from_millis(ms)),
            _ => {
                eprintln!(
                    "fibra: {ENV}={} is not a whole number of milliseconds; it is ignored",
                    value.to_string_lossy()
                );
                DEFAULT
            }
        }
    })
}

/// Wakes the watchdog when a runtime to watch starts (it sleeps for good when
/// there is none).
struct Watchdog {
    started: Mutex<bool>,
    changed: Condvar,
}

static WATCHDOG: Watchdog = Watchdog {
    started: Mutex::new(false),
    changed: Condvar::new(),
};

/// Makes sure the watchdog runs, and looks at the runtimes again.
pub(in crate::runtime) fn watch() {
    let mut started = lock(&WATCHDOG.started);
    if !*started {
        let spawned = std::thread::Builder::new()
            .name("fibra-watchdog".into())
            .spawn(watchdog);
        match spawned {
            Ok(_) => *started = true,
            Err(err) => eprintln!("fibra: cannot start the stall detector's thread: {err}"),
        }
    }
    WATCHDOG.changed.notify_one();
    drop(started);
    hook_panics();
}

/// Wraps the panic hook in place, once per process, so that the time a
/// runtime's OS thread spends in it is not a stall (module docs).
fn hook_panics() {
    static HOOKED: Mutex<bool> = Mutex::new(false);
    let mut hooked = lock(&HOOKED);
    // A thread that is panicking must not replace the hook (std panics).
    if *hooked || std::thread::panicking() {
        return;
    }
    *hooked = true;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(monitor) = crate::runtime::scheduler::current_monitor() {
            // The runtime's own thread wrote `switches`: this is its count.
            let switches = monitor.switches.load(Relaxed);
            monitor.panicked_in.store(switches.wrapping_add(1), Relaxed);
        }
        previous(info);
    }));
}

/// What the watchdog saw of one runtime.
struct Sample {
    runtime: Weak<Monitor>,
    switches: u64,
    /// When it first saw the thread that runs now (or the runtime idle).
    since: Instant,
    reported: bool,
}

fn watchdog() {
    let mut samples: Vec<Sample> = Vec::new();
    let mut started = lock(&WATCHDOG.started);
    loop {
        let runtimes: Vec<Arc<Monitor>> = registry::runtimes()
            .into_iter()
            .filter(|m| m.stall_threshold.is_some())
            .collect();
        samples.retain(|s| {
            runtimes
                .iter()
                .any(|m| Weak::ptr_eq(&s.runtime, &Arc::downgrade(m)))
        });
        let now = Instant::now();
        for monitor in &runtimes {
            let weak = Arc::downgrade(monitor);
            let sample = match samples
                .iter_mut()
                .position(|s| Weak::ptr_eq(&s.runtime, &weak))
            {
                Some(at) => &mut samples[at],
                None => {
                    samples.push(Sample {
                        runtime: weak,
                        switches: u64::MAX,
                        since: now,
                        reported: false,
                    });
                    samples.last_mut().expect("pushed")
                }
            };
            check(monitor, sample, now);
        }
        let tick = runtimes
            .iter()
            .filter_map(|m| m.stall_threshold)
            .min()
            .map(|t| (t / 2).max(Duration::from_millis(1)));
        drop(runtimes);
        started = match tick {
            Some(tick) => {
                WATCHDOG
                    .changed
                    .wait_timeout(started, tick)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            None => WATCHDOG
                .changed
                .wait(started)
                .unwrap_or_else(|e| e.into_inner()),
        };
    }
}

/// Compares a runtime with the last sample, and reports a new stall.
fn check(monitor: &Monitor, sample: &mut Sample, now: Instant) {
    let switches = monitor.switches.load(Relaxed);
    let running = monitor.running.load(Relaxed);
    let panicked = monitor.panicked_in.load(Relaxed) == switches.wrapping_add(1);
    if running == 0 || switches != sample.switches || panicked {
        sample.switches = switches;
        sample.since = now;
        sample.reported = false;
        return;
    }
    let Some(threshold) = monitor.stall_threshold else {
        return;
    };
    let held = now - sample.since;
    if sample.reported || held < threshold {
        return;
    }
    sample.reported = true;
    let who = format!(
        "{} on {}",
        monitor.green_thread(running),
        monitor.os_thread()
    );
    let doing = monitor.os_thread_doing().map_or_else(String::new, |doing| {
        format!(", and its OS thread is {doing}")
    });
    let line = format!(
        "fibra: {who} has run for {} ms without parking or yielding{doing}; the other \
         green threads of its runtime cannot run meanwhile (a blocking call? use \
         fibra::blocking; a long computation? call fibra::runtime::yield_now now and then)",
        held.as_millis()
    );
    report(Report::Stall, monitor.to_stderr, &line);
    *lock(&monitor.stall_since) = Some((who, sample.since));
    monitor.stalled.store(true, Release);
}

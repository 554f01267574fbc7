//! Timers for green threads: [`sleep`] parks only the calling green thread, and
//! [`timeout`] bounds how long work may take.

use crate::runtime::WaitReason;
use crate::runtime::{self, JoinError, scheduler};
use std::fmt;
use std::panic;
use std::time::{Duration, Instant};

/// Parks the calling green thread for at least `duration`; the others run
/// meanwhile (Ruby's `sleep`). Never blocks the OS thread.
///
/// # Panics
///
/// Outside a green thread.
pub fn sleep(duration: Duration) {
    sleep_until(deadline_after(Instant::now(), duration));
}

/// The longest wait fibra measures: about 136 years. A longer one (up to
/// `Duration::MAX`) is clamped to it, as `std`'s `thread::sleep` and
/// `recv_timeout` accept any duration, instead of overflowing `Instant`.
const FOREVER: Duration = Duration::from_secs(u32::MAX as u64);

/// `timeout` after `now`, clamped to [`FOREVER`] where `Instant` cannot hold it.
pub(crate) fn deadline_after(now: Instant, timeout: Duration) -> Instant {
    now.checked_add(timeout).unwrap_or_else(|| now + FOREVER)
}

/// Parks the calling green thread until `deadline` has passed.
///
/// # Panics
///
/// Outside a green thread.
pub fn sleep_until(deadline: Instant) {
    scheduler::current().sleep_until(deadline);
}

/// The error of a [`timeout`] whose work did not finish in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(Duration);

impl Elapsed {
    /// The time limit that passed.
    pub fn limit(&self) -> Duration {
        self.0
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "timed out after {:?}", self.0)
    }
}

impl std::error::Error for Elapsed {}

/// Runs `f` in a green thread of its own and waits at most `limit` for it
/// (Ruby's `Timeout.timeout`).
///
/// If `f` finishes in time, its value is returned (and its panic, if it
/// panicked, continues here). If not, it is cancelled — it unwinds from where it
/// is blocked, so its destructors run — and `Err(Elapsed)` is returned. Work
/// that never blocks cannot be interrupted: cooperative threads are cancelled
/// only where they park.
///
/// ```
/// use fibra::time::{sleep, timeout};
/// use std::time::Duration;
///
/// fibra::run(|| {
///     assert_eq!(timeout(Duration::from_secs(5), || 7), Ok(7));
///     let late = timeout(Duration::from_millis(10), || sleep(Duration::from_secs(60)));
///     assert!(late.is_err());
/// });
/// ```
///
/// # Panics
///
/// Outside a green thread.
pub fn timeout<F, T>(limit: Duration, f: F) -> Result<T, Elapsed>
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    let deadline = deadline_after(Instant::now(), limit);
    let work = runtime::spawn(f);
    // If the caller unwinds while it waits (it is cancelled itself), the work is
    // cancelled with it rather than left running.
    let guard = CancelIfUnwinding(&work);
    let scheduler = scheduler::current();
    let me = scheduler.running();
    work.notify_on_finish(me);
    let _timer = scheduler.arm_timer(deadline);
    while !work.is_finished() {
        if Instant::now() >= deadline {
            work.cancel();
            return Err(Elapsed(limit));
        }
        scheduler.park_on(WaitReason::Timeout { deadline });
    }
    drop(guard);
    match work.join() {
        Ok(value) => Ok(value),
        Err(JoinError::Panicked(payload)) => panic::resume_unwind(payload),
        Err(JoinError::Cancelled) => unreachable!("only this function cancels its work"),
    }
}

/// Cancels a green thread if dropped while the current one unwinds.
struct CancelIfUnwinding<'a, T>(&'a runtime::JoinHandle<T>);

impl<T> Drop for CancelIfUnwinding<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.cancel();
        }
    }
}

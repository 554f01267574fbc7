//! Timers for green threads: [`sleep`] parks only the calling green thread, and
//! [`timeout`] bounds how long work may take.
//!
//! ```
//! use fibra::time::{sleep, timeout};
//! use std::time::Duration;
//!
//! fibra::run(|| {
//!     // Work that ends in time gives its value.
//!     assert_eq!(timeout(Duration::from_secs(60), || 42), Ok(42));
//!     // Work still waiting when the limit passes is unwound from its wait.
//!     let slow = timeout(Duration::from_millis(10), || sleep(Duration::from_secs(60)));
//!     assert_eq!(slow.unwrap_err().limit(), Duration::from_millis(10));
//! });
//! ```
//!
//! Both must be called on a green thread (inside [`run`](crate::run) or a
//! thread it spawned); on a plain OS thread use `std::thread::sleep`.

use crate::runtime::scheduler;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

pub use crate::runtime::deadline::Expired;

/// Parks the calling green thread for at least `duration`; the others run
/// meanwhile (Ruby's `sleep`). Never blocks the OS thread.
///
/// # Panics
///
/// Outside a green thread.
#[track_caller]
pub fn sleep(duration: Duration) {
    scheduler::current_for("fibra::time::sleep")
        .sleep_until(deadline_after(Instant::now(), duration));
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
#[track_caller]
pub fn sleep_until(deadline: Instant) {
    scheduler::current_for("fibra::time::sleep_until").sleep_until(deadline);
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

/// Runs `f` on the calling green thread with a time limit (Ruby's
/// `Timeout.timeout`): `Ok` with what `f` returned if it finished in time,
/// `Err(Elapsed)` if the limit passed while it waited.
///
/// `f` runs here, not in a thread of its own, so it may borrow from the
/// caller — a deadline on a read into a local buffer is just
/// `timeout(limit, || stream.read(&mut buf))`:
///
/// ```
/// use fibra::net::{TcpListener, TcpStream};
/// use fibra::time::{sleep, timeout};
/// use std::io::Read;
/// use std::time::Duration;
///
/// fibra::run(|| {
///     assert_eq!(timeout(Duration::from_secs(5), || 7), Ok(7));
///     let late = timeout(Duration::from_millis(10), || sleep(Duration::from_secs(60)));
///     assert!(late.is_err());
///
///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
///     let mut quiet = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
///     let mut buf = [0u8; 64];
///     let read = timeout(Duration::from_millis(10), || quiet.read(&mut buf));
///     assert!(read.is_err(), "the peer never writes");
/// });
/// ```
///
/// **Where the limit is enforced.** Green threads are cooperative, so the
/// limit is enforced where the work waits: every fibra wait inside `f` —
/// [`sleep`], sockets, channels, locks, [`join`](crate::runtime::JoinHandle::join),
/// [`park`](crate::runtime::park), [`yield_now`](crate::runtime::yield_now),
/// Ractor messages, [`blocking`](crate::blocking()), [`block_on`](crate::block_on()) —
/// ends when the deadline passes. The work is then unwound from that wait, so
/// its destructors run (and may themselves wait, and complete), and `Err` is
/// returned only once they have: a lock the work held is free again when
/// `timeout` returns. Work that does not wait runs to its end and its value is
/// returned, however long it took.
///
/// **A limit that has already passed** — zero, or a deadline computed
/// earlier — is no exception: `f` runs, what it can do without waiting it
/// does, and its first wait ends it with `Err(Elapsed)`. This is how the
/// channels' `recv_timeout(Duration::ZERO)` behaves (a message that is there is
/// taken; an empty channel is a timeout at once), and unlike Ruby, where `0`
/// means no limit: for no limit, call `f` directly.
///
/// **Nesting.** Each `timeout` inside `f` has its own limit, and the nearest
/// deadline of all those in force is the one a wait ends at: an inner
/// `timeout` with a longer limit does not extend the outer one. When the
/// outer deadline passes, the work of every `timeout` inside it unwinds to
/// the outer one, and only that one returns `Err`.
///
/// **Panics and cancellation pass through.** A panic in `f` continues in the
/// caller (and wins over a deadline that passed meanwhile: a panic is never
/// turned into `Err(Elapsed)`). A [`Cancelled`](crate::runtime::Cancelled)
/// unwind, or the expiry of an outer `timeout`, goes on through this one
/// untouched. The expiry itself is a panic with an [`Expired`] payload, started
/// with [`std::panic::resume_unwind`] (so no panic message is printed): code
/// inside `f` that catches panics must let it go on, as it must `Cancelled`
/// (see there) — else the work goes on past its limit, until its next wait
/// ends it again.
///
/// **No second unwind.** A thread that is already unwinding is never handed a
/// second unwind (an unwind out of a destructor that runs during one aborts
/// the process): the waits of destructors that run during an unwind — of a
/// panic, a cancel, or any timeout's — complete, and so does the work of a
/// `timeout` called from such a destructor. A deadline that passes meanwhile
/// is enforced at the first wait after the unwind has ended, if the work is
/// still running then. std counts panics per OS thread, not per green
/// thread, so while any green thread of the runtime is parked in the middle
/// of an unwind (in a destructor that waits), fibra cannot tell the others
/// from it: their expired deadlines (and cancels) wait for that unwind to
/// end too.
///
/// **Changed in this version:** `f` used to run in a green thread of its own,
/// which `timeout` cancelled and left behind when the limit passed: `Err`
/// came back before the work had unwound, and `f` and its value had to be
/// `'static`. Now `f` runs on the caller's thread, so it may borrow, its value
/// need not be `'static`, and its destructors have run when `Err` comes back;
/// but code inside `f` now sees the caller's green thread
/// ([`runtime::current`](crate::runtime::current), green-thread names in
/// dumps and panic messages), and a dump shows the caller parked in the wait
/// inside `f`.
///
/// Under `panic = "abort"` nothing can unwind, so the limit is not enforced:
/// `f` runs to its end and its value is returned. Inside a [`Fiber`](crate::Fiber)
/// that a green thread resumed, nothing can wait, so `f` simply runs.
///
/// # Errors
///
/// [`Elapsed`] if the limit passed while `f` waited.
///
/// # Panics
///
/// Outside a green thread; and with `f`'s panic, if it panics.
#[track_caller]
pub fn timeout<F, T>(limit: Duration, f: F) -> Result<T, Elapsed>
where
    F: FnOnce() -> T,
{
    let deadline = deadline_after(Instant::now(), limit);
    let Some(deadline) = scheduler::current_for("fibra::time::timeout").start_deadline(deadline)
    else {
        return Ok(f());
    };
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    let id = deadline.id();
    // Out of force before the caller goes on, whatever happened.
    drop(deadline);
    match outcome {
        Ok(value) => Ok(value),
        Err(payload) if Expired::is_of(&*payload, id) => Err(Elapsed(limit)),
        Err(payload) => panic::resume_unwind(payload),
    }
}

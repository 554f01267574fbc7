//! Green threads (Ruby's `Thread`): many threads of control on one OS thread,
//! where a sleep, a socket, a lock or a channel parks only the green thread
//! that waits, and the others run.
//!
//! [`run`] starts a runtime on the calling OS thread and runs a closure as its
//! first green thread; [`spawn`] starts more. Each green thread is a fiber owned
//! by the runtime's scheduler. Scheduling is cooperative: a green thread runs
//! until it blocks in a fibra operation ([`sleep`](crate::time::sleep), IO on
//! [`net`](crate::net) sockets, [`sync`](crate::sync) locks and channels,
//! [`JoinHandle::join`], [`park`], [`blocking`](crate::blocking)) or calls
//! [`yield_now`]; then the next ready thread runs. When none is ready the OS
//! thread sleeps in the IO reactor (epoll) until a socket, a timer or another OS
//! thread wakes one — never busy-waiting.
//!
//! ```
//! use std::time::{Duration, Instant};
//!
//! let elapsed = fibra::run(|| {
//!     let start = Instant::now();
//!     let sleepers: Vec<_> = [30, 20, 50]
//!         .into_iter()
//!         .map(|ms| fibra::spawn(move || fibra::time::sleep(Duration::from_millis(ms))))
//!         .collect();
//!     sleepers.into_iter().for_each(|h| h.join().unwrap());
//!     start.elapsed()
//! });
//! // Three sleeps at once on one OS thread take as long as the longest.
//! assert!(elapsed >= Duration::from_millis(50));
//! ```
//!
//! # Blocking calls
//!
//! A green thread that calls a blocking function of `std` or of a C library —
//! `std::thread::sleep`, `std::fs::read`, `std::net::TcpStream::read`, a
//! database driver — blocks the whole OS thread, and with it every green thread
//! of the runtime, until the call returns. Use fibra's own operations
//! ([`time`](crate::time), [`net`](crate::net), [`sync`](crate::sync)), and run
//! anything else that blocks through [`blocking`](crate::blocking), which hands
//! it to a pool of OS threads and parks only the caller.
//!
//! # The end of a runtime
//!
//! [`run`] returns when its first green thread returns (as a Ruby program ends
//! with its main thread). The green threads still alive then are cancelled: each
//! unwinds from where it is parked, so its destructors run, before `run`
//! returns. If every green thread is parked and nothing can ever wake one (no
//! timer, no socket, no [`Unparker`] held elsewhere), `run` panics with a
//! deadlock message instead of hanging.
//!
//! # Ruby names
//!
//! | Ruby | fibra |
//! |---|---|
//! | `Thread.new { … }` | [`spawn`]`(\|\| …)` |
//! | `thread.join`, `thread.value` | [`JoinHandle::join`] → `Ok(value)` or `Err(`[`JoinError`]`)` |
//! | `thread.kill` | [`JoinHandle::cancel`] |
//! | `thread.alive?` | `!`[`JoinHandle::is_finished`] |
//! | `Thread.pass` | [`yield_now`] |
//! | `sleep(s)` | [`time::sleep`](crate::time::sleep) |
//! | `Thread.current` | [`current`] |
//! | `Thread.stop`, `thread.wakeup` | [`park`], [`Unparker::unpark`] |
//! | `Timeout.timeout(s) { … }` | [`time::timeout`](crate::time::timeout) |

mod join;
pub(crate) mod reactor;
mod remote;
mod ring;
pub(crate) mod scheduler;
pub(crate) mod task;
mod timers;
pub(crate) mod waiter;

pub use join::{JoinError, JoinHandle, spawn};
pub use remote::Unparker;
pub use scheduler::Cancelled;

use crate::fiber::DEFAULT_STACK_SIZE;
use scheduler::{Installed, Scheduler};
use std::fmt;
use std::panic;
use std::rc::Rc;

/// Starts a runtime on this OS thread, runs `f` as its first green thread, and
/// returns what `f` returns once it has (see the [module docs](self) for what
/// happens to green threads still running then).
///
/// # Panics
///
/// If `f` panics (the panic continues here), if every green thread deadlocks,
/// if a runtime is already running on this OS thread, or if the IO reactor
/// cannot be created.
pub fn run<F, T>(f: F) -> T
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    Builder::new().run(f)
}

/// Configures a runtime before starting it.
///
/// ```
/// let n = fibra::runtime::Builder::new().stack_size(64 * 1024).run(|| 6 * 7);
/// assert_eq!(n, 42);
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    stack_size: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            stack_size: DEFAULT_STACK_SIZE,
        }
    }

    /// The stack size of every green thread of this runtime (see
    /// [`fiber::Builder::stack_size`](crate::fiber::Builder::stack_size)).
    pub fn stack_size(mut self, bytes: usize) -> Builder {
        self.stack_size = bytes;
        self
    }

    /// Starts the runtime and runs `f` as its first green thread (see [`run`]).
    pub fn run<F, T>(self, f: F) -> T
    where
        F: FnOnce() -> T + 'static,
        T: 'static,
    {
        let scheduler = Rc::new(
            Scheduler::new(self.stack_size)
                .unwrap_or_else(|err| panic!("fibra: cannot start a runtime: {err}")),
        );
        let _installed = Installed::new(scheduler.clone());
        let main = spawn(f);
        let outcome = scheduler.run_until(|| main.is_finished());
        scheduler.shutdown();
        if let Err(deadlock) = outcome {
            panic!(
                "fibra: deadlock: all {} green threads are parked and nothing can wake one \
                 (no timer, no socket, no Unparker held by another OS thread)",
                deadlock.parked
            );
        }
        match main.join() {
            Ok(value) => value,
            Err(JoinError::Panicked(payload)) => panic::resume_unwind(payload),
            Err(JoinError::Cancelled) => unreachable!("nothing cancels the first green thread"),
        }
    }
}

/// Puts the running green thread at the back of the run queue, so that the
/// others run first (Ruby's `Thread.pass`).
pub fn yield_now() {
    scheduler::current().yield_now();
}

/// Parks the running green thread until an [`Unparker`] (or a
/// [`Thread::unparker`] obtained before) unparks it. Like
/// [`std::thread::park`], it may also return spuriously: park in a loop that
/// checks what you wait for.
pub fn park() {
    scheduler::current().park();
}

/// The green thread that calls it.
///
/// # Panics
///
/// Outside a green thread.
pub fn current() -> Thread {
    let scheduler = scheduler::current();
    Thread {
        id: scheduler.running(),
        scheduler,
    }
}

/// A handle on a green thread (Ruby's `Thread.current`).
#[derive(Clone)]
pub struct Thread {
    id: task::TaskId,
    scheduler: Rc<Scheduler>,
}

impl Thread {
    /// A number that names this thread among all its runtime's threads, for
    /// the life of the runtime.
    pub fn id(&self) -> u64 {
        self.id.serial
    }

    /// A handle that wakes this thread from any OS thread.
    pub fn unparker(&self) -> Unparker {
        self.scheduler.unparker(self.id)
    }
}

impl fmt::Debug for Thread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Thread")
            .field("id", &self.id.serial)
            .finish()
    }
}

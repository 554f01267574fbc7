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
//! # Stalls
//!
//! Such a call is easy to miss, so fibra watches for it: when a green thread
//! runs for longer than a threshold without parking or yielding, one line on
//! stderr names it, and one more says when it gave its OS thread back:
//!
//! ```text
//! fibra: green thread 'importer' (#4) on OS thread 'main' has run for 104 ms without parking or yielding; the other green threads of its runtime cannot run meanwhile (a blocking call? use fibra::blocking; a long computation? call fibra::runtime::yield_now now and then)
//! fibra: green thread 'importer' (#4) on OS thread 'main' parked or yielded after 301 ms
//! ```
//!
//! The thread is named by its [`ThreadBuilder::name`], else by its
//! [`Thread::id`]. The detector is on in every build: at 100 ms in debug
//! builds and 1 s in release builds; [`Builder::stall_threshold`] or the
//! environment variable `FIBRA_STALL_MS` (milliseconds) set another
//! threshold, and turn it off: `FIBRA_STALL_MS=0`, or
//! `Builder::stall_threshold(None)` for one runtime. It costs
//! the switch between green threads no clock read: one watchdog OS thread per
//! process samples a switch counter that each runtime keeps, every half
//! threshold, so a stall is seen between one and one and a half thresholds
//! after it began, and the durations are lower bounds (by up to half a
//! threshold). Ractor workers are runtimes too, and are watched the same way.
//! A panic is not a stall: printing its backtrace with `RUST_BACKTRACE=1`
//! takes hundreds of milliseconds in a debug build, so the detector wraps the
//! panic hook in place when it starts, and does not count the rest of the
//! panicking thread's run, until it parks, yields or ends (a hook set later
//! replaces the wrapper, and that time counts again).
//!
//! On Linux the line also says what the OS thread is doing, read from
//! `/proc/self/task/TID/syscall` when the line is written: "blocked in futex
//! (a std lock, condvar or channel?)", "blocked in clock_nanosleep
//! (std::thread::sleep?)", "blocked in read on fd 7, socket:\[81723\] (a
//! blocking socket or file?)", "blocked in wait4 (Command::output, status or
//! wait?)", or "running (not in a system call)" for a long computation; a
//! [`dump`]'s line for a busy runtime says the same. The lines can go to
//! `tracing` or `log` instead of stderr: see [`Builder::report_to_stderr`].
//!
//! # The end of a runtime
//!
//! [`run`] returns when its first green thread returns (as a Ruby program ends
//! with its main thread). The green threads still alive then are cancelled: each
//! unwinds from where it is parked, so its destructors run, before `run`
//! returns (one already unwinding from its own panic finishes that unwind:
//! see [`JoinHandle::cancel`]). If every green thread is parked and nothing can ever wake one (no
//! timer, no socket, no [`Unparker`] held elsewhere), `run` panics with a
//! deadlock message instead of hanging — also when that becomes so while the
//! runtime sleeps, by another OS thread dropping the last `Unparker` it held. A timer counts only while its wait
//! lasts: a wait that ends — a [`timeout`](crate::time::timeout) whose work
//! finished, a cancelled sleep, a notified `wait_timeout`, a `recv_timeout`
//! that got its message — takes its timer with it, so neither the deadlock
//! report nor the end of `run` waits for a deadline nobody waits for any more.
//! The deadlock message lists the runtime's green threads as a [`dump`] does:
//! what each waits for, since when, and its backtrace.
//! A [`JoinHandle`] may outlive its runtime; it never acts on another (see
//! [its docs](JoinHandle#after-its-runtime-has-ended)).
//!
//! # Compaction
//!
//! A parked green thread holds the pages of its stack that it touched: at
//! least one 4 KiB page, though it uses far less of it. Measured with
//! `cargo run -p fibra --release --example parked_stack` (the bytes from the
//! saved stack pointer to the top of the stack, x86_64): 456 B parked in
//! [`park`], 568 B in a sleep, 632 B in a channel receive, 648 B on a mutex,
//! 760 B in a socket read (3.3–5.1 KiB in a debug build). A runtime built with
//! [`Builder::compact_parked_after`] moves those bytes of a thread parked
//! for longer than a threshold into a heap buffer of exactly their size and
//! gives the stack's pages back to the kernel, keeping the address range
//! and the guard page; the bytes go back to the same addresses right before
//! the thread runs again, so every pointer into the stack stays valid. In
//! `fibra-bench park-scale --runtime go` (1,000,000 green threads parked in
//! [`park`], one run, 2026-11-23) that took a parked green thread from
//! 4,344 B to 893 B of resident memory (a goroutine: 2,737 B in the same
//! run; a Java virtual thread measured 672 B in another); compacting cost
//! the creation loop 8.7 µs a thread against 3.9 µs (a copy and a
//! `madvise` each; the pages of one sweep now go back together, one
//! `process_madvise` per 1,024 threads). It is off by default: a thread woken after the
//! threshold pays a copy of its used stack each way, and the one thing that
//! makes it unsound — another OS thread using the stack of a parked thread —
//! is something only the program can rule out (hence `unsafe`).
//!
//! How a runtime decides when to compact, and the audit behind the `unsafe`
//! (what may touch a parked thread's stack, and why none of it does while
//! the stack is compacted), are in the repository's
//! `docs/internals/compaction.md`. A change that lets anything else reach a
//! parked thread's stack — a wait record kept on the stack, a new way for
//! fibra to lend part of one — must keep that audit true (a thread that
//! lends is marked as lending, as `block_on` and [`scope`] do) and update it.
//!
//! # Costs, and where they are measured
//!
//! A wait on a socket costs no `epoll_ctl` (a socket is registered once,
//! when it is made) and a wake no allocation. What an IO round trip costs —
//! system calls, instructions and cache misses, beside tokio's
//! current-thread runtime on the same workload — is measured in the
//! repository's `docs/internals/reactor-costs.md`.
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
//! | `Thread.new { … }.name = "x"`, `thread.name` | [`ThreadBuilder::name`], [`Thread::name`] |
//! | `Thread.stop`, `thread.wakeup` | [`park`], [`Unparker::unpark`] |
//! | `Thread.current[:x] = v`, `Thread.current[:x]` (`Thread#[]=`, `Thread#[]`) | a key declared with [`green_local!`](crate::green_local) (`static X: Cell<T> = …;`), then `X.set(v)`, `X.get()` ([`LocalKey`]): the running green thread's own value. Ruby's are per fiber; a fiber that a green thread resumes shares the thread's values, as with Ruby's `Thread#thread_variable_get`/`thread_variable_set` |
//! | `Timeout.timeout(s) { … }` | [`time::timeout`](crate::time::timeout)`(d, \|\| …)`, run on the calling thread as Ruby's is; enforced where the work waits, and a zero limit ends it at its first wait (Ruby: `0` is no limit) |

mod counters;
pub(crate) mod deadline;
mod green_local;
mod handle;
mod join;
mod observe;
mod os_thread;
pub(crate) mod reactor;
mod registry;
mod remote;
#[cfg(all(test, fibra_loom))]
pub(crate) use remote::model_check;
mod remote_join;
mod report;
mod ring;
pub(crate) mod scheduler;
mod scope;
mod section;
pub(crate) mod spin;
mod stack_trace;
pub(crate) mod task;
mod thread_builder;
pub(crate) mod timers;
pub(crate) mod turn;
mod wait;
pub(crate) mod waiter;

pub(crate) use green_local::run_thread;
pub use green_local::{AccessError, LocalKey};
pub use handle::{Handle, SpawnError, handle};
pub(crate) use join::spawn_detached;
pub use join::{JoinError, JoinHandle, spawn};
pub use observe::dump::{
    ANSWER_WITHIN, Dump, Frame, RactorDump, RactorState, RuntimeDump, RuntimeState, ThreadDump,
    dump,
};
pub use observe::dump_signal::dump_on_signal;
pub use observe::metrics::{RuntimeMetrics, metrics};
pub use remote::Unparker;
pub use remote_join::RemoteJoinHandle;
pub use scheduler::Cancelled;
pub use scope::{Scope, ScopedJoinHandle, scope};
pub use section::ThreadState;
pub(crate) use section::{DescribeRactors, RawRactor};
pub(crate) use task::Started;
pub use thread_builder::ThreadBuilder;
pub use wait::{SocketDirection, WaitReason};

use crate::fiber::DEFAULT_STACK_SIZE;
use observe::stall;
use scheduler::{Installed, Scheduler};
use std::fmt;
use std::panic;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Starts a runtime on this OS thread, runs `f` as its first green thread, and
/// returns what `f` returns once it has (see the [module docs](self) for what
/// happens to green threads still running then).
///
/// # Panics
///
/// If `f` panics (the panic continues here), if every green thread deadlocks
/// (the message lists each thread of the runtime, what it waits for and
/// where, as a [`dump`] does), if a runtime is already running on this OS
/// thread, or if the IO reactor cannot be created.
#[track_caller]
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
    /// `None`: not set here (the environment or the default decides).
    stall_threshold: Option<Option<Duration>>,
    compact_after: Option<Duration>,
    /// `None`: not set here (the environment or the default decides).
    report_to_stderr: Option<bool>,
    /// `None`: not set here (the environment decides).
    io_uring: Option<bool>,
}

/// `FIBRA_IO_URING=1`: runtimes whose [`Builder`] does not say receive
/// through io_uring (see [`Builder::io_uring`]).
fn io_uring_from_env() -> bool {
    static FROM_ENV: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FROM_ENV.get_or_init(|| std::env::var_os("FIBRA_IO_URING").is_some_and(|v| v == "1"))
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with the default settings.
    pub fn new() -> Builder {
        Builder {
            stack_size: DEFAULT_STACK_SIZE,
            stall_threshold: None,
            compact_after: None,
            report_to_stderr: None,
            io_uring: None,
        }
    }

    /// Whether this runtime writes its reports — the [stall](self#stalls)
    /// lines, the deadlock report, the line about green threads abandoned
    /// at its end — to stderr. Without this call, the environment variable
    /// `FIBRA_STDERR` decides (`0` is off), and without it they are written.
    ///
    /// With the cargo feature `tracing` each report is also a `tracing`
    /// event, and with `log` a `log` record, with the target `fibra` (a
    /// stall at `WARN`, its end at `INFO`, a deadlock at `ERROR`, abandoned
    /// threads at `WARN`; the `tracing` events have a `kind` field:
    /// `"stall"`, `"stall_ended"`, `"deadlock"`, `"abandoned"`): a program
    /// that sends those to its logs may turn the stderr lines off. (A
    /// deadlock still panics, and its panic message still lists the dump.)
    ///
    /// ```
    /// let quiet = fibra::runtime::Builder::new().report_to_stderr(false);
    /// quiet.run(|| std::thread::sleep(std::time::Duration::from_millis(10)));
    /// ```
    pub fn report_to_stderr(mut self, on: bool) -> Builder {
        self.report_to_stderr = Some(on);
        self
    }

    /// How long a green thread may run without parking or yielding before
    /// fibra says so on stderr; `None` turns the stall detector off for this
    /// runtime. See [Stalls](self#stalls) for the lines it writes.
    ///
    /// Without this call, the environment variable `FIBRA_STALL_MS` decides
    /// (milliseconds; `0` is off), and without it the build: 100 ms in a debug
    /// build, 1 s in a release build.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// fibra::runtime::Builder::new()
    ///     .stall_threshold(Some(Duration::from_millis(20)))
    ///     .run(|| std::thread::sleep(Duration::from_millis(50))); // says so on stderr
    /// ```
    pub fn stall_threshold(mut self, threshold: Option<Duration>) -> Builder {
        self.stall_threshold = Some(threshold);
        self
    }

    /// Whether this runtime's TCP streams receive through io_uring (Linux
    /// 6.1 or later): each stream's data is received by one multishot
    /// receive into buffers the runtime shares, so that a read copies from
    /// memory instead of making a system call, and a read that finds
    /// nothing makes none either; the runtime waits for everything with one
    /// `io_uring_enter`. Everything else (listeners, writes, UDP, Unix
    /// sockets, pipes) stays on epoll. A kernel that refuses the ring (too
    /// old, `/proc/sys/kernel/io_uring_disabled`, a seccomp filter) leaves
    /// the runtime on epoll; other systems ignore this. The ring costs a few
    /// system calls when the first stream is made, 2 MiB of memory
    /// for its buffers (pages come as they are used), and a system call
    /// more when a stream that read is dropped (its receive is cancelled).
    ///
    /// Without this call, the environment variable `FIBRA_IO_URING` decides
    /// (`1` is on), and without it the runtime is on epoll.
    ///
    /// The ring owns a stream's reads: a program that reads the descriptor
    /// itself (`AsRawFd`) while fibra's reads are in use loses data to the
    /// ring.
    ///
    /// ```
    /// use fibra::net::{TcpListener, TcpStream};
    /// use std::io::{Read, Write};
    ///
    /// fibra::runtime::Builder::new().io_uring(true).run(|| {
    ///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    ///     let addr = listener.local_addr().unwrap();
    ///     let server = fibra::spawn(move || {
    ///         let (mut stream, _) = listener.accept().unwrap();
    ///         let mut buf = [0; 5];
    ///         stream.read_exact(&mut buf).unwrap();
    ///         stream.write_all(&buf).unwrap();
    ///     });
    ///     let mut stream = TcpStream::connect(addr).unwrap();
    ///     stream.write_all(b"hello").unwrap();
    ///     let mut echo = [0; 5];
    ///     stream.read_exact(&mut echo).unwrap();
    ///     assert_eq!(&echo, b"hello");
    ///     server.join().unwrap();
    /// });
    /// ```
    pub fn io_uring(mut self, on: bool) -> Builder {
        self.io_uring = Some(on);
        self
    }

    /// The stack size of every green thread of this runtime (see
    /// [`fiber::Builder::stack_size`](crate::fiber::Builder::stack_size)).
    pub fn stack_size(mut self, bytes: usize) -> Builder {
        self.stack_size = bytes;
        self
    }

    /// Compacts the stack of every green thread that has stayed parked for
    /// `after` or longer: the used part of its stack (a few hundred bytes,
    /// typically) moves to a heap buffer of exactly its size, the stack's
    /// pages go back to the kernel, and the bytes are copied back to the same
    /// addresses just before the thread next runs. `None` (the default): never.
    /// See [Compaction](self#compaction) for what it costs and saves.
    ///
    /// A parked thread then holds well under a page of memory instead of one
    /// or more pages; the price is a copy of its used stack each way, paid
    /// only by threads that stayed parked that long. `Some(Duration::ZERO)`
    /// compacts every parked thread at the end of each round of the
    /// scheduler (tests use it to compact at every park).
    ///
    /// # Safety
    ///
    /// A parked thread is compacted only if it lends nothing — if no other
    /// OS thread (nor anything else but the thread itself) may read or write
    /// its stack until it runs again. fibra keeps that for what it lends
    /// itself: a thread inside [`block_on`](crate::block_on) (or
    /// `fibra::tokio::block_on`) is never compacted, in `block_on`'s own parks
    /// or in any wait made inside the future's poll, since the future pinned
    /// on its stack may be registered with whatever wakes it; nor is one
    /// inside [`scope`], whose threads borrow from its stack; what other green
    /// threads, Ractors and fibra's runtime can reach is `'static`. The
    /// program must keep it for what fibra cannot see: while a green thread of
    /// this runtime is parked in a wait of fibra's outside `block_on` (IO,
    /// timers, locks, channels, joins, Ractor ports, `blocking`, [`park`]),
    /// nothing may lend memory of its stack to another thread — no
    /// `std::thread::scope` (nor rayon's or crossbeam's scopes, `rayon::join`)
    /// entered in the green thread and waited in; no future pinned on its
    /// stack and polled by an executor of the program's own that parks the
    /// thread with [`park`] (pass futures to `block_on`); no raw pointer to a
    /// local given to another thread or a C library. Compacting such a thread
    /// would race with the other thread's accesses (undefined behaviour).
    /// Enable compaction only in programs whose green threads do none of
    /// these.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let builder = fibra::runtime::Builder::new();
    /// // SAFETY: no green thread of this program lends its stack to another
    /// // OS thread while it parks.
    /// let builder = unsafe { builder.compact_parked_after(Some(Duration::from_millis(100))) };
    /// builder.run(|| {
    ///     let idle = fibra::spawn(|| fibra::time::sleep(Duration::from_millis(300)));
    ///     idle.join().unwrap(); // compacted after 100 ms, restored to finish
    /// });
    /// ```
    pub unsafe fn compact_parked_after(mut self, after: Option<Duration>) -> Builder {
        self.compact_after = after;
        self
    }

    /// Starts the runtime and runs `f` as its first green thread (see [`run`]).
    ///
    /// # Panics
    ///
    /// As [`run`].
    #[track_caller]
    pub fn run<F, T>(self, f: F) -> T
    where
        F: FnOnce() -> T + 'static,
        T: 'static,
    {
        let stall_threshold = stall::threshold(self.stall_threshold);
        let scheduler = Rc::new(
            Scheduler::new(
                self.stack_size,
                stall_threshold,
                report::to_stderr(self.report_to_stderr),
                self.compact_after,
                self.io_uring.unwrap_or_else(io_uring_from_env),
            )
            .unwrap_or_else(|err| panic!("fibra: cannot start a runtime: {err}")),
        );
        if stall_threshold.is_some() {
            // Its monitor is listed: the watchdog watches it from now on.
            stall::watch();
        }
        let _installed = Installed::new(scheduler.clone());
        let main = spawn(f);
        let outcome = scheduler.run_until(|| main.is_finished());
        // Where each thread waits, taken before the shutdown unwinds them.
        let deadlocked = outcome
            .err()
            .map(|deadlock| (deadlock, observe::dump::of_own(&scheduler)));
        scheduler.shutdown();
        scheduler.publish_gauges();
        if let Some((deadlock, dump)) = deadlocked {
            let report = format!(
                "fibra: deadlock: all {} green threads are parked and nothing can wake one \
                 (no timer, no socket, no Unparker held by another OS thread); where each \
                 waits:\n\n{dump}",
                deadlock.parked
            );
            // The panic prints it on stderr: the event only.
            report::report(report::Report::Deadlock, false, &report);
            panic!("{report}");
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
#[track_caller]
pub fn yield_now() {
    scheduler::current_for("fibra::runtime::yield_now").yield_now();
}

/// Parks the running green thread until an [`Unparker`] (or a
/// [`Thread::unparker`] obtained before) unparks it. Like
/// [`std::thread::park`], it may also return spuriously: park in a loop that
/// checks what you wait for.
#[track_caller]
pub fn park() {
    scheduler::current_for("fibra::runtime::park").park_on(WaitReason::Park);
}

/// How many entries the running runtime's timers (a lane and a lazy heap)
/// hold, armed or disarmed and not yet dropped: what they cost in memory.
/// Each wait with a time limit arms one timer and disarms it when it ends, so
/// this stays within about twice the waits in progress however many have been
/// made. For fibra's own tests; not part of the API.
///
/// # Panics
///
/// Outside a runtime.
#[doc(hidden)]
pub fn timer_entries() -> usize {
    scheduler::current().timer_entries()
}

/// Makes this runtime list Ractors in its part of a [`dump`], as `describe`
/// finds them (a Ractor worker's dispatcher calls it). `describe` runs on this
/// runtime's OS thread, from its loop or from the green thread that takes the
/// dump: none of its other green threads is running then.
///
/// # Panics
///
/// Outside a runtime.
pub(crate) fn describe_ractors_with(describe: DescribeRactors) {
    scheduler::current().describe_ractors_with(describe);
}

/// Makes this runtime's [metrics](metrics()) count its Ractors with `count`
/// (a Ractor worker's dispatcher calls it).
///
/// # Panics
///
/// Outside a runtime.
pub(crate) fn count_ractors_with(count: Box<dyn Fn() -> usize + Send + Sync>) {
    scheduler::current().monitor().count_ractors_with(count);
}

/// The green thread that calls it.
///
/// # Panics
///
/// Outside a green thread.
#[track_caller]
pub fn current() -> Thread {
    let scheduler = scheduler::current_for("fibra::runtime::current");
    let id = scheduler.running();
    Thread {
        id,
        name: scheduler.name(id),
        scheduler,
    }
}

/// A handle on a green thread (Ruby's `Thread.current`).
#[derive(Clone)]
pub struct Thread {
    id: task::TaskId,
    name: Option<Arc<str>>,
    scheduler: Rc<Scheduler>,
}

impl Thread {
    /// The name the thread was spawned with through a [`ThreadBuilder`]
    /// (Ruby's `Thread#name`); `None` for a thread spawned plainly.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

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
            .field("name", &self.name())
            .finish()
    }
}

//! Futures that need tokio, from green threads (cargo feature `tokio`).
//!
//! Much of Rust's async ecosystem — `tokio::net`, hyper's and reqwest's
//! clients, sqlx, tonic — needs tokio's reactor and timer to be running, and
//! [`fibra::block_on`](crate::block_on) alone does not run them. This module's
//! [`block_on`] polls a future with a tokio runtime as the current one — the
//! program's own where it has one, else a runtime kept in the background,
//! started on first use (see [which](#which-tokio-runtime)): the
//! sockets and timers the future makes belong to it, the tasks it spawns run on
//! it, and its threads deliver the wake-ups. The calling green thread is
//! parked until the future completes; the runtime's other green threads run
//! meanwhile.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use std::time::Duration;
//!
//! fibra::run(|| {
//!     let ticker = fibra::spawn(|| {
//!         (0..3).for_each(|_| fibra::time::sleep(Duration::from_millis(1)));
//!         "ticked"
//!     });
//!     // A tokio timer: only this green thread waits for it.
//!     fibra::tokio::block_on(async { tokio::time::sleep(Duration::from_millis(10)).await });
//!     assert_eq!(ticker.join().unwrap(), "ticked");
//!
//!     // A tokio socket: bound on the background runtime, used from here.
//!     let listener = fibra::tokio::block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
//!     assert!(listener.local_addr()?.ip().is_loopback());
//!     Ok(())
//! })
//! # }
//! ```
//!
//! # Make tokio's futures inside the future
//!
//! Some of tokio's futures look for the current runtime when they are
//! *made*, not when first polled: `tokio::time::sleep`, `timeout`,
//! `interval`. Made before the call, outside any runtime, they panic with
//! tokio's "there is no reactor running". Make them inside an `async` block,
//! which `block_on` polls with the runtime current:
//! `fibra::tokio::block_on(async { tokio::time::sleep(d).await })`, not
//! `fibra::tokio::block_on(tokio::time::sleep(d))`. An `async fn`'s future
//! (`TcpStream::connect(addr)`, a client's `send_request`) runs nothing until
//! it is polled, so it may be passed as it is.
//!
//! # Which tokio runtime
//!
//! A program that already runs tokio (`#[tokio::main]`) need not run a second
//! one. For each call, the bridge uses, in order:
//!
//! 1. the runtime handed to [`set_handle`], if the program did;
//! 2. the program's multi-thread runtime, if the calling OS thread belongs to
//!    it (a worker or `spawn_blocking` thread, or the thread inside its
//!    `Runtime::block_on`: where `tokio::runtime::Handle::try_current` finds
//!    it), as when `fibra::run` is started from
//!    `tokio::task::spawn_blocking`. A current-thread runtime is not used this
//!    way: only its own `Runtime::block_on` drives its timers and sockets, and
//!    a `fibra::run` inside it blocks that;
//! 3. else the background runtime below, started on first use.
//!
//! [`handle`] returns the same runtime [`block_on`] would use from the calling
//! thread.
//!
//! # The background runtime
//!
//! A multi-thread tokio runtime with [`WORKER_THREADS`] worker threads named
//! `fibra-tokio`, with every driver the enabled tokio features provide (IO and
//! time when tokio's `net` and `time` features are on, as they are for any
//! crate that uses them). Its threads drive the reactor and run the tasks that
//! futures spawn (a hyper connection, say); the futures passed to [`block_on`]
//! themselves are polled on the calling thread, so they may borrow from its
//! stack and need not be `Send`. It lives as long as the process, and is
//! never started in a program that hands the bridge its own runtime.
//!
//! # Called from inside a tokio runtime
//!
//! From a green thread, [`block_on`] only ever parks that green thread. From a
//! plain OS thread it blocks the thread, which inside a tokio runtime would
//! stall the tasks of that runtime's thread — perhaps the very ones the future
//! waits for. So, on a thread of a *multi-thread* tokio runtime, `block_on`
//! first hands the thread's other tasks to another worker, as
//! [`tokio::task::block_in_place`] does; on the thread that drives a
//! *current-thread* runtime, which has nowhere to hand them, it panics rather
//! than risk a deadlock, exactly where tokio's own [`Handle::block_on`] would
//! (with tokio's message, "Cannot start a runtime from within a runtime").
//! Threads that only have a runtime entered block as they would anywhere:
//! a `spawn_blocking` thread, of either kind of runtime, is there to block.
//! Async code should `.await` the future instead.
//!
//! # Waits of fibra's inside the future
//!
//! The future may wait in fibra as well (a fibra channel, lock, sleep, Ractor
//! receive inside its poll): only its green thread parks, and the others run
//! meanwhile. tokio's current runtime is a per-OS-thread setting that the
//! green threads of a runtime share, so the runtime the bridge entered is
//! current only while the polling green thread runs: its guard is put away when that
//! thread parks and made again when it runs, and the green threads that run
//! in between see the OS thread as it was. (Hold no [`EnterGuard`] of your
//! own across a wait of fibra's: tokio requires those guards to be dropped in
//! the reverse order they were made, which green threads taking turns do
//! not keep.)

use crate::block_on::in_green_thread;
use ::tokio::runtime::{Builder, EnterGuard, Handle, Runtime, RuntimeFlavor};
use std::cell::RefCell;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::OnceLock;

/// The number of worker threads of the background runtime: enough to drive
/// its reactor and timers and run the small tasks that clients spawn while
/// one of them is busy; the CPU work belongs to green threads and Ractors.
pub const WORKER_THREADS: usize = 2;

/// The runtime [`set_handle`] chose for the bridge, if any.
static CHOSEN: OnceLock<Handle> = OnceLock::new();

/// The background runtime's handle, the runtime started now if it has not
/// been.
fn background() -> &'static Handle {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(WORKER_THREADS)
                .thread_name("fibra-tokio")
                .enable_all()
                .build()
                .unwrap_or_else(|err| {
                    panic!("fibra: cannot start the background tokio runtime: {err}")
                })
        })
        .handle()
}

/// Hands the bridge the program's own tokio runtime: from now on
/// [`block_on`] polls futures with it (and [`handle`] returns it), on every
/// thread, instead of looking for one or starting the background runtime.
///
/// Call it once, early: a program with `#[tokio::main]` passes
/// `tokio::runtime::Handle::current()` before it starts fibra's runtimes.
/// The runtime must be driven meanwhile: a multi-thread runtime drives itself;
/// a current-thread one only while its `Runtime::block_on` runs.
///
/// ```
/// let program = tokio::runtime::Builder::new_multi_thread()
///     .worker_threads(1)
///     .thread_name("program")
///     .enable_all()
///     .build()
///     .unwrap();
/// fibra::tokio::set_handle(program.handle().clone()).unwrap();
/// let name = fibra::run(|| {
///     fibra::tokio::block_on(async {
///         tokio::spawn(async { std::thread::current().name().map(str::to_string) }).await
///     })
/// });
/// assert_eq!(name.unwrap().as_deref(), Some("program"));
/// ```
///
/// # Errors
///
/// If a handle was set before: the bridge keeps that one, and `handle` comes
/// back.
pub fn set_handle(handle: Handle) -> Result<(), Handle> {
    CHOSEN.set(handle)
}

/// The runtime the bridge uses for a call from this thread (see the [module
/// docs](self#which-tokio-runtime)).
enum Bridge {
    /// A runtime to enter for each poll: the one [`set_handle`] chose, or the
    /// background runtime.
    Enter(&'static Handle),
    /// The program's multi-thread runtime, current on this OS thread already
    /// (a worker or `spawn_blocking` thread of it, or code inside its
    /// `block_on`): nothing to enter.
    Current(Handle),
}

impl Bridge {
    fn for_this_thread() -> Bridge {
        if let Some(chosen) = CHOSEN.get() {
            return Bridge::Enter(chosen);
        }
        match Handle::try_current() {
            // A current-thread runtime is driven only by its own
            // `Runtime::block_on`, which a `fibra::run` inside it blocks: a
            // future waiting on its timers or sockets would never be woken.
            Ok(current) if current.runtime_flavor() != RuntimeFlavor::CurrentThread => {
                Bridge::Current(current)
            }
            _ => Bridge::Enter(background()),
        }
    }

    fn handle(self) -> Handle {
        match self {
            Bridge::Enter(handle) => handle.clone(),
            Bridge::Current(handle) => handle,
        }
    }
}

/// The tokio runtime the bridge uses from this thread (see the [module
/// docs](self#which-tokio-runtime)), to spawn tasks on it or enter it; the
/// background runtime is started now if it is the one and has not been.
///
/// ```
/// let task = fibra::tokio::handle().spawn(async { 6 * 7 });
/// assert_eq!(fibra::tokio::block_on(task).unwrap(), 42);
/// ```
pub fn handle() -> Handle {
    Bridge::for_this_thread().handle()
}

/// Runs `future` to completion with the bridge's tokio runtime as the
/// current one (see the [module docs](self#which-tokio-runtime) for which),
/// and returns its output: in a green thread, parking only that green thread
/// until the future is done; on a plain OS thread, blocking it.
///
/// Each poll happens on the calling thread with the runtime
/// [entered](Handle::enter), so the future may create tokio sockets and timers
/// and spawn tasks; the runtime's threads drive them and wake the caller.
/// Futures that need a runtime when they are made (`tokio::time::sleep`) must
/// be made inside the future: see the [module docs](self#make-tokios-futures-inside-the-future). A
/// panic in the future continues in the caller. See the [module docs](self)
/// for calls from inside a tokio runtime.
///
/// # Panics
///
/// If the future panics; if the background runtime cannot be started; if,
/// outside a green thread, the calling OS thread drives a current-thread tokio
/// runtime, which this would block (where tokio's own [`Handle::block_on`]
/// panics).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let entered = match Bridge::for_this_thread() {
        Bridge::Enter(runtime) => Some(runtime),
        Bridge::Current(_) => None,
    };
    let polled = poll_fn(move |cx| {
        let _entered = entered.map(Entered::new);
        future.as_mut().poll(cx)
    });
    if in_green_thread() {
        return crate::block_on(polled);
    }
    match Handle::try_current() {
        Err(_) => crate::block_on(polled),
        // tokio's own `Handle::block_on` refuses where blocking would stall
        // a runtime (on the thread that drives a current-thread runtime) and
        // blocks where that stalls nothing (a `spawn_blocking` thread, a
        // thread that only entered a runtime): the same rule, told by tokio,
        // which alone can see which thread this is.
        Ok(current) if current.runtime_flavor() == RuntimeFlavor::CurrentThread => {
            current.block_on(polled)
        }
        Ok(_) => ::tokio::task::block_in_place(|| crate::block_on(polled)),
    }
}

thread_local! {
    /// The guards of this OS thread's polls under way with a runtime
    /// entered, innermost last, each with its runtime (see [`Entered`]).
    static ENTERED: RefCell<Vec<(&'static Handle, EnterGuard<'static>)>> =
        const { RefCell::new(Vec::new()) };
}

/// The bridge's runtime entered for one poll of a future under
/// [`block_on`], and left when the poll returns.
///
/// tokio keeps its "current runtime" as a stack per OS thread and requires
/// its guards to be dropped in the reverse order they were made. A poll may
/// park its green thread in a wait of fibra's (a fibra sleep, lock, channel,
/// Ractor receive inside the future), and the runtime's other green threads,
/// on the same OS thread, then make and drop guards of their own in any
/// order. So the guard is not held on the green thread's stack but here, and
/// every switch away from a green thread takes its guards off the OS thread
/// ([`leave`]) and puts them back when it runs again: the stack only ever
/// holds the running green thread's guards.
struct Entered(());

impl Entered {
    fn new(runtime: &'static Handle) -> Entered {
        enter(runtime);
        Entered(())
    }
}

/// Enters `runtime` on this OS thread, innermost.
fn enter(runtime: &'static Handle) {
    let guard = runtime.enter();
    // At the thread's exit, with the list gone, the guard is dropped at
    // once: the future is then polled without the runtime entered.
    let _ = ENTERED.try_with(|entered| entered.borrow_mut().push((runtime, guard)));
}

impl Drop for Entered {
    fn drop(&mut self) {
        let guard = ENTERED.try_with(|entered| entered.borrow_mut().pop());
        drop(guard);
    }
}

/// Takes the running green thread's guards off its OS thread (innermost
/// first, as tokio requires) for a switch away from it; they are made again
/// when the returned [`Left`] is dropped, once the thread runs again.
pub(crate) fn leave() -> Left {
    let mut left = Vec::new();
    while let Ok(Some((runtime, guard))) = ENTERED.try_with(|entered| entered.borrow_mut().pop()) {
        drop(guard);
        left.push(runtime);
    }
    Left(left)
}

/// The runtimes [`leave`] took off, innermost first, to be entered again.
pub(crate) struct Left(Vec<&'static Handle>);

impl Drop for Left {
    fn drop(&mut self) {
        self.0.drain(..).rev().for_each(enter);
    }
}

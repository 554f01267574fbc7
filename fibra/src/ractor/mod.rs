//! Ractors (Ruby 3's `Ractor`): isolated actors that run in parallel on every
//! core, with no global lock, isolation checked by the compiler, and messages
//! moved rather than deep-copied.
//!
//! A [`Ractor`] runs a closure — its body — as a green thread on one worker of a
//! [`Pool`] (one worker OS thread per core by default). Many Ractors share the
//! workers, so a program may have far more Ractors than cores; each stays on the
//! worker it was placed on, and may spawn green threads of its own there.
//!
//! ```
//! use fibra::ractor::Ractor;
//!
//! // A Ractor that doubles what it is sent, offering each result to a taker.
//! let doubler = Ractor::new(|ctx| {
//!     while let Ok(n) = ctx.receive() {
//!         ctx.yield_value(n * 2).unwrap();
//!     }
//!     "done"
//! });
//! doubler.send(21).unwrap();
//! assert_eq!(doubler.take(), Ok(42));
//! doubler.close_incoming();
//! assert_eq!(doubler.join().unwrap(), "done");
//! ```
//!
//! # Messaging
//!
//! - **Push**: [`Ractor::send`] queues a message in the Ractor's incoming port;
//!   the body gets it with [`Context::receive`], in order.
//! - **Pull**: the body offers a value with [`Context::yield_value`], which waits
//!   until a taker has it (Ruby's rendezvous); [`Ractor::take`] waits for an
//!   offer. [`select`] takes from whichever of several Ractors offers first.
//! - **Closing**: either port can be closed from either side; a send to a closed
//!   port returns the message in an error, a receive from a closed and
//!   drained incoming port returns an error at once, and so does a take from
//!   a closed outgoing port, even while the body offers a value (its
//!   `yield_value` gets the value back). When the body returns or panics,
//!   both ports close, waking everyone who waits.
//! - **Errors**: a panic in a body reaches [`Ractor::join`] as a
//!   [`RemoteError`] with the payload, and every taker as
//!   [`TakeError::Panicked`] with the message.
//!
//! Waiting works from anywhere: inside a Ractor or another green thread it parks
//! only that green thread; on a plain OS thread (such as `main`) it blocks that
//! thread.
//!
//! # From async code
//!
//! A task of any async executor (tokio, async-std, `fibra::block_on`) can hand
//! work to Ractors and await it without blocking the executor's thread:
//!
//! - **`ractor.await`** waits for the final value: `Ractor` implements
//!   [`IntoFuture`] (the future is a [`Join`]) and
//!   resolves to what [`Ractor::join`] returns — as `.await` on a tokio
//!   `JoinHandle` gives a task's result.
//! - **[`Ractor::take_async`]** takes the next yielded value (a [`Take`]).
//! - **[`Ractor::send`]** never waits (the incoming port is unbounded), so async
//!   code calls it as it is.
//!
//! The blocking methods keep the plain names, as in the rest of fibra, where
//! waiting parks a green thread; the async one takes the `_async` suffix, and
//! the final value gets `IntoFuture` because awaiting a handle for its result is
//! what Rust's executors already do. Both futures are `Send` when the values
//! are, and cancel-safe: one dropped while pending (a lost `select!` branch, a
//! timeout) has taken nothing, and the value stays for the next taker or
//! joiner.
//!
//! ```
//! use fibra::ractor::{Context, Ractor};
//!
//! let squarer = Ractor::new(|ctx: &Context<u64, u64>| {
//!     while let Ok(n) = ctx.receive() {
//!         ctx.yield_value(n * n).unwrap();
//!     }
//!     "closed"
//! });
//! // Inside a task of any executor; here fibra's own block_on runs it.
//! let (square, end) = fibra::block_on(async {
//!     squarer.send(12).unwrap();
//!     let square = squarer.take_async().await.unwrap();
//!     squarer.close_incoming();
//!     (square, squarer.await.unwrap())
//! });
//! assert_eq!((square, end), (144, "closed"));
//! ```
//!
//! # Isolation, checked by the compiler
//!
//! Ruby checks at run time that a Ractor touches no shared mutable object, and
//! deep-copies every message that is not shareable. fibra's types make the
//! same guarantees before the program runs:
//!
//! | Ruby, at run time | fibra, at compile time |
//! |---|---|
//! | the block may not refer to outer variables (`ArgumentError`) | the body is `Send + 'static`: it owns what it captures |
//! | a message is deep-copied, or moved with `move: true` | a message is `Send` and is moved, never copied; a sender that keeps a copy clones it first |
//! | only shareable (deeply frozen) objects are shared | shared data is `Sync` behind an [`Arc`] ([`make_shareable`]) |
//! | `Ractor::IsolationError` on access to another Ractor's objects | values that are neither `Send` nor `Sync` (an `Rc`, a `RefCell`, a green `Mutex`) cannot cross |
//!
//! # Costs, and where they are measured
//!
//! While both workers are awake, a message between Ractors on two workers
//! takes no lock, no allocation and no system call: a receiver with nothing
//! else to run spins briefly in [`Context::receive`] before it parks. A
//! started Ractor that waits holds one touched page of its stack and about
//! 760 bytes of heap; a pool whose runtimes compact parked green threads
//! ([`Pool::with_runtime`] with
//! [`Builder::compact_parked_after`](crate::runtime::Builder::compact_parked_after))
//! gives that page back. The measurements and the accounting behind these
//! are in the repository: `docs/internals/ractor-round-trip.md` (where a
//! round trip's time goes, and how long a receiver spins) and
//! `docs/internals/ractor-idle-cost.md` (what an idle Ractor costs, and
//! where creating one goes).
//!
//! # Placement
//!
//! [`Ractor::new`] and [`Pool::spawn`] put a Ractor on the least loaded
//! worker, so Ractors that compute, or many that send to one, run on every
//! core at once. Two Ractors that take turns instead — one sends and waits
//! for the other's reply — are better on one worker: [`Pool::spawn_near`]
//! (or [`Ractor::new_near`]) places a Ractor on the worker of a given one,
//! and [`Pool::spawn_here`] (or [`Ractor::new_here`]) on the calling
//! Ractor's own. The pair then shares one OS thread: a message between them
//! is a switch between two green threads there, the sender waking the
//! receiver straight into its worker's run queue, and no other core takes
//! part — so nothing is lost when other processes load the machine and
//! either core may be taken away (the `ractor-pingpong-loaded` experiment
//! of `fibra-bench` measures it), which is how Go runs such a pair (it
//! readies a goroutine on the sender's own processor). Ractors placed on one
//! worker never run at the same time: keep the default placement for those
//! meant to run in parallel.
//!
//! # Ruby names
//!
//! | Ruby | fibra |
//! |---|---|
//! | `Ractor.new { … }` | [`Ractor::new`]`(\|ctx\| …)`, [`Pool::spawn`]; beside another Ractor [`Pool::spawn_near`] |
//! | `r.send(v)`, `r << v` | [`Ractor::send`] |
//! | `Ractor.receive` | [`Context::receive`] |
//! | `Ractor.yield(v)` | [`Context::yield_value`] |
//! | `r.take` | [`Ractor::take`]; from async code [`Ractor::take_async`] |
//! | `Ractor.select(r1, r2)` | [`select`]`(&[&r1, &r2])` |
//! | `r.close_incoming`, `r.close_outgoing` | [`Ractor::close_incoming`], [`Ractor::close_outgoing`] (and the same on [`Context`]) |
//! | `r.value` | [`Ractor::join`]; from async code `ractor.await` |
//! | `Ractor.make_shareable(obj)` | [`make_shareable`]`(value)` → [`Arc`] |
//! | `Ractor.shareable?(obj)` | the bound `T: Sync` (checked by the compiler) |
//! | `Ractor::RemoteError`, `Ractor::ClosedError` | [`RemoteError`], [`TakeError`], [`SendError`], [`Closed`] |

// The files: a Ractor is its handle, `Ractor` (handle.rs), and its body's
// `Context` (context.rs), both on its two ports (ports.rs: the incoming
// mailbox/, the outgoing outbox.rs), and an outcome that its joiners wait
// for (outcome.rs); `select` (select.rs) takes from several Ractors; the
// futures for async code are in future.rs; `Pool` and its workers in
// pool.rs, placement beside another Ractor in near.rs, and what a worker
// tells a dump of its Ractors in census.rs. Starting a Ractor and ending it
// are here, because a dump cuts a Ractor body's backtrace at the symbol
// `fibra::ractor::<impl fibra::ractor::pool::Pool>::spawn`, which names this
// module (`trim` in runtime/observe/dump/symbols.rs).

mod census;
mod context;
mod error;
mod future;
mod handle;
mod mailbox;
mod near;
mod outbox;
mod outcome;
mod pool;
mod ports;
mod select;

pub use context::Context;
pub use error::{Closed, RemoteError, SendError, TakeError};
pub use future::{Join, Take};
pub use handle::Ractor;
pub use pool::Pool;
pub use select::select;

use crate::runtime::Started;
use crate::runtime::scheduler::Cancelled;
use mailbox::Mailbox;
use outbox::Outbox;
use outcome::Outcome;
use ports::Ports;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

impl Pool {
    /// Starts a Ractor running `body` on the least loaded worker of this pool.
    /// (To place it beside a Ractor it talks to, see [`Pool::spawn_near`].)
    pub fn spawn<In, Out, R, F>(&self, body: F) -> Ractor<In, Out, R>
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
        In: Send + 'static,
        Out: Send + 'static,
        R: Send + 'static,
    {
        self.spawn_placed(self.claim(), body)
    }

    /// Starts a Ractor running `body` on the worker `placed` counts it on.
    fn spawn_placed<In, Out, R, F>(&self, placed: pool::Placed, body: F) -> Ractor<In, Out, R>
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
        In: Send + 'static,
        Out: Send + 'static,
        R: Send + 'static,
    {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let ports = Arc::new(Ports {
            incoming: Mailbox::new(),
            outgoing: Outbox::new(),
        });
        let outcome = Arc::new(Outcome::new());
        let ending = Ending {
            ports: ports.clone(),
            outcome: outcome.clone(),
            done: false,
        };
        let ractor = census::Entry {
            id,
            ports: Arc::downgrade(&ports) as Weak<dyn census::Queue>,
            outcome: Arc::downgrade(&outcome) as Weak<dyn census::Progress>,
        };
        let worker = placed.worker();
        let job = pool::Job {
            ractor,
            body: Box::new(move |started: Started| {
                // Counted on its worker until it ends, however it ends.
                let _placed = placed;
                match started {
                    Started::Run => {}
                    Started::Cancelled => {
                        // Its body, dropped unrun, on the Ractor's own stack.
                        let dropped = crate::runtime::run_thread(move || drop(body));
                        ending.finish(Err(match dropped {
                            Ok(()) => RemoteError::Cancelled,
                            Err(payload) => RemoteError::Panicked(payload),
                        }));
                        return;
                    }
                    Started::NoStack(err) => {
                        let why = format!("fibra: the Ractor could not start: {err}");
                        eprintln!("{why}");
                        ending.finish(Err(RemoteError::Panicked(Box::new(why))));
                        return;
                    }
                }
                let context = Context {
                    ports: ending.ports.clone(),
                    _one_receiver: PhantomData,
                };
                let result = crate::runtime::run_thread(|| body(&context));
                ending.finish(match result {
                    Ok(value) => Ok(value),
                    Err(payload) if payload.is::<Cancelled>() => Err(RemoteError::Cancelled),
                    Err(payload) => Err(RemoteError::Panicked(payload)),
                });
            }),
        };
        self.place(worker, job);
        Ractor {
            ports,
            outcome,
            id,
            home: self.home(worker),
        }
    }
}

/// Ends a Ractor: closes its ports and records its outcome. Owned by the job
/// that runs the body, so that a job dropped before it ran (its pool closed
/// first) still ends its Ractor, as cancelled, and nobody waits forever.
struct Ending<In, Out, R> {
    ports: Arc<Ports<In, Out>>,
    outcome: Arc<Outcome<R>>,
    done: bool,
}

impl<In, Out, R> Ending<In, Out, R> {
    fn finish(mut self, value: Result<R, RemoteError>) {
        self.end(value);
    }

    fn end(&mut self, value: Result<R, RemoteError>) {
        self.done = true;
        let reason = match &value {
            Ok(_) | Err(RemoteError::AlreadyJoined) => TakeError::Closed,
            Err(RemoteError::Cancelled) => TakeError::Cancelled,
            Err(err) => {
                TakeError::Panicked(err.message().unwrap_or("a non-string payload").to_string())
            }
        };
        self.ports.incoming.close();
        self.ports.outgoing.close(reason);
        self.outcome.finish(value);
    }
}

impl<In, Out, R> Drop for Ending<In, Out, R> {
    fn drop(&mut self) {
        if !self.done {
            self.end(Err(RemoteError::Cancelled));
        }
    }
}

/// Makes `value` shareable between Ractors without copying (Ruby's
/// `Ractor.make_shareable`): immutable (`Sync`), reference-counted. Clones of
/// the [`Arc`] are cheap and may be sent anywhere.
///
/// ```
/// use fibra::ractor::{Ractor, make_shareable};
///
/// let table = make_shareable(vec![1u64, 2, 3]);
/// let readers: Vec<_> = (0..3)
///     .map(|i| {
///         let table = table.clone();
///         Ractor::new(move |_: &fibra::ractor::Context<()>| table[i] * 10)
///     })
///     .collect();
/// let read: Vec<u64> = readers.into_iter().map(|r| r.join().unwrap()).collect();
/// assert_eq!(read, [10, 20, 30]);
/// ```
pub fn make_shareable<T: Send + Sync>(value: T) -> Arc<T> {
    Arc::new(value)
}

/// A Ractor that offers nothing until its incoming port closes (for the
/// tests of waits on it that unwind).
#[cfg(test)]
fn quiet_one() -> Ractor<(), u64> {
    Ractor::new(|ctx: &Context<(), u64>| {
        let _ = ctx.receive();
    })
}

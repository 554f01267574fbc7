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

mod census;
mod error;
mod future;
mod mailbox;
mod near;
mod outbox;
mod pool;
pub(crate) mod waiters;

pub use error::{Closed, RemoteError, SendError, TakeError};
pub use future::{Join, Take};
pub use pool::Pool;

use crate::runtime::WaitReason;
use crate::runtime::scheduler::Cancelled;
use crate::runtime::waiter;
use mailbox::Mailbox;
use outbox::{Outbox, Taker};
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use waiters::{Place, Registration, Waiters, Watched};

/// A Ractor: a handle on an actor running on a worker of a [`Pool`].
///
/// `In` is what it receives, `Out` what it yields to takers, `R` what its body
/// returns. Handles are cheap to clone and may be sent to and shared between
/// threads and other Ractors.
pub struct Ractor<In, Out = (), R = ()> {
    ports: Arc<Ports<In, Out>>,
    outcome: Arc<Outcome<R>>,
    id: u64,
    /// Where it runs, for [`Pool::spawn_near`].
    home: pool::Home,
}

struct Ports<In, Out> {
    incoming: Mailbox<In>,
    outgoing: Outbox<Out>,
}

/// What a Ractor's body receives: its own ports.
///
/// The body is lent it (`&Context`) for as long as it runs. It is neither
/// `Send` nor `Sync`: the incoming port has one receiver, the body's own
/// green thread, which is what lets a message arrive without a lock.
///
/// ```compile_fail
/// // A Context cannot be shared with another thread.
/// let r = fibra::ractor::Ractor::new(|ctx: &fibra::ractor::Context<u8>| {
///     std::thread::scope(|s| {
///         s.spawn(|| ctx.receive());
///     });
/// });
/// ```
pub struct Context<In, Out = ()> {
    ports: Arc<Ports<In, Out>>,
    /// Neither `Send` nor `Sync` (see above).
    _one_receiver: PhantomData<*const ()>,
}

impl<In, Out, R> Ractor<In, Out, R>
where
    In: Send + 'static,
    Out: Send + 'static,
    R: Send + 'static,
{
    /// Starts a Ractor running `body` on the process-wide pool (one worker per
    /// core, started on first use).
    pub fn new<F>(body: F) -> Self
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
    {
        pool::global().spawn(body)
    }
}

impl<In, Out, R> Ractor<In, Out, R> {
    /// Queues `message` in the Ractor's incoming port (Ruby's `Ractor#send`).
    /// It never waits (the port has no bound), so async code calls it as it is.
    ///
    /// # Errors
    ///
    /// The message comes back in a [`SendError`] if the port is closed.
    pub fn send(&self, message: In) -> Result<(), SendError<In>> {
        self.ports.incoming.send(message)
    }

    /// Waits for the Ractor to offer a value with [`Context::yield_value`] and
    /// takes it (Ruby's `Ractor#take`).
    ///
    /// # Errors
    ///
    /// [`TakeError`] at once if the outgoing port is closed or the Ractor has
    /// finished (with the panic message if it panicked).
    pub fn take(&self) -> Result<Out, TakeError> {
        self.ports.outgoing.take()
    }

    /// Waits for the Ractor's body to finish and returns what it returned
    /// (Ruby's `Ractor#value`).
    ///
    /// # Errors
    ///
    /// [`RemoteError`] if it panicked (with the payload) or was cancelled, or if
    /// another handle already took the value.
    pub fn join(self) -> Result<R, RemoteError> {
        self.outcome.wait()
    }

    /// Whether the body has finished.
    pub fn is_finished(&self) -> bool {
        self.outcome.lock().finished
    }

    /// Closes the incoming port: sends fail from now on, and the body's
    /// `receive` fails once it has drained what was sent before. Returns whether
    /// the port was open.
    pub fn close_incoming(&self) -> bool {
        self.ports.incoming.close()
    }

    /// Closes the outgoing port: takers and the body's `yield_value` fail from
    /// now on. A value the body offers at that moment is not taken: its
    /// `yield_value` returns it in [`Closed`] (as Ruby's `take` raises
    /// `ClosedError` after `close_outgoing` even while the Ractor yields).
    /// Returns whether the port was open.
    pub fn close_outgoing(&self) -> bool {
        self.ports.outgoing.close(TakeError::Closed)
    }

    /// A number that names this Ractor for the life of the process.
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl<In, Out, R> Clone for Ractor<In, Out, R> {
    fn clone(&self) -> Self {
        Ractor {
            ports: self.ports.clone(),
            outcome: self.outcome.clone(),
            id: self.id,
            home: self.home,
        }
    }
}

impl<In, Out, R> fmt::Debug for Ractor<In, Out, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ractor")
            .field("id", &self.id)
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<In, Out> Context<In, Out> {
    /// Waits for the next message (Ruby's `Ractor.receive`).
    ///
    /// # Errors
    ///
    /// [`Closed`] once the incoming port is closed and every message sent
    /// before has been received.
    pub fn receive(&self) -> Result<In, Closed> {
        // SAFETY: the mailbox's single consumer is whoever holds this Context,
        // which cannot leave the body's OS thread (not `Send` nor `Sync`), and
        // whose calls there never overlap (see `mailbox`'s module docs).
        unsafe { self.ports.incoming.receive() }
    }

    /// The next message if one has arrived, without waiting.
    ///
    /// # Errors
    ///
    /// [`Closed`] if the port is closed and drained.
    pub fn try_receive(&self) -> Result<Option<In>, Closed> {
        // SAFETY: as in `receive`.
        unsafe { self.ports.incoming.try_receive() }
    }

    /// Offers `value` to takers and waits until one has taken it (Ruby's
    /// `Ractor.yield`).
    ///
    /// # Errors
    ///
    /// The value comes back in [`Closed`] if the outgoing port is closed
    /// (before or while waiting).
    pub fn yield_value(&self, value: Out) -> Result<(), Closed<Out>> {
        self.ports.outgoing.offer(value)
    }

    /// Closes this Ractor's incoming port (see [`Ractor::close_incoming`]).
    pub fn close_incoming(&self) -> bool {
        self.ports.incoming.close()
    }

    /// Closes this Ractor's outgoing port (see [`Ractor::close_outgoing`]).
    pub fn close_outgoing(&self) -> bool {
        self.ports.outgoing.close(TakeError::Closed)
    }
}

impl<In, Out> Drop for Context<In, Out> {
    fn drop(&mut self) {
        // SAFETY: as in `receive`; this is the Context's last use.
        unsafe { self.ports.incoming.forget_receiver() };
    }
}

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
            body: Box::new(move |started: io::Result<()>| {
                // Counted on its worker until it ends, however it ends.
                let _placed = placed;
                if let Err(err) = started {
                    let why = format!("fibra: the Ractor could not start: {err}");
                    eprintln!("{why}");
                    ending.finish(Err(RemoteError::Panicked(Box::new(why))));
                    return;
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

impl<In: Send, Out: Send> census::Queue for Ports<In, Out> {
    unsafe fn queued(&self) -> usize {
        // SAFETY: the caller's (the same contract).
        unsafe { self.incoming.queued() }
    }
}

impl<R: Send> census::Progress for Outcome<R> {
    fn progress(&self) -> census::Stage {
        let state = self.lock();
        match (state.finished, state.value.is_some()) {
            (false, _) => census::Stage::Running,
            (true, true) => census::Stage::Finished,
            (true, false) => census::Stage::Joined,
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

/// The final value of a Ractor, and who waits for it.
struct Outcome<R> {
    state: Mutex<OutcomeState<R>>,
}

struct OutcomeState<R> {
    finished: bool,
    value: Option<Result<R, RemoteError>>,
    joiners: Waiters,
}

impl<R> Outcome<R> {
    fn new() -> Outcome<R> {
        Outcome {
            state: Mutex::new(OutcomeState {
                finished: false,
                value: None,
                joiners: Waiters::default(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, OutcomeState<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn finish(&self, value: Result<R, RemoteError>) {
        let joiners = {
            let mut state = self.lock();
            state.finished = true;
            state.value = Some(value);
            state.joiners.take()
        };
        joiners.wake();
    }

    fn wait(&self) -> Result<R, RemoteError> {
        let mut joiner = Place::new(self);
        loop {
            if let Some(outcome) = joiner.look(|outcome, registration| {
                outcome.try_join(|joiners| joiners.register_current(registration))
            }) {
                return outcome;
            }
            waiter::wait(WaitReason::RactorJoin);
        }
    }

    /// The final value if the body has finished (or `AlreadyJoined` if another
    /// joiner took it); else `None`, after `register` has registered the
    /// caller to be woken when it finishes.
    fn try_join(&self, register: impl FnOnce(&mut Waiters)) -> Option<Result<R, RemoteError>> {
        let mut state = self.lock();
        if state.finished {
            return Some(
                state
                    .value
                    .take()
                    .unwrap_or(Err(RemoteError::AlreadyJoined)),
            );
        }
        register(&mut state.joiners);
        None
    }
}

impl<R> Watched for Outcome<R> {
    fn forget(&self, registration: Registration) {
        self.lock().joiners.remove(registration);
    }
}

/// Takes from whichever of `ractors` offers a value first (Ruby's
/// `Ractor.select`); returns its index with the value, or with the error of a
/// Ractor whose outgoing port is closed.
///
/// ```
/// use fibra::ractor::{Ractor, select};
///
/// let slow = Ractor::new(|ctx: &fibra::ractor::Context<(), &str>| {
///     let _ = ctx.receive(); // offers nothing until told to
/// });
/// let fast = Ractor::new(|ctx: &fibra::ractor::Context<(), &str>| ctx.yield_value("fast").unwrap());
/// assert_eq!(select(&[&slow, &fast]), (1, Ok("fast")));
/// slow.close_incoming();
/// ```
///
/// # Panics
///
/// If `ractors` is empty.
pub fn select<In, Out, R>(ractors: &[&Ractor<In, Out, R>]) -> (usize, Result<Out, TakeError>) {
    assert!(
        !ractors.is_empty(),
        "fibra: select needs at least one Ractor"
    );
    // A place among each one's takers; those left are removed when they
    // drop, however select returns or unwinds.
    let mut takers: Vec<Taker<'_, Out>> = ractors
        .iter()
        .map(|ractor| Taker::new(&ractor.ports.outgoing))
        .collect();
    loop {
        for (index, taker) in takers.iter_mut().enumerate() {
            if let Some(outcome) = taker.try_take() {
                return (index, outcome);
            }
        }
        waiter::wait(WaitReason::RactorSelect);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A Ractor that offers nothing until its incoming port closes.
    fn quiet_one() -> Ractor<(), u64> {
        Ractor::new(|ctx: &Context<(), u64>| {
            let _ = ctx.receive();
        })
    }

    /// How many takers wait for `ractor`'s next offer.
    fn takers<In, Out, R>(ractor: &Ractor<In, Out, R>) -> usize {
        ractor.ports.outgoing.takers()
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn select_leaves_no_taker_behind_in_a_ractor_that_offered_nothing() {
        let quiet = quiet_one();
        let busy = Ractor::new(|ctx: &Context<(), u64>| {
            let mut i = 0;
            while ctx.yield_value(i).is_ok() {
                i += 1;
            }
        });
        for round in 0..1000 {
            // The quiet one comes first, so every select registers there.
            assert_eq!(select(&[&quiet, &busy]), (1, Ok(round)));
            assert_eq!(takers(&quiet), 0, "round {round} left its entry");
        }
        busy.close_outgoing();
        quiet.close_incoming();
    }

    /// How many joiners wait for `ractor`'s end.
    fn joiners<In, Out, R>(ractor: &Ractor<In, Out, R>) -> usize {
        ractor.outcome.lock().joiners.len()
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn a_join_that_unwinds_leaves_no_joiner_behind() {
        let quiet = quiet_one();
        let left = crate::run({
            let quiet = quiet.clone();
            move || {
                let joins: Vec<_> = (0..3)
                    .map(|_| {
                        let quiet = quiet.clone();
                        crate::spawn(move || quiet.join())
                    })
                    .collect();
                crate::runtime::yield_now(); // they all wait now
                assert_eq!(joiners(&quiet), 3);
                for join in joins {
                    join.cancel();
                    assert!(join.join().is_err(), "the join was cancelled");
                }
                joiners(&quiet)
            }
        });
        assert_eq!(left, 0, "each cancelled join removed its entry");
        quiet.close_incoming();
        assert!(quiet.join().is_ok());
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn a_take_or_select_that_unwinds_leaves_no_taker_behind() {
        let quiet = quiet_one();
        let other = quiet_one();
        let (left_take, left_select) = crate::run({
            let (quiet, other) = (quiet.clone(), other.clone());
            move || {
                let take = crate::spawn({
                    let quiet = quiet.clone();
                    move || quiet.take()
                });
                let select = crate::spawn({
                    let (quiet, other) = (quiet.clone(), other.clone());
                    move || select(&[&quiet, &other])
                });
                crate::runtime::yield_now(); // both wait now
                assert_eq!(takers(&quiet), 2);
                take.cancel();
                assert!(take.join().is_err(), "the take was cancelled");
                let left_take = takers(&quiet);
                select.cancel();
                assert!(select.join().is_err(), "the select was cancelled");
                (left_take, (takers(&quiet), takers(&other)))
            }
        });
        assert_eq!(left_take, 1, "the cancelled take removed its entry");
        assert_eq!(left_select, (0, 0), "the cancelled select removed both");
        quiet.close_incoming();
        other.close_incoming();
    }
}

//! Spawning green threads and waiting for them (Ruby's `Thread.new`,
//! `Thread#join` and `Thread#value`).

use super::green_local::run_thread;
use super::scheduler::{self, Cancelled, Options, RuntimeId, Scheduler};
use super::task::{Body, Joined, Start, Started, TaskId};
use super::wait::WaitReason;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

/// Starts a green thread that runs `f`, on this runtime's OS thread.
///
/// The closure need not be `Send`: green threads never leave their OS thread,
/// so they may share `Rc`s and `RefCell`s. It runs when the current thread
/// blocks or yields.
///
/// ```
/// fibra::run(|| {
///     let handles: Vec<_> = (1..=3u64).map(|n| fibra::spawn(move || n * n)).collect();
///     let squares: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
///     assert_eq!(squares, [1, 4, 9]);
/// });
/// ```
///
/// If no stack can be had for the thread when it first runs (memory or the
/// kernel's map count exhausted), it does not run, and [`JoinHandle::join`]
/// returns [`JoinError::Panicked`] with the reason (printed on stderr
/// instead if the handle was dropped).
///
/// # Panics
///
/// Outside a runtime.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    spawn_with(&scheduler::current_for("fibra::spawn"), f, None)
}

/// Starts a green thread that runs `body` on this runtime's OS thread, with
/// no [`JoinHandle`]: `body` is told whether the thread got a stack (see
/// [`Body`]) and reports its own outcome. Returns the thread's
/// [`Thread::id`](super::Thread::id). For the Ractor pool, whose jobs end
/// their Ractors themselves: it saves a spawn the handle's shared slot and a
/// box around the body.
///
/// # Panics
///
/// Outside a runtime.
pub(crate) fn spawn_detached(body: Box<dyn FnOnce(Started)>) -> u64 {
    scheduler::current().spawn(Body::Boxed(body), None).serial
}

/// [`spawn`] on `scheduler`, with what a [`ThreadBuilder`](super::ThreadBuilder)
/// was told.
pub(super) fn spawn_with<F, T>(
    scheduler: &Scheduler,
    f: F,
    options: Option<Options>,
) -> JoinHandle<T>
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    // SAFETY: `f` and `T` are `'static`: they borrow nothing that could be
    // gone before the thread has ended.
    unsafe { spawn_unchecked(scheduler, f, options, ()) }
}

/// [`spawn_with`] for a closure, and a value, that may borrow: the thread
/// holds `until_ended` until its end, when it is dropped last, after the
/// thread's value has gone to its handle's slot (or been dropped, with the
/// slot, if no handle was left) and its joiner was woken — or, if the thread
/// never runs, when its body is dropped.
///
/// # Safety
///
/// What `f` and `T` borrow must stay alive until `until_ended` is dropped,
/// and for as long as the returned handle holds the value. ([`scope`](super::scope)
/// keeps this: it does not return before every `until_ended` of its threads
/// is dropped.)
pub(super) unsafe fn spawn_unchecked<'a, F, T, E>(
    scheduler: &Scheduler,
    f: F,
    options: Option<Options>,
    until_ended: E,
) -> JoinHandle<T>
where
    F: FnOnce() -> T + 'a,
    T: 'a,
    E: 'a,
{
    let spawned = Rc::new(Spawned {
        slot: Slot {
            outcome: RefCell::new(None),
            joiner: Cell::new(None),
        },
        work: Cell::new(Some((f, until_ended))),
    });
    let slot: Rc<dyn HasSlot<T> + 'a> = spawned.clone();
    let start: Rc<dyn Start + 'a> = spawned;
    // The handle's `slot` reaches only the slot: the closure and
    // `until_ended` have left the allocation by the time the thread has run
    // or its body was dropped.
    // SAFETY: only the lifetimes of the trait objects change, not their
    // types or layouts; what they borrow outlives every use, as the caller
    // promised.
    let (start, slot) = unsafe {
        (
            std::mem::transmute::<Rc<dyn Start + 'a>, Rc<dyn Start>>(start),
            std::mem::transmute::<Rc<dyn HasSlot<T> + 'a>, Rc<dyn HasSlot<T>>>(slot),
        )
    };
    let task = scheduler.spawn(Body::Joined(Joined(Some(start))), options);
    JoinHandle {
        runtime: scheduler.id(),
        task,
        slot,
    }
}

/// What a green thread's body makes of its closure: what `f` returned, or
/// how it ended — its panic, its cancellation (before it started too:
/// then `f` is dropped unrun), or, when the thread got no stack, that
/// reason as a panic, which is printed on stderr if `unjoined` says that no
/// handle is left to report it.
pub(super) fn outcome<T>(
    started: Started,
    f: impl FnOnce() -> T,
    unjoined: impl FnOnce() -> bool,
) -> Result<T, JoinError> {
    match started {
        Started::Cancelled => {
            // Dropped as the thread's code, on its stack: a destructor's
            // panic is the thread's.
            match run_thread(move || drop(f)) {
                Ok(()) => Err(JoinError::Cancelled),
                Err(payload) => Err(JoinError::Panicked(payload)),
            }
        }
        Started::Run => run_thread(f).map_err(|payload| {
            if payload.is::<Cancelled>() {
                JoinError::Cancelled
            } else {
                // The panic hook named the OS thread; say which green
                // thread it was when it has a name to tell.
                if let Some(name) = scheduler::current_name() {
                    eprintln!("fibra: the panic above was in green thread '{name}'");
                }
                JoinError::Panicked(payload)
            }
        }),
        Started::NoStack(err) => {
            drop(f);
            let why = format!("fibra: the green thread could not start: {err}");
            // As a panic in a thread nobody joins is still printed, so is
            // this failure when no handle is left to report it.
            if unjoined() {
                eprintln!("{why}");
            }
            Err(JoinError::Panicked(Box::new(why)))
        }
    }
}

/// Where a green thread's outcome waits for its handle, and who waits for it.
struct Slot<T> {
    outcome: RefCell<Option<Result<T, JoinError>>>,
    joiner: Cell<Option<TaskId>>,
}

/// A spawned thread's one allocation (two boxes before: a spawn that outpaces
/// the joins pays the allocator for each block it holds): the slot its
/// handle reads, and until the thread starts, its closure and what it holds
/// to its end (`spawn_unchecked`'s `until_ended`).
struct Spawned<T, W> {
    slot: Slot<T>,
    work: Cell<Option<W>>,
}

/// The slot of a [`Spawned`], whatever its closure: what a handle holds.
trait HasSlot<T> {
    fn slot(&self) -> &Slot<T>;
}

impl<T, W> HasSlot<T> for Spawned<T, W> {
    fn slot(&self) -> &Slot<T> {
        &self.slot
    }
}

impl<F, T, E> Start for Spawned<T, (F, E)>
where
    F: FnOnce() -> T,
{
    fn start(self: Rc<Self>, started: Started) {
        let Some((f, until_ended)) = self.work.take() else {
            unreachable!("fibra: a green thread started twice")
        };
        let outcome = outcome(started, f, || Rc::strong_count(&self) == 1);
        *self.slot.outcome.borrow_mut() = Some(outcome);
        if let Some(joiner) = self.slot.joiner.take() {
            scheduler::current().wake(joiner);
        }
        // The value, if nobody holds the handle, then `until_ended`.
        drop(self);
        drop(until_ended);
    }

    fn discard(&self) {
        drop(self.work.take());
    }
}

/// Owns the right to wait for a green thread and take what it returned.
///
/// Dropping it detaches the thread: it runs on, and what it returns is dropped.
/// If it panics, the panic hook has already reported it (as for any panic), and
/// nothing else happens — the other threads go on.
///
/// # After its runtime has ended
///
/// A handle may outlive its runtime (`run` may return it, say). It names its
/// own runtime, never another: used after that runtime's end — outside any
/// runtime, or in a later one on the same OS thread — it reports the outcome
/// the thread had when the runtime ended. A thread that finished before gives
/// its value or error to [`join`](JoinHandle::join) as ever. A thread still
/// running then was cancelled by the end of the runtime (see
/// [the end of a runtime](super#the-end-of-a-runtime)); if it could not finish
/// unwinding and was abandoned, its handle says so: [`is_finished`] is `true`,
/// `join` returns [`JoinError::Cancelled`] at once, and
/// [`cancel`](JoinHandle::cancel) does nothing.
///
/// ```
/// let handle = fibra::run(|| {
///     let stuck = fibra::spawn(|| loop {
///         fibra::runtime::park(); // nothing will wake it
///     });
///     fibra::runtime::yield_now();
///     stuck // the end of the runtime cancels it
/// });
/// assert!(handle.is_finished());
/// assert!(matches!(handle.join(), Err(fibra::runtime::JoinError::Cancelled)));
/// ```
///
/// [`is_finished`]: JoinHandle::is_finished
pub struct JoinHandle<T> {
    runtime: RuntimeId,
    task: TaskId,
    slot: Rc<dyn HasSlot<T>>,
}

impl<T> JoinHandle<T> {
    /// Parks until the thread has finished, and returns its value.
    ///
    /// # Errors
    ///
    /// [`JoinError`] if the thread panicked (with the payload) or was cancelled
    /// (by [`cancel`](JoinHandle::cancel), or by the end of its runtime: see
    /// [above](JoinHandle#after-its-runtime-has-ended)).
    pub fn join(self) -> Result<T, JoinError> {
        self.wait()
    }

    /// [`join`](Self::join), leaving the handle (and the thread's slot) to
    /// its owner.
    pub(super) fn wait(&self) -> Result<T, JoinError> {
        let scheduler = scheduler::current_if(self.runtime);
        loop {
            if let Some(outcome) = self.slot.slot().outcome.borrow_mut().take() {
                return outcome;
            }
            let Some(scheduler) = &scheduler else {
                // Its runtime has ended, and with it the thread.
                return Err(JoinError::Cancelled);
            };
            self.slot.slot().joiner.set(Some(scheduler.running()));
            scheduler.park_on(WaitReason::Join {
                thread: self.task.serial,
            });
        }
    }

    /// The thread's id in its runtime.
    pub(super) fn task(&self) -> TaskId {
        self.task
    }

    /// Whether the thread has finished (returned, panicked or been cancelled,
    /// which the end of its runtime does).
    pub fn is_finished(&self) -> bool {
        self.slot.slot().outcome.borrow().is_some() || !scheduler::is_current(self.runtime)
    }

    /// Cancels the thread (Ruby's `Thread#kill`): the next time it blocks, or at
    /// once if it is blocked now, it unwinds — its destructors run — and
    /// [`join`](JoinHandle::join) returns a cancelled [`JoinError`]. A thread that
    /// has not started yet never starts: when its turn comes, its closure is
    /// dropped (on its own stack, so those destructors may block). A started
    /// thread that never blocks again runs to its end. A finished thread is
    /// unaffected, and so is one cancelled before: a thread is told once, and
    /// the destructors that run during its unwind may block (sleep, lock,
    /// receive, join) and complete.
    ///
    /// ```
    /// use fibra::runtime::JoinError;
    ///
    /// fibra::run(|| {
    ///     let never = fibra::spawn(|| unreachable!("a thread cancelled before it started"));
    ///     never.cancel();
    ///     assert!(matches!(never.join(), Err(JoinError::Cancelled)));
    /// });
    /// ```
    ///
    /// A thread is never handed a second unwind. One that is unwinding from its
    /// own panic when it is cancelled finishes that unwind first (its
    /// destructors may still block, and complete): if the panic ends the
    /// thread, `join` returns that panic, not `Cancelled`; if the thread
    /// catches it and goes on, it is cancelled at its next block. (std counts
    /// panics per OS thread, so fibra cannot tell this thread's unwind from
    /// another green thread's of the same runtime that is blocked in the middle
    /// of one: the cancel then waits for that unwind to end too. A thread that
    /// the end of a runtime abandoned in the middle of an unwind — blocked
    /// for good in a destructor — never ends it: std's count stays raised on
    /// that OS thread, `std::thread::panicking()` stays true there, and later
    /// cancels and timeouts of green threads on that OS thread are owed for
    /// good: they are not delivered, rather than risk an abort.)
    ///
    /// Under `panic = "abort"` nothing can unwind: the thread is abandoned — it
    /// never runs again, its stack is leaked and its destructors do not run —
    /// and `join` returns the same cancelled `JoinError`.
    pub fn cancel(&self) {
        if self.slot.slot().outcome.borrow().is_some() {
            return;
        }
        let Some(scheduler) = scheduler::current_if(self.runtime) else {
            // Its runtime has ended: the thread is gone, and the thread with
            // its id in the runtime running now is another.
            return;
        };
        if scheduler.cancel(self.task) {
            // Abandoned: it will never say it finished, so say it here.
            *self.slot.slot().outcome.borrow_mut() = Some(Err(JoinError::Cancelled));
            if let Some(joiner) = self.slot.slot().joiner.take() {
                scheduler.wake(joiner);
            }
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("thread", &self.task)
            .field("finished", &self.is_finished())
            .finish()
    }
}

/// Why a green thread gave no value.
pub enum JoinError {
    /// It panicked; the payload is what it panicked with.
    Panicked(Box<dyn Any + Send>),
    /// It was cancelled before it finished.
    Cancelled,
}

impl JoinError {
    /// The panic's payload, to re-raise it with [`std::panic::resume_unwind`].
    /// `None` for a cancellation.
    pub fn into_panic(self) -> Option<Box<dyn Any + Send>> {
        match self {
            JoinError::Panicked(payload) => Some(payload),
            JoinError::Cancelled => None,
        }
    }

    /// The panic message, when the payload is a string.
    fn message(&self) -> Option<&str> {
        match self {
            JoinError::Panicked(payload) => payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str)),
            JoinError::Cancelled => None,
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::Panicked(_) => f
                .debug_tuple("Panicked")
                .field(&self.message().unwrap_or(".."))
                .finish(),
            JoinError::Cancelled => f.write_str("Cancelled"),
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self, self.message()) {
            (JoinError::Panicked(_), Some(message)) => {
                write!(f, "green thread panicked: {message}")
            }
            (JoinError::Panicked(_), None) => f.write_str("green thread panicked"),
            (JoinError::Cancelled, _) => f.write_str("green thread was cancelled"),
        }
    }
}

impl std::error::Error for JoinError {}

//! Waiting, from any OS thread, for a green thread spawned through a
//! [`Handle`](super::Handle): the [`RemoteJoinHandle`], its state shared
//! with the thread's body under a lock, and the runtime's record of such
//! threads that have not finished (so that one abandoned at the runtime's
//! end is still reported).

use super::join::JoinError;
use super::remote::Remote;
use super::scheduler::{self, Orphan};
use super::task::TaskId;
use super::wait::WaitReason;
use super::waiter::{self, Waiter};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

/// Owns the right to wait for a green thread spawned with
/// [`Handle::spawn`](super::Handle::spawn), from any OS thread, and take
/// what it returned. It is `Send` and `Sync` when the value is `Send`.
///
/// [`join`](Self::join) parks the calling green thread (only it: the others
/// of its runtime run on) or blocks the calling OS thread; `.await` waits in
/// async code, on any executor:
///
/// ```
/// fibra::run(|| {
///     let here = fibra::runtime::handle();
///     let os_thread = std::thread::spawn(move || {
///         let answer = here.spawn(|| 6 * 7).expect("the runtime runs");
///         // A `Future` too: awaited here by `block_on`, on a plain OS thread.
///         fibra::block_on(answer).unwrap()
///     });
///     // This green thread waits for the OS thread without holding the
///     // runtime, which runs the spawned green thread meanwhile.
///     let value = fibra::blocking(move || os_thread.join().unwrap());
///     assert_eq!(value, 42);
/// });
/// ```
///
/// Dropping it detaches the thread: it runs on, and what it returns is
/// dropped. If the runtime ends before the thread has run, or ends it —
/// cancels it, or abandons it because it cannot finish unwinding (see
/// [the end of a runtime](super#the-end-of-a-runtime)) — `join` returns
/// [`JoinError::Cancelled`]: a join never waits for a runtime that has
/// ended.
pub struct RemoteJoinHandle<T> {
    shared: Arc<Shared<T>>,
}

/// What a [`RemoteJoinHandle`] and its thread share.
struct Shared<T> {
    state: Mutex<State<T>>,
    /// The runtime's remote side, to send it a cancel.
    remote: Arc<Remote>,
}

struct State<T> {
    outcome: Outcome<T>,
    /// Who waits in `join`, or the task that awaits the handle.
    waiter: Option<Waiter>,
    /// The thread, once the runtime has started it.
    thread: Option<TaskId>,
    /// A cancel was asked: before the thread started, it never starts.
    cancelled: bool,
    /// The handle was dropped: nobody will take the outcome.
    detached: bool,
}

enum Outcome<T> {
    Running,
    Finished(Result<T, JoinError>),
    /// Taken by `join`, or by a poll that returned it.
    Taken,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records how the thread ended, if nothing did before (the first word
    /// is the thread's own, or the runtime's that it will never have one),
    /// and wakes the joiner.
    fn finish(&self, outcome: Result<T, JoinError>) {
        let mut state = self.lock();
        if !matches!(state.outcome, Outcome::Running) {
            drop(state);
            // A value that nobody will take is dropped outside the lock.
            drop(outcome);
            return;
        }
        state.outcome = Outcome::Finished(outcome);
        let waiter = state.waiter.take();
        drop(state);
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }
}

/// The thread's side of a [`RemoteJoinHandle`]: its body (or the errand
/// that would start it) holds it and finishes it with the thread's outcome;
/// dropped unfinished — the errand dropped because the runtime ended, the
/// body dropped because its thread never ran — it reports the thread
/// cancelled.
pub(super) struct Completion<T>(Arc<Shared<T>>);

impl<T> Completion<T> {
    /// Records the thread's outcome and wakes its joiner.
    pub(super) fn finish(self, outcome: Result<T, JoinError>) {
        self.0.finish(outcome);
    }

    /// Whether the handle was dropped (then an outcome is only dropped).
    pub(super) fn is_detached(&self) -> bool {
        self.0.lock().detached
    }

    /// Starts the thread with `spawn`, which puts this completion in its
    /// body, and records it as the thread a cancel reaches — unless a cancel
    /// came first: then the thread never starts, and its joiner is told it
    /// was cancelled. Under the lock, so that a cancel sees one or the other.
    pub(super) fn start(self, spawn: impl FnOnce(Completion<T>) -> TaskId) {
        let shared = self.0.clone();
        let mut state = shared.lock();
        if state.cancelled {
            drop(state);
            drop(self);
            return;
        }
        state.thread = Some(spawn(self));
    }

    /// What the runtime keeps of the thread until it has finished.
    pub(super) fn orphan(&self) -> Arc<dyn Orphan>
    where
        T: 'static,
    {
        self.0.clone()
    }
}

impl<T> Drop for Completion<T> {
    fn drop(&mut self) {
        self.0.finish(Err(JoinError::Cancelled));
    }
}

impl<T> Orphan for Shared<T> {
    fn orphan(&self) {
        self.finish(Err(JoinError::Cancelled));
    }
}

impl<T: Send + 'static> RemoteJoinHandle<T> {
    /// A handle and the thread's side of it, for a thread of the runtime
    /// that `remote` belongs to.
    pub(super) fn new(remote: Arc<Remote>) -> (RemoteJoinHandle<T>, Completion<T>) {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                outcome: Outcome::Running,
                waiter: None,
                thread: None,
                cancelled: false,
                detached: false,
            }),
            remote,
        });
        (
            RemoteJoinHandle {
                shared: shared.clone(),
            },
            Completion(shared),
        )
    }

    /// Waits until the thread has finished, and returns its value: a green
    /// thread parks (the other green threads of its runtime run meanwhile),
    /// an OS thread blocks. A green thread waits here as for a wake from
    /// another OS thread (its [`Unparker`](super::Unparker) is held here):
    /// meanwhile its runtime does not report a deadlock, even when the
    /// thread it joins is of the same runtime.
    ///
    /// # Errors
    ///
    /// [`JoinError`] if the thread panicked (with the payload) or was
    /// cancelled — by [`cancel`](Self::cancel), by the end of its runtime,
    /// or because its runtime ended before it ran.
    ///
    /// # Panics
    ///
    /// If the handle was awaited as a future until it gave the outcome.
    pub fn join(self) -> Result<T, JoinError> {
        loop {
            {
                let mut state = self.shared.lock();
                match std::mem::replace(&mut state.outcome, Outcome::Taken) {
                    Outcome::Finished(outcome) => return outcome,
                    Outcome::Taken => panic!("{TAKEN}"),
                    Outcome::Running => state.outcome = Outcome::Running,
                }
                if !state.waiter.as_ref().is_some_and(Waiter::is_current) {
                    state.waiter = Some(Waiter::current());
                }
            }
            waiter::wait(WaitReason::RemoteJoin);
        }
    }

    /// Whether the thread has finished (returned, panicked, or been
    /// cancelled, which the end of its runtime does), or its runtime ended
    /// before it ran.
    pub fn is_finished(&self) -> bool {
        !matches!(self.shared.lock().outcome, Outcome::Running)
    }

    /// Cancels the thread (Ruby's `Thread#kill`), from any OS thread, as
    /// [`JoinHandle::cancel`](super::JoinHandle::cancel) does: it unwinds at
    /// its next wait, or at once if it waits now, and [`join`](Self::join)
    /// returns [`JoinError::Cancelled`]; one that has not started yet never
    /// starts. It is asked of the thread's runtime as an unpark is, so the
    /// thread unwinds a moment later, not before `cancel` returns. A
    /// finished thread is unaffected, as is one whose runtime has ended
    /// (which cancelled it).
    pub fn cancel(&self) {
        let mut state = self.shared.lock();
        if !matches!(state.outcome, Outcome::Running) || state.cancelled {
            return;
        }
        state.cancelled = true;
        let Some(thread) = state.thread else {
            // Not started: the errand that would start it sees the flag.
            return;
        };
        drop(state);
        let shared = self.shared.clone();
        let cancel = Box::new(move || {
            if scheduler::current().cancel(thread) {
                // Abandoned (`panic = "abort"`): it will never say it
                // finished, so say it here.
                shared.finish(Err(JoinError::Cancelled));
            }
        });
        // Refused: the runtime is ending, and cancels the thread itself.
        let _ = self.shared.remote.send_errand(cancel);
    }
}

/// What `join` and a poll say of a handle whose outcome a poll has taken.
const TAKEN: &str = "fibra: a RemoteJoinHandle was used after it gave its thread's outcome";

/// Awaits the thread's outcome, as [`join`](RemoteJoinHandle::join) returns
/// it, from async code on any executor; the task is woken from whichever OS
/// thread finishes the green thread.
///
/// # Panics
///
/// If polled again after it returned `Ready`.
impl<T> Future for RemoteJoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.shared.lock();
        match std::mem::replace(&mut state.outcome, Outcome::Taken) {
            Outcome::Finished(outcome) => return Poll::Ready(outcome),
            Outcome::Taken => panic!("{TAKEN}"),
            Outcome::Running => state.outcome = Outcome::Running,
        }
        let known =
            matches!(&state.waiter, Some(Waiter::Task(waker)) if waker.will_wake(cx.waker()));
        if !known {
            state.waiter = Some(Waiter::Task(cx.waker().clone()));
        }
        Poll::Pending
    }
}

impl<T> Drop for RemoteJoinHandle<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.detached = true;
        // A joiner that left `join` by unwinding (cancelled) stops counting
        // as one that another OS thread may wake.
        let waiter = state.waiter.take();
        drop(state);
        drop(waiter);
    }
}

impl<T> fmt::Debug for RemoteJoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("RemoteJoinHandle")
            .field("thread", &state.thread)
            .field("finished", &!matches!(state.outcome, Outcome::Running))
            .finish()
    }
}

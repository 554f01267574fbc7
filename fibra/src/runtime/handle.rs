//! A runtime as other OS threads see it: a [`Handle`] that spawns green
//! threads onto it from anywhere.

use super::join;
use super::registry::Monitor;
use super::remote::{Errand, Remote};
use super::remote_join::{Completion, RemoteJoinHandle};
use super::scheduler::{self, Scheduler};
use super::task::Body;
use std::fmt;
use std::sync::Arc;

/// The runtime that runs on this OS thread, as a [`Handle`] that other OS
/// threads can use to spawn green threads onto it.
///
/// ```
/// use std::sync::mpsc;
///
/// fibra::run(|| {
///     let runtime = fibra::runtime::handle();
///     let (done, finished) = mpsc::channel();
///     std::thread::spawn(move || {
///         // A plain OS thread spawns a green thread onto the runtime…
///         let thread = runtime.spawn(|| fibra::runtime::current().id()).unwrap();
///         // …and blocks until it has run.
///         done.send(thread.join().unwrap()).unwrap();
///     });
///     let id = fibra::blocking(move || finished.recv().unwrap());
///     assert!(id > 1); // not this green thread, the first one
/// });
/// ```
///
/// # Panics
///
/// Outside a runtime (see [`Handle::try_current`]).
#[track_caller]
pub fn handle() -> Handle {
    Handle::try_current().expect(
        "fibra::runtime::handle called outside a fibra runtime: it must run inside a fibra runtime \
         (fibra::run(|| ...), or a green thread spawned there); \
         Handle::try_current() says None instead",
    )
}

/// A handle to a runtime, from any OS thread: [`spawn`](Handle::spawn)
/// runs a closure as a green thread of that runtime. Get one with
/// [`handle()`] inside the runtime, and clone it or send it anywhere: it is
/// `Send`, `Sync` and cheap to clone.
///
/// It does not keep its runtime running: the runtime ends when its first
/// green thread returns, as ever, and from then on `spawn` returns
/// [`SpawnError`]. Nor does it keep the runtime's resources alive, beyond
/// the small shared part through which other OS threads wake the runtime —
/// its remote queue and the eventfd of its poller — which an
/// [`Unparker`](super::Unparker) holds too.
///
/// A runtime whose green threads all wait for what only a `Handle` could
/// bring is still reported as deadlocked: a spawned thread is new work, not
/// a wake of a thread that waits. A green thread that waits for another OS
/// thread waits through something that holds its `Unparker` (a
/// [`RemoteJoinHandle`], a cross-thread queue), and while that exists the
/// runtime waits rather than report a deadlock.
#[derive(Clone)]
pub struct Handle {
    remote: Arc<Remote>,
    runtime: u64,
    /// What other OS threads read of the runtime (its metrics).
    monitor: Arc<Monitor>,
}

impl Handle {
    /// What other OS threads read of the runtime.
    pub(super) fn monitor(&self) -> &Monitor {
        &self.monitor
    }

    /// A handle to the runtime running on this OS thread, or `None` outside
    /// one.
    pub fn try_current() -> Option<Handle> {
        scheduler::try_current().map(|scheduler| Handle {
            remote: scheduler.remote().clone(),
            runtime: scheduler.id().number(),
            monitor: scheduler.monitor().clone(),
        })
    }

    /// Runs `f` as a green thread of this handle's runtime, from any OS
    /// thread — a plain OS thread, a green thread of another runtime or of
    /// this one, a [`blocking`](crate::blocking()) job, a Ractor's body — and
    /// returns a handle to wait for it from any OS thread (or to `.await`).
    ///
    /// The thread is started by the runtime's loop, as soon as it next looks
    /// at its wakes: at once if it is idle (the request wakes it as an
    /// unpark does), else between two green threads.
    ///
    /// ```
    /// fibra::run(|| {
    ///     let here = fibra::runtime::handle();
    ///     // Another runtime, on an OS thread of its own, spawns onto this one
    ///     // and parks only its own green thread while it waits.
    ///     let other = std::thread::spawn(move || {
    ///         fibra::run(move || here.spawn(|| "hello").unwrap().join().unwrap())
    ///     });
    ///     let greeting = fibra::blocking(move || other.join().unwrap());
    ///     assert_eq!(greeting, "hello");
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// [`SpawnError`] if the runtime has ended or is ending (its first green
    /// thread has returned). A request that was on its way when the runtime
    /// ended is dropped there instead, unrun: its
    /// [`join`](RemoteJoinHandle::join) returns
    /// [`JoinError::Cancelled`](super::JoinError::Cancelled).
    pub fn spawn<F, T>(&self, f: F) -> Result<RemoteJoinHandle<T>, SpawnError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let (handle, completion) = RemoteJoinHandle::new(self.remote.clone());
        let errand: Errand = Box::new(move || start(&scheduler::current(), completion, f));
        match self.remote.send_errand(errand) {
            Ok(()) => Ok(handle),
            Err(refused) => {
                drop(refused);
                Err(SpawnError {
                    runtime: self.runtime,
                })
            }
        }
    }

    /// A number that names the handle's runtime among every runtime the
    /// process has run (never reused).
    pub fn id(&self) -> u64 {
        self.runtime
    }
}

/// Starts `f` as a green thread of `scheduler` (an errand, run by its loop,
/// where it is the current runtime)
/// unless its handle cancelled it first; the thread reports to `completion`.
fn start<F, T>(scheduler: &Scheduler, completion: Completion<T>, f: F)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let orphan = completion.orphan();
    completion.start(|completion| {
        let key = scheduler.remote_joins().insert(orphan);
        let body = Box::new(move |started| {
            let outcome = join::outcome(started, f, || completion.is_detached());
            scheduler::current().remote_joins().remove(key);
            completion.finish(outcome);
        });
        scheduler.spawn(Body::Boxed(body), None)
    });
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("runtime", &self.runtime)
            .finish()
    }
}

/// [`Handle::spawn`] on a runtime that has ended, or is ending (its first
/// green thread has returned): the closure was dropped, unrun.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnError {
    runtime: u64,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fibra: cannot spawn onto runtime {}: it has ended (or is ending)",
            self.runtime
        )
    }
}

impl std::error::Error for SpawnError {}

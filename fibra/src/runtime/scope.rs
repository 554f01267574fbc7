//! Scoped green threads: threads that may borrow from the green thread that
//! spawns them, because it waits for them before what they borrow can go
//! (`std::thread::scope`'s shape, for green threads).

use super::join::{JoinError, JoinHandle, spawn_unchecked};
use super::scheduler::{self, Cancelled, RuntimeId, Scheduler};
use super::task::TaskId;
use super::wait::WaitReason;
use slab::Slab;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;

/// Runs `f` with a [`Scope`] whose [`spawn`](Scope::spawn) starts green
/// threads that may borrow what lives outside the scope — the caller's
/// locals included — and returns what `f` returned once every thread
/// spawned in it has ended, as [`std::thread::scope`] does for OS threads.
/// The threads are green threads of the calling thread's runtime, on the
/// same OS thread: they need not be `Send`, and they run whenever the others
/// wait (the caller first of all, in `scope` itself).
///
/// ```
/// fibra::run(|| {
///     let words = vec!["fiber", "thread", "ractor"];
///     let mut lengths = [0; 3];
///     let total = fibra::scope(|s| {
///         // Each thread borrows `words` and writes its own part of `lengths`.
///         for (word, length) in words.iter().zip(lengths.iter_mut()) {
///             s.spawn(move || {
///                 fibra::runtime::yield_now(); // waits like any green thread
///                 *length = word.len();
///             });
///         }
///         let counter = s.spawn(|| words.len());
///         counter.join().unwrap()
///     });
///     assert_eq!(total, 3);
///     assert_eq!(lengths, [5, 6, 6]);
/// });
/// ```
///
/// # Panics and cancellation
///
/// If a thread panics and nobody [joined](ScopedJoinHandle::join) it, its
/// panic continues from `scope` once every thread has ended (the first such
/// panic, if several did). If `f` panics, or the scope's own thread is
/// cancelled or the deadline of a [`timeout`](crate::time::timeout) around
/// it passes — in `f`, or while `scope` waits — `scope` cancels every thread
/// of the scope, waits for them all to end (nothing interrupts that wait),
/// and then goes on unwinding. So `scope` never returns, nor unwinds past
/// its caller's frame, while one of its threads could still use what they
/// borrow.
///
/// A [`ScopedJoinHandle`] that is dropped, or leaked, changes none of this:
/// `scope` counts the threads themselves, not their handles.
///
/// # Where it may be called
///
/// On a green thread's own stack only: inside [`run`](super::run) or a
/// green thread it spawned (a Ractor's body included), not inside a
/// [`Fiber`](crate::Fiber) or [`Generator`](crate::Generator) that the
/// green thread resumed, whose stack the green thread could drop or leak
/// while the scope's threads still borrow from it. Outside a runtime, use
/// [`std::thread::scope`].
///
/// # Compaction
///
/// The scope's thread lends its stack to its threads, which read and write
/// it while it is parked: it is never compacted while `scope` runs (see
/// [`Builder::compact_parked_after`](super::Builder::compact_parked_after)).
/// The threads themselves are compacted as any other.
///
/// # Panics
///
/// Outside a runtime, or on a stack other than a green thread's own (see
/// above); and as described above.
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    // Held for the whole call: the runtime (its task table, where the
    // threads' fibers are) is never dropped while the threads may run and
    // this frame is live — a runtime that unwinds before its shutdown leaks
    // itself instead of unwinding the fibers it holds, this one first.
    let scheduler = scheduler::try_current()
        .filter(|s| s.is_running_a_thread())
        .expect(
            "fibra::scope must be called from a green thread (inside fibra::run(|| ...)); \
             outside a runtime, std::thread::scope runs scoped OS threads",
        );
    assert!(
        scheduler.on_own_stack(),
        "fibra::scope must be called on a green thread's own stack, not inside a Fiber or \
         Generator that it resumed (which could be dropped while the scope's threads borrow \
         from its stack)"
    );
    // The threads borrow from this stack while this thread parks: it is
    // never compacted meanwhile (see `Scheduler::lend`).
    let _lending = scheduler.lend();
    let scope = Scope {
        threads: Rc::new(Threads {
            runtime: scheduler.id(),
            running: RefCell::new(Slab::new()),
            waiter: Cell::new(None),
            cancelling: Cell::new(false),
            panic: RefCell::new(None),
        }),
        scope: PhantomData,
        env: PhantomData,
    };
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        let value = f(&scope);
        scope.threads.wait_all(&scheduler);
        value
    }));
    if outcome.is_err() {
        // Caught, so that the threads' cancels are delivered (a cancel is
        // not delivered while the OS thread unwinds: see
        // `Scheduler::interrupt`); and shielded, so that nothing unwinds
        // this wait before they have all ended (an expired deadline would
        // unwind every park of it).
        scope.threads.cancel_all(&scheduler);
        let _shield = scheduler.shield();
        scope.threads.wait_all(&scheduler);
    }
    match outcome {
        Ok(value) => match scope.threads.panic.take() {
            Some(payload) => panic::resume_unwind(payload),
            None => value,
        },
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// What [`scope`] lends its closure, to spawn threads with. `'scope` is the
/// scope's own life, which every thread spawned in it ends within; `'env` is
/// what the threads may borrow from outside the scope. Neither `Send` nor
/// `Sync`: its threads are the same OS thread's.
pub struct Scope<'scope, 'env: 'scope> {
    threads: Rc<Threads>,
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

/// The threads of a scope, as the scope's thread waits for them: on the
/// heap, shared by the scope, its threads and their handles.
struct Threads {
    runtime: RuntimeId,
    /// The threads that have not ended, each with whether its handle is
    /// still held.
    running: RefCell<Slab<Child>>,
    /// The scope's thread, while it waits for the last one to end.
    waiter: Cell<Option<TaskId>>,
    /// The scope cancels its threads: any spawned from now on is cancelled
    /// at once.
    cancelling: Cell<bool>,
    /// The first panic of a thread that nobody joined.
    panic: RefCell<Option<Box<dyn Any + Send>>>,
}

struct Child {
    task: TaskId,
    /// Its handle is still held: its panic is the handle's to take.
    claimed: bool,
}

impl Threads {
    /// Parks the running thread (the scope's) until none of the threads is
    /// left.
    fn wait_all(&self, scheduler: &Scheduler) {
        while !self.running.borrow().is_empty() {
            self.waiter.set(Some(scheduler.running()));
            scheduler.park_on(WaitReason::Scope);
        }
        self.waiter.set(None);
    }

    /// Cancels every thread of the scope, and every one spawned from now on.
    fn cancel_all(&self, scheduler: &Scheduler) {
        self.cancelling.set(true);
        let running: Vec<(usize, TaskId)> = self
            .running
            .borrow()
            .iter()
            .map(|(key, child)| (key, child.task))
            .collect();
        running
            .into_iter()
            .for_each(|(key, task)| self.cancel(scheduler, key, task));
    }

    /// Cancels one thread of the scope.
    fn cancel(&self, scheduler: &Scheduler, key: usize, task: TaskId) {
        if scheduler.cancel(task) {
            self.abandoned(key, task);
        }
    }

    /// Thread `task` was abandoned (cancelled under `panic = "abort"`): it
    /// never runs again, and its body, leaked with its stack, will never say
    /// that it ended; so it ends here, for the scope.
    fn abandoned(&self, key: usize, task: TaskId) {
        let mut running = self.running.borrow_mut();
        if running.get(key).is_some_and(|child| child.task == task) {
            running.remove(key);
        }
        drop(running);
        self.wake_if_none_left();
    }

    /// Wakes the scope's thread if it waits and no thread is left.
    fn wake_if_none_left(&self) {
        if !self.running.borrow().is_empty() {
            return;
        }
        if let Some(waiter) = self.waiter.take()
            && let Some(scheduler) = scheduler::current_if(self.runtime)
        {
            scheduler.wake(waiter);
        }
    }

    /// Whether thread `key`'s handle is still held.
    fn is_claimed(&self, key: usize) -> bool {
        self.running
            .borrow()
            .get(key)
            .is_some_and(|child| child.claimed)
    }

    /// Keeps the panic of a thread that nobody joined, for `scope` to
    /// resume once every thread has ended (only the first).
    fn keep_panic(&self, payload: Box<dyn Any + Send>) {
        let mut panic = self.panic.borrow_mut();
        if panic.is_none() {
            *panic = Some(payload);
        }
    }
}

/// Held by a scope's thread until its very end (see `spawn_unchecked`): its
/// drop tells the scope that the thread has ended.
struct Ended {
    threads: Rc<Threads>,
    key: usize,
}

impl Drop for Ended {
    fn drop(&mut self) {
        self.threads.running.borrow_mut().try_remove(self.key);
        self.threads.wake_if_none_left();
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Starts a green thread that runs `f`, which may borrow anything that
    /// outlives the scope; [`scope`] does not return before it has ended.
    /// As [`spawn`](super::spawn), it runs when the calling thread waits or
    /// yields.
    ///
    /// ```
    /// fibra::run(|| {
    ///     let mut numbers = vec![1, 2, 3, 4];
    ///     let (left, right) = numbers.split_at_mut(2);
    ///     fibra::scope(|s| {
    ///         s.spawn(|| left.iter_mut().for_each(|n| *n *= 10));
    ///         s.spawn(|| right.iter_mut().for_each(|n| *n += 1));
    ///     });
    ///     assert_eq!(numbers, [10, 20, 4, 5]);
    /// });
    /// ```
    ///
    /// If no stack can be had for the thread, it does not run, and its
    /// handle's [`join`](ScopedJoinHandle::join) returns the reason, as for
    /// [`spawn`](super::spawn).
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + 'scope,
        T: 'scope,
    {
        let scheduler = scheduler::current_if(self.threads.runtime)
            .expect("fibra: a Scope is used only on its own runtime's OS thread");
        let mut running = self.threads.running.borrow_mut();
        let entry = running.vacant_entry();
        let key = entry.key();
        let threads = self.threads.clone();
        let ended = Ended {
            threads: self.threads.clone(),
            key,
        };
        // `Some` with the value; `None` when the thread panicked with its
        // handle dropped, and the panic went to the scope instead.
        let body = move || match panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(value) => Some(value),
            Err(payload) if payload.is::<Cancelled>() || threads.is_claimed(key) => {
                panic::resume_unwind(payload)
            }
            Err(payload) => {
                threads.keep_panic(payload);
                None
            }
        };
        // What `f` and `T` borrow outlives `'scope`, and `scope`
        // returns (or unwinds past its frame) only once `ended` has been
        // dropped — at the very end of the thread, after its value has gone
        // to its handle's slot (or been dropped) — for every thread spawned
        // in it, however it ends. The handle's slot, which may hold the
        // value, lives within `'scope` as the handle does (or is leaked with
        // it). The runtime never drops the thread's fiber (and unwinds
        // nothing on it) while `scope` runs: `scope` holds an `Rc` of the
        // runtime, and a thread that the end of the runtime abandons is
        // leaked, stack and all, never run again (the `# Soundness` docs'
        // row for scoped threads gives the whole argument).
        // SAFETY: so all `f` and `T` borrow outlives `ended` (argued above).
        let handle = unsafe { spawn_unchecked(&scheduler, body, None, ended) };
        let task = handle.task();
        entry.insert(Child {
            task,
            claimed: true,
        });
        drop(running);
        if self.threads.cancelling.get() {
            self.threads.cancel(&scheduler, key, task);
        }
        ScopedJoinHandle {
            handle,
            threads: self.threads.clone(),
            key,
            scope: PhantomData,
        }
    }
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("running", &self.threads.running.borrow().len())
            .finish()
    }
}

/// Owns the right to wait for a thread spawned in a [`scope`] and take what
/// it returned; it cannot outlive the scope. Dropping it leaves the thread
/// running (the scope still waits for it), and hands its panic, if it
/// panics, to the scope.
pub struct ScopedJoinHandle<'scope, T> {
    handle: JoinHandle<Option<T>>,
    threads: Rc<Threads>,
    key: usize,
    scope: PhantomData<&'scope ()>,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Parks until the thread has ended, and returns its value.
    ///
    /// # Errors
    ///
    /// [`JoinError`] if the thread panicked (with the payload: the panic is
    /// then the caller's, no longer the scope's) or was cancelled.
    pub fn join(self) -> Result<T, JoinError> {
        match self.handle.wait() {
            Ok(Some(value)) => Ok(value),
            Ok(None) => unreachable!("fibra: a joined thread's panic went to its scope"),
            Err(err) => Err(err),
        }
    }

    /// Whether the thread has ended (returned, panicked or been cancelled).
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// Cancels the thread, as [`JoinHandle::cancel`] does: it unwinds at its
    /// next wait, or at once if it waits now.
    pub fn cancel(&self) {
        self.handle.cancel();
        if self.handle.is_finished() {
            // Abandoned at once (`panic = "abort"`): see `Threads::abandoned`.
            self.threads.abandoned(self.key, self.handle.task());
        }
    }
}

impl<T> Drop for ScopedJoinHandle<'_, T> {
    fn drop(&mut self) {
        let mut running = self.threads.running.borrow_mut();
        match running.get_mut(self.key) {
            Some(child) if child.task == self.handle.task() => child.claimed = false,
            _ => {
                drop(running);
                // Ended and not joined: its panic, if it panicked, goes to
                // the scope. (After `join` the slot is empty: not finished.)
                if self.handle.is_finished()
                    && let Err(JoinError::Panicked(payload)) = self.handle.wait()
                {
                    self.threads.keep_panic(payload);
                }
            }
        }
    }
}

impl<T> fmt::Debug for ScopedJoinHandle<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedJoinHandle")
            .field("thread", &self.handle.task())
            .field("finished", &self.is_finished())
            .finish()
    }
}

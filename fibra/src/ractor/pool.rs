//! The worker pool: a fixed set of OS threads, each running a green-thread
//! runtime, that host Ractors. A Ractor is placed on the least loaded worker when
//! it is made (or on the worker of a given Ractor: see `near.rs`) and stays
//! there: its body and every green thread it spawns run on that worker's OS
//! thread, so nothing on their stacks ever changes thread.

use super::census::{self, Entry};
use super::error::panic_message;
use crate::runtime::{self, RawRactor, Started, Unparker};
use std::cell::RefCell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, mpsc};
use std::thread;

/// Work handed to a worker: a Ractor's body, to start as a green thread
/// there, and what a dump reads of the Ractor. The body is the green
/// thread's whole code, told whether the thread got a stack (see
/// `runtime::spawn_detached`): one box per Ractor, made by its creator.
pub(super) struct Job {
    pub(super) ractor: Entry,
    pub(super) body: Box<dyn FnOnce(Started) + Send>,
}

/// A set of worker OS threads that run Ractors (one per core by default).
///
/// [`Ractor::new`](super::Ractor::new) uses a pool shared by the whole process,
/// started on first use with one worker per core. Make a `Pool` of your own to
/// choose the number of workers, or to end its Ractors when it is dropped:
/// dropping a pool cancels the Ractors still running on it — each unwinds, so
/// its destructors run — and waits for its workers to exit.
///
/// ```
/// use fibra::ractor::Pool;
///
/// let pool = Pool::new(2);
/// let squares: Vec<_> = (1..=4u64).map(|n| pool.spawn(move |_: &fibra::ractor::Context<(), ()>| n * n)).collect();
/// let total: u64 = squares.into_iter().map(|r| r.join().unwrap()).sum();
/// assert_eq!(total, 30);
/// ```
pub struct Pool {
    workers: Arc<[Worker]>,
    threads: Vec<thread::JoinHandle<()>>,
    /// Names this pool in its Ractors' [`Home`]s.
    id: u64,
}

struct Worker {
    inbox: Mutex<Inbox>,
    /// Ractors placed on this worker and not yet finished.
    load: AtomicUsize,
}

#[derive(Default)]
struct Inbox {
    jobs: Vec<Job>,
    /// The worker's dispatching green thread, when it is parked for want of jobs.
    waiting: Option<Unparker>,
    closing: bool,
}

impl Pool {
    /// Starts `workers` OS threads (at least one).
    ///
    /// # Panics
    ///
    /// If the OS refuses a thread.
    pub fn new(workers: usize) -> Pool {
        Pool::with_runtime(workers, runtime::Builder::new())
    }

    /// Starts `workers` OS threads (at least one), each running a runtime
    /// made by `runtime`: its stack size, stall threshold and compaction apply
    /// to the Ractors of this pool and the green threads they spawn.
    ///
    /// ```
    /// use fibra::ractor::{Context, Pool};
    /// use std::time::Duration;
    ///
    /// // SAFETY: no Ractor here lends its stack to another OS thread while
    /// // it parks.
    /// let builder = unsafe {
    ///     fibra::runtime::Builder::new().compact_parked_after(Some(Duration::from_millis(50)))
    /// };
    /// let pool = Pool::with_runtime(1, builder);
    /// let echo = pool.spawn(|ctx: &Context<u32, ()>| ctx.receive().unwrap());
    /// echo.send(7).unwrap();
    /// assert_eq!(echo.join().unwrap(), 7);
    /// ```
    ///
    /// # Panics
    ///
    /// If the OS refuses a thread, or a worker's runtime cannot start (the
    /// message gives the runtime's reason, e.g. a stack size the OS refuses);
    /// the workers already started are then closed and joined.
    pub fn with_runtime(workers: usize, runtime: runtime::Builder) -> Pool {
        let workers: Arc<[Worker]> = (0..workers.max(1))
            .map(|_| Worker {
                inbox: Mutex::new(Inbox::default()),
                load: AtomicUsize::new(0),
            })
            .collect();
        // Built as the threads start, so that a panic below drops it: the
        // workers already running are closed and joined.
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let mut pool = Pool {
            workers: workers.clone(),
            threads: Vec::with_capacity(workers.len()),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        };
        let mut starts = Vec::with_capacity(workers.len());
        for index in 0..workers.len() {
            let workers = workers.clone();
            let runtime = runtime.clone();
            let (started, start) = mpsc::channel::<()>();
            let thread = thread::Builder::new()
                .name(format!("fibra-ractor-{index}"))
                .spawn(move || {
                    runtime.run(move || {
                        let _ = started.send(());
                        dispatch(workers, index)
                    })
                })
                .expect("fibra: cannot start a worker thread");
            pool.threads.push(thread);
            starts.push(start);
        }
        // A runtime that cannot start (no file descriptor left for its
        // reactor, a stack size the OS refuses) drops its `started` as its
        // thread panics: the pool must not hand Ractors to a worker that will
        // never run them, whose joiners would wait for ever.
        for (index, start) in starts.into_iter().enumerate() {
            if start.recv().is_err() {
                let thread = pool.threads.remove(index);
                let payload = thread.join().err();
                let reason = payload
                    .as_deref()
                    .and_then(panic_message)
                    .unwrap_or("its thread ended");
                panic!("fibra: cannot start worker {index} of a Ractor pool: {reason}");
            }
        }
        pool
    }

    /// The number of worker threads.
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// Picks the least loaded worker for a new Ractor and counts it there
    /// until the returned claim is dropped (by the Ractor's job, however it
    /// ends).
    pub(super) fn claim(&self) -> Placed {
        let (index, _) = self
            .workers
            .iter()
            .enumerate()
            .min_by_key(|(_, w)| w.load.load(Ordering::Relaxed))
            .expect("a pool has at least one worker");
        self.claim_on(index)
    }

    /// Counts a new Ractor on worker `index` (below [`Pool::workers`]) until
    /// the returned claim is dropped.
    pub(super) fn claim_on(&self, index: usize) -> Placed {
        self.workers[index].load.fetch_add(1, Ordering::Relaxed);
        Placed {
            workers: self.workers.clone(),
            index,
        }
    }

    /// The worker of this pool that the calling OS thread runs, if it is one.
    pub(super) fn running_here(&self) -> Option<usize> {
        HOSTED.with_borrow(|hosted| match hosted {
            Some((workers, index)) if Arc::ptr_eq(workers, &self.workers) => Some(*index),
            _ => None,
        })
    }

    /// Where a Ractor placed on worker `index` of this pool runs.
    pub(super) fn home(&self, index: usize) -> Home {
        Home {
            pool: self.id,
            worker: index,
        }
    }

    /// The worker of this pool that a Ractor at `home` runs on, if it runs
    /// on this pool.
    pub(super) fn worker_of(&self, home: Home) -> Option<usize> {
        (home.pool == self.id).then_some(home.worker)
    }

    /// Hands `job` to `worker` (a [`Placed::worker`]), where it runs as a
    /// green thread of its own.
    pub(super) fn place(&self, worker: usize, job: Job) {
        let waiting = {
            let mut inbox = self.workers[worker]
                .inbox
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            inbox.jobs.push(job);
            inbox.waiting.take()
        };
        if let Some(dispatcher) = waiting {
            dispatcher.unpark();
        }
    }
}

impl Worker {
    /// Drops the jobs that never started, which ends their Ractors as cancelled
    /// (outside the lock: ending a Ractor wakes its waiters).
    fn drop_unstarted(&self) {
        let unstarted = std::mem::take(
            &mut self
                .inbox
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .jobs,
        );
        drop(unstarted);
    }
}

/// Where a Ractor runs: its pool (by a number no other pool of the process
/// gets) and its worker there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Home {
    pool: u64,
    worker: usize,
}

/// A Ractor's claim on its worker's load, released when its job ends (or is
/// dropped unstarted).
pub(super) struct Placed {
    workers: Arc<[Worker]>,
    index: usize,
}

impl Placed {
    /// The index of the worker it counts against.
    pub(super) fn worker(&self) -> usize {
        self.index
    }
}

impl Drop for Placed {
    fn drop(&mut self) {
        self.workers[self.index]
            .load
            .fetch_sub(1, Ordering::Relaxed);
    }
}

thread_local! {
    /// The worker this OS thread runs, for dumps: its pool's workers and its
    /// index among them.
    static HOSTED: RefCell<Option<(Arc<[Worker]>, usize)>> = const { RefCell::new(None) };
}

/// A worker's first green thread: starts each job it is handed as a green
/// thread of its own, and returns (ending the worker's runtime, which cancels
/// the Ractors still running) when the pool closes.
fn dispatch(workers: Arc<[Worker]>, index: usize) {
    HOSTED.set(Some((workers.clone(), index)));
    let counted = workers.clone();
    runtime::count_ractors_with(Box::new(move || {
        counted[index].load.load(Ordering::Relaxed)
    }));
    census::serve(describe_ractors);
    let worker = &workers[index];
    loop {
        let jobs = {
            let mut inbox = worker.inbox.lock().unwrap_or_else(PoisonError::into_inner);
            if inbox.closing {
                break;
            }
            if inbox.jobs.is_empty() {
                inbox.waiting = Some(runtime::current().unparker());
            }
            std::mem::take(&mut inbox.jobs)
        };
        if jobs.is_empty() {
            runtime::park();
        }
        for Job { ractor, body } in jobs {
            // A spawn that panics drops the job, which ends its Ractor as
            // cancelled; the dispatcher itself goes on. (One that gets no
            // stack when it first runs is told so by its body's argument.)
            if let Ok(thread) =
                panic::catch_unwind(AssertUnwindSafe(|| runtime::spawn_detached(body)))
            {
                census::list(ractor, thread);
            }
        }
    }
    // The ones running are cancelled when this runtime ends.
    worker.drop_unstarted();
}

/// This worker's Ractors, for its runtime's part of a dump (on its OS thread).
fn describe_ractors() -> Vec<RawRactor> {
    let Some((workers, index)) = HOSTED.with_borrow(Clone::clone) else {
        return Vec::new();
    };
    let inbox = workers[index]
        .inbox
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    // SAFETY: the runtime calls this from its own part of a dump (see
    // `runtime::describe_ractors_with`), on this worker's OS thread, where
    // every body that receives runs: none is inside a receive then.
    unsafe { census::describe(index, inbox.jobs.iter().map(|job| &job.ractor)) }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loads: Vec<usize> = self
            .workers
            .iter()
            .map(|w| w.load.load(Ordering::Relaxed))
            .collect();
        f.debug_struct("Pool")
            .field("workers", &self.workers.len())
            .field("ractors_per_worker", &loads)
            .finish()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for worker in self.workers.iter() {
            let waiting = {
                let mut inbox = worker.inbox.lock().unwrap_or_else(PoisonError::into_inner);
                inbox.closing = true;
                inbox.waiting.take()
            };
            if let Some(dispatcher) = waiting {
                dispatcher.unpark();
            }
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        // A worker whose thread failed leaves its jobs behind: end them too.
        self.workers.iter().for_each(Worker::drop_unstarted);
    }
}

/// The process-wide pool, one worker per core, started on first use.
pub(super) fn global() -> &'static Pool {
    static GLOBAL: OnceLock<Pool> = OnceLock::new();
    GLOBAL.get_or_init(|| Pool::new(thread::available_parallelism().map_or(1, |n| n.get())))
}

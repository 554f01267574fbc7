//! The borrowing hop: a closure that borrows from the calling green thread's
//! stack (a path, a buffer) runs on the blocking pool while only that thread
//! parks. [`blocking`](crate::blocking()) takes a `'static` closure, so a file
//! call made through it would clone its path and copy its buffer; this one
//! lends them instead — `File::read` reads straight into the caller's buffer.
//!
//! Lending memory of a stack to another OS thread is sound only while the
//! frame that lends it outlives the work, and nothing else touches that
//! memory meanwhile (the crate's `# Soundness` docs, "A lent frame outlives
//! the work that borrows it"). So until the work has ended, the thread:
//! - is not resumed past its park (it parks again until the work says it has
//!   ended, whatever woke it);
//! - is not unwound: its parks here are uninterruptible, so a cancel or a
//!   [`timeout`](crate::time::timeout)'s deadline that comes meanwhile is
//!   delivered only once the work has ended; and should the frame unwind all
//!   the same (its fiber dropped with its runtime after a panic in the loop),
//!   a guard in it blocks the OS thread until the work has ended;
//! - is not compacted: it lends (`Scheduler::lend`) for as long as it waits.
//!
//! The job says it has ended when its closure is dropped, after running or
//! unrun (when the pool can start no thread for it); only then may the
//! thread leave the frame. A thread that is abandoned (under
//! `panic = "abort"`, or at the end of a runtime) leaks its stack, which
//! stays mapped: the work writes into memory nobody else uses.

use crate::blocking::{Job, pool};
use crate::runtime::{Unparker, WaitReason, scheduler};
use crate::sync_prims::{AtomicUsize, Mutex, thread};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::atomic::Ordering::{AcqRel, Acquire};

/// Runs `f`, which may borrow from the caller's stack, on the blocking pool,
/// parking only the calling green thread until it has ended; returns what it
/// returned, or continues its panic. A cancel or a passed deadline that comes
/// meanwhile unwinds the thread once `f` has ended.
///
/// Outside a green thread (no runtime here, the runtime's own loop), or on a
/// fiber that the green thread resumed (which cannot park it), `f` runs here,
/// on the calling OS thread.
pub(crate) fn hop<F, R>(f: F) -> R
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    let Some(scheduler) = scheduler::try_current().filter(|s| s.can_park_here()) else {
        return f();
    };
    // A cancel or a passed deadline owed already is taken here, as any wait
    // of fibra's takes it, before the work starts.
    scheduler.unwind_if_owed();
    let mut work = Work {
        f: Some(f),
        outcome: None,
    };
    let ended = Arc::new(Ended::new());
    // `work` lives in this frame, which the loop below keeps until `ended`
    // says the job is done with it, and touches only after that (the Acquire
    // in `Ended::is_done` pairs with the job's release): the frame is not
    // left before, neither by a return (the loop), nor by an unwind (the
    // parks there never unwind, and `wait_on_drop`, declared after `work` so
    // dropped before it, blocks any other unwind until the job has ended),
    // nor compacted (`lending`), nor freed (a thread is only dropped by
    // unwinding it, or leaked with its stack).
    // SAFETY: so `work` outlives the job's every use of it (argued above).
    let job = unsafe { Lent::new(&mut work) };
    let job = job.into_job(ended.clone(), scheduler.unparker(scheduler.running()));
    let lending = scheduler.lend();
    let wait_on_drop = WaitOnDrop(&ended);
    pool().submit(job);
    // Parks at least once, even if the job ends first (a quick call, the OS
    // thread preempted meanwhile): a file call always lets the runtime's
    // other green threads run, as a wait of fibra's does.
    loop {
        scheduler.park_uninterruptible(WaitReason::Blocking);
        if ended.is_done() {
            break;
        }
    }
    drop(wait_on_drop);
    drop(lending);
    scheduler.unwind_if_owed();
    match work.outcome.take() {
        Some(Ok(value)) => value,
        Some(Err(payload)) => panic::resume_unwind(payload),
        None => unreachable!("fibra: a hop's job ended without an outcome"),
    }
}

/// A hop's closure and, once it has run, its outcome: on the caller's stack.
struct Work<F, R> {
    f: Option<F>,
    outcome: Option<std::thread::Result<R>>,
}

/// A `Work` lent to the pool: its address and the function that runs it,
/// with its types erased (so that the job is `'static` though `F` is not).
struct Lent {
    work: *mut (),
    run: unsafe fn(*mut ()),
}

// SAFETY: a `Lent` is made only from a `Work<F, R>` with `F: Send` and
// `R: Send` (see `Lent::new`): sending it sends the closure to the pool
// thread and the outcome back.
unsafe impl Send for Lent {}

impl Lent {
    /// Lends `work` until the job made from this has ended.
    ///
    /// # Safety
    ///
    /// `work` must stay where it is, and be touched by nothing else, until
    /// the job made with [`into_job`](Self::into_job) has set its `Ended`.
    unsafe fn new<F, R>(work: &mut Work<F, R>) -> Lent
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        Lent {
            work: std::ptr::from_mut(work).cast(),
            run: run::<F, R>,
        }
    }

    /// The job for the pool: runs the work; then (or if the job is dropped
    /// unrun) says so in `ended` and wakes the green thread with `unparker`.
    fn into_job(self, ended: Arc<Ended>, unparker: Unparker) -> Job {
        let end = EndOnDrop { ended, unparker };
        Box::new(move || {
            self.run();
            // The last touch of the lent frame was in `run`: `end`, dropped
            // now, lets the green thread leave it.
            drop(end);
        })
    }

    /// Runs the lent work (taking `self` whole: the job's closure must
    /// capture the `Lent`, which is `Send`, not its raw fields).
    fn run(self) {
        // SAFETY: `new`'s contract keeps the `Work` this was made from alive
        // and untouched until `ended.finish()`, which comes after this.
        unsafe { (self.run)(self.work) }
    }
}

/// Runs the `Work<F, R>` at `work`: its closure, whose outcome (its value or
/// its panic) is stored beside it.
///
/// # Safety
///
/// `work` points to a live `Work<F, R>` that nothing else touches meanwhile.
unsafe fn run<F: FnOnce() -> R, R>(work: *mut ()) {
    // SAFETY: as the caller promised; the reference ends with this function.
    let work = unsafe { &mut *work.cast::<Work<F, R>>() };
    let f = work.f.take().expect("fibra: a hop's work runs once");
    work.outcome = Some(panic::catch_unwind(AssertUnwindSafe(f)));
}

/// Whether a hop's job has ended: shared by the job and its green thread (on
/// the heap, so that the job may still touch it once the thread has gone on).
struct Ended {
    state: AtomicUsize,
    /// The OS thread blocked in `wait`, if one is.
    waiter: Mutex<Option<thread::Thread>>,
}

/// The job is running.
const RUNNING: usize = 0;
/// The job has ended, and the lent frame is the thread's again.
const DONE: usize = 1;
/// The job is running, and an OS thread blocks in `Ended::wait` until it
/// ends.
const WAITED: usize = 2;

impl Ended {
    fn new() -> Ended {
        Ended {
            state: AtomicUsize::new(RUNNING),
            waiter: Mutex::new(None),
        }
    }

    /// Whether the job has ended; if so, what it wrote is visible.
    fn is_done(&self) -> bool {
        self.state.load(Acquire) == DONE
    }

    /// Says that the job has ended (releasing what it wrote), and wakes the
    /// OS thread that blocks in `wait`, if one does.
    fn finish(&self) {
        if self.state.swap(DONE, AcqRel) == WAITED {
            let waiter = self.waiter.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(waiter) = waiter.as_ref() {
                waiter.unpark();
            }
        }
    }

    /// Blocks the calling OS thread until the job has ended.
    fn wait(&self) {
        if self.is_done() {
            return;
        }
        *self.waiter.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread::current());
        // Set before WAITED is: `finish`, seeing WAITED, finds it.
        if self
            .state
            .compare_exchange(RUNNING, WAITED, AcqRel, Acquire)
            .is_err()
        {
            return;
        }
        while !self.is_done() {
            thread::park();
        }
    }
}

/// Ends a job when dropped: after it has run, or with it if it is dropped
/// unrun (the pool could start no thread for it). Either way nothing touches
/// the lent frame after this.
struct EndOnDrop {
    ended: Arc<Ended>,
    unparker: Unparker,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.ended.finish();
        self.unparker.unpark();
    }
}

/// Blocks the OS thread, if this frame unwinds before the job has ended,
/// until it has: the lent frame must outlive the job whatever leaves it.
struct WaitOnDrop<'a>(&'a Ended);

impl Drop for WaitOnDrop<'_> {
    fn drop(&mut self) {
        self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::hop;
    use std::panic::{self, AssertUnwindSafe};

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn the_work_runs_elsewhere_on_the_callers_buffer() {
        let here = std::thread::current().id();
        crate::run(move || {
            let mut buf = [0u8; 8];
            let ran_on = hop(|| {
                buf.copy_from_slice(b"borrowed");
                std::thread::current().id()
            });
            assert_ne!(ran_on, here, "not on the pool");
            assert_eq!(&buf, b"borrowed");
        });
        // Outside a runtime, here.
        assert_eq!(hop(|| std::thread::current().id()), here);
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn a_panic_of_the_work_continues_in_the_caller() {
        crate::run(|| {
            let caught = panic::catch_unwind(AssertUnwindSafe(|| hop(|| panic!("on the pool"))));
            let payload = caught.expect_err("the panic came back");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"on the pool"));
            // The pool thread survived it.
            assert_eq!(hop(|| 2 + 2), 4);
        });
    }
}

/// `Ended` under the model checker (`scripts/model-check.sh`): the job's
/// `finish` against the two ways its thread waits (parking until it is done,
/// and blocking its OS thread in the guard).
#[cfg(all(test, fibra_loom))]
mod model_check {
    use super::Ended;
    use crate::runtime::model_check::check;
    use crate::sync_prims::UnsafeCell;
    use loom::sync::Arc;

    /// The job writes its outcome and finishes; the thread that waits, in
    /// either way, then reads the outcome: it sees it written, the cell's
    /// accesses never overlap, and the blocked wait is always woken.
    #[test]
    fn the_outcome_is_seen_once_the_job_has_ended() {
        for (name, blocking) in [("hop_parks", false), ("hop_blocks", true)] {
            check(name, move || {
                let ended = Arc::new(Ended::new());
                let outcome = Arc::new(UnsafeCell::new(0));
                let job = {
                    let (ended, outcome) = (ended.clone(), outcome.clone());
                    loom::thread::spawn(move || {
                        // SAFETY: nothing reads the cell until `finish`.
                        outcome.with_mut(|o| unsafe { *o = 7 });
                        ended.finish();
                    })
                };
                if blocking {
                    ended.wait();
                } else {
                    while !ended.is_done() {
                        loom::thread::yield_now();
                    }
                }
                // SAFETY: the job wrote it before `finish`, seen done here.
                assert_eq!(outcome.with(|o| unsafe { *o }), 7);
                job.join().unwrap();
            });
        }
    }
}

//! Running blocking code without blocking the other green threads: a pool of
//! OS threads takes the work, and only the green thread that asked parks.

use crate::runtime::WaitReason;
use crate::runtime::scheduler::Scheduler;
use crate::runtime::{self, scheduler};
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::Duration;

/// The most OS threads the pool runs at once; more work waits in its queue.
const MAX_THREADS: usize = 512;
/// How long an idle pool thread waits for work before it exits.
const IDLE: Duration = Duration::from_secs(10);

/// Runs `f` on a pool of OS threads and parks the calling green thread until it
/// is done (at least once, however soon `f` ends); the runtime's other green
/// threads run meanwhile. This is how to call what fibra cannot make
/// non-blocking: file systems, DNS, C libraries, database drivers, long
/// computations.
///
/// ```
/// use std::time::Duration;
///
/// fibra::run(|| {
///     let ticker = fibra::spawn(|| {
///         for _ in 0..5 {
///             fibra::time::sleep(Duration::from_millis(1));
///         }
///     });
///     // Blocks an OS thread of the pool, not this runtime's.
///     let text = fibra::blocking(|| {
///         std::thread::sleep(Duration::from_millis(20));
///         "done".to_string()
///     });
///     assert_eq!(text, "done");
///     ticker.join().unwrap();
/// });
/// ```
///
/// Outside a runtime, or on a fiber that a green thread resumed (which cannot
/// park it), `f` simply runs on the calling thread. If `f` panics, the
/// panic continues in the caller. If the calling green thread is cancelled while
/// it waits (or the deadline of a [`timeout`](crate::time::timeout) around it
/// passes), `f` still runs to its end on the pool and its result is dropped.
pub fn blocking<F, T>(f: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let Some(scheduler) = scheduler::try_current().filter(|s| s.can_park_here()) else {
        return f();
    };
    hand_off(&scheduler, f, |job| pool().submit(job))
}

/// [`blocking`] on a green thread of `scheduler`: hands the job that runs `f`
/// to `submit` (the pool's), then parks until it has run.
fn hand_off<F, T>(scheduler: &Scheduler, f: F, submit: impl FnOnce(Job)) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let slot: Arc<Mutex<Option<thread::Result<T>>>> = Arc::new(Mutex::new(None));
    let unparker = runtime::current().unparker();
    let filled = slot.clone();
    submit(Box::new(move || {
        let outcome = panic::catch_unwind(AssertUnwindSafe(f));
        *filled.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
        unparker.unpark();
    }));
    // Parks before it looks, even if the job has ended already (a quick
    // call, this OS thread preempted meanwhile), as `hop` does: a call to the
    // pool always lets the runtime's other green threads run.
    loop {
        scheduler.park_on(WaitReason::Blocking);
        if let Some(outcome) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() {
            return outcome.unwrap_or_else(|payload| panic::resume_unwind(payload));
        }
    }
}

/// Work for a pool thread: it must not panic (the pool's callers catch
/// what their closures throw).
pub(crate) type Job = Box<dyn FnOnce() + Send>;

pub(crate) struct Pool {
    state: Mutex<PoolState>,
    work: Condvar,
}

#[derive(Default)]
struct PoolState {
    queue: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

/// The pool of OS threads that runs blocking work (also fibra's file doors:
/// see `hop`).
pub(crate) fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(PoolState::default()),
        work: Condvar::new(),
    })
}

impl Pool {
    /// Queues `job`, waking an idle pool thread or starting one.
    pub(crate) fn submit(&'static self, job: Job) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.queue.push_back(job);
        if state.idle > 0 {
            self.work.notify_one();
            return;
        }
        if state.threads < MAX_THREADS {
            state.threads += 1;
            let spawned = thread::Builder::new()
                .name("fibra-blocking".into())
                .spawn(move || self.serve());
            if spawned.is_err() {
                // No new thread: the queued job waits for a running one. With
                // none, it is dropped unrun (outside the lock: its drop may
                // tell its owner so), and the caller learns it by a panic.
                state.threads -= 1;
                if state.threads == 0 {
                    let unrun = state.queue.pop_back();
                    drop(state);
                    drop(unrun);
                    panic!("fibra: cannot start a thread for blocking work");
                }
            }
        }
    }

    /// How many pool threads run a job now, and how many jobs wait for one
    /// (for [`metrics`](crate::runtime::metrics())).
    pub(crate) fn load(&self) -> (u64, u64) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let busy = state.threads.saturating_sub(state.idle);
        (busy as u64, state.queue.len() as u64)
    }

    /// A pool thread's life: take jobs until idle for too long.
    fn serve(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(job) = state.queue.pop_front() {
                drop(state);
                job();
                state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            state.idle += 1;
            let (next, waited) = self
                .work
                .wait_timeout(state, IDLE)
                .unwrap_or_else(PoisonError::into_inner);
            state = next;
            state.idle -= 1;
            if waited.timed_out() && state.queue.is_empty() {
                state.threads -= 1;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::hand_off;
    use crate::runtime::scheduler;
    use std::cell::Cell;
    use std::rc::Rc;

    /// A job that has ended before its caller could park (a quick call, the
    /// caller's OS thread preempted meanwhile) still parks the caller once:
    /// the green thread ready before the call runs during it.
    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn the_caller_parks_even_if_the_job_ended_first() {
        crate::run(|| {
            let ran = Rc::new(Cell::new(false));
            let other = crate::spawn({
                let ran = ran.clone();
                move || ran.set(true)
            });
            let scheduler = scheduler::try_current().unwrap();
            // The job runs to its end on another OS thread before the call
            // looks for its outcome.
            let value = hand_off(
                &scheduler,
                || 7,
                |job| {
                    std::thread::spawn(job).join().unwrap();
                },
            );
            assert_eq!(value, 7);
            assert!(ran.get(), "the call returned without parking");
            other.join().unwrap();
        });
    }

    /// On a fiber that a green thread resumed, which cannot park the green
    /// thread, `blocking` runs `f` there, as outside a runtime.
    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn on_a_fiber_a_green_thread_resumed_f_runs_in_place() {
        crate::run(|| {
            let fiber = crate::Fiber::<(), (), u32>::new(|_, ()| super::blocking(|| 7));
            assert_eq!(fiber.resume(()).unwrap(), crate::Step::Return(7));
        });
    }
}

//! The model checker's view of the remote queue (built with `--cfg
//! fibra_loom`; `scripts/model-check.sh` runs it): the real `Remote`, `Ring`
//! and `Unparker`, with loom's atomics, lock and cell (`sync_prims.rs`), a
//! poller modelled as a flag that a sleeping runtime waits on, and the
//! runtime's loop reduced to its calls on the queue.

#[cfg(test)]
use super::{Outside, Remote, TaskId, Unparker};
use loom::sync::{Condvar, Mutex};
#[cfg(test)]
use std::sync::Arc;

/// The poller's eventfd: a wake sets the flag, a sleep waits until it is
/// set and clears it. A runtime that sleeps through a wake therefore
/// waits with nothing left to wake it, which loom reports as a deadlock.
#[derive(Default)]
pub(crate) struct Poller {
    written: Mutex<bool>,
    changed: Condvar,
}

impl Poller {
    pub(super) fn wake(&self) -> std::io::Result<()> {
        *self.written.lock().unwrap() = true;
        self.changed.notify_one();
        Ok(())
    }

    #[cfg(test)]
    fn sleep(&self) {
        let mut written = self.written.lock().unwrap();
        while !*written {
            written = self.changed.wait(written).unwrap();
        }
        *written = false;
    }
}

/// A runtime, reduced to what its loop does with the remote queue
/// (`Scheduler::run_until`, `wait_for_events`, `nobody_else_can_wake`,
/// the same calls in the same order), and waiting for nothing else: no
/// timer, no socket, so that it sleeps whenever the queue is empty.
#[cfg(test)]
pub(crate) struct Runtime {
    remote: Arc<Remote>,
}

#[cfg(test)]
impl Runtime {
    pub(crate) fn new() -> Runtime {
        Runtime {
            remote: Arc::new(Remote::with_waker(Poller::default())),
        }
    }

    /// An `Unparker` of this runtime's thread number `index`.
    pub(crate) fn unparker(&self, index: usize) -> Unparker {
        Unparker {
            remote: Outside::new(&self.remote),
            task: id(index),
        }
    }

    /// Runs the loop until no `Unparker` is left (where the scheduler
    /// reports a deadlock, its threads all parked), sleeping whenever
    /// the queue is empty; returns every id it took, in order.
    pub(crate) fn run(&self) -> Vec<usize> {
        self.run_with_errands().0
    }

    /// [`run`](Self::run), taking errands as `take_remote_wakes` does
    /// (whenever `TaskId::ERRANDS` is among the wakes taken); returns
    /// the ids of threads it took and how many errands.
    pub(crate) fn run_with_errands(&self) -> (Vec<usize>, usize) {
        let mut taken = Vec::new();
        let mut errands = 0;
        let mut take = |taken: &mut Vec<TaskId>| {
            let before = taken.len();
            self.remote.take(taken);
            if taken[before..].contains(&TaskId::ERRANDS) {
                errands += self.remote.take_errands().len();
            }
        };
        loop {
            take(&mut taken);
            if !self.remote.held_outside() {
                // `nobody_else_can_wake`: every unpark made is visible.
                take(&mut taken);
                let threads = taken
                    .iter()
                    .filter(|&&task| task != TaskId::ERRANDS)
                    .map(|task| task.index)
                    .collect();
                return (threads, errands);
            }
            if self.remote.prepare_to_sleep(true) {
                self.remote.waker.sleep();
                self.remote.woke_up();
            }
        }
    }

    /// Sends an errand, as `Handle::spawn` does; returns whether it was
    /// queued (not refused).
    pub(crate) fn send_errand(&self) -> bool {
        self.remote.send_errand(Box::new(|| {})).is_ok()
    }

    /// Closes the errand queue, as the runtime's shutdown does; returns
    /// how many errands it dropped.
    pub(crate) fn close_errands(&self) -> usize {
        self.remote.close_errands().len()
    }

    /// Ends the runtime (`Scheduler::drop`).
    pub(crate) fn end(&self) {
        self.remote.end();
    }

    /// The wakes kept beyond the ring.
    pub(crate) fn overflowed(&self) -> usize {
        self.remote.overflow.lock().unwrap().ids.len()
    }
}

#[cfg(test)]
fn id(index: usize) -> TaskId {
    TaskId {
        index,
        serial: index as u64 + 1,
    }
}

/// How many times loom may preempt a thread in one interleaving, unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise: every interleaving with at
/// most this many preemptions is explored (tokio's CI runs its loom
/// tests with 2; bugs of lost wakes need one or two). Unbounded, the
/// models with three threads run for hours on two cores.
#[cfg(test)]
const PREEMPTIONS: usize = 2;

/// Runs `model` under loom, over every interleaving within the
/// preemption bound, and prints how many it explored.
#[cfg(test)]
pub(crate) fn check(name: &str, model: impl Fn() + Send + Sync + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = builder.preemption_bound.or(Some(PREEMPTIONS));
    let bound = builder.preemption_bound;
    builder.check(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        model();
    });
    eprintln!(
        "model_check {name}: {} interleavings explored (at most {bound:?} preemptions)",
        runs.load(Ordering::Relaxed)
    );
}

#[cfg(test)]
mod tests {
    use super::{Runtime, check};
    use loom::thread;
    use std::sync::Arc;

    /// Two OS threads unpark three threads (more than the model's two-slot
    /// ring holds: the overflow list too) and drop their `Unparker`s,
    /// while the runtime takes wakes and sleeps whenever it finds none:
    /// every wake is taken once, and the runtime never sleeps through one
    /// (a lost wake would deadlock the model).
    #[test]
    fn unparks_from_two_threads_are_all_taken_and_none_is_slept_through() {
        check("unparks_from_two_threads", || {
            let runtime = Runtime::new();
            let one = runtime.unparker(0);
            let (two, three) = (runtime.unparker(1), runtime.unparker(2));
            let producers = [
                thread::spawn(move || one.unpark()),
                thread::spawn(move || {
                    two.unpark();
                    three.unpark();
                }),
            ];
            let mut taken = runtime.run();
            producers.into_iter().for_each(|p| p.join().unwrap());
            taken.sort_unstable();
            assert_eq!(taken, [0, 1, 2]);
        });
    }

    /// One thread woken three times while the runtime is busy or asleep:
    /// it is taken at least once, and the overflow list never holds it
    /// twice.
    #[test]
    fn repeated_unparks_of_one_thread_are_taken() {
        check("repeated_unparks", || {
            let runtime = Arc::new(Runtime::new());
            let unparker = runtime.unparker(7);
            let watcher = runtime.clone();
            let producer = thread::spawn(move || {
                for _ in 0..3 {
                    unparker.unpark();
                    assert!(watcher.overflowed() <= 1);
                }
            });
            let taken = runtime.run();
            producer.join().unwrap();
            assert!(!taken.is_empty() && taken.iter().all(|&t| t == 7));
        });
    }

    /// The last two `Unparker`s, dropped on two OS threads at once
    /// without unparking, while the runtime waits for them: one of the
    /// drops wakes it (or it sees none left before it sleeps), and it
    /// reports the deadlock (the model ends) instead of sleeping on.
    #[test]
    fn the_last_unparker_dropped_wakes_the_runtime() {
        check("last_unparker_dropped", || {
            let runtime = Runtime::new();
            let droppers: Vec<_> = [runtime.unparker(0), runtime.unparker(1)]
                .into_iter()
                .map(|unparker| thread::spawn(move || drop(unparker)))
                .collect();
            assert_eq!(runtime.run(), Vec::<usize>::new());
            droppers.into_iter().for_each(|d| d.join().unwrap());
        });
    }

    /// An errand sent from another OS thread while the runtime sleeps,
    /// that OS thread then dropping the `Unparker` that kept the runtime
    /// waiting: the runtime is woken (or never sleeps) and takes the
    /// errand before it finds nobody left to wake it — never sleeping
    /// through it, never missing it in its last look.
    #[test]
    fn an_errand_sent_to_a_sleeping_runtime_is_taken() {
        check("errand_taken", || {
            let runtime = Arc::new(Runtime::new());
            let keeps_it_waiting = runtime.unparker(0);
            let sender = runtime.clone();
            let producer = thread::spawn(move || {
                assert!(sender.send_errand());
                drop(keeps_it_waiting);
            });
            let (threads, errands) = runtime.run_with_errands();
            producer.join().unwrap();
            assert_eq!((threads, errands), (Vec::new(), 1));
            assert_eq!(runtime.close_errands(), 0, "nothing left queued");
        });
    }

    /// An errand racing the end of the runtime: it is either refused
    /// (sent after) or dropped by the end (sent before), never left
    /// queued where nobody would run it.
    #[test]
    fn an_errand_racing_the_end_is_refused_or_dropped() {
        check("errand_racing_the_end", || {
            let runtime = Arc::new(Runtime::new());
            let sender = runtime.clone();
            let producer = thread::spawn(move || sender.send_errand());
            let dropped = runtime.close_errands();
            let sent = producer.join().unwrap();
            assert_eq!(usize::from(sent), dropped);
            assert!(!runtime.send_errand(), "refused once ended");
        });
    }

    /// A wake that races the end of the runtime, with the ring full: it
    /// is dropped or freed by the end, never left queued.
    #[test]
    fn a_wake_racing_the_end_is_not_kept() {
        check("wake_racing_the_end", || {
            let runtime = Arc::new(Runtime::new());
            let unparker = runtime.unparker(9);
            (0..2).for_each(|_| runtime.unparker(8).unpark());
            let producer = thread::spawn(move || unparker.unpark());
            runtime.end();
            producer.join().unwrap();
            assert_eq!(runtime.overflowed(), 0);
        });
    }
}

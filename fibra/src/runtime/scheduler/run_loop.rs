//! The scheduler's loop (Go's `schedule`/`findrunnable`): run the ready
//! threads a round at a time, switch into each (`run_task`), then look at
//! the remote wakes, the timers and the reactor, spinning for a wake from
//! another OS thread before it sleeps in the poller. What a thread may spin
//! for itself before it parks (`spin.rs`) is asked here too, since it spends
//! the loop's budget.

use super::Scheduler;
use super::cancel::cancelled_before_start;
use super::deadlock::Deadlock;
use crate::fiber::Step;
use crate::runtime::task::{Body, Cancel, Code, Started, State, TaskId};
use crate::stack::Stack;
use crate::{Fiber, stack};
use std::io;
use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// How long an idle runtime spins for a wake from another OS thread before it
/// sleeps in the poller: about what sleeping and being woken cost (on the
/// 2-core VM of `fibra-bench`, `strace -c` of a Ractor ping-pong averages
/// 5–15 µs per `epoll_wait` that slept and 2–7 µs per eventfd write), so a
/// runtime that then sleeps anyway has spent at most about twice the least it
/// could have (the two-competitive rule for spin-then-block), and one whose
/// peer answers within it — a chatty Ractor's reply, in well under 1 µs — pays
/// no system call at all. Bounded by the next timer; skipped while a thread
/// waits on a socket (the poller is where that wake comes from).
///
/// A green thread that spins for a message first (see `spin.rs`) spends this
/// same budget: the worker spins this long in all, in the thread and then in
/// the loop, before it sleeps.
pub(crate) const SPIN_BEFORE_SLEEP: Duration = Duration::from_micros(20);

/// The most green threads one pass of the loop runs before it looks at the
/// reactor again (tokio's current-thread runtime polls every 61 tasks). With
/// many sockets busy, a long pass lets hundreds of readiness events pile up,
/// and the `epoll_wait` that collects them then touches sockets long gone
/// from the cache: in `fibra-bench echo` (1,000 connections), passes of up to
/// 2,000 threads spent about 5 % of the time in `epoll_wait`, passes of 64
/// about 3.6 % (`perf record -e cpu-clock`), for one more `epoll_wait` every
/// 64 threads run — a few hundredths of a system call per round trip. (End to
/// end that is within the noise of a shared VM: see the reactor's docs.)
///
/// A pass runs the threads that were ready when it began, and then — unless
/// one of them yielded — the threads they readied meanwhile (a message to a
/// green thread or Ractor of this worker, a lock handed over), up to `ROUND`
/// in all: two threads of one worker that take turns — a pair placed with
/// `Pool::spawn_near` — then switch from one to the other without a pass of
/// the loop between (the remote ring, the timers and the poller looked at,
/// the clock ticked) on every turn. So a wake from another OS thread, a due
/// timer and a ready socket are still seen within `ROUND` switches, as before;
/// and a `yield_now` still lets the loop go round once the threads ready
/// before it have run, as it always did. (Go's `runnext` runs the one
/// goroutine a goroutine readies next; here the readied thread still waits
/// behind those that were ready before it, so none of them waits longer.)
const ROUND: usize = 64;

/// How many passes of a busy runtime's loop may go by without a clock read
/// (see `Scheduler::tick`).
const CLOCK_EVERY: u32 = 64;

impl Scheduler {
    /// Runs green threads until `finished` says so, sleeping in the reactor when
    /// none is ready.
    ///
    /// # Errors
    ///
    /// [`Deadlock`] if every green thread is parked and nothing (no timer, no
    /// socket, no other OS thread) can ever wake one.
    pub(in crate::runtime) fn run_until(
        &self,
        finished: impl Fn() -> bool,
    ) -> Result<(), Deadlock> {
        let mut woken = Vec::new();
        loop {
            // Run what is ready — and, unless one of them yields, what those
            // threads make ready meanwhile (see `ROUND`) — but poll between
            // rounds so that a thread that keeps yielding does not starve
            // sockets and timers.
            let round = self.queue.borrow().len().min(ROUND);
            self.yielded.set(false);
            for ran in 0..ROUND {
                if ran >= round && self.yielded.get() {
                    break;
                }
                let Some(task) = self.queue.borrow_mut().pop_front() else {
                    break;
                };
                self.run_task(task);
            }
            if !self.owed.borrow().is_empty() {
                self.wake_owed();
            }
            self.monitor.in_loop();
            if self.monitor.stalled.load(Relaxed) {
                self.monitor.report_stall_end();
            }
            self.tick();
            if finished() {
                return Ok(());
            }
            if let Some(after) = self.compact_after {
                self.compact_cold(self.clock.get(), after);
            }
            self.take_remote_wakes(&mut woken);
            let mut timeout = if !self.queue.borrow().is_empty() {
                // Threads are ready: only a look at the sockets (which
                // `wait_for_events` skips when no thread waits on one).
                Some(Duration::ZERO)
            } else {
                let now = Instant::now();
                self.clock.set(now);
                self.publish_gauges();
                let next = self.timers.borrow().next_timeout(now);
                if next.is_none()
                    && !self.reactor.has_waiters()
                    && self.nobody_else_can_wake(&mut woken)
                {
                    return Err(Deadlock {
                        parked: self.tasks.borrow().len(),
                    });
                }
                // The check above may have moved a wake left by a dropped
                // Unparker into the run queue: then do not sleep.
                if self.queue.borrow().is_empty() {
                    self.until_next_compaction(now, next)
                } else {
                    Some(Duration::ZERO)
                }
            };
            // A dump asked since the last time round is answered before the
            // runtime sleeps: its wake may already have been taken above.
            if self.monitor.dump_asked() {
                self.answer_dumps();
                // Answering may have made a thread ready (a Ractor worker
                // drops on one what its census took): then do not sleep.
                if !self.queue.borrow().is_empty() {
                    timeout = Some(Duration::ZERO);
                }
            }
            let woke = self.wait_for_events(timeout);
            self.take_remote_wakes(&mut woken);
            let timers = !self.timers.borrow().is_empty();
            if woke.is_some() || timers {
                let now = woke.unwrap_or_else(Instant::now);
                self.clock.set(now);
                if timers {
                    self.timers.borrow_mut().expire(now, |task| self.wake(task));
                }
            }
        }
    }

    fn run_task(&self, task: TaskId) {
        // The thread's span, if it has one, out of the task while the thread
        // runs, and entered around the switch into it: the one place a
        // thread is switched into to run its code.
        #[cfg(feature = "tracing")]
        let span: Option<Box<tracing::Span>>;
        let fiber = {
            let mut tasks = self.tasks.borrow_mut();
            let entry = match tasks.get_mut(task.index) {
                Some(entry) if entry.serial == task.serial && entry.state == State::Runnable => {
                    entry
                }
                _ => return,
            };
            if entry.compacted.is_some() {
                // Its stack back in place before anything touches its fiber.
                entry.compacted = None;
            }
            entry.state = State::Running;
            #[cfg(feature = "tracing")]
            {
                span = entry.span.take();
            }
            let fiber = match &mut entry.code {
                Code::Started(fiber) => fiber.clone(),
                Code::Unstarted(body) => {
                    let body = std::mem::replace(body, Body::empty());
                    let cancelled =
                        entry.cancel == Cancel::Requested && cancelled_before_start(entry);
                    let own_size = if entry.has_options {
                        self.options.borrow()[&task.serial].stack_size
                    } else {
                        None
                    };
                    let size = own_size.unwrap_or(self.stack_size);
                    match Stack::new(size) {
                        Ok(stack) => {
                            let fiber = Fiber::on_stack(stack, move |_, ()| {
                                body.run(if cancelled {
                                    Started::Cancelled
                                } else {
                                    Started::Run
                                });
                            });
                            let fiber = Rc::new(fiber);
                            entry.code = Code::Started(fiber.clone());
                            fiber
                        }
                        Err(err) => {
                            let gone = tasks.remove(task.index);
                            drop(tasks);
                            let options = if gone.has_options {
                                self.forget_options(gone.serial)
                            } else {
                                None
                            };
                            let err = match options.and_then(|o| o.name) {
                                Some(name) => io::Error::new(
                                    err.kind(),
                                    format!("{err} (green thread '{name}')"),
                                ),
                                None => err,
                            };
                            body.run(Started::NoStack(err));
                            return;
                        }
                    }
                }
            };
            // Its name lives in the task until the thread has ended.
            stack::switched_into(task.serial, entry.name.as_ref(), fiber.stack_range().end);
            fiber
        };
        self.running.set(Some(task));
        let switches = self.switches.get() + 1;
        self.switches.set(switches);
        self.monitor.switched_into(switches, task.serial);
        let step = {
            #[cfg(feature = "tracing")]
            let _entered = span.as_deref().map(tracing::Span::enter);
            fiber.resume(())
        };
        stack::switched_out();
        self.running.set(None);
        // A thread that parked or yielded gets its span back; that of one
        // that has ended is dropped here, which closes it.
        #[cfg(feature = "tracing")]
        if let (Ok(Step::Yield(())), Some(span)) = (&step, span) {
            self.tasks.borrow_mut()[task.index].span = Some(span);
        }
        match step {
            // Parked or yielded: `suspend_running` recorded which.
            Ok(Step::Yield(())) => {}
            Ok(Step::Return(())) => {
                let finished = self.tasks.borrow_mut().remove(task.index);
                if finished.has_options {
                    self.forget_options(finished.serial);
                }
                drop(finished);
            }
            Err(err) => unreachable!("fibra: a runnable green thread could not be resumed: {err}"),
        }
    }

    /// Polls the reactor for ready sockets, sleeping up to `timeout` if it is
    /// not zero. A runtime with no socket to wait for first spins a little for
    /// a wake from another OS thread (a message between Ractors), which is far
    /// cheaper than sleeping and being woken; and it makes no `epoll_wait`
    /// that cannot sleep (an `epoll_wait` for nothing would be a system call
    /// per turn of a busy loop). Returns when it woke, if it slept: the
    /// clock read that measures the sleep serves the loop's clock too.
    fn wait_for_events(&self, timeout: Option<Duration>) -> Option<Instant> {
        let blocking = timeout != Some(Duration::ZERO);
        let budget = self.spun_since.take().map_or(SPIN_BEFORE_SLEEP, |since| {
            SPIN_BEFORE_SLEEP.saturating_sub(since.elapsed())
        });
        let spin = timeout.map_or(budget, |t| t.min(budget));
        if blocking && !self.reactor.has_waiters() && self.remote.spin(spin) {
            return None;
        }
        // With no timer and no socket, the loop found an `Unparker` held
        // (else it would have reported a deadlock): then the drop of the last
        // one must end the sleep, so that the loop reports it (`Outside`).
        let until_unheld = timeout.is_none() && !self.reactor.has_waiters();
        let asleep = blocking && self.remote.prepare_to_sleep(until_unheld);
        if !asleep && !self.reactor.has_waiters() {
            // Not sleeping (threads are ready, or a wake came just before),
            // and no thread waits on a socket: nothing for epoll to say.
            return None;
        }
        let timeout = if asleep {
            timeout
        } else {
            Some(Duration::ZERO)
        };
        let counters = &self.monitor.counters;
        let slept_at = asleep.then(Instant::now);
        self.reactor
            .poll(timeout, |task| {
                counters.reactor_events.add(1);
                self.try_wake(task)
            })
            .unwrap_or_else(|err| {
                panic!("fibra: the IO reactor failed: {err}");
            });
        slept_at.map(|slept_at| {
            let woke = Instant::now();
            let slept = woke.saturating_duration_since(slept_at);
            counters
                .idle_nanos
                .add(u64::try_from(slept.as_nanos()).unwrap_or(u64::MAX));
            self.remote.woke_up();
            woke
        })
    }

    /// Counts a pass of the loop, and keeps `clock` within
    /// [`CLOCK_EVERY`] passes of the time: a runtime reads the clock anyway
    /// before it sleeps, after it wakes and when it has timers, so only one
    /// that is never idle and has no timer needs this.
    #[inline(always)]
    fn tick(&self) {
        let passes = self.passes.get().wrapping_add(1);
        self.passes.set(passes);
        self.monitor.counters.passes.add(1);
        if passes.is_multiple_of(CLOCK_EVERY) {
            self.clock.set(Instant::now());
            self.publish_gauges();
        }
    }

    /// Wakes the threads that other OS threads unparked, and runs the
    /// errands they queued (see `Remote::send_errand`).
    #[inline(always)]
    pub(super) fn take_remote_wakes(&self, buffer: &mut Vec<TaskId>) {
        // Usually there is none: then a look at the ring's head slot and at
        // the overflow flag (two loads of lines that only a wake writes) is
        // all the pass spends here, not a take, a drain and an errand check.
        if self.remote.pending() {
            self.take_pending_wakes(buffer);
        }
    }

    /// [`take_remote_wakes`](Self::take_remote_wakes), once one is pending.
    fn take_pending_wakes(&self, buffer: &mut Vec<TaskId>) {
        self.remote.take(buffer);
        let mut errands = false;
        buffer.drain(..).for_each(|task| {
            if task == TaskId::ERRANDS {
                errands = true;
            } else {
                self.wake_counted(task, &self.monitor.counters.remote_wakes);
            }
        });
        if errands {
            self.run_errands();
        }
    }

    /// Runs the errands other OS threads queued, here in the loop.
    #[cold]
    fn run_errands(&self) {
        self.remote
            .take_errands()
            .into_iter()
            .for_each(|errand| errand());
    }

    /// How long the running green thread may spin for a wake from another OS
    /// thread (see `spin.rs`), at most `limit` from the returned start (the
    /// time now): `None` when it may not, because no green thread runs,
    /// another could run, or a thread waits on a socket (the poller must be
    /// asked) or a timer is due; shortened to the next timer. The clock is
    /// read only once the rest allows a spin: a receiver whose worker has
    /// another thread to run (the peer of a pair placed on one worker, which
    /// it has just woken) gives way without reading it.
    #[inline]
    pub(crate) fn idle_spin_budget(&self, limit: Duration) -> Option<(Instant, Duration)> {
        if !self.is_running_a_thread() || self.reactor.has_waiters() || self.has_other_work() {
            return None;
        }
        self.spin_budget_from_now(limit)
    }

    /// [`idle_spin_budget`](Self::idle_spin_budget) once a spin is allowed:
    /// out of line, so that a receiver whose worker has other work (the common
    /// case for a pair on one worker) does not pay for the registers the clock
    /// and the timers need.
    #[inline(never)]
    fn spin_budget_from_now(&self, limit: Duration) -> Option<(Instant, Duration)> {
        let now = Instant::now();
        let next_timer = self.timers.borrow().next_timeout(now);
        let budget = next_timer.map_or(limit, |next| next.min(limit));
        (!budget.is_zero()).then_some((now, budget))
    }

    /// Records that the running thread spun for a wake from `since` and none
    /// came: the loop's spin before it sleeps is shortened by as much.
    pub(crate) fn spun_in_vain(&self, since: Instant) {
        self.spun_since.set(Some(since));
    }

    /// Whether this runtime has something to do besides the running thread: a
    /// thread ready to run, a wake from another OS thread not yet taken, or a
    /// dump to answer. (Each a load of a line other cores write only to make
    /// it so: cheap to ask while spinning.)
    pub(crate) fn has_other_work(&self) -> bool {
        !self.queue.borrow().is_empty() || self.remote.pending() || self.monitor.dump_asked()
    }
}

//! Spinning for what another OS thread is about to hand the running green
//! thread (a Ractor's next message), while its worker has nothing else to do.
//!
//! Parking and being woken by another core costs more than the message does:
//! the sender claims the wake and pushes the thread's id into the worker's
//! remote ring, and the idle worker must see the ring slot, take the id and
//! switch back before the thread can even look at its queue — three cache
//! lines that cross one after the other once the message is there. A thread
//! that instead keeps looking at its queue for a little while is not parked,
//! so the sender finds nobody to wake and does not; the message's own lines
//! are all that cross. This is what the idle loop's spin on the ring (see the
//! scheduler) does, one step earlier: the worker is idle either way, and
//! spinning in the thread saves the park, the wake and the switch.
//!
//! The spin is only worth it while nothing else could use the worker, so it
//! does not start, and stops within a few dozen looks, when another green
//! thread is runnable here, another OS thread has woken one (a wake in the
//! remote ring), a dump asks for this runtime, or a thread waits on a socket
//! (readiness is only learned by asking the poller, which the spin does not).
//! It is bounded by [`SPIN_FOR_MESSAGE`] and by the next timer, so a thread
//! that sleeps on this worker wakes on time, and the stall detector (which
//! speaks up after 100 ms) never sees it.

use super::scheduler::{self, Scheduler};
use std::time::Duration;

/// How long a green thread spins for a message before it parks: the whole of
/// the worker's spin before it sleeps (`SPIN_BEFORE_SLEEP`, whose docs say
/// why that long), which the thread then has spent, so the loop does not spin
/// again on top of it. Any shorter spin would give up on replies that the
/// worker still waits for, spinning, in its loop — and then pay the park and
/// the wake that the spin is for. (The measured figures are in
/// `docs/internals/ractor-round-trip.md`, "How long to spin".)
pub(crate) const SPIN_FOR_MESSAGE: Duration = scheduler::SPIN_BEFORE_SLEEP;

/// How many looks between two checks of the clock and of the worker's other
/// work: each look is a load of a line that is usually in this core's cache,
/// and a pause, so this keeps the checks to a small share of the spin and
/// still notices other work within a microsecond or so.
const LOOKS_PER_CHECK: u32 = 32;

/// Why [`poll_while_idle`] gave up without a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GaveUp {
    /// Not a green thread of a runtime (an OS thread waits: it parks at once),
    /// or the worker has something else to do.
    Busy,
    /// The time allowed ran out.
    TimedOut,
}

/// Calls `poll` until it returns a value, for up to `limit` (and no later than
/// the worker's next timer), while the running green thread is the only
/// thing its worker (`scheduler`, this OS thread's runtime) could run; gives
/// up at once, or as soon as that stops being so (see the module docs). An
/// OS thread outside a runtime has no scheduler to ask, and parks at once.
pub(crate) fn poll_while_idle<T>(
    scheduler: &Scheduler,
    limit: Duration,
    mut poll: impl FnMut() -> Option<T>,
) -> Result<T, GaveUp> {
    let Some((start, limit)) = scheduler.idle_spin_budget(limit) else {
        return Err(GaveUp::Busy);
    };
    loop {
        for _ in 0..LOOKS_PER_CHECK {
            if let Some(value) = poll() {
                return Ok(value);
            }
            std::hint::spin_loop();
        }
        if scheduler.has_other_work() {
            return Err(GaveUp::Busy);
        }
        if start.elapsed() >= limit {
            scheduler.spun_in_vain(start);
            return Err(GaveUp::TimedOut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{self, Unparker};
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    /// Long enough that a spin that ran its time would hang the test: the
    /// spins below must end because other work turned up.
    const FOREVER: Duration = Duration::from_secs(3600);

    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn a_thread_spins_until_what_it_polls_for_comes() {
        runtime::run(|| {
            let looks = Cell::new(0);
            let found = poll_while_idle(&scheduler::current(), FOREVER, || {
                looks.set(looks.get() + 1);
                (looks.get() == 100).then_some("here")
            });
            assert_eq!(found, Ok("here"));
        });
    }

    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn no_spin_while_another_green_thread_is_ready() {
        runtime::run(|| {
            let other = crate::spawn(|| {});
            assert_eq!(
                poll_while_idle(&scheduler::current(), FOREVER, || None::<()>),
                Err(GaveUp::Busy)
            );
            other.join().unwrap();
        });
    }

    /// A timer that is due is work for the worker's loop: no spin.
    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn no_spin_once_a_timer_is_due() {
        runtime::run(|| {
            // Far enough ahead that the loop cannot have expired the timer
            // before this thread runs again, even under valgrind (with 1 ms
            // it did, and the spin then had no timer to stop it).
            let deadline = Instant::now() + Duration::from_millis(200);
            let woke = Rc::new(Cell::new(false));
            let sleeper = {
                let woke = woke.clone();
                crate::spawn(move || {
                    crate::time::sleep_until(deadline);
                    woke.set(true);
                })
            };
            runtime::yield_now();
            assert!(!woke.get(), "the sleeper's timer is still pending");
            std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
            // A spin that missed the due timer would time out (and fail)
            // rather than hang the test.
            let limit = Duration::from_secs(10);
            assert_eq!(
                poll_while_idle(&scheduler::current(), limit, || None::<()>),
                Err(GaveUp::Busy)
            );
            sleeper.join().unwrap();
            assert!(woke.get());
        });
    }

    /// A green thread of the same worker, parked, is woken by another OS
    /// thread while this one spins: the spin gives up (it would otherwise
    /// run for an hour), so the woken thread can run.
    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn a_spin_gives_way_to_a_thread_that_another_os_thread_wakes() {
        runtime::run(|| {
            let order = Rc::new(RefCell::new(Vec::new()));
            let unparker: Rc<RefCell<Option<Unparker>>> = Rc::default();
            let sleeper = {
                let (order, unparker) = (order.clone(), unparker.clone());
                crate::spawn(move || {
                    *unparker.borrow_mut() = Some(runtime::current().unparker());
                    runtime::park();
                    order.borrow_mut().push("the woken thread");
                })
            };
            runtime::yield_now();
            let unparker = unparker.borrow_mut().take().expect("the sleeper parked");
            let spinning = Arc::new(AtomicBool::new(false));
            let waker = {
                let spinning = spinning.clone();
                std::thread::spawn(move || {
                    while !spinning.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    unparker.unpark();
                })
            };
            let spun = poll_while_idle(&scheduler::current(), FOREVER, || {
                spinning.store(true, Ordering::Release);
                None::<()>
            });
            assert_eq!(spun, Err(GaveUp::Busy));
            waker.join().unwrap();
            sleeper.join().unwrap();
            assert_eq!(*order.borrow(), ["the woken thread"]);
        });
    }
}

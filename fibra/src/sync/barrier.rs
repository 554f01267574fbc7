//! A barrier for green threads: a rendezvous of a fixed number of them.

use super::waitlist::{Sleeper, WaitList};
use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use std::cell::{Cell, RefCell};
use std::fmt;

/// Lets a fixed number of green threads wait for each other (the counterpart
/// of [`std::sync::Barrier`]): each [`wait`](Barrier::wait) parks until `n`
/// threads are in it, then all `n` go on, and one of them — the last to
/// arrive — is told it is the leader.
///
/// The barrier is reusable: once released, the next `n` calls form the next
/// generation. A waiting thread that is [cancelled](crate::JoinHandle::cancel)
/// (or whose [`timeout`](crate::time::timeout) expires) before its generation
/// is released takes its arrival back, so the generation still needs `n`
/// threads present at once; one cancelled after the release changes nothing.
///
/// It is `!Send` and `!Sync`: share it with an [`Rc`](std::rc::Rc).
///
/// ```
/// use fibra::sync::Barrier;
/// use std::rc::Rc;
///
/// fibra::run(|| {
///     let barrier = Rc::new(Barrier::new(3));
///     let threads: Vec<_> = (0..3)
///         .map(|_| {
///             let barrier = barrier.clone();
///             fibra::spawn(move || {
///                 let first = barrier.wait().is_leader();
///                 let second = barrier.wait().is_leader(); // a new generation
///                 (first, second)
///             })
///         })
///         .collect();
///     let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
///     assert_eq!(results.iter().filter(|r| r.0).count(), 1); // one leader each time
///     assert_eq!(results.iter().filter(|r| r.1).count(), 1);
/// });
/// ```
pub struct Barrier {
    n: usize,
    /// How many threads of the current generation are in `wait`.
    arrived: Cell<usize>,
    waiters: RefCell<WaitList<Waiter>>,
}

struct Waiter {
    sleeper: Sleeper,
    released: bool,
}

/// What [`Barrier::wait`] returns: whether this thread is the generation's
/// leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this thread is the leader: the last of its generation to
    /// arrive (exactly one thread of each generation is).
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier for `n` threads. `Barrier::new(0)` behaves as
    /// `Barrier::new(1)`: every `wait` returns at once, as the leader.
    pub const fn new(n: usize) -> Barrier {
        Barrier {
            n,
            arrived: Cell::new(0),
            waiters: RefCell::new(WaitList::new()),
        }
    }

    /// Parks the calling green thread until `n` threads wait here, then
    /// releases them all.
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits (its arrival is taken back).
    #[track_caller]
    pub fn wait(&self) -> BarrierWaitResult {
        let arrived = self.arrived.get() + 1;
        if arrived >= self.n {
            self.arrived.set(0);
            let mut waiters = self.waiters.borrow_mut();
            while let Some(key) = waiters.pop_front() {
                let waiter = waiters.get_mut(key);
                waiter.released = true;
                waiter.sleeper.wake();
            }
            return BarrierWaitResult(true);
        }
        let scheduler = scheduler::current_for("fibra::sync::Barrier::wait");
        self.arrived.set(arrived);
        let key = self.waiters.borrow_mut().push_back(Waiter {
            sleeper: Sleeper::running(&scheduler),
            released: false,
        });
        let waiting = Waiting { barrier: self, key };
        while !self.waiters.borrow().get(key).released {
            scheduler.park_on(WaitReason::Barrier);
        }
        self.waiters.borrow_mut().remove(key);
        std::mem::forget(waiting);
        BarrierWaitResult(false)
    }

    /// How many threads the barrier waits for in each generation (as given
    /// to [`new`](Barrier::new)).
    pub fn parties(&self) -> usize {
        self.n
    }

    /// How many threads of the current generation wait now.
    pub fn waiting(&self) -> usize {
        self.arrived.get()
    }
}

/// A waiter's place, removed if `wait` unwinds; an arrival not yet released
/// is taken back.
struct Waiting<'a> {
    barrier: &'a Barrier,
    key: usize,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let released = self.barrier.waiters.borrow_mut().remove(self.key).released;
        if !released {
            let arrived = &self.barrier.arrived;
            arrived.set(arrived.get() - 1);
        }
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier")
            .field("parties", &self.n)
            .field("waiting", &self.arrived.get())
            .finish_non_exhaustive()
    }
}

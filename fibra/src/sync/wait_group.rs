//! Go's `sync.WaitGroup` for green threads: wait until a counter of
//! outstanding work is back to zero.

use super::waitlist::{Sleeper, WaitList};
use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

/// Waits for a group of green threads (or any work) to finish, as Go's
/// `sync.WaitGroup`: [`add`](WaitGroup::add) counts work started,
/// [`done`](WaitGroup::done) counts one piece finished, and
/// [`wait`](WaitGroup::wait) parks the calling thread until the counter is
/// zero. Every waiter is released when it reaches zero; the group can then be
/// used again.
///
/// A [`WaitGroupGuard`] from [`guard`](WaitGroup::guard) adds one and calls
/// `done` when dropped — also when its thread panics or is
/// [cancelled](crate::JoinHandle::cancel), so a thread that ends early never
/// leaves the waiters hanging:
///
/// ```
/// use fibra::sync::WaitGroup;
/// use std::cell::Cell;
/// use std::rc::Rc;
///
/// fibra::run(|| {
///     let group = Rc::new(WaitGroup::new());
///     let finished = Rc::new(Cell::new(0));
///     for n in 0..5 {
///         let (done, finished) = (group.guard(), finished.clone());
///         fibra::spawn(move || {
///             let _done = done; // counts down when this thread ends
///             fibra::time::sleep(std::time::Duration::from_millis(n));
///             finished.set(finished.get() + 1);
///         });
///     }
///     group.wait();
///     assert_eq!(finished.get(), 5);
/// });
/// ```
///
/// Go's calls, one for one:
///
/// ```
/// use fibra::sync::WaitGroup;
/// use std::rc::Rc;
///
/// fibra::run(|| {
///     let wg = Rc::new(WaitGroup::new());
///     wg.add(2);
///     for _ in 0..2 {
///         let wg = wg.clone();
///         fibra::spawn(move || wg.done());
///     }
///     wg.wait();
///     assert_eq!(wg.count(), 0);
/// });
/// ```
///
/// It is `!Send` and `!Sync`: share it with an [`Rc`].
#[derive(Default)]
pub struct WaitGroup {
    count: Cell<usize>,
    waiters: RefCell<WaitList<Waiter>>,
}

struct Waiter {
    sleeper: Sleeper,
    released: bool,
}

impl WaitGroup {
    /// A group whose counter is zero.
    pub const fn new() -> WaitGroup {
        WaitGroup {
            count: Cell::new(0),
            waiters: RefCell::new(WaitList::new()),
        }
    }

    /// Adds `n` to the counter (Go's `Add(n)`).
    ///
    /// # Panics
    ///
    /// If the counter would overflow `usize`.
    pub fn add(&self, n: usize) {
        let count = self
            .count
            .get()
            .checked_add(n)
            .expect("fibra: WaitGroup counter overflow");
        self.count.set(count);
    }

    /// Takes one from the counter (Go's `Done()`); at zero, every waiter is
    /// released.
    ///
    /// # Panics
    ///
    /// If the counter is zero already: `done` was called more often than
    /// `add` counted, as Go's "sync: negative WaitGroup counter".
    pub fn done(&self) {
        let count = self.count.get().checked_sub(1).expect(
            "fibra: negative WaitGroup counter (WaitGroup::done called more times than add counted)",
        );
        self.count.set(count);
        if count == 0 {
            let mut waiters = self.waiters.borrow_mut();
            while let Some(key) = waiters.pop_front() {
                let waiter = waiters.get_mut(key);
                waiter.released = true;
                waiter.sleeper.wake();
            }
        }
    }

    /// Parks the calling green thread until the counter is zero (returns at
    /// once if it is).
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits.
    #[track_caller]
    pub fn wait(&self) {
        if self.count.get() == 0 {
            return;
        }
        let scheduler = scheduler::current_for("fibra::sync::WaitGroup::wait");
        let key = self.waiters.borrow_mut().push_back(Waiter {
            sleeper: Sleeper::running(&scheduler),
            released: false,
        });
        let _waiting = Waiting { group: self, key };
        while !self.waiters.borrow().get(key).released {
            scheduler.park_on(WaitReason::WaitGroup);
        }
    }

    /// The counter: work added and not yet done.
    pub fn count(&self) -> usize {
        self.count.get()
    }

    /// Adds one to the counter, and returns a guard that takes it off
    /// ([`done`](WaitGroup::done)) when dropped, however its owner ends. It
    /// holds an [`Rc`] of the group, so it can move into a
    /// [`spawn`](crate::spawn)ed thread.
    pub fn guard(self: &Rc<Self>) -> WaitGroupGuard {
        self.add(1);
        WaitGroupGuard {
            group: self.clone(),
        }
    }
}

/// A waiter's place, removed however `wait` ends.
struct Waiting<'a> {
    group: &'a WaitGroup,
    key: usize,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.group.waiters.borrow_mut().remove(self.key);
    }
}

/// One unit of a [`WaitGroup`]'s counter, from [`WaitGroup::guard`]: dropping
/// it calls [`done`](WaitGroup::done).
#[must_use = "the work is counted done as soon as the guard is dropped"]
pub struct WaitGroupGuard {
    group: Rc<WaitGroup>,
}

impl Drop for WaitGroupGuard {
    fn drop(&mut self) {
        self.group.done();
    }
}

impl fmt::Debug for WaitGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitGroup")
            .field("count", &self.count.get())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for WaitGroupGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitGroupGuard").finish_non_exhaustive()
    }
}

//! Wake-ups without data for green threads, in tokio's shape.

use super::waitlist::{Sleeper, WaitList};
use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use std::cell::{Cell, RefCell};
use std::fmt;

/// Notifies green threads of one runtime that something happened, without
/// data or a lock (tokio's `Notify`): [`notified`](Notify::notified) parks the
/// calling thread until another calls [`notify_one`](Notify::notify_one) or
/// [`notify_waiters`](Notify::notify_waiters).
///
/// `notify_one` wakes the longest-waiting thread; if none waits, it stores a
/// permit (at most one), which the next `notified` takes and returns at once,
/// so a notification sent just before the waiter arrives is not lost.
/// `notify_waiters` wakes every thread waiting now, and stores nothing.
///
/// In tokio, `notified()` makes a future that must be created before the
/// condition is checked, or a `notify_waiters` in between is missed. Here no
/// other green thread runs between the check and the park (they take turns
/// at fibra's waits), so check, then call `notified`:
/// `while !ready() { notify.notified(); }`.
///
/// A waiter [cancelled](crate::JoinHandle::cancel) after a `notify_one` chose
/// it, before it returned, passes the notification on: to the next waiter, or
/// to the stored permit.
///
/// It is `!Send` and `!Sync`: share it with an [`Rc`](std::rc::Rc).
///
/// ```
/// use fibra::sync::Notify;
/// use std::cell::Cell;
/// use std::rc::Rc;
///
/// fibra::run(|| {
///     let state = Rc::new((Notify::new(), Cell::new(0)));
///     let consumer = {
///         let state = state.clone();
///         fibra::spawn(move || {
///             let (notify, value) = &*state;
///             while value.get() < 3 {
///                 notify.notified();
///             }
///             value.get()
///         })
///     };
///     for _ in 0..3 {
///         state.1.set(state.1.get() + 1);
///         state.0.notify_one();
///         fibra::runtime::yield_now();
///     }
///     assert_eq!(consumer.join().unwrap(), 3);
/// });
/// ```
#[derive(Default)]
pub struct Notify {
    permit: Cell<bool>,
    waiters: RefCell<WaitList<Waiter>>,
}

struct Waiter {
    sleeper: Sleeper,
    by: Option<By>,
}

/// Which call notified a waiter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum By {
    One,
    Waiters,
}

impl Notify {
    /// A `Notify` with no waiter and no stored permit.
    pub const fn new() -> Notify {
        Notify {
            permit: Cell::new(false),
            waiters: RefCell::new(WaitList::new()),
        }
    }

    /// Parks the calling green thread until it is notified; returns at once,
    /// taking it, if a permit is stored.
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits; a `notify_one` that chose
    /// it passes on.
    #[track_caller]
    pub fn notified(&self) {
        if self.permit.replace(false) {
            return;
        }
        let scheduler = scheduler::current_for("fibra::sync::Notify::notified");
        let key = self.waiters.borrow_mut().push_back(Waiter {
            sleeper: Sleeper::running(&scheduler),
            by: None,
        });
        let waiting = Waiting { notify: self, key };
        loop {
            scheduler.park_on(WaitReason::Notify);
            if self.waiters.borrow().get(key).by.is_some() {
                break;
            }
        }
        self.waiters.borrow_mut().remove(key);
        std::mem::forget(waiting);
    }

    /// Wakes the longest-waiting green thread; if none waits, stores a permit
    /// for the next [`notified`](Notify::notified) (one at most: two calls
    /// with nobody waiting store one).
    pub fn notify_one(&self) {
        let mut waiters = self.waiters.borrow_mut();
        match waiters.pop_front() {
            Some(key) => {
                let waiter = waiters.get_mut(key);
                waiter.by = Some(By::One);
                waiter.sleeper.wake();
            }
            None => self.permit.set(true),
        }
    }

    /// Wakes every green thread waiting now; stores no permit.
    pub fn notify_waiters(&self) {
        let mut waiters = self.waiters.borrow_mut();
        while let Some(key) = waiters.pop_front() {
            let waiter = waiters.get_mut(key);
            waiter.by = Some(By::Waiters);
            waiter.sleeper.wake();
        }
    }
}

/// A waiter's place in the queue, removed if `notified` unwinds; a
/// `notify_one` it got passes on.
struct Waiting<'a> {
    notify: &'a Notify,
    key: usize,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let by = self.notify.waiters.borrow_mut().remove(self.key).by;
        if by == Some(By::One) {
            self.notify.notify_one();
        }
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify")
            .field("permit", &self.permit.get())
            .finish_non_exhaustive()
    }
}

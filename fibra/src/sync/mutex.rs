//! A lock for green threads whose waiters park, served first come, first served.

use super::owner::Owner;
use super::waitlist::{Sleeper, WaitList};
use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use std::cell::{Cell, RefCell, RefMut};
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A mutual-exclusion lock for the green threads of one runtime: a thread that
/// finds it held parks (the others run meanwhile) instead of blocking the OS
/// thread.
///
/// **Fair.** Waiters queue in arrival order; when the holder unlocks, the lock
/// passes straight to the first waiter, so a thread that keeps locking cannot
/// overtake the ones that wait, and nobody starves.
///
/// **No poisoning.** A green thread that panics or is
/// [cancelled](crate::JoinHandle::cancel) while it holds the lock releases it
/// as it unwinds, and the next waiter gets it. Cancellation is an ordinary event
/// for green threads, so fibra does not poison the lock the way
/// [`std::sync::Mutex`] does; but the data may then be half-updated. If an
/// update must be all or nothing, make it on a copy and store the result in one
/// assignment, or do not park (lock, channel, IO, sleep) in the middle of it.
///
/// The lock is `!Send` and `!Sync`: it is for green threads of the same runtime, which all
/// run on one OS thread; share it with an [`Rc`](std::rc::Rc). Across OS
/// threads, use [`std::sync::Mutex`] and [`blocking`](crate::blocking), or
/// messages.
///
/// ```
/// use fibra::sync::Mutex;
/// use std::rc::Rc;
/// use std::time::Duration;
///
/// fibra::run(|| {
///     let log = Rc::new(Mutex::new(Vec::new()));
///     let writers: Vec<_> = (0..3)
///         .map(|n| {
///             let log = log.clone();
///             fibra::spawn(move || {
///                 let mut entries = log.lock();
///                 entries.push(format!("{n}: start"));
///                 // Parks while holding the lock: the other writers wait.
///                 fibra::time::sleep(Duration::from_millis(1));
///                 entries.push(format!("{n}: end"));
///             })
///         })
///         .collect();
///     writers.into_iter().for_each(|w| w.join().unwrap());
///     let log = log.lock();
///     // Each writer's two entries are adjacent, in the order they asked.
///     assert_eq!(*log, ["0: start", "0: end", "1: start", "1: end", "2: start", "2: end"]);
/// });
/// ```
pub struct Mutex<T: ?Sized> {
    raw: RawLock,
    data: RefCell<T>,
}

/// The lock itself, apart from the data it guards.
struct RawLock {
    locked: Cell<bool>,
    /// Who holds it, while it is `locked`: `None` while it is handed to a
    /// waiter that has not taken it yet. (Left as it was when the lock is
    /// unlocked, which saves the uncontended unlock a store.)
    owner: Cell<Option<Owner>>,
    waiters: RefCell<WaitList<Waiter>>,
}

struct Waiter {
    sleeper: Sleeper,
    /// Set by the unlocker that handed the lock to this waiter.
    granted: bool,
}

impl<T> Mutex<T> {
    /// A new, unlocked mutex holding `value`.
    pub const fn new(value: T) -> Mutex<T> {
        Mutex {
            raw: RawLock {
                locked: Cell::new(false),
                owner: Cell::new(None),
                waiters: RefCell::new(WaitList::new()),
            },
            data: RefCell::new(value),
        }
    }

    /// Consumes the mutex and returns its data.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Locks the mutex, parking the calling green thread until it is its turn,
    /// and returns a guard that unlocks it when dropped.
    ///
    /// # Panics
    ///
    /// If the calling thread holds the lock already: "deadlock; recursive
    /// locking", as Ruby says (it would wait for itself forever). If the lock
    /// is held and the caller is not a green thread (nothing could wake it).
    /// Unwinds if the calling thread is cancelled while it waits; it then does
    /// not hold the lock.
    ///
    /// ```should_panic
    /// fibra::run(|| {
    ///     let m = fibra::sync::Mutex::new(0);
    ///     let _held = m.lock();
    ///     let _again = m.lock(); // panics: deadlock; recursive locking
    /// });
    /// ```
    #[track_caller]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        if let Some(guard) = self.try_lock() {
            return guard;
        }
        let me = Owner::current();
        if self.raw.owner.get() == Some(me) {
            panic!("fibra: deadlock; recursive locking (this thread holds the Mutex already)");
        }
        let scheduler = scheduler::current_for("fibra::sync::Mutex::lock");
        let key = self.raw.waiters.borrow_mut().push_back(Waiter {
            sleeper: Sleeper::running(&scheduler),
            granted: false,
        });
        let waiting = Waiting {
            raw: &self.raw,
            key,
        };
        loop {
            scheduler.park_on(WaitReason::Mutex);
            if self.raw.waiters.borrow().get(key).granted {
                waiting.acquired();
                return self.guard(me);
            }
        }
    }

    /// Locks the mutex if nobody holds it or waits for it, without parking.
    ///
    /// ```
    /// let m = fibra::sync::Mutex::new(1);
    /// let held = m.try_lock().unwrap();
    /// assert!(m.try_lock().is_none());
    /// drop(held);
    /// assert_eq!(*m.try_lock().unwrap(), 1);
    /// ```
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        // Unlocking with waiters hands the lock over without clearing `locked`,
        // so an unlocked mutex has no waiters: nobody is overtaken here.
        if self.raw.locked.replace(true) {
            return None;
        }
        Some(self.guard(Owner::current()))
    }

    /// Whether some green thread holds the lock now (Ruby's `locked?`).
    pub fn is_locked(&self) -> bool {
        self.raw.locked.get()
    }

    /// Whether the calling green thread holds the lock (Ruby's `owned?`).
    /// Outside any green thread, whether code outside green threads on this
    /// OS thread holds it.
    ///
    /// ```
    /// use fibra::sync::Mutex;
    /// use std::rc::Rc;
    ///
    /// fibra::run(|| {
    ///     let m = Rc::new(Mutex::new(()));
    ///     let held = m.lock();
    ///     assert!(m.is_owned());
    ///     let m2 = m.clone();
    ///     let other = fibra::spawn(move || (m2.is_locked(), m2.is_owned()));
    ///     assert_eq!(other.join().unwrap(), (true, false)); // locked, by someone else
    ///     drop(held);
    ///     assert!(!m.is_owned());
    /// });
    /// ```
    pub fn is_owned(&self) -> bool {
        self.is_locked() && self.raw.owner.get() == Some(Owner::current())
    }

    /// The data, through a unique reference: no locking is needed.
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    /// The guard of a lock just acquired by `owner`.
    fn guard(&self, owner: Owner) -> MutexGuard<'_, T> {
        self.raw.owner.set(Some(owner));
        MutexGuard {
            data: self.data.borrow_mut(),
            _unlock: Unlock(&self.raw),
            mutex: self,
        }
    }
}

impl RawLock {
    /// Passes the lock to the first waiter, or unlocks it if none waits.
    fn release(&self) {
        let mut waiters = self.waiters.borrow_mut();
        match waiters.pop_front() {
            Some(key) => {
                self.owner.set(None);
                let waiter = waiters.get_mut(key);
                waiter.granted = true;
                waiter.sleeper.wake();
            }
            None => self.locked.set(false),
        }
    }
}

/// A waiter's place in the queue, removed however `lock` ends; if the lock was
/// handed over but the waiter unwinds before taking it, it is passed on.
struct Waiting<'a> {
    raw: &'a RawLock,
    key: usize,
}

impl Waiting<'_> {
    fn acquired(self) {
        self.raw.waiters.borrow_mut().remove(self.key);
        std::mem::forget(self);
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let granted = self.raw.waiters.borrow_mut().remove(self.key).granted;
        if granted {
            self.raw.release();
        }
    }
}

/// Holds a [`Mutex`] locked and gives access to its data; dropping it unlocks
/// the mutex (or hands it to the first waiter).
#[must_use = "the mutex unlocks as soon as the guard is dropped"]
pub struct MutexGuard<'a, T: ?Sized> {
    // Field order matters: the data is released before the lock.
    data: RefMut<'a, T>,
    _unlock: Unlock<'a>,
    mutex: &'a Mutex<T>,
}

struct Unlock<'a>(&'a RawLock);

impl Drop for Unlock<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// The mutex this guard holds (for [`Condvar`](super::Condvar)).
    pub(super) fn mutex(&self) -> &'a Mutex<T> {
        self.mutex
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Mutex");
        match self.try_lock() {
            Some(guard) => d.field("data", &&*guard),
            None => d.field("data", &format_args!("<locked>")),
        };
        d.finish_non_exhaustive()
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(value: T) -> Self {
        Mutex::new(value)
    }
}

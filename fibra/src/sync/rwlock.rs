//! A readers-writer lock for green threads, served first come, first served.

use super::semaphore::RawSemaphore;
use crate::runtime::WaitReason;
use std::cell::{Ref, RefCell, RefMut};
use std::fmt;
use std::ops::{Deref, DerefMut};

/// How many readers may hold the lock at once; a writer takes them all.
const READERS: usize = u32::MAX as usize >> 3;

/// A readers-writer lock for the green threads of one runtime: any number of
/// readers, or one writer, hold it at a time; a thread that must wait parks
/// (the others run meanwhile) instead of blocking the OS thread.
///
/// **Fair, so no writer starves.** Readers and writers queue in one line, in
/// arrival order, and are served from its head: a writer waits for the readers
/// that came before it, and readers that come after a waiting writer wait for
/// it, so a steady stream of readers cannot keep a writer out (nor a stream of
/// writers the readers). The readers in a run at the head of the line are let
/// in together. This is tokio's policy; std's `RwLock` leaves it to the OS,
/// and a reader-preferring lock would starve writers under a read-heavy load,
/// the common case for a lock chosen over a [`Mutex`](super::Mutex).
///
/// **No poisoning**, as [`Mutex`](super::Mutex): a holder that panics or is
/// [cancelled](crate::JoinHandle::cancel) releases the lock as it unwinds. A
/// waiter cancelled in line leaves it, and a lock handed to it passes on.
///
/// Taking the write lock while holding a read lock (or the other way round)
/// in the same green thread waits forever; the runtime reports the deadlock
/// if nothing else can run. The lock is `!Send` and `!Sync`: share it with an
/// [`Rc`](std::rc::Rc).
///
/// ```
/// use fibra::sync::RwLock;
/// use std::rc::Rc;
///
/// fibra::run(|| {
///     let config = Rc::new(RwLock::new(String::from("v1")));
///     let readers: Vec<_> = (0..3)
///         .map(|_| {
///             let config = config.clone();
///             fibra::spawn(move || config.read().clone())
///         })
///         .collect();
///     {
///         let r1 = config.read();
///         let r2 = config.read(); // readers share the lock
///         assert_eq!(*r1, *r2);
///     }
///     config.write().push_str("+patch");
///     for reader in readers {
///         assert_eq!(reader.join().unwrap(), "v1+patch");
///     }
/// });
/// ```
pub struct RwLock<T: ?Sized> {
    raw: RawSemaphore,
    data: RefCell<T>,
}

impl<T> RwLock<T> {
    /// A new, unlocked lock holding `value`.
    pub const fn new(value: T) -> RwLock<T> {
        RwLock {
            raw: RawSemaphore::new(READERS),
            data: RefCell::new(value),
        }
    }

    /// Consumes the lock and returns its data.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Takes a read lock, parking the calling green thread while a writer
    /// holds the lock or waits before it; the guard releases it when dropped.
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits; it then holds no lock.
    #[track_caller]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        self.acquire(1, WaitReason::RwLockRead);
        self.read_guard()
    }

    /// Takes the write lock, parking the calling green thread while others
    /// hold the lock or wait before it; the guard releases it when dropped.
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits; it then holds no lock.
    #[track_caller]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.acquire(READERS, WaitReason::RwLockWrite);
        self.write_guard()
    }

    /// Takes a read lock if no writer holds the lock and nobody waits, without
    /// parking.
    ///
    /// ```
    /// let lock = fibra::sync::RwLock::new(1);
    /// let r = lock.try_read().unwrap();
    /// assert!(lock.try_write().is_none());
    /// assert_eq!(*r + *lock.try_read().unwrap(), 2);
    /// ```
    pub fn try_read(&self) -> Option<RwLockReadGuard<'_, T>> {
        self.raw.try_acquire(1).ok()?;
        Some(self.read_guard())
    }

    /// Takes the write lock if nobody holds the lock or waits for it, without
    /// parking.
    ///
    /// ```
    /// let lock = fibra::sync::RwLock::new(1);
    /// *lock.try_write().unwrap() += 1;
    /// assert_eq!(*lock.try_read().unwrap(), 2);
    /// ```
    pub fn try_write(&self) -> Option<RwLockWriteGuard<'_, T>> {
        self.raw.try_acquire(READERS).ok()?;
        Some(self.write_guard())
    }

    /// The data, through a unique reference: no locking is needed.
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    #[track_caller]
    fn acquire(&self, permits: usize, reason: WaitReason) {
        self.raw
            .acquire(permits, reason)
            .expect("a RwLock's semaphore is never closed");
    }

    fn read_guard(&self) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard {
            data: self.data.borrow(),
            _release: Release {
                raw: &self.raw,
                permits: 1,
            },
        }
    }

    fn write_guard(&self) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard {
            data: self.data.borrow_mut(),
            _release: Release {
                raw: &self.raw,
                permits: READERS,
            },
        }
    }
}

/// Gives a guard's permits back.
struct Release<'a> {
    raw: &'a RawSemaphore,
    permits: usize,
}

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.raw.release(self.permits);
    }
}

/// Shared access to an [`RwLock`]'s data; dropping it releases the read lock.
#[must_use = "the read lock is released as soon as the guard is dropped"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    // Field order matters: the data is released before the lock.
    data: Ref<'a, T>,
    _release: Release<'a>,
}

/// Unique access to an [`RwLock`]'s data; dropping it releases the write lock.
#[must_use = "the write lock is released as soon as the guard is dropped"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    // Field order matters: the data is released before the lock.
    data: RefMut<'a, T>,
    _release: Release<'a>,
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RwLock");
        match self.try_read() {
            Some(guard) => d.field("data", &&*guard),
            None => d.field("data", &format_args!("<locked>")),
        };
        d.finish_non_exhaustive()
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(value: T) -> Self {
        RwLock::new(value)
    }
}

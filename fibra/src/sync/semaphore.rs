//! A counting semaphore for green threads, served first come, first served;
//! its core also serves [`RwLock`](super::RwLock).

use super::waitlist::{Sleeper, WaitList};
use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use std::cell::{Cell, RefCell};
use std::error::Error;
use std::fmt;
use std::rc::Rc;

/// A counting semaphore for the green threads of one runtime: it holds a
/// number of permits, [`acquire`](Semaphore::acquire) takes one (parking the
/// calling thread until one is free), and dropping the returned
/// [`SemaphorePermit`] gives it back. Use it to bound how many threads do
/// something at once: connections to a backend, files open, requests in
/// flight.
///
/// **Fair.** Waiters are served in arrival order, each with all the permits it
/// asked for at once: a large request ([`acquire_many`](Semaphore::acquire_many))
/// at the head of the queue holds back the smaller ones behind it until enough
/// permits are free, so it is never starved by them, and a new caller never
/// overtakes a waiter.
///
/// **Cancellation loses nothing.** A green thread [cancelled](crate::JoinHandle::cancel)
/// (or whose [`timeout`](crate::time::timeout) expires) while it waits leaves
/// the queue; permits handed to it just before go to the next waiters, and if
/// it was at the head, the waiters behind it are served if the free permits
/// now suffice.
///
/// [`close`](Semaphore::close) makes every waiting and later `acquire` fail
/// with [`AcquireError`], as tokio's does.
///
/// The semaphore is `!Send` and `!Sync`, for the green threads of one runtime;
/// share it with an [`Rc`] (an [`OwnedSemaphorePermit`] from
/// [`acquire_owned`](Semaphore::acquire_owned) can move into a
/// [`spawn`](crate::spawn)ed thread).
///
/// ```
/// use fibra::sync::Semaphore;
/// use std::cell::Cell;
/// use std::rc::Rc;
/// use std::time::Duration;
///
/// fibra::run(|| {
///     let slots = Rc::new(Semaphore::new(2));
///     let (busy, most) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
///     let workers: Vec<_> = (0..6)
///         .map(|_| {
///             let (slots, busy, most) = (slots.clone(), busy.clone(), most.clone());
///             fibra::spawn(move || {
///                 let _permit = slots.acquire().unwrap();
///                 busy.set(busy.get() + 1);
///                 most.set(most.get().max(busy.get()));
///                 fibra::time::sleep(Duration::from_millis(1));
///                 busy.set(busy.get() - 1);
///             })
///         })
///         .collect();
///     workers.into_iter().for_each(|w| w.join().unwrap());
///     assert_eq!(most.get(), 2); // never more than two at once
///     assert_eq!(slots.available_permits(), 2);
/// });
/// ```
pub struct Semaphore {
    raw: RawSemaphore,
}

/// The semaphore itself: the free permits and the queue of waiters. `RwLock`
/// is one whose readers take one permit and whose writers take them all.
pub(super) struct RawSemaphore {
    permits: Cell<usize>,
    closed: Cell<bool>,
    waiters: RefCell<WaitList<Waiter>>,
}

struct Waiter {
    sleeper: Sleeper,
    /// How many permits it waits for.
    wants: usize,
    verdict: Verdict,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Waiting,
    /// Its permits were taken for it, and it was woken.
    Granted,
    /// The semaphore was closed.
    Closed,
}

/// [`Semaphore::acquire`] failed: the semaphore is [closed](Semaphore::close).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquireError(());

/// Why [`Semaphore::try_acquire`] did not take permits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore is [closed](Semaphore::close).
    Closed,
    /// Not enough permits are free, or others wait for them first.
    NoPermits,
}

impl Semaphore {
    /// The most permits a semaphore holds: `usize::MAX >> 3`, as tokio's.
    pub const MAX_PERMITS: usize = usize::MAX >> 3;

    /// A semaphore with `permits` free permits.
    ///
    /// # Panics
    ///
    /// If `permits` is more than [`MAX_PERMITS`](Semaphore::MAX_PERMITS).
    pub const fn new(permits: usize) -> Semaphore {
        assert!(
            permits <= Semaphore::MAX_PERMITS,
            "fibra: a Semaphore holds at most Semaphore::MAX_PERMITS permits"
        );
        Semaphore {
            raw: RawSemaphore::new(permits),
        }
    }

    /// Takes a permit, parking the calling green thread until one is free and
    /// the waiters before it are served. Dropping the permit gives it back.
    ///
    /// # Errors
    ///
    /// [`AcquireError`] if the semaphore is closed, or closes while it waits.
    ///
    /// # Panics
    ///
    /// If it must wait and the caller is not a green thread. Unwinds if the
    /// calling thread is cancelled while it waits; it then holds no permit.
    #[track_caller]
    pub fn acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.acquire_many(1)
    }

    /// Takes `n` permits at once (see [`acquire`](Semaphore::acquire)): the
    /// thread waits, in its turn, until `n` are free. `acquire_many(0)`
    /// returns at once.
    ///
    /// ```
    /// use fibra::sync::Semaphore;
    /// use std::rc::Rc;
    ///
    /// fibra::run(|| {
    ///     let sem = Rc::new(Semaphore::new(3));
    ///     let one = sem.acquire().unwrap();
    ///     let sem2 = sem.clone();
    ///     // Wants all three: waits for `one`, and holds back later callers.
    ///     let big = fibra::spawn(move || sem2.acquire_many(3).map(|p| p.num_permits()));
    ///     fibra::runtime::yield_now();
    ///     assert!(sem.try_acquire().is_err()); // 2 are free, but `big` is first
    ///     drop(one);
    ///     assert_eq!(big.join().unwrap(), Ok(3));
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// [`AcquireError`] if the semaphore is closed, or closes while it waits.
    #[track_caller]
    pub fn acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        let n = n as usize;
        self.raw.acquire(n, WaitReason::Semaphore)?;
        Ok(SemaphorePermit {
            semaphore: self,
            permits: n,
        })
    }

    /// Takes a permit if one is free and nobody waits, without parking.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::NoPermits`], or [`TryAcquireError::Closed`].
    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    /// Takes `n` permits if they are free and nobody waits, without parking.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::NoPermits`], or [`TryAcquireError::Closed`].
    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        let n = n as usize;
        self.raw.try_acquire(n)?;
        Ok(SemaphorePermit {
            semaphore: self,
            permits: n,
        })
    }

    /// Like [`acquire`](Semaphore::acquire), but the permit holds an [`Rc`]
    /// of the semaphore, so it can move into a [`spawn`](crate::spawn)ed
    /// thread: take the permit, then spawn the work that gives it back when it
    /// ends.
    ///
    /// ```
    /// use fibra::sync::Semaphore;
    /// use std::rc::Rc;
    ///
    /// fibra::run(|| {
    ///     let limit = Rc::new(Semaphore::new(4));
    ///     let handlers: Vec<_> = (0..10)
    ///         .map(|n| {
    ///             // Parks here while four handlers run.
    ///             let permit = limit.clone().acquire_owned().unwrap();
    ///             fibra::spawn(move || {
    ///                 let _permit = permit;
    ///                 n * 2
    ///             })
    ///         })
    ///         .collect();
    ///     let sum: i32 = handlers.into_iter().map(|h| h.join().unwrap()).sum();
    ///     assert_eq!(sum, 90);
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// [`AcquireError`] if the semaphore is closed, or closes while it waits.
    #[track_caller]
    pub fn acquire_owned(self: Rc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.acquire_many_owned(1)
    }

    /// Takes `n` permits, as [`acquire_many`](Semaphore::acquire_many), in a
    /// permit that holds an [`Rc`] of the semaphore.
    ///
    /// # Errors
    ///
    /// [`AcquireError`] if the semaphore is closed, or closes while it waits.
    #[track_caller]
    pub fn acquire_many_owned(
        self: Rc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        let n = n as usize;
        self.raw.acquire(n, WaitReason::Semaphore)?;
        Ok(OwnedSemaphorePermit {
            semaphore: self,
            permits: n,
        })
    }

    /// Adds `n` permits, serving the waiters they suffice for.
    ///
    /// # Panics
    ///
    /// If the semaphore would then hold more than
    /// [`MAX_PERMITS`](Semaphore::MAX_PERMITS).
    pub fn add_permits(&self, n: usize) {
        self.raw.release(n);
    }

    /// How many permits are free now.
    pub fn available_permits(&self) -> usize {
        self.raw.permits.get()
    }

    /// Closes the semaphore: every waiting [`acquire`](Semaphore::acquire)
    /// returns [`AcquireError`], and so does every later one. Permits held
    /// stay valid, and go back when dropped.
    ///
    /// ```
    /// use fibra::sync::{Semaphore, TryAcquireError};
    ///
    /// let sem = Semaphore::new(1);
    /// sem.close();
    /// assert!(sem.is_closed());
    /// assert!(sem.acquire().is_err());
    /// assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::Closed));
    /// ```
    pub fn close(&self) {
        self.raw.close();
    }

    /// Whether the semaphore is closed.
    pub fn is_closed(&self) -> bool {
        self.raw.closed.get()
    }
}

impl RawSemaphore {
    pub(super) const fn new(permits: usize) -> RawSemaphore {
        RawSemaphore {
            permits: Cell::new(permits),
            closed: Cell::new(false),
            waiters: RefCell::new(WaitList::new()),
        }
    }

    /// Takes `n` permits if nobody waits and they are free.
    pub(super) fn try_acquire(&self, n: usize) -> Result<(), TryAcquireError> {
        if self.closed.get() {
            return Err(TryAcquireError::Closed);
        }
        // Only the head of the queue can be waiting for permits that are free
        // (see `serve`), so a free permit is a waiter's: take none while any
        // waits.
        let free = self.permits.get();
        if n > 0 && (free < n || self.waiters.borrow().front().is_some()) {
            return Err(TryAcquireError::NoPermits);
        }
        self.permits.set(free - n);
        Ok(())
    }

    /// Takes `n` permits, parking the calling green thread (waiting for
    /// `reason`) until it is its turn and they are free.
    #[track_caller]
    pub(super) fn acquire(&self, n: usize, reason: WaitReason) -> Result<(), AcquireError> {
        match self.try_acquire(n) {
            Ok(()) => return Ok(()),
            Err(TryAcquireError::Closed) => return Err(AcquireError(())),
            Err(TryAcquireError::NoPermits) => {}
        }
        // The public operation that waits, for a call outside a runtime.
        let operation = match reason {
            WaitReason::RwLockRead => "fibra::sync::RwLock::read",
            WaitReason::RwLockWrite => "fibra::sync::RwLock::write",
            _ => "fibra::sync::Semaphore::acquire",
        };
        let scheduler = scheduler::current_for(operation);
        let key = self.waiters.borrow_mut().push_back(Waiter {
            sleeper: Sleeper::running(&scheduler),
            wants: n,
            verdict: Verdict::Waiting,
        });
        let waiting = Waiting { raw: self, key };
        loop {
            scheduler.park_on(reason);
            let verdict = self.waiters.borrow().get(key).verdict;
            match verdict {
                Verdict::Waiting => continue,
                Verdict::Granted => break,
                Verdict::Closed => {
                    waiting.left();
                    return Err(AcquireError(()));
                }
            }
        }
        waiting.left();
        Ok(())
    }

    /// Gives back `n` permits (or adds them), serving the waiters they
    /// suffice for.
    pub(super) fn release(&self, n: usize) {
        let total = self
            .permits
            .get()
            .checked_add(n)
            .filter(|&total| total <= Semaphore::MAX_PERMITS)
            .expect("fibra: a Semaphore holds at most Semaphore::MAX_PERMITS permits");
        self.permits.set(total);
        self.serve();
    }

    /// Hands the free permits to the waiters at the head of the queue, in
    /// order, as long as they suffice for the first one.
    fn serve(&self) {
        let mut waiters = self.waiters.borrow_mut();
        while let Some(key) = waiters.front() {
            let waiter = waiters.get_mut(key);
            let free = self.permits.get();
            if waiter.wants > free {
                break;
            }
            self.permits.set(free - waiter.wants);
            waiter.verdict = Verdict::Granted;
            waiter.sleeper.wake();
            waiters.pop_front();
        }
    }

    pub(super) fn close(&self) {
        self.closed.set(true);
        let mut waiters = self.waiters.borrow_mut();
        while let Some(key) = waiters.pop_front() {
            let waiter = waiters.get_mut(key);
            waiter.verdict = Verdict::Closed;
            waiter.sleeper.wake();
        }
    }
}

/// A waiter's place in the queue, removed however `acquire` ends; permits
/// granted to a waiter that unwinds before it took them are given back, and
/// one that leaves the head of the queue lets the next be served.
struct Waiting<'a> {
    raw: &'a RawSemaphore,
    key: usize,
}

impl Waiting<'_> {
    /// The wait is over, and its outcome taken.
    fn left(self) {
        self.raw.waiters.borrow_mut().remove(self.key);
        std::mem::forget(self);
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let waiter = self.raw.waiters.borrow_mut().remove(self.key);
        match waiter.verdict {
            Verdict::Granted => self.raw.release(waiter.wants),
            Verdict::Waiting => self.raw.serve(),
            Verdict::Closed => {}
        }
    }
}

/// Permits taken from a [`Semaphore`]; dropping it gives them back.
#[must_use = "the permits go back as soon as the permit is dropped"]
pub struct SemaphorePermit<'a> {
    semaphore: &'a Semaphore,
    permits: usize,
}

impl SemaphorePermit<'_> {
    /// How many permits it holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// Keeps the permits taken for good: they do not go back to the
    /// semaphore.
    pub fn forget(mut self) {
        self.permits = 0;
    }
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.semaphore.raw.release(self.permits);
    }
}

/// Permits taken by [`Semaphore::acquire_owned`], which keep the semaphore
/// alive with an [`Rc`]; dropping it gives them back.
#[must_use = "the permits go back as soon as the permit is dropped"]
pub struct OwnedSemaphorePermit {
    semaphore: Rc<Semaphore>,
    permits: usize,
}

impl OwnedSemaphorePermit {
    /// How many permits it holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// The semaphore it came from.
    pub fn semaphore(&self) -> &Rc<Semaphore> {
        &self.semaphore
    }

    /// Keeps the permits taken for good: they do not go back to the
    /// semaphore.
    pub fn forget(mut self) {
        self.permits = 0;
    }
}

impl Drop for OwnedSemaphorePermit {
    fn drop(&mut self) {
        self.semaphore.raw.release(self.permits);
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Semaphore")
            .field("permits", &self.available_permits())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for SemaphorePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemaphorePermit")
            .field("permits", &self.permits)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for OwnedSemaphorePermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedSemaphorePermit")
            .field("permits", &self.permits)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the semaphore is closed")
    }
}

impl Error for AcquireError {}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TryAcquireError::Closed => "the semaphore is closed",
            TryAcquireError::NoPermits => "no permits are free",
        })
    }
}

impl Error for TryAcquireError {}

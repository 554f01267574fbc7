//! A cell written once, whose initialiser may park.

use super::owner::Owner;
use super::waitlist::{Sleeper, WaitList};
use crate::runtime::WaitReason;
use crate::runtime::scheduler;
use std::cell::RefCell;
use std::convert::Infallible;
use std::fmt;

/// A cell that is written once, for the green threads of one runtime, whose
/// initialiser may park (the counterpart of [`std::cell::OnceCell`], which
/// panics "reentrant init" when a second green thread asks for the value while
/// the first one's initialiser waits).
///
/// [`get_or_init`](OnceCell::get_or_init) runs its initialiser in the first
/// thread that asks; threads that ask meanwhile park until the value is there,
/// and all get the same one. If the initialiser panics, fails
/// ([`get_or_try_init`](OnceCell::get_or_try_init)) or its thread is
/// [cancelled](crate::JoinHandle::cancel), the cell stays empty and the
/// longest-waiting thread runs its own initialiser instead.
///
/// It is `!Send` and `!Sync`: share it with an [`Rc`](std::rc::Rc), or keep
/// it where the green threads can borrow it.
///
/// ```
/// use fibra::sync::OnceCell;
/// use std::rc::Rc;
/// use std::time::Duration;
///
/// fibra::run(|| {
///     let config = Rc::new(OnceCell::new());
///     let readers: Vec<_> = (0..3)
///         .map(|n| {
///             let config = config.clone();
///             fibra::spawn(move || {
///                 config
///                     .get_or_init(|| {
///                         // Loading parks; the other readers wait for it.
///                         fibra::time::sleep(Duration::from_millis(1));
///                         format!("loaded by {n}")
///                     })
///                     .clone()
///             })
///         })
///         .collect();
///     for reader in readers {
///         assert_eq!(reader.join().unwrap(), "loaded by 0");
///     }
/// });
/// ```
pub struct OnceCell<T> {
    value: std::cell::OnceCell<T>,
    init: RefCell<Init>,
}

struct Init {
    state: State,
    waiters: WaitList<Waiter>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nobody initialises the cell.
    Idle,
    /// This thread runs its initialiser.
    Running(Owner),
    /// A failed initialiser handed the turn to a waiter that has not run yet.
    HandedOver,
}

struct Waiter {
    sleeper: Sleeper,
    verdict: Verdict,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Waiting,
    /// The initialiser before it failed: this waiter initialises now.
    YourTurn,
    /// The value is there.
    Ready,
}

impl<T> OnceCell<T> {
    /// An empty cell.
    pub const fn new() -> OnceCell<T> {
        OnceCell {
            value: std::cell::OnceCell::new(),
            init: RefCell::new(Init {
                state: State::Idle,
                waiters: WaitList::new(),
            }),
        }
    }

    /// The value, if the cell has one.
    pub fn get(&self) -> Option<&T> {
        self.value.get()
    }

    /// The value, through a unique reference.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.value.get_mut()
    }

    /// Stores `value` if the cell is empty and nobody initialises it; else
    /// gives it back.
    ///
    /// ```
    /// let cell = fibra::sync::OnceCell::new();
    /// assert_eq!(cell.set(1), Ok(()));
    /// assert_eq!(cell.set(2), Err(2));
    /// assert_eq!(cell.get(), Some(&1));
    /// ```
    ///
    /// # Errors
    ///
    /// `Err(value)` if the cell has a value, or an initialiser is running.
    pub fn set(&self, value: T) -> Result<(), T> {
        if self.init.borrow().state != State::Idle {
            return Err(value);
        }
        // An idle cell has no waiter: threads wait only while an initialiser
        // runs.
        self.value.set(value)
    }

    /// The value, initialised with `f` if the cell is empty. `f` may park
    /// (sleep, lock, receive, do IO); threads that ask meanwhile wait for its
    /// value. If `f` panics or its thread is cancelled, the panic goes on
    /// here, and the next waiter runs its own initialiser.
    ///
    /// # Panics
    ///
    /// If `f` panics; if `f` asks this cell for its value (a reentrant
    /// initialisation, which would wait for itself); if it must wait and the
    /// caller is not a green thread.
    #[track_caller]
    pub fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
        match self.get_or_try_init(|| Ok::<T, Infallible>(f())) {
            Ok(value) => value,
            Err(never) => match never {},
        }
    }

    /// The value, initialised with `f` if the cell is empty; if `f` fails, the
    /// cell stays empty, its error is returned, and the next waiter runs its
    /// own initialiser.
    ///
    /// ```
    /// let cell = fibra::sync::OnceCell::new();
    /// assert!(cell.get_or_try_init(|| "x".parse::<i32>()).is_err());
    /// assert_eq!(cell.get_or_try_init(|| "7".parse::<i32>()), Ok(&7));
    /// ```
    ///
    /// # Errors
    ///
    /// What `f` returned, if it failed.
    ///
    /// # Panics
    ///
    /// As [`get_or_init`](OnceCell::get_or_init).
    #[track_caller]
    pub fn get_or_try_init<E>(&self, f: impl FnOnce() -> Result<T, E>) -> Result<&T, E> {
        if let Some(value) = self.get() {
            return Ok(value);
        }
        let me = Owner::current();
        let state = self.init.borrow().state;
        match state {
            State::Idle => self.init.borrow_mut().state = State::Running(me),
            State::Running(initialiser) if initialiser == me => {
                panic!(
                    "fibra: OnceCell initialised reentrantly: its initialiser asked for its value"
                )
            }
            State::Running(_) | State::HandedOver => {
                if !self.wait_for_turn(me) {
                    return Ok(self.get().expect("a ready cell has a value"));
                }
            }
        }
        let initialising = Initialising { cell: self };
        let value = f()?;
        std::mem::forget(initialising);
        self.init.borrow_mut().state = State::Idle;
        if self.value.set(value).is_err() {
            unreachable!("a OnceCell is set only by its one initialiser");
        }
        self.wake_all();
        Ok(self.get().expect("the value was just set"))
    }

    /// Parks until the value is there (`false`) or the initialiser before
    /// failed and it is this thread's turn (`true`; the cell is then marked
    /// as initialised by `me`).
    #[track_caller]
    fn wait_for_turn(&self, me: Owner) -> bool {
        let scheduler = scheduler::current_for("fibra::sync::OnceCell::get_or_init");
        let key = self.init.borrow_mut().waiters.push_back(Waiter {
            sleeper: Sleeper::running(&scheduler),
            verdict: Verdict::Waiting,
        });
        let waiting = Waiting { cell: self, key };
        let verdict = loop {
            scheduler.park_on(WaitReason::OnceCell);
            match self.init.borrow().waiters.get(key).verdict {
                Verdict::Waiting => {}
                verdict => break verdict,
            }
        };
        let mut init = self.init.borrow_mut();
        init.waiters.remove(key);
        std::mem::forget(waiting);
        if verdict == Verdict::YourTurn {
            init.state = State::Running(me);
        }
        verdict == Verdict::YourTurn
    }

    /// An initialiser failed: the longest-waiting thread gets its turn, or
    /// the cell is idle again.
    fn hand_over(&self) {
        let mut init = self.init.borrow_mut();
        match init.waiters.pop_front() {
            Some(key) => {
                init.state = State::HandedOver;
                let waiter = init.waiters.get_mut(key);
                waiter.verdict = Verdict::YourTurn;
                waiter.sleeper.wake();
            }
            None => init.state = State::Idle,
        }
    }

    /// The value is there: every waiter takes it.
    fn wake_all(&self) {
        let mut init = self.init.borrow_mut();
        while let Some(key) = init.waiters.pop_front() {
            let waiter = init.waiters.get_mut(key);
            waiter.verdict = Verdict::Ready;
            waiter.sleeper.wake();
        }
    }

    /// Takes the value out, leaving the cell empty.
    pub fn take(&mut self) -> Option<T> {
        self.value.take()
    }

    /// Consumes the cell and returns its value, if any.
    pub fn into_inner(self) -> Option<T> {
        self.value.into_inner()
    }
}

/// A running initialiser: if it unwinds or fails, the turn passes on.
struct Initialising<'a, T> {
    cell: &'a OnceCell<T>,
}

impl<T> Drop for Initialising<'_, T> {
    fn drop(&mut self) {
        self.cell.hand_over();
    }
}

/// A waiter's place, removed if the wait unwinds; a turn handed to it passes
/// on.
struct Waiting<'a, T> {
    cell: &'a OnceCell<T>,
    key: usize,
}

impl<T> Drop for Waiting<'_, T> {
    fn drop(&mut self) {
        let verdict = self.cell.init.borrow_mut().waiters.remove(self.key).verdict;
        if verdict == Verdict::YourTurn {
            self.cell.hand_over();
        }
    }
}

impl<T> Default for OnceCell<T> {
    fn default() -> Self {
        OnceCell::new()
    }
}

impl<T> From<T> for OnceCell<T> {
    fn from(value: T) -> Self {
        OnceCell {
            value: std::cell::OnceCell::from(value),
            ..OnceCell::new()
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_tuple("OnceCell");
        match self.get() {
            Some(value) => d.field(value),
            None => d.field(&format_args!("<uninit>")),
        };
        d.finish()
    }
}

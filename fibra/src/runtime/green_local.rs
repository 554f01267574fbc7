//! Green-thread-local storage (Ruby's `Thread#[]`, tokio's `task_local!`):
//! [`green_local!`](crate::green_local) declares a [`LocalKey`], whose value
//! each green thread has a copy of.
//!
//! Each key gets a small number, its index, the first time any thread uses it
//! (from a global counter); a green thread keeps its values in a vector of
//! slots by that index, in its task beside its fiber, and an OS thread keeps
//! the values of the code that runs outside green threads in one such vector
//! of its own (a `thread_local!`). A value is an `Rc` in its slot, so that
//! the code given a reference runs with no borrow of the task table held: it
//! may park, spawn or use other keys.

use super::scheduler;
use super::task::Slots;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

/// Declares green-thread-local values, as [`std::thread_local!`] declares
/// thread-local ones: each `static NAME: T = init;` becomes a
/// [`LocalKey<T>`](crate::runtime::LocalKey), and every green thread that
/// uses it gets a value of its own, made by `init` on its first use and
/// dropped when the thread ends. Code outside any green thread (a plain OS
/// thread, or the runtime's own loop) gets one value per OS thread.
///
/// Several declarations may share one invocation; each may have attributes
/// (doc comments, `#[allow]`) and a visibility.
///
/// ```
/// use std::cell::Cell;
/// use std::time::Duration;
///
/// fibra::green_local! {
///     /// The request the running green thread serves.
///     static REQUEST_ID: Cell<u64> = Cell::new(0);
///     pub(crate) static LOG: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
/// }
///
/// let seen = fibra::run(|| {
///     let handlers: Vec<_> = (1..=3)
///         .map(|id| {
///             fibra::spawn(move || {
///                 REQUEST_ID.set(id);
///                 fibra::time::sleep(Duration::from_millis(10 * (4 - id)));
///                 LOG.with_borrow_mut(|log| log.push(format!("done {id}")));
///                 (id, REQUEST_ID.get(), LOG.with_borrow(Vec::len))
///             })
///         })
///         .collect();
///     handlers.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
/// });
/// // Each thread read back its own id, and logged into its own Vec.
/// assert_eq!(seen, [(1, 1, 1), (2, 2, 1), (3, 3, 1)]);
/// ```
#[macro_export]
macro_rules! green_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::green_local!($(#[$attr])* $vis static $name: $t = $init);
        $crate::green_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => {
        $(#[$attr])*
        $vis static $name: $crate::runtime::LocalKey<$t> = {
            fn init() -> $t {
                $init
            }
            $crate::runtime::LocalKey::new(init)
        };
    };
}

/// A green-thread-local value, declared with [`green_local!`](crate::green_local):
/// the green-thread counterpart of [`std::thread::LocalKey`], with the same
/// methods.
///
/// # Whose value
///
/// Each green thread has its own value, made by the key's initialiser the
/// first time the thread uses the key (a thread that never does costs
/// nothing). A fiber or [`Generator`](crate::Generator) that a green thread
/// resumes runs as part of that thread and sees its values. Code that runs
/// outside any green thread — a plain OS thread, `main` before
/// [`run`](super::run), the runtime's own loop — sees one value per OS
/// thread, as with `thread_local!`; green threads never see that one. A
/// [`blocking`](crate::blocking) job runs on a pool thread, so it sees that
/// OS thread's value (which the pool thread's later jobs see too), not its
/// green thread's: pass the job what it needs instead.
///
/// The body of a [Ractor](crate::ractor) is a green thread, so it has values
/// of its own, as does each green thread it spawns. A green thread never
/// leaves its OS thread, and neither do its values: `T` need not be `Send`
/// (an `Rc` is fine), and the key itself is a plain `static`.
///
/// # When a value is dropped
///
/// When its green thread ends: right after the thread's closure has returned
/// or unwound (a panic, a [cancel](super::JoinHandle::cancel), the end of
/// its runtime), on the thread itself, before its
/// [`JoinHandle::join`](super::JoinHandle::join) returns (or its Ractor's
/// result is delivered). Its destructor runs as code of that thread, so it
/// may park — sleep, lock, receive, join — and its runtime's other threads run
/// meanwhile, as for any destructor in fibra (it is unwound if the thread is
/// cancelled then, and the rest are still dropped). While a thread's values
/// are dropped, in no particular order, none of its keys can be used:
/// [`try_with`](LocalKey::try_with) returns [`AccessError`] and
/// [`with`](LocalKey::with) panics, so no value is made again. A panic in a
/// destructor is the thread's panic: `join` returns it, unless the thread had
/// panicked or been cancelled already. The values of a thread that is
/// abandoned (under `panic = "abort"`, or one that cannot finish unwinding at
/// the end of its runtime) are leaked with its stack; those of an OS thread
/// are dropped when it exits, as `thread_local!`'s are.
///
/// # Compaction
///
/// The values live on the heap, in the green thread's task, not on its stack:
/// a thread whose stack is
/// [compacted](super::Builder::compact_parked_after) while it is parked keeps
/// them, and a reference a thread holds into its value while it parks (inside
/// [`with`](LocalKey::with)) points to the heap, which compaction does not
/// touch.
///
/// # Cost
///
/// A [`with`](LocalKey::with) finds the running green thread through the
/// runtime's thread-local and the value by the key's index in a vector, then
/// holds the value's reference count up while `f` runs (so that `f` may
/// park) and checks its type: no hashing, no lock, no atomic
/// read-modify-write. `fibra-bench green-local` measures it beside `std`'s
/// `thread_local!` and tokio's `task_local!`.
pub struct LocalKey<T: 'static> {
    init: fn() -> T,
    /// The key's index among all keys plus one, assigned on first use (0:
    /// not yet).
    index: AtomicUsize,
}

/// The next key index plus one.
static NEXT_INDEX: AtomicUsize = AtomicUsize::new(1);

impl<T: 'static> LocalKey<T> {
    /// A key whose values `init` makes. For [`green_local!`](crate::green_local).
    #[doc(hidden)]
    pub const fn new(init: fn() -> T) -> LocalKey<T> {
        LocalKey {
            init,
            index: AtomicUsize::new(0),
        }
    }

    /// Calls `f` with a reference to the running green thread's value (made
    /// first if the thread has none yet), and returns what `f` returns. `f`
    /// may park the thread.
    ///
    /// ```
    /// fibra::green_local! {
    ///     static NAME: String = String::from("unnamed");
    /// }
    ///
    /// fibra::run(|| assert_eq!(NAME.with(|name| name.len()), 7));
    /// ```
    ///
    /// # Panics
    ///
    /// While the calling thread's values are dropped, or after the OS
    /// thread's have been (see [`try_with`](LocalKey::try_with)); and if the
    /// key's initialiser panics.
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        self.try_with(f).unwrap_or_else(|err| panic!("{err}"))
    }

    /// As [`with`](LocalKey::with), but an `Err` instead of a panic where no
    /// value can be had.
    ///
    /// # Errors
    ///
    /// [`AccessError`] while the calling green thread's values are being
    /// dropped at its end, and, outside green threads, while or after the OS
    /// thread's values are dropped at its exit.
    pub fn try_with<F, R>(&'static self, f: F) -> Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        let value = self.value()?;
        Ok(f(&value))
    }

    /// The running thread's value, made first if it has none.
    fn value(&'static self) -> Result<Rc<T>, AccessError> {
        let index = self.index();
        match with_slots(|slots| slots.get(index))? {
            Some(value) => Ok(downcast(value)),
            None => self.store(index, (self.init)()),
        }
    }

    /// Calls `f` with the running thread's value, made from `value` if it
    /// has none (without the initialiser), and with `value` back if it did
    /// have one: what `std`'s `set` methods do.
    fn initialize_with<F, R>(&'static self, value: T, f: F) -> R
    where
        F: FnOnce(Option<T>, &T) -> R,
    {
        let index = self.index();
        let stored = with_slots(|slots| slots.get(index))
            .and_then(|found| match found {
                Some(found) => Ok((Some(value), downcast(found))),
                None => self.store(index, value).map(|stored| (None, stored)),
            })
            .unwrap_or_else(|err| panic!("{err}"));
        let (unused, current) = stored;
        f(unused, &current)
    }

    /// Makes `value` the running thread's value. If its initialiser used this
    /// key meanwhile, the value made then is dropped (as `std` does).
    #[cold]
    fn store(&'static self, index: usize, value: T) -> Result<Rc<T>, AccessError> {
        let value = Rc::new(value);
        let replaced = with_slots(|slots| slots.set(index, value.clone()))?;
        drop(replaced);
        Ok(value)
    }

    /// This key's index, assigned on first use.
    #[inline]
    fn index(&self) -> usize {
        match self.index.load(Relaxed) {
            0 => self.assign_index(),
            assigned => assigned - 1,
        }
    }

    #[cold]
    fn assign_index(&self) -> usize {
        let fresh = NEXT_INDEX.fetch_add(1, Relaxed);
        // Two OS threads may race to assign one: the first wins, and the
        // other's number is never used.
        match self.index.compare_exchange(0, fresh, Relaxed, Relaxed) {
            Ok(_) => fresh - 1,
            Err(assigned) => assigned - 1,
        }
    }
}

/// The value in a key's slot, as the key's type: a slot only ever holds the
/// value of the key whose index it has.
fn downcast<T: 'static>(value: Rc<dyn Any>) -> Rc<T> {
    value
        .downcast()
        .unwrap_or_else(|_| unreachable!("fibra: a green-local slot holds another key's value"))
}

impl<T: 'static> LocalKey<Cell<T>> {
    /// Sets the running thread's value to `value`; if it has none yet, it is
    /// made from `value`, without running the initialiser.
    ///
    /// ```
    /// use std::cell::Cell;
    ///
    /// fibra::green_local! {
    ///     static DEPTH: Cell<u32> = panic!("never run: set makes the value");
    /// }
    ///
    /// fibra::run(|| {
    ///     DEPTH.set(3);
    ///     assert_eq!(DEPTH.get(), 3);
    /// });
    /// ```
    ///
    /// # Panics
    ///
    /// Where [`with`](LocalKey::with) does.
    pub fn set(&'static self, value: T) {
        self.initialize_with(Cell::new(value), |unused, cell| {
            if let Some(value) = unused {
                cell.set(value.into_inner());
            }
        });
    }

    /// A copy of the running thread's value.
    ///
    /// # Panics
    ///
    /// Where [`with`](LocalKey::with) does.
    pub fn get(&'static self) -> T
    where
        T: Copy,
    {
        self.with(Cell::get)
    }

    /// Takes the running thread's value, leaving `Default::default()`.
    ///
    /// # Panics
    ///
    /// Where [`with`](LocalKey::with) does.
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(Cell::take)
    }

    /// Replaces the running thread's value with `value`, returning the old one.
    ///
    /// # Panics
    ///
    /// Where [`with`](LocalKey::with) does.
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

impl<T: 'static> LocalKey<RefCell<T>> {
    /// Calls `f` with a shared borrow of the running thread's value.
    ///
    /// ```
    /// use std::cell::RefCell;
    ///
    /// fibra::green_local! {
    ///     static SEEN: RefCell<Vec<u32>> = RefCell::new(Vec::new());
    /// }
    ///
    /// fibra::run(|| {
    ///     SEEN.with_borrow_mut(|seen| seen.push(7));
    ///     assert_eq!(SEEN.with_borrow(|seen| seen.clone()), [7]);
    /// });
    /// ```
    ///
    /// # Panics
    ///
    /// If the value is mutably borrowed, and where [`with`](LocalKey::with)
    /// does.
    pub fn with_borrow<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        self.with(|cell| f(&cell.borrow()))
    }

    /// Calls `f` with a mutable borrow of the running thread's value.
    ///
    /// # Panics
    ///
    /// If the value is borrowed, and where [`with`](LocalKey::with) does.
    pub fn with_borrow_mut<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R,
    {
        self.with(|cell| f(&mut cell.borrow_mut()))
    }

    /// Sets the running thread's value to `value`; if it has none yet, it is
    /// made from `value`, without running the initialiser.
    ///
    /// # Panics
    ///
    /// If the value is borrowed, and where [`with`](LocalKey::with) does.
    pub fn set(&'static self, value: T) {
        self.initialize_with(RefCell::new(value), |unused, cell| {
            if let Some(value) = unused {
                *cell.borrow_mut() = value.into_inner();
            }
        });
    }

    /// Takes the running thread's value, leaving `Default::default()`.
    ///
    /// # Panics
    ///
    /// If the value is borrowed, and where [`with`](LocalKey::with) does.
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(RefCell::take)
    }

    /// Replaces the running thread's value with `value`, returning the old one.
    ///
    /// # Panics
    ///
    /// If the value is borrowed, and where [`with`](LocalKey::with) does.
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalKey").finish_non_exhaustive()
    }
}

/// A green-local value asked for where none can be had: while its green
/// thread's values are dropped at its end, or, outside green threads, while or
/// after its OS thread's are (std's [`AccessError`](std::thread::AccessError)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessError;

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "fibra: cannot use a green-local value while or after its thread's values are dropped",
        )
    }
}

impl std::error::Error for AccessError {}

// The storage (`Slots`) is the task's (`task.rs`): the scheduler keeps it
// in each thread's entry; how keys read and write it is here.
impl Slots {
    const EMPTY: Slots = Slots {
        values: Vec::new(),
        ended: false,
    };

    fn get(&self, index: usize) -> Result<Option<Rc<dyn Any>>, AccessError> {
        if self.ended {
            return Err(AccessError);
        }
        Ok(self.values.get(index).and_then(Clone::clone))
    }

    /// Puts `value` in slot `index`, and returns what was there.
    fn set(
        &mut self,
        index: usize,
        value: Rc<dyn Any>,
    ) -> Result<Option<Rc<dyn Any>>, AccessError> {
        if self.ended {
            return Err(AccessError);
        }
        if index >= self.values.len() {
            self.values.resize(index + 1, None);
        }
        Ok(self.values[index].replace(value))
    }

    /// Ends these slots: hands their values over, to be dropped once no
    /// borrow of them is held.
    pub(crate) fn end(&mut self) -> Vec<Option<Rc<dyn Any>>> {
        self.ended = true;
        std::mem::take(&mut self.values)
    }
}

thread_local! {
    /// The values of the code that runs outside green threads on this OS thread.
    static OUTSIDE: RefCell<Slots> = const { RefCell::new(Slots::EMPTY) };
}

/// Calls `f` on the slots of what runs now: the running green thread's, else
/// this OS thread's own (an `AccessError` once those are gone).
fn with_slots<R>(f: impl FnOnce(&mut Slots) -> Result<R, AccessError>) -> Result<R, AccessError> {
    let mut f = Some(f);
    let mut call = |slots: &mut Slots| f.take().map_or(Err(AccessError), |f| f(slots));
    if let Some(done) = scheduler::with_running_locals(&mut call) {
        return done;
    }
    OUTSIDE
        .try_with(|slots| call(&mut slots.borrow_mut()))
        .unwrap_or(Err(AccessError))
}

/// Runs `f`, a green thread's code, then drops the thread's green-local
/// values on the thread itself (see [`LocalKey`]'s docs), and returns what `f`
/// returned, or the payload of its panic — or, when `f` returned, of a
/// destructor's.
pub(crate) fn run_thread<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    let ended = panic::catch_unwind(|| {
        // Taken out first, dropped after: no borrow is held while a
        // destructor runs.
        drop(scheduler::with_running_locals(Slots::end));
    });
    match (outcome, ended) {
        (Ok(_), Err(payload)) => Err(payload),
        (outcome, _) => outcome,
    }
}

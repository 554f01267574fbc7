//! Generators: a fiber seen as an [`Iterator`] (Ruby's `Enumerator#next`, Lua's
//! `coroutine.wrap`).
//!
//! Code that is easiest to write as nested loops or recursion becomes a lazy
//! iterator: each [`Yielder::suspend`] hands out one item, and nothing runs
//! until the next item is asked for.
//!
//! ```
//! use fibra::Generator;
//!
//! // Every pair (i, j) with i < j < 4, from two plain loops.
//! let mut pairs = Generator::new(|out| {
//!     for i in 0..4 {
//!         for j in i + 1..4 {
//!             out.suspend((i, j));
//!         }
//!     }
//! });
//! assert_eq!(pairs.next(), Some((0, 1)));
//! assert_eq!(pairs.count(), 5);
//! ```
//!
//! [`Generator`] has the reference: the stack size, panics, and what a drop
//! before the end does.

use crate::fiber::{Builder, Fiber, Step, Yielder};
use std::fmt;
use std::io;
use std::iter::FusedIterator;

/// An iterator whose items are produced by a closure running on a fiber: each
/// [`Yielder::suspend`] hands out one item, and the iterator ends when the closure
/// returns. Code that is easiest to write as a loop — a tree walk, a parser, a
/// state machine — becomes a lazy iterator without being turned inside out.
///
/// ```
/// use fibra::Generator;
///
/// let fib = Generator::new(|out| {
///     let (mut a, mut b) = (0u64, 1u64);
///     loop {
///         out.suspend(a);
///         (a, b) = (b, a + b);
///     }
/// });
/// let first: Vec<u64> = fib.take(10).collect();
/// assert_eq!(first, [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]);
/// ```
///
/// Dropping a generator before it has finished unwinds its fiber, so what the
/// closure holds is dropped properly (under `panic = "abort"` it is leaked
/// instead: see the [fiber docs](crate::fiber)). A panic in the closure
/// continues in the caller of [`next`](Iterator::next); after it, and after the
/// first `None`, the generator yields nothing (it is a [`FusedIterator`]).
pub struct Generator<T> {
    fiber: Fiber<(), T, ()>,
    /// Set once `next` has returned `None`: the iterator is fused even when the
    /// end came from a fiber that the body transferred to, its own fiber still
    /// suspended in that transfer.
    done: bool,
}

impl<T> Generator<T> {
    /// Makes a generator that runs `body` on a fiber with the default stack size.
    ///
    /// # Panics
    ///
    /// If no stack can be had; [`Generator::with_builder`] returns the error
    /// instead.
    pub fn new<F>(body: F) -> Self
    where
        F: FnOnce(&Yielder<(), T, ()>) + 'static,
    {
        Generator {
            fiber: Fiber::new(move |out, ()| body(out)),
            done: false,
        }
    }

    /// Makes a generator whose fiber is made by `builder` (for a stack size of
    /// your choice).
    ///
    /// # Errors
    ///
    /// As [`Builder::build`]: if no stack can be had (a size that does not fit
    /// in the address space, or memory or the kernel's map count exhausted).
    ///
    /// ```
    /// use fibra::{Generator, fiber::Builder};
    ///
    /// let squares = Generator::with_builder(Builder::new().stack_size(64 * 1024), |out| {
    ///     (1..=3u32).for_each(|n| out.suspend(n * n));
    /// })?;
    /// assert_eq!(squares.collect::<Vec<_>>(), [1, 4, 9]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn with_builder<F>(builder: Builder, body: F) -> io::Result<Self>
    where
        F: FnOnce(&Yielder<(), T, ()>) + 'static,
    {
        Ok(Generator {
            fiber: builder.build(move |out, ()| body(out))?,
            done: false,
        })
    }
}

impl<T> Iterator for Generator<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.done {
            return None;
        }
        // A panic in the body ends the iteration too: the flag is set first.
        self.done = true;
        match self.fiber.resume(()) {
            Ok(Step::Yield(item)) => {
                self.done = false;
                Some(item)
            }
            Ok(Step::Return(())) | Err(_) => None,
        }
    }
}

impl<T> FusedIterator for Generator<T> {}

impl<T> fmt::Debug for Generator<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Generator")
            .field("status", &self.fiber.status())
            .finish_non_exhaustive()
    }
}

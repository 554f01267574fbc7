//! Generators: a fiber seen as an [`Iterator`] (Ruby's `Enumerator#next`, Lua's
//! `coroutine.wrap`).

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
/// closure holds is dropped properly. A panic in the closure continues in the
/// caller of [`next`](Iterator::next); after it the generator yields nothing.
pub struct Generator<T> {
    fiber: Fiber<(), T, ()>,
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
        }
    }

    /// Makes a generator whose fiber is made by `builder` (for a stack size of
    /// your choice).
    pub fn with_builder<F>(builder: Builder, body: F) -> io::Result<Self>
    where
        F: FnOnce(&Yielder<(), T, ()>) + 'static,
    {
        Ok(Generator {
            fiber: builder.build(move |out, ()| body(out))?,
        })
    }
}

impl<T> Iterator for Generator<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self.fiber.resume(()) {
            Ok(Step::Yield(item)) => Some(item),
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

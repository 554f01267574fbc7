//! [`Builder`]: making fibers with chosen settings (the stack size).

use super::Fiber;
use super::yielder::Yielder;
use crate::stack::{DEFAULT_STACK_SIZE, Stack};
use std::io;

/// Makes fibers with chosen settings.
///
/// ```
/// use fibra::fiber::{Builder, Step};
///
/// // Deep recursion wants a larger stack than the default.
/// fn depth(n: u64) -> u64 { if n == 0 { 0 } else { 1 + std::hint::black_box(depth(n - 1)) } }
/// let fiber = Builder::new()
///     .stack_size(8 << 20)
///     .build(|_, n: u64| depth(n))
///     .expect("a stack");
/// assert_eq!(fiber.resume(100_000).unwrap(), Step::<(), u64>::Return(100_000));
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    stack_size: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with the default settings.
    pub fn new() -> Builder {
        Builder {
            stack_size: DEFAULT_STACK_SIZE,
        }
    }

    /// The usable stack size in bytes, rounded up to whole pages and to at least
    /// [`MIN_STACK_SIZE`](super::MIN_STACK_SIZE). Stack memory is reserved,
    /// not committed: only the pages a fiber touches cost memory.
    pub fn stack_size(mut self, bytes: usize) -> Builder {
        self.stack_size = bytes;
        self
    }

    /// Makes a fiber that will run `body` (see [`Fiber::new`]). A closure whose
    /// captures are large (over a KiB) is boxed, so that it never takes room on
    /// the fiber's stack; a small one is kept on the stack itself.
    ///
    /// # Errors
    ///
    /// If no stack can be had: the size does not fit in the address space
    /// (`ErrorKind::InvalidInput`, naming the size), or the memory or the
    /// kernel's map count is exhausted.
    pub fn build<F, I, Y, R>(self, body: F) -> io::Result<Fiber<I, Y, R>>
    where
        F: FnOnce(&Yielder<I, Y, R>, I) -> R + 'static,
    {
        Ok(Fiber::on_stack(Stack::new(self.stack_size)?, body))
    }
}

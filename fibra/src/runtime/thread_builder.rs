//! Spawning a green thread with a name or a stack size of its own (std's
//! `thread::Builder`, Ruby's `Thread#name=`).

use super::join::{JoinHandle, spawn_with};
use super::scheduler;
use super::task::Options;
use crate::stack;
use std::io;
use std::sync::Arc;

/// Configures a green thread before spawning it, as [`std::thread::Builder`]
/// does for OS threads. [`spawn`](super::spawn) is `ThreadBuilder::new().spawn(f)`
/// without the `Result`.
///
/// A name shows where fibra names a green thread: [`Thread::name`](super::Thread::name),
/// the stall line on stderr, the [`dump`](super::dump), and a line after the
/// panic message of a green thread that panics.
///
/// ```
/// use fibra::runtime::{self, ThreadBuilder};
///
/// fibra::run(|| {
///     let handle = ThreadBuilder::new()
///         .name("ticker")
///         .stack_size(64 * 1024)
///         .spawn(|| runtime::current().name().map(str::to_owned))
///         .unwrap();
///     assert_eq!(handle.join().unwrap().as_deref(), Some("ticker"));
/// });
/// ```
#[derive(Debug, Default)]
pub struct ThreadBuilder {
    name: Option<String>,
    stack_size: Option<usize>,
}

impl ThreadBuilder {
    /// A builder for an unnamed thread with the runtime's stack size.
    pub fn new() -> ThreadBuilder {
        ThreadBuilder::default()
    }

    /// Names the thread (any text; it is only shown, never looked up).
    pub fn name(mut self, name: impl Into<String>) -> ThreadBuilder {
        self.name = Some(name.into());
        self
    }

    /// The thread's stack size in bytes, instead of its runtime's (see
    /// [`fiber::Builder::stack_size`](crate::fiber::Builder::stack_size) for
    /// how it is rounded).
    pub fn stack_size(mut self, bytes: usize) -> ThreadBuilder {
        self.stack_size = Some(bytes);
        self
    }

    /// Starts the thread, as [`spawn`](super::spawn) does.
    ///
    /// # Errors
    ///
    /// `InvalidInput` naming the size if the stack size does not fit in the
    /// address space; `Other` if called outside a fibra runtime. A stack that
    /// the kernel refuses when the thread first runs is reported by
    /// [`JoinHandle::join`], as for `spawn`.
    pub fn spawn<F, T>(self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + 'static,
        T: 'static,
    {
        if let Some(size) = self.stack_size {
            stack::check_size(size)?;
        }
        let scheduler = scheduler::try_current().ok_or_else(|| {
            io::Error::other(
                "fibra: a green thread can only be spawned inside a fibra runtime \
                 (fibra::run(|| ...), or a green thread spawned there)",
            )
        })?;
        let options = Options {
            name: self.name.map(Arc::from),
            stack_size: self.stack_size,
            listed: None,
        };
        Ok(spawn_with(&scheduler, f, Some(options)))
    }
}

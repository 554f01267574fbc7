//! Spawning a green thread with a name or a stack size of its own (std's
//! `thread::Builder`, Ruby's `Thread#name=`).

use super::join::{JoinHandle, spawn_with};
use super::scheduler::{self, Options};
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
    #[cfg(feature = "tracing")]
    span: Option<tracing::Span>,
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

    /// Runs the thread inside `span` (with the cargo feature `tracing`), as
    /// tokio's [`Instrument`](https://docs.rs/tracing/latest/tracing/trait.Instrument.html)
    /// runs a future inside one: the span is entered each time the thread
    /// runs — when it starts and each time it is resumed after a park or a
    /// yield — and exited each time it switches away, and it closes when the
    /// thread has ended (its destructors and its
    /// [green-local](super::LocalKey) values' included). So an event logged
    /// by the thread names its span, and only its own: not a span of another
    /// green thread that parked meanwhile.
    ///
    /// ```
    /// use fibra::runtime::ThreadBuilder;
    ///
    /// fibra::run(|| {
    ///     let requests: Vec<_> = (1..=3)
    ///         .map(|id| {
    ///             ThreadBuilder::new()
    ///                 .span(tracing::info_span!("request", id))
    ///                 .spawn(move || {
    ///                     tracing::info!("started"); // "request{id=…}: started"
    ///                     fibra::time::sleep(std::time::Duration::from_millis(10));
    ///                     tracing::info!("finished"); // under the same span, only
    ///                 })
    ///                 .unwrap()
    ///         })
    ///         .collect();
    ///     requests.into_iter().for_each(|r| r.join().unwrap());
    /// });
    /// ```
    ///
    /// **Do not hold an [`Entered`](https://docs.rs/tracing/latest/tracing/span/struct.Entered.html)
    /// guard across a park**, the same mistake as holding one across an
    /// `.await` in async code: a span entered by `span.enter()` (or by
    /// `#[tracing::instrument]` on a function that parks) stays entered on
    /// the OS thread while the green thread sleeps, locks, reads a socket or
    /// joins, so the events of the other green threads that run meanwhile
    /// are logged inside it. Enter a span only around code that does not
    /// park (`span.in_scope(|| …)`), or give the work a green thread of its
    /// own with this method.
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn span(mut self, span: tracing::Span) -> ThreadBuilder {
        self.span = Some(span);
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
            #[cfg(feature = "tracing")]
            span: self.span,
        };
        Ok(spawn_with(&scheduler, f, Some(options)))
    }
}

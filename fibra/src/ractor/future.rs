//! Awaiting a Ractor from async code: its final value ([`Join`], through
//! `IntoFuture`) and the values it yields ([`Take`]). Both register the task's
//! [`Waker`](std::task::Waker) where a thread would register itself, so the
//! Ractor wakes the task as it would wake a waiting thread, and no executor
//! thread ever blocks.

use super::error::{RemoteError, TakeError};
use super::handle::Ractor;
use super::outbox::Taker;
use super::outcome::Outcome;
use crate::sync::waiters::Place;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The future of a Ractor's final value: what `ractor.await` awaits, since
/// [`Ractor`] implements [`IntoFuture`].
///
/// Resolves to what [`Ractor::join`] returns. `Send` when `R` is, so it can be
/// awaited in a task of any executor, on any thread. Dropping it before it is
/// ready loses nothing: the value stays for the next joiner.
#[must_use = "futures do nothing unless awaited or polled"]
pub struct Join<R> {
    joiner: Place<Arc<Outcome<R>>>,
}

impl<R> Future for Join<R> {
    type Output = Result<R, RemoteError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let outcome = self.get_mut().joiner.look(|outcome, registration| {
            outcome.try_join(|joiners| joiners.register(registration, cx.waker()))
        });
        outcome.map_or(Poll::Pending, Poll::Ready)
    }
}

impl<R> fmt::Debug for Join<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Join")
            .field("finished", &self.joiner.watched().lock().finished)
            .finish()
    }
}

/// Awaiting a Ractor waits for its body to finish, as [`Ractor::join`] does,
/// but parks the awaiting task instead of its thread: an async handler (on
/// tokio, say) hands CPU work to a Ractor and awaits the result while its
/// executor's threads go on running other tasks.
///
/// ```
/// use fibra::ractor::{Context, Ractor};
///
/// let sum = Ractor::new(|_: &Context<()>| (1..=100u64).sum::<u64>());
/// // Any executor will do; `fibra::block_on` is one.
/// assert_eq!(fibra::block_on(async { sum.await }).unwrap(), 5050);
/// ```
impl<In, Out, R> IntoFuture for Ractor<In, Out, R> {
    type Output = Result<R, RemoteError>;
    type IntoFuture = Join<R>;

    fn into_future(self) -> Join<R> {
        Join {
            joiner: Place::new(self.outcome),
        }
    }
}

/// The future of a value a Ractor yields: [`Ractor::take_async`].
///
/// **Cancel-safe**: a `Take` holds no value until it returns one, so dropping
/// it while it is pending (a lost `select!` branch, a timeout) leaves the
/// Ractor's offer in place for the next taker. `Send` when `Out` is.
#[must_use = "futures do nothing unless awaited or polled"]
pub struct Take<'a, Out> {
    taker: Taker<'a, Out>,
}

impl<Out> Future for Take<'_, Out> {
    type Output = Result<Out, TakeError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut()
            .taker
            .poll_take(cx.waker())
            .map_or(Poll::Pending, Poll::Ready)
    }
}

impl<Out> fmt::Debug for Take<'_, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Take").finish_non_exhaustive()
    }
}

impl<In, Out, R> Ractor<In, Out, R> {
    /// Takes the next value the Ractor yields, as a future: the async
    /// counterpart of [`take`](Ractor::take), for a task of any executor (the
    /// task waits, its thread does not). Cancel-safe (see [`Take`]).
    ///
    /// # Errors
    ///
    /// The future resolves to the [`TakeError`] that `take` would return.
    ///
    /// ```
    /// use fibra::ractor::{Context, Ractor};
    ///
    /// let counter = Ractor::new(|ctx: &Context<(), u32>| {
    ///     for n in 1..=3 {
    ///         ctx.yield_value(n).unwrap();
    ///     }
    /// });
    /// let taken = fibra::block_on(async {
    ///     let mut taken = Vec::new();
    ///     while let Ok(n) = counter.take_async().await {
    ///         taken.push(n);
    ///     }
    ///     taken
    /// });
    /// assert_eq!(taken, [1, 2, 3]);
    /// ```
    pub fn take_async(&self) -> Take<'_, Out> {
        Take {
            taker: Taker::new(&self.ports.outgoing),
        }
    }
}

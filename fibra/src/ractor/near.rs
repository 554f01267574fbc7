//! Placing a Ractor beside the Ractor it talks to.
//!
//! [`Pool::spawn`] puts a new Ractor on the least loaded worker, which spreads
//! work over the cores. Two Ractors that take turns — one sends, then waits
//! for the other's reply — gain nothing from two cores: each message crosses
//! between them (the cache lines of the message, and a wake of the other
//! worker when it has gone to sleep), and while other processes load the
//! machine either worker may lose its core at any moment, leaving the other
//! to spin or sleep until it comes back. Placed on one worker, the pair
//! shares one OS thread: a reply is a switch between two green threads of
//! one runtime (the sender wakes the receiver straight into its run queue,
//! no other core is involved), as Go's scheduler does when it readies a
//! goroutine on the sender's own processor.
//!
//! Use [`Pool::spawn_near`] (or [`Ractor::new_near`]) for Ractors that wait
//! on each other: a ping-pong pair, a client and the server it calls, a
//! stage of a pipeline and its single consumer when each waits for the
//! other. Keep [`Pool::spawn`] for Ractors meant to run at the same time:
//! many senders into one receiver, or workers that each compute — on one
//! worker they would take turns on one core.

use super::context::Context;
use super::handle::Ractor;
use super::pool::{self, Pool};

impl Pool {
    /// Starts a Ractor running `body` on the worker that `near` runs on, so
    /// that the two share one OS thread and a message between them is a
    /// switch on that thread rather than a trip between cores (when that
    /// pays: the module docs' [Placement](super#placement)). If `near` runs
    /// on another pool, the new Ractor goes on this pool's least loaded
    /// worker, as with [`Pool::spawn`].
    ///
    /// ```
    /// use fibra::ractor::{Context, Pool};
    /// use std::thread;
    ///
    /// let pool = Pool::new(2);
    /// let ping = pool.spawn(|ctx: &Context<u64>| {
    ///     ctx.receive().unwrap();
    ///     thread::current().id()
    /// });
    /// let pong = pool.spawn_near(&ping, |_: &Context<()>| thread::current().id());
    /// ping.send(1).unwrap();
    /// assert_eq!(ping.join().unwrap(), pong.join().unwrap());
    /// ```
    pub fn spawn_near<In, Out, R, F, A, B, C>(
        &self,
        near: &Ractor<A, B, C>,
        body: F,
    ) -> Ractor<In, Out, R>
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
        In: Send + 'static,
        Out: Send + 'static,
        R: Send + 'static,
    {
        let placed = match self.worker_of(near.home) {
            Some(worker) => self.claim_on(worker),
            None => self.claim(),
        };
        self.spawn_placed(placed, body)
    }

    /// Starts a Ractor running `body` on the caller's own worker when the
    /// caller runs on this pool (a Ractor's body, or a green thread it
    /// spawned), so that it shares the caller's OS thread as with
    /// [`Pool::spawn_near`]; anywhere else (such as `main`), on the least
    /// loaded worker, as with [`Pool::spawn`].
    ///
    /// ```
    /// use fibra::ractor::{Context, Pool, Ractor};
    /// use std::sync::Arc;
    /// use std::thread;
    ///
    /// let pool = Arc::new(Pool::new(2));
    /// let same_pool = pool.clone();
    /// let caller = pool.spawn(move |_: &Context<()>| {
    ///     let helper: Ractor<(), (), _> =
    ///         same_pool.spawn_here(|_: &Context<()>| thread::current().id());
    ///     (thread::current().id(), helper.join().unwrap())
    /// });
    /// let (caller_thread, helper_thread) = caller.join().unwrap();
    /// assert_eq!(caller_thread, helper_thread);
    /// ```
    pub fn spawn_here<In, Out, R, F>(&self, body: F) -> Ractor<In, Out, R>
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
        In: Send + 'static,
        Out: Send + 'static,
        R: Send + 'static,
    {
        let placed = match self.running_here() {
            Some(worker) => self.claim_on(worker),
            None => self.claim(),
        };
        self.spawn_placed(placed, body)
    }
}

impl<In, Out, R> Ractor<In, Out, R>
where
    In: Send + 'static,
    Out: Send + 'static,
    R: Send + 'static,
{
    /// Starts a Ractor running `body` on the process-wide pool, on the worker
    /// that `near` runs on ([`Pool::spawn_near`] on that pool; if `near`
    /// runs on a pool of its own, on the least loaded worker).
    pub fn new_near<F, A, B, C>(near: &Ractor<A, B, C>, body: F) -> Self
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
    {
        pool::global().spawn_near(near, body)
    }

    /// Starts a Ractor running `body` on the process-wide pool, on the
    /// caller's own worker if the caller runs there ([`Pool::spawn_here`] on
    /// that pool).
    pub fn new_here<F>(body: F) -> Self
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
    {
        pool::global().spawn_here(body)
    }
}

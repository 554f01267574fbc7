//! A socket registered with the runtime's reactor, and the loop every socket
//! operation runs: try it; if the kernel says it would block, park the green
//! thread until the reactor reports the socket ready, and try again.

use crate::runtime::reactor::{Direction, IoKey};
use crate::runtime::scheduler::{self, Scheduler};
use mio::event::Source;
use std::io;
use std::rc::Rc;

pub(super) struct Registration<S: Source> {
    source: S,
    key: IoKey,
    scheduler: Rc<Scheduler>,
}

impl<S: Source> Registration<S> {
    /// Registers `source` with the reactor of the calling thread's runtime.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    pub(super) fn new(mut source: S) -> io::Result<Self> {
        let scheduler = scheduler::current();
        let key = scheduler.reactor.register(&mut source)?;
        Ok(Registration {
            source,
            key,
            scheduler,
        })
    }

    pub(super) fn source(&self) -> &S {
        &self.source
    }

    /// Records that the socket has nothing more to give in `direction` until the
    /// reactor says otherwise (after a short read, for example), so that the
    /// next operation waits instead of failing with `WouldBlock` first.
    pub(super) fn clear_ready(&self, direction: Direction) {
        self.scheduler.reactor.clear_ready(self.key, direction);
    }

    /// Runs `op` until it does not report `WouldBlock`, parking the calling
    /// green thread while the socket is not ready in `direction`.
    pub(super) fn io<T>(
        &self,
        direction: Direction,
        mut op: impl FnMut(&S) -> io::Result<T>,
    ) -> io::Result<T> {
        let reactor = &self.scheduler.reactor;
        loop {
            if reactor.is_ready(self.key, direction) {
                match op(&self.source) {
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                        reactor.clear_ready(self.key, direction)
                    }
                    outcome => return outcome,
                }
            }
            let task = self.scheduler.running();
            reactor.set_waiter(self.key, direction, task);
            // Forget the wait however park ends (woken, spuriously, or by
            // unwinding when the thread is cancelled).
            let _waiting = Waiting {
                registration: self,
                direction,
            };
            self.scheduler.park();
        }
    }
}

struct Waiting<'a, S: Source> {
    registration: &'a Registration<S>,
    direction: Direction,
}

impl<S: Source> Drop for Waiting<'_, S> {
    fn drop(&mut self) {
        self.registration
            .scheduler
            .reactor
            .remove_waiter(self.registration.key, self.direction);
    }
}

impl<S: Source> Drop for Registration<S> {
    fn drop(&mut self) {
        let scheduler = &self.scheduler;
        scheduler
            .reactor
            .deregister(&mut self.source, self.key, |task| scheduler.wake(task));
    }
}

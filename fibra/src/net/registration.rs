//! A socket registered with the runtime's reactor, and the loop every socket
//! operation runs: try it; if the kernel says it would block, park the green
//! thread until the reactor reports the socket ready, and try again — for at
//! most the direction's timeout, if one is set. A child's pipes and its
//! pidfd (`process`) are registered the same way.

use crate::runtime::reactor::{Direction, IoKey, Reactor, Taken};
use crate::runtime::scheduler::{self, Scheduler};
use crate::runtime::turn::Turn;
use crate::runtime::{SocketDirection, WaitReason};
use crate::time::deadline_after;
use mio::Interest;
use mio::event::Source;
use rustix::io::Errno;
use std::cell::Cell;
use std::io::{self, IoSliceMut};
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::time::{Duration, Instant};

pub(crate) struct Registration<S: Source> {
    source: S,
    key: IoKey,
    scheduler: Rc<Scheduler>,
    /// Per direction (read, write): the timeout of one operation.
    limits: [Limit; 2],
}

/// The timeout of one direction's operations.
#[derive(Default)]
struct Limit {
    timeout: Cell<Option<Duration>>,
}

impl<S: Source + AsRawFd> Registration<S> {
    /// Registers `source` with the reactor of the calling thread's runtime,
    /// for both directions.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    pub(crate) fn new(source: S) -> io::Result<Self> {
        Registration::with_interest(source, Interest::READABLE | Interest::WRITABLE)
    }

    /// Registers a stream, for both directions: with the runtime's io_uring
    /// ring, if it has one, its reads take what the ring received
    /// ([`receive`](Self::receive)).
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    pub(crate) fn new_stream(source: S) -> io::Result<Self> {
        Registration::registered(source, |reactor, source| reactor.register_stream(source))
    }

    /// A read of a stream made with [`new_stream`](Self::new_stream), into
    /// `bufs`, consuming what it reads unless `peek`: from what the ring
    /// received, or by `direct` (the read's system call) where the ring does
    /// not receive for the stream, as [`io`](Self::io) does.
    ///
    /// A read that shows the socket empty — a system call that read less
    /// than it asked, or the ring's last bytes with a receive in flight —
    /// clears its readiness once its turn has ended (and been handed on), so
    /// that the next read waits for the reactor instead of failing first;
    /// new data brings a new event or completion, so nothing is missed.
    ///
    /// # Errors
    ///
    /// As `io`.
    pub(crate) fn receive(
        &self,
        bufs: &mut [IoSliceMut<'_>],
        peek: bool,
        direct: impl Fn(&S, &mut [IoSliceMut<'_>]) -> Result<usize, Errno>,
    ) -> io::Result<usize> {
        let read = self.receive_once(bufs, peek, &direct)?;
        // A peek sees what the ring received by the reactor's last look: one
        // that falls short while the receive is in flight lets the reactor
        // look again (a yield), so that a loop of peeks sees data come, as
        // a loop of `MSG_PEEK`s does.
        if peek
            && read < bufs.iter().map(|b| b.len()).sum()
            && self.scheduler.reactor.is_receiving(self.key)
        {
            self.scheduler.yield_now();
            return self.receive_once(bufs, peek, &direct);
        }
        Ok(read)
    }

    fn receive_once(
        &self,
        bufs: &mut [IoSliceMut<'_>],
        peek: bool,
        direct: &impl Fn(&S, &mut [IoSliceMut<'_>]) -> Result<usize, Errno>,
    ) -> io::Result<usize> {
        let reactor = &self.scheduler.reactor;
        if !reactor.uses_ring() {
            // A read that filled less than it asked (and was not the end)
            // emptied the socket: the next waits for the reactor instead of
            // failing first. New data brings a new edge-triggered event.
            let read = self.io(Direction::Read, |s| direct(s, bufs))?;
            if !peek && read > 0 && read < bufs.iter().map(|b| b.len()).sum() {
                self.clear_ready(Direction::Read);
            }
            return Ok(read);
        }
        let mut emptied = false;
        let read = self.io(Direction::Read, |s| {
            match reactor.take(self.key, bufs, peek) {
                Taken::Bytes { read, drained } => {
                    emptied = drained;
                    Ok(read)
                }
                Taken::Failed(err) => Err(err),
                Taken::Nothing => Err(Errno::WOULDBLOCK),
                Taken::Direct => {
                    let read = direct(s, bufs);
                    emptied = match read {
                        Ok(n) => n > 0 && n < bufs.iter().map(|b| b.len()).sum(),
                        Err(err) => err == Errno::WOULDBLOCK,
                    };
                    // With the ring, it takes over: else nothing would say when
                    // more comes. If it cannot, bytes read are still returned
                    // (the stream stays ready: the next read makes the call
                    // again), and a read that found nothing fails, with an
                    // error that is not `WouldBlock` (which would park it with
                    // nothing armed to wake it).
                    if emptied && let Err(err) = reactor.after_direct(self.key) {
                        emptied = false;
                        if read.is_err() {
                            return Err(Errno::from_io_error(&err)
                                .filter(|e| *e != Errno::WOULDBLOCK)
                                .unwrap_or(Errno::IO));
                        }
                    }
                    read
                }
            }
        })?;
        if emptied && !peek {
            self.clear_ready(Direction::Read);
        }
        Ok(read)
    }

    /// Registers `source` for the directions of `interest` only: a pipe's end
    /// or a pidfd, which kqueue may refuse to watch the other way.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    pub(crate) fn with_interest(source: S, interest: Interest) -> io::Result<Self> {
        Registration::registered(source, |reactor, source| reactor.register(source, interest))
    }

    /// `source`, registered by `register` with the reactor of the calling
    /// thread's runtime.
    fn registered(
        mut source: S,
        register: impl FnOnce(&Reactor, &mut S) -> io::Result<IoKey>,
    ) -> io::Result<Self> {
        let scheduler = scheduler::current();
        let key = register(&scheduler.reactor, &mut source)?;
        Ok(Registration {
            source,
            key,
            scheduler,
            limits: Default::default(),
        })
    }

    /// Bounds how long one operation in `direction` may wait (`None`: forever).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a zero duration, as `std` does.
    pub(crate) fn set_timeout(
        &self,
        direction: Direction,
        timeout: Option<Duration>,
    ) -> io::Result<()> {
        check_timeout(timeout)?;
        self.limits[direction as usize].timeout.set(timeout);
        Ok(())
    }

    pub(crate) fn timeout(&self, direction: Direction) -> Option<Duration> {
        self.limits[direction as usize].timeout.get()
    }

    pub(crate) fn source(&self) -> &S {
        &self.source
    }

    /// Records that the socket has nothing more to give in `direction` until the
    /// reactor says otherwise (after a short read, for example), so that the
    /// next operation waits instead of failing with `WouldBlock` first.
    pub(crate) fn clear_ready(&self, direction: Direction) {
        self.scheduler.reactor.clear_ready(self.key, direction);
    }

    /// Runs `op` until it does not report `WouldBlock`, parking the calling
    /// green thread while the socket is not ready in `direction`.
    ///
    /// # Errors
    ///
    /// `op`'s error, or `TimedOut` once the direction's timeout has passed
    /// without the socket becoming ready.
    pub(crate) fn io<T, E: OpError>(
        &self,
        direction: Direction,
        op: impl FnMut(&S) -> Result<T, E>,
    ) -> io::Result<T> {
        // Made only if the operation waits (the descriptor is a call away).
        let reason = || WaitReason::Socket {
            fd: self.source.as_raw_fd(),
            direction: match direction {
                Direction::Read => SocketDirection::Read,
                Direction::Write => SocketDirection::Write,
            },
        };
        self.io_until(direction, reason, op)
    }

    /// [`io`](Self::io), with what a dump says the green thread waits for
    /// while it is parked (a child's exit, say, rather than a socket). Its
    /// one user, the wait on a child's pidfd, is Linux's.
    #[cfg(target_os = "linux")]
    pub(crate) fn io_as<T>(
        &self,
        direction: Direction,
        reason: WaitReason,
        op: impl FnMut(&S) -> io::Result<T>,
    ) -> io::Result<T> {
        self.io_until(direction, || reason, op)
    }

    fn io_until<T, E: OpError>(
        &self,
        direction: Direction,
        reason: impl Fn() -> WaitReason,
        mut op: impl FnMut(&S) -> Result<T, E>,
    ) -> io::Result<T> {
        let mut turn = Turn::new(&self.scheduler, self.key, direction);
        let limit = &self.limits[direction as usize];
        // Set at the first wait, so that an operation that need not wait never
        // reads the clock; the timer goes with the operation however it ends.
        let mut deadline = None;
        let mut timer = None;
        loop {
            if turn.is_ready() {
                match op(&self.source) {
                    Err(err) if err.would_block() => turn.clear_ready(),
                    outcome => return outcome.map_err(Into::into),
                }
            }
            let task = self.scheduler.running();
            if let Some(timeout) = limit.timeout.get() {
                let now = Instant::now();
                let deadline = *deadline.get_or_insert(deadline_after(now, timeout));
                if now >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no progress in {timeout:?}"),
                    ));
                }
                if timer.is_none() {
                    timer = Some(self.scheduler.arm_timer(deadline));
                }
            }
            turn.wait(task, reason());
        }
    }
}

/// An operation's error, which tells whether it is `WouldBlock`: an
/// `io::Error`, or the `Errno` of a system call made directly (see
/// `socket_io`), told without making an `io::Error` of it first.
pub(crate) trait OpError: Into<io::Error> {
    fn would_block(&self) -> bool;
}

impl OpError for io::Error {
    #[inline]
    fn would_block(&self) -> bool {
        self.kind() == io::ErrorKind::WouldBlock
    }
}

impl OpError for rustix::io::Errno {
    #[inline]
    fn would_block(&self) -> bool {
        *self == rustix::io::Errno::WOULDBLOCK
    }
}

/// Checks a timeout as `std`'s setters do.
///
/// # Errors
///
/// `InvalidInput` for `Some(Duration::ZERO)`.
pub(crate) fn check_timeout(timeout: Option<Duration>) -> io::Result<()> {
    if timeout == Some(Duration::ZERO) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "cannot set a 0 duration timeout",
        ));
    }
    Ok(())
}

impl<S: Source> Drop for Registration<S> {
    fn drop(&mut self) {
        let scheduler = &self.scheduler;
        scheduler
            .reactor
            .deregister(&mut self.source, self.key, |task| scheduler.wake(task));
    }
}

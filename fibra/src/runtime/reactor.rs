//! The IO reactor: which sockets are ready, and which green thread waits on
//! each (Go's netpoll). It wraps a `mio::Poll` (epoll on Linux), registered
//! edge-triggered: a socket is assumed ready until an operation on it reports
//! `WouldBlock`, and then ready again when the kernel says so.
//!
//! # What a round trip costs
//!
//! A socket is registered once, for both directions, when it is made, and
//! deregistered when it is dropped: waiting costs no `epoll_ctl`. An operation
//! first tries the system call, and parks only on `WouldBlock` (or when a
//! short read showed the socket empty); waiting is a store in the socket's
//! entry, and the wake a load from it and a push on the run queue, with no
//! allocation (see "Many waiters on one socket" for more). One `epoll_wait`
//! (1,024 events at a time) collects the readiness of every socket, and runs
//! only when a green thread waits on one: a runtime that waits on none makes
//! none.
//!
//! The measurements — system calls, instructions and cache misses per round
//! trip of `fibra-bench echo` beside tokio, where the time goes, and what
//! was tried and not kept (`TCP_INQ`) — are in the repository's
//! `docs/internals/reactor-costs.md`.
//!
//! # Receiving through io_uring
//!
//! On Linux, a runtime built with `Builder::io_uring` receives for its TCP
//! streams through a ring (`uring.rs`): one multishot receive per stream
//! into buffers the runtime shares, so that a read copies from memory
//! instead of making a `recv`, and one that finds nothing makes none. The
//! ring's completions play the part of epoll's read events — a completion
//! marks the stream readable and wakes its oldest reader in its turn, under
//! the rule below — and epoll keeps everything else, watched by a poll on
//! the ring, so that the wait is still one system call (`io_uring_enter`).
//! The same echo makes 2.2 system calls a round trip on the ring instead of
//! 5.1; the time it saves is small beside the kernel's TCP work (see
//! `docs/internals/reactor-costs.md`).
//!
//! # Many waiters on one socket
//!
//! Any number of green threads may wait on one socket in one direction:
//! several accepting on one shared listener (the natural shape of a server),
//! two readers of one stream, two `recv_from`s on one UDP socket. They queue
//! in the order they came (`waiters`: the first in the socket's entry, so
//! that one waiter costs what it did before there could be more; the others
//! in a list the socket keeps), and readiness reaches them in *turns*: an
//! event wakes only the oldest waiter of its direction, and an operation that
//! ends leaving the socket ready hands the turn to the next. An event thus
//! wakes one thread and each operation that ends wakes at most one more: a
//! burst of `k` connections on a listener with `n` acceptors wakes at most
//! `k + 1` of them, however large `n` is — no herd, as with `EPOLLEXCLUSIVE`.
//!
//! Edge-triggered, the kernel reports a socket when it *becomes* ready, not
//! while it stays ready: readiness that a woken thread does not act on, and
//! does not pass on, strands every thread still queued, for good. What
//! prevents that is one rule, for each socket and direction:
//!
//! > while the direction is marked ready (or closed) and threads are queued
//! > for it, some green thread holds its turn: it is running an operation on
//! > the socket, or is runnable and will.
//!
//! Every step keeps it (`Turn`, in `turn.rs`, is the code):
//!
//! - The reactor marks a direction ready only for an event, and then takes
//!   the oldest waiter off the queue and wakes it: that thread holds the
//!   turn. (A waiter that will never run again, abandoned under
//!   `panic = "abort"`, is skipped: `Scheduler::try_wake` says so.)
//! - A thread queues only after seeing the direction not ready, or after its
//!   operation found `WouldBlock` and cleared it, and nothing else runs
//!   between that and its park: queueing never leaves a ready direction with
//!   waiters and no turn.
//! - A turn ends when its operation does, however it does, and `Turn`'s drop
//!   sees to it: found `WouldBlock` (readiness cleared: the thread queues
//!   again, last, and there is nothing to hand on); returned a value or an
//!   error with the direction still ready (the turn goes to the oldest
//!   waiter, who tries in its turn); or ended without trying — a timeout, a
//!   cancellation unwinding out of the park, a panic — which hands the turn
//!   on the same way if the direction is ready.
//! - A thread woken otherwise than by its turn (its timer, a cancellation, a
//!   spurious wake) leaves the queue when it comes back: its ticket tells,
//!   without a search, whether it is still queued or was taken off (then it
//!   holds the turn). A wait thus takes its place in the queue with it,
//!   however it ends: a socket's queue holds no thread that has stopped
//!   waiting on it (but threads abandoned under `panic = "abort"`, which
//!   never come back, and which the reactor skips).
//!
//! Wakes that find nothing are few: a thread that finds the socket ready and
//! takes what a woken waiter was woken for leaves that waiter a try that
//! fails, as a second thread blocked in the kernel would get; a waiter
//! cancelled while another holds the turn may hand on a second turn; and a
//! reader whose short read empties a stream clears readiness only after its
//! turn was handed on (`TcpStream`'s `after_read`), so the next reader wakes,
//! sees the socket not ready, and queues again without a system call.

#[cfg(target_os = "linux")]
mod uring;
mod waiters;

use super::task::TaskId;
use mio::event::Source;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;
use std::cell::{Cell, RefCell};
use std::io::{self, IoSliceMut};
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
use std::time::Duration;
use waiters::Queue;
pub(super) use waiters::Ticket;

/// The token of the cross-thread waker (see `remote`).
pub(super) const WAKER_TOKEN: Token = Token(usize::MAX);

/// The bits of a serial that the ring's user data keeps.
#[cfg(target_os = "linux")]
const TAG_SERIAL: u32 = 0x3fff_ffff;

/// Which half of a socket an operation uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Read = 0,
    Write = 1,
}

/// A registered socket's place in the reactor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IoKey {
    index: usize,
    serial: u32,
}

impl IoKey {
    fn token(self) -> Token {
        Token((self.serial as usize) << 32 | self.index)
    }

    fn from_token(token: Token) -> IoKey {
        IoKey {
            index: token.0 & 0xffff_ffff,
            serial: (token.0 >> 32) as u32,
        }
    }

    /// The low 62 bits of the ring's user data for this socket (see
    /// `uring.rs`): its index, and its serial's low 30 bits (an index
    /// reused 2^30 registrations later could take a completion meant for
    /// the socket that had it, if that completion were still unread).
    #[cfg(target_os = "linux")]
    fn tag(self) -> u64 {
        u64::from(self.serial & TAG_SERIAL) << 32 | self.index as u64
    }

    /// The entry of the socket whose [`tag`](Self::tag) is in `user_data`,
    /// if it is still registered.
    #[cfg(target_os = "linux")]
    fn entry_for_tag(user_data: u64, entries: &mut Slab<Entry>) -> Option<&mut Entry> {
        let serial = (user_data >> 32) as u32 & TAG_SERIAL;
        entries
            .get_mut((user_data & 0xffff_ffff) as usize)
            .filter(|e| e.serial & TAG_SERIAL == serial)
    }

    /// This socket's entry, if it is still registered.
    fn entry_in(self, entries: &mut Slab<Entry>) -> Option<&mut Entry> {
        entries
            .get_mut(self.index)
            .filter(|e| e.serial == self.serial)
    }
}

struct Entry {
    serial: u32,
    ready: [bool; 2],
    /// Sticky: the peer closed this direction, or the socket failed. Such a
    /// state brings no new edge-triggered event, so it must outlive a
    /// `clear_ready` (after a short read, say): the next operation returns at
    /// once (end of stream, or the error) instead of waiting forever.
    closed: [bool; 2],
    /// The threads waiting for each direction (see "Many waiters on one
    /// socket" above).
    waiters: [Queue; 2],
    /// A stream whose receives go through the ring: what it received.
    #[cfg(target_os = "linux")]
    received: Option<uring::Received>,
}

/// What a read of a stream is given by [`Reactor::take`] (without io_uring,
/// always `Direct`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) enum Taken {
    /// Bytes copied from what the ring received (0: the end of the stream);
    /// `drained`: nothing is left, and a completion will mark the socket
    /// ready when more comes.
    Bytes { read: usize, drained: bool },
    /// The error the ring's receive ended with.
    Failed(rustix::io::Errno),
    /// Nothing received yet; a completion will mark the socket ready.
    Nothing,
    /// The read makes the system call itself (no ring for this stream, or
    /// nothing in flight), and then tells [`Reactor::after_direct`].
    Direct,
}

pub(crate) struct Reactor {
    poll: RefCell<Poll>,
    events: RefCell<Events>,
    entries: RefCell<Slab<Entry>>,
    next_serial: Cell<u32>,
    /// How many green threads are queued on sockets.
    waiting: Cell<usize>,
    /// The ring that receives for streams (see `uring.rs`), once made.
    #[cfg(target_os = "linux")]
    ring: RefCell<Option<uring::Ring>>,
    /// The ring is wanted and not made yet: the first stream makes it (a
    /// runtime with no stream makes none).
    #[cfg(target_os = "linux")]
    wants_ring: Cell<bool>,
    /// The ring was made: read on every stream read, apart from `ring`.
    #[cfg(target_os = "linux")]
    ring_made: Cell<bool>,
    /// With the ring: the last look at the epoll instance filled `events`,
    /// so more may wait there that no new wake of its poll will announce.
    #[cfg(target_os = "linux")]
    epoll_unread: Cell<bool>,
}

impl Reactor {
    /// A reactor on epoll, which receives for streams through io_uring if
    /// `io_uring` (and the kernel allows it).
    pub(super) fn new(io_uring: bool) -> io::Result<(Reactor, mio::Waker)> {
        let poll = Poll::new()?;
        let waker = mio::Waker::new(poll.registry(), WAKER_TOKEN)?;
        let reactor = Reactor {
            poll: RefCell::new(poll),
            events: RefCell::new(Events::with_capacity(1024)),
            entries: RefCell::new(Slab::new()),
            next_serial: Cell::new(0),
            waiting: Cell::new(0),
            #[cfg(target_os = "linux")]
            ring: RefCell::new(None),
            #[cfg(target_os = "linux")]
            wants_ring: Cell::new(io_uring),
            #[cfg(target_os = "linux")]
            ring_made: Cell::new(false),
            #[cfg(target_os = "linux")]
            epoll_unread: Cell::new(false),
        };
        #[cfg(not(target_os = "linux"))]
        let _ = io_uring;
        Ok((reactor, waker))
    }

    /// Registers `source` for readiness in the directions of `interest`.
    pub(crate) fn register(
        &self,
        source: &mut impl Source,
        interest: Interest,
    ) -> io::Result<IoKey> {
        let serial = self.next_serial.get().wrapping_add(1);
        self.next_serial.set(serial);
        let index = self.entries.borrow_mut().insert(Entry {
            serial,
            ready: [true; 2],
            closed: [false; 2],
            waiters: [Queue::new(), Queue::new()],
            #[cfg(target_os = "linux")]
            received: None,
        });
        let key = IoKey { index, serial };
        if let Err(err) = self
            .poll
            .borrow()
            .registry()
            .register(source, key.token(), interest)
        {
            self.entries.borrow_mut().remove(index);
            return Err(err);
        }
        Ok(key)
    }

    /// Registers a stream, for both directions: with the ring (see
    /// `uring.rs`), its receives go through the ring and epoll watches its
    /// writes only.
    pub(crate) fn register_stream(
        &self,
        source: &mut (impl Source + std::os::fd::AsRawFd),
    ) -> io::Result<IoKey> {
        #[cfg(target_os = "linux")]
        if self.has_ring() {
            let key = self.register(source, Interest::WRITABLE)?;
            let received = uring::Received::new(source.as_raw_fd(), key.tag());
            self.entries.borrow_mut()[key.index].received = Some(received);
            return Ok(key);
        }
        self.register(source, Interest::READABLE | Interest::WRITABLE)
    }

    /// Whether streams receive through the ring; makes it if it is wanted
    /// and not made yet. A kernel that refuses it (too old, `io_uring`
    /// disabled, a seccomp filter) leaves the runtime on epoll.
    #[cfg(target_os = "linux")]
    fn has_ring(&self) -> bool {
        if self.wants_ring.take() {
            let epoll = self.poll.borrow().as_raw_fd();
            let ring = uring::Ring::new(epoll).ok();
            self.ring_made.set(ring.is_some());
            *self.ring.borrow_mut() = ring;
            // Events may have come before the ring's poll of epoll was armed.
            self.epoll_unread.set(true);
        }
        self.ring_made.get()
    }

    /// Whether this runtime's streams receive through io_uring. Without a
    /// ring a stream's read is its own system call, and
    /// `Registration::receive` goes straight to it: no look at the ring's
    /// state, which cost a keep-alive request of fibra-http's ~110
    /// instructions on epoll (callgrind, `scripts/http-instructions.sh`).
    #[inline]
    pub(crate) fn uses_ring(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.ring_made.get();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// A read of the stream `key`: from what the ring received for it, if
    /// it receives through the ring; else ([`Taken::Direct`]) by the read's
    /// own system call.
    #[inline]
    pub(crate) fn take(&self, key: IoKey, bufs: &mut [IoSliceMut<'_>], peek: bool) -> Taken {
        #[cfg(target_os = "linux")]
        {
            let mut ring = self.ring.borrow_mut();
            let Some(ring) = ring.as_mut() else {
                return Taken::Direct;
            };
            let mut entries = self.entries.borrow_mut();
            if let Some(received) = key.entry_in(&mut entries).and_then(|e| e.received.as_mut()) {
                return ring.take(received, bufs, peek);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (key, bufs, peek);
        Taken::Direct
    }

    /// After a read's own system call ([`Taken::Direct`]) on the stream
    /// `key` found the socket empty (it would block, or read less than it
    /// asked): with the ring, the ring takes over its receives.
    ///
    /// # Errors
    ///
    /// The ring's, if it could not submit (the read then fails with it
    /// rather than wait for what was not armed).
    #[inline]
    pub(crate) fn after_direct(&self, key: IoKey) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(ring) = self.ring.borrow_mut().as_mut() {
            let mut entries = self.entries.borrow_mut();
            if let Some(received) = key.entry_in(&mut entries).and_then(|e| e.received.as_mut()) {
                return ring.after_direct(received);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = key;
        Ok(())
    }

    /// Forgets `source`; a thread still waiting on it is woken (to find it gone).
    pub(crate) fn deregister(
        &self,
        source: &mut impl Source,
        key: IoKey,
        mut wake: impl FnMut(TaskId),
    ) {
        let _ = self.poll.borrow().registry().deregister(source);
        let mut entries = self.entries.borrow_mut();
        if entries
            .get(key.index)
            .is_some_and(|e| e.serial == key.serial)
        {
            let mut entry = entries.remove(key.index);
            drop(entries);
            #[cfg(target_os = "linux")]
            if let Some(received) = entry.received.take()
                && let Some(ring) = self.ring.borrow_mut().as_mut()
            {
                ring.forget(received);
            }
            for task in entry.waiters.iter_mut().flat_map(Queue::drain) {
                self.waiting.set(self.waiting.get() - 1);
                wake(task);
            }
        }
    }

    /// Records that an operation found the socket not ready: wait for the kernel.
    pub(crate) fn clear_ready(&self, key: IoKey, direction: Direction) {
        if let Some(entry) = self.entries.borrow_mut().get_mut(key.index) {
            entry.ready[direction as usize] = false;
        }
    }

    /// Whether an operation in `direction` may be tried on the socket (it may
    /// be ready, or is closed in that direction), and whether threads are
    /// queued for it then; `None` if the socket is gone (see
    /// `Turn::is_ready`).
    pub(super) fn readiness(&self, key: IoKey, direction: Direction) -> Option<(bool, bool)> {
        let entries = self.entries.borrow();
        let entry = entries.get(key.index).filter(|e| e.serial == key.serial)?;
        let d = direction as usize;
        Some((
            entry.ready[d] || entry.closed[d],
            !entry.waiters[d].is_empty(),
        ))
    }

    /// Queues `task` for readiness in `direction`, first recording that an
    /// operation found the socket not ready if `blocked` (as `clear_ready`);
    /// `None` if the socket is gone.
    pub(super) fn queue(
        &self,
        key: IoKey,
        direction: Direction,
        task: TaskId,
        blocked: bool,
    ) -> Option<Ticket> {
        let mut entries = self.entries.borrow_mut();
        let entry = key.entry_in(&mut entries)?;
        if blocked {
            entry.ready[direction as usize] = false;
        }
        self.waiting.set(self.waiting.get() + 1);
        Some(entry.waiters[direction as usize].push(task))
    }

    /// Takes the holder of `ticket` off the queue of `direction`, if it is
    /// still in it; then says what [`readiness`](Self::readiness) does. (In
    /// line: a thread back from a wait on a socket comes here every time.)
    #[inline(always)]
    pub(super) fn leave(
        &self,
        key: IoKey,
        direction: Direction,
        ticket: Option<Ticket>,
    ) -> Option<(bool, bool)> {
        let mut entries = self.entries.borrow_mut();
        let entry = key.entry_in(&mut entries)?;
        let d = direction as usize;
        if let Some(ticket) = ticket
            && entry.waiters[d].remove(ticket)
        {
            self.waiting.set(self.waiting.get() - 1);
        }
        Some((
            entry.ready[d] || entry.closed[d],
            !entry.waiters[d].is_empty(),
        ))
    }

    /// Ends a turn that may leave the socket ready in `direction` (see
    /// `Turn`): if it does, the oldest waiter's turn begins.
    pub(super) fn hand_on(
        &self,
        key: IoKey,
        direction: Direction,
        wake: impl FnMut(TaskId) -> bool,
    ) {
        let mut entries = self.entries.borrow_mut();
        let d = direction as usize;
        if let Some(entry) = key.entry_in(&mut entries)
            && (entry.ready[d] || entry.closed[d])
        {
            self.give_turn(&mut entry.waiters[d], wake);
        }
    }

    /// Wakes the oldest waiter of `waiters` to take its turn, skipping any
    /// that will never run again (abandoned under `panic = "abort"`).
    fn give_turn(&self, waiters: &mut Queue, mut wake: impl FnMut(TaskId) -> bool) {
        while let Some(task) = waiters.pop() {
            self.waiting.set(self.waiting.get() - 1);
            if wake(task) {
                return;
            }
        }
    }

    /// Whether any green thread waits on a socket, or the ring has work (a
    /// stream's data may be waiting for the reactor's next look, which a
    /// thread that peeks in a loop, yielding, waits for without waiting on
    /// the socket).
    pub(super) fn has_waiters(&self) -> bool {
        if self.waiting.get() > 0 {
            return true;
        }
        #[cfg(target_os = "linux")]
        if let Some(ring) = self.ring.borrow_mut().as_mut() {
            return ring.has_work();
        }
        false
    }

    /// Whether the stream `key` has a receive in flight on the ring.
    pub(crate) fn is_receiving(&self, key: IoKey) -> bool {
        #[cfg(target_os = "linux")]
        if self.ring.borrow().is_some() {
            let mut entries = self.entries.borrow_mut();
            return key
                .entry_in(&mut entries)
                .and_then(|e| e.received.as_ref())
                .is_some_and(uring::Ring::is_receiving);
        }
        let _ = key;
        false
    }

    /// Waits up to `timeout` (forever if `None`) for readiness, and wakes the
    /// threads waiting on what became ready. (An event of the cross-thread waker
    /// only ends the wait: the scheduler then takes the remote wakes.)
    pub(super) fn poll(
        &self,
        timeout: Option<Duration>,
        mut wake: impl FnMut(TaskId) -> bool,
    ) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(ring) = self.ring.borrow_mut().as_mut() {
            return self.poll_ring(ring, timeout, &mut wake);
        }
        self.poll_epoll(timeout, &mut wake).map(drop)
    }

    /// [`poll`](Self::poll) with the ring: one `io_uring_enter` submits what
    /// was armed and waits; then the completions are read (from memory), and
    /// epoll is read, without waiting, if its poll on the ring fired.
    #[cfg(target_os = "linux")]
    fn poll_ring(
        &self,
        ring: &mut uring::Ring,
        mut timeout: Option<Duration>,
        wake: &mut impl FnMut(TaskId) -> bool,
    ) -> io::Result<()> {
        // A full batch may leave events in epoll that no new wake of the
        // ring's poll of it announces: this poll reads on, and does not
        // sleep if it found any (the waker's too, whose wake the scheduler
        // must take), nor if the batch was full again.
        if self.epoll_unread.take() {
            let seen = self.poll_epoll(Some(Duration::ZERO), &mut *wake)?;
            self.epoll_unread
                .set(seen == self.events.borrow().capacity());
            if seen > 0 {
                timeout = Some(Duration::ZERO);
            }
        }
        ring.enter(timeout)?;
        let mut epoll_ready = false;
        let mut entries = self.entries.borrow_mut();
        while let Some(completion) = ring.next()? {
            let uring::Completion::Stream(stream) = completion else {
                epoll_ready = true;
                continue;
            };
            let Some(entry) = IoKey::entry_for_tag(stream.user_data, &mut entries) else {
                ring.discard(stream);
                continue;
            };
            let Some(received) = entry.received.as_mut() else {
                ring.discard(stream);
                continue;
            };
            ring.complete(received, stream);
            // Whatever it said (bytes, the end, an error, a poll's event,
            // the receive ended), the reader looks: one wake per completion,
            // handed on as an epoll event's is. The end or an error is
            // sticky, as epoll's: a read that empties what was received
            // before it (and clears readiness) must not wait for it.
            let d = Direction::Read as usize;
            entry.ready[d] = true;
            entry.closed[d] |= received.ended();
            self.give_turn(&mut entry.waiters[Direction::Read as usize], &mut *wake);
        }
        drop(entries);
        if epoll_ready {
            let seen = self.poll_epoll(Some(Duration::ZERO), wake)?;
            self.epoll_unread
                .set(seen == self.events.borrow().capacity());
        }
        Ok(())
    }

    /// [`poll`](Self::poll) on epoll alone; says how many events it read,
    /// the cross-thread waker's included (as many as `events` holds: more
    /// may wait).
    fn poll_epoll(
        &self,
        timeout: Option<Duration>,
        wake: &mut impl FnMut(TaskId) -> bool,
    ) -> io::Result<usize> {
        let mut events = self.events.borrow_mut();
        match self.poll.borrow_mut().poll(&mut events, timeout) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => return Ok(0),
            Err(err) => return Err(err),
        }
        let mut seen = 0;
        // `wake` only queues a thread in the scheduler (it never reaches back
        // into the reactor), so threads are woken as their events are read,
        // with no list of them gathered first.
        let mut entries = self.entries.borrow_mut();
        for event in events.iter() {
            seen += 1;
            if event.token() == WAKER_TOKEN {
                continue;
            }
            let key = IoKey::from_token(event.token());
            let Some(entry) = entries
                .get_mut(key.index)
                .filter(|e| e.serial == key.serial)
            else {
                continue;
            };
            let failed = event.is_error();
            let closed = [
                event.is_read_closed() || failed,
                event.is_write_closed() || failed,
            ];
            let ready = [
                event.is_readable() || closed[0],
                event.is_writable() || closed[1],
            ];
            for direction in [Direction::Read, Direction::Write] {
                if ready[direction as usize] {
                    entry.ready[direction as usize] = true;
                    entry.closed[direction as usize] |= closed[direction as usize];
                    // One waiter per edge: it hands the turn on if it
                    // leaves the socket ready (see `Turn`).
                    self.give_turn(&mut entry.waiters[direction as usize], &mut *wake);
                }
            }
        }
        Ok(seen)
    }
}

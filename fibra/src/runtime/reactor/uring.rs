//! Receiving through io_uring (Linux): a TCP stream's data arrives in
//! buffers that the kernel fills on its own — one multishot receive per
//! stream, armed once, taking buffers from a ring of them that every stream
//! of the runtime shares — so that a read copies from memory instead of
//! making a system call, and a read that finds nothing makes none either.
//! The reactor's wait becomes `io_uring_enter`, which also submits what was
//! armed since the last one; the epoll instance (listeners, writes, pipes,
//! the cross-thread waker) is watched by a multishot poll on the ring, so
//! that one system call still waits for everything.
//!
//! On with [`Builder::io_uring`](crate::runtime::Builder::io_uring) or
//! `FIBRA_IO_URING=1`; a kernel that refuses the ring (too old, or
//! `io_uring_disabled`, or a seccomp filter) leaves the runtime on epoll.
//!
//! # What the kernel and fibra share
//!
//! ```text
//! buffer ring: BUFFERS entries of 16 bytes, page-aligned (one mapping)
//!   ┌──────────────────┬──────────────────┬─────┐
//!   │ addr len bid tail│ addr len bid  -  │ ... │  entry i % BUFFERS: a free buffer
//!   └──────────────────┴──────────────────┴─────┘
//!     the tail (entry 0's last two bytes) is fibra's to advance,
//!     the head the kernel's (it takes from the head, fibra gives at the tail)
//! buffers: BUFFERS × BUFFER_SIZE bytes (one mapping); buffer `bid` at bid × BUFFER_SIZE
//! ```
//!
//! A buffer is the kernel's while it is in the ring (between head and tail),
//! and fibra's from the completion that names it until fibra puts it back:
//! fibra reads a buffer only in between, and only the bytes the completion
//! says were written.
//!
//! # A stream's receive, and what a read does
//!
//! A stream starts [`Idle`](Watch::Idle): nothing in flight, reads make the
//! system call as on epoll. The first read that finds the socket empty (it
//! would block, or it read less than it asked) arms the multishot receive
//! (`Receiving`); from then on reads copy from the buffers received, in order,
//! and a completion marks the socket readable and wakes its reader in its
//! turn, as an epoll event does. The receive ends (back to `Idle`) at the end
//! of the stream, at an error (kept, and returned once after the data before
//! it), or when the ring has no free buffer (`ENOBUFS`): then the stream is
//! *starved* and, while the ring stays short of buffers, waits with a one-shot
//! poll (`Polling`) and reads by system calls — a stream that does not read
//! holds its buffers, and must not keep the others from reading. A stream that
//! holds [`MOST_HELD`] buffers (its reader lags) has its receive cancelled: it
//! reads what it holds, then by system calls until it empties the socket again
//! and re-arms; meanwhile its data waits in the kernel, whose flow control
//! slows the sender. Data is thus read in order whatever the mode: the system
//! call is made only when nothing is in flight and nothing is held.
//!
//! Dropping a stream cancels what it has in flight (synchronously, before its
//! descriptor is closed) and puts its buffers back; a completion for a stream
//! already gone puts its buffer back. Dropping the ring cancels everything
//! in flight and reads each request's last completion before the buffers are
//! unmapped (if it cannot, they stay mapped for good).

use super::Taken;
use io_uring::types::{CancelBuilder, Fd, SubmitArgs, Timespec};
use io_uring::{IoUring, cqueue, opcode, squeue};
use rustix::io::Errno;
use std::collections::VecDeque;
use std::io::{self, IoSliceMut};
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

/// Buffers in the ring. The kernel takes them in turn round the ring, so
/// that every one is touched in time: the ring's 2 MiB are resident once a
/// runtime has received that much. More would leave fewer streams starved
/// at once (echo's 2,000 sockets), at that cost in memory.
const BUFFERS: u16 = 1024;
/// The size of one buffer: a request or a message fits in one; a larger
/// read takes several (a completion each).
const BUFFER_SIZE: usize = 2048;
/// The buffers one stream holds when its receive is stopped: a stream whose
/// reader lags then waits in the kernel's socket buffer, which slows its
/// sender (TCP's flow control), instead of taking the ring's buffers from
/// the others. (What the kernel receives for it before the stop takes
/// effect, at the next wait, comes on top: at most what its socket held.)
const MOST_HELD: usize = 16;
/// The ring's only buffer group.
const GROUP: u16 = 0;
/// A starved stream goes back to receiving once this many buffers are free.
const ENOUGH_FREE: usize = BUFFERS as usize / 4;

/// An entry of the buffer ring, as the kernel lays it out (`struct
/// io_uring_buf`); entry 0's `tail` is the ring's tail. fibra writes the
/// fields through raw pointers, never a reference to a whole entry: entry
/// 0's would cover the tail, which the kernel reads.
#[repr(C)]
struct RingEntry {
    addr: u64,
    len: u32,
    bid: u16,
    tail: u16,
}

/// What a completion is for: the top two bits of its user data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A cancel of a receive that held [`MOST_HELD`] buffers.
    Cancel = 0,
    /// A stream's multishot receive.
    Receive = 1,
    /// A starved stream's one-shot poll for input.
    Poll = 2,
    /// The multishot poll of the epoll instance.
    Epoll = 3,
}

impl Kind {
    pub(super) fn of(user_data: u64) -> Kind {
        match user_data >> 62 {
            0 => Kind::Cancel,
            1 => Kind::Receive,
            2 => Kind::Poll,
            _ => Kind::Epoll,
        }
    }

    /// `tag`'s user data for this kind (`tag` uses the low 62 bits).
    pub(super) fn tag(self, tag: u64) -> u64 {
        (self as u64) << 62 | tag
    }
}

/// What the ring does for one stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Watch {
    /// Nothing in flight: reads make the system call.
    Idle,
    /// The multishot receive is in flight.
    Receiving,
    /// A one-shot poll for input is in flight (the stream was starved).
    Polling,
}

/// A completion read from the ring.
pub(super) enum Completion {
    /// The epoll instance has events (its poll is armed again if it ended).
    Epoll,
    /// A completion for a stream (a `Receive` or `Poll` one).
    Stream(StreamCompletion),
}

/// A stream's completion, for [`Ring::complete`] or [`Ring::discard`].
pub(super) struct StreamCompletion {
    pub(super) user_data: u64,
    result: i32,
    flags: u32,
}

/// One stream's receive: what the ring holds for it, in order.
pub(super) struct Received {
    fd: RawFd,
    /// The low 62 bits of its completions' user data (its reactor key).
    tag: u64,
    chunks: VecDeque<Chunk>,
    watch: Watch,
    /// The last receive ended with `ENOBUFS`.
    starved: bool,
    /// The receive is being cancelled: it held [`MOST_HELD`] buffers.
    stopping: bool,
    /// The receive failed with this error, after the chunks held: told
    /// once, by the read that finds no chunk left.
    error: Option<Errno>,
    /// The peer closed the stream after the chunks held.
    end: bool,
}

/// Bytes `start..end` of buffer `bid`, received and not read yet.
struct Chunk {
    bid: u16,
    start: u32,
    end: u32,
}

impl Received {
    /// Whether the receive ended with the end of the stream or an error
    /// (after the chunks held).
    pub(super) fn ended(&self) -> bool {
        self.end || self.error.is_some()
    }

    pub(super) fn new(fd: RawFd, tag: u64) -> Received {
        Received {
            fd,
            tag,
            chunks: VecDeque::new(),
            watch: Watch::Idle,
            starved: false,
            stopping: false,
            error: None,
            end: false,
        }
    }
}

pub(super) struct Ring {
    /// The epoll instance, watched by a multishot poll.
    epoll: RawFd,
    /// Requests submitted or queued whose last completion (the one without
    /// `IORING_CQE_F_MORE`) has not been read: what the drop waits for.
    in_flight: usize,
    /// Being dropped: the poll of epoll is not armed again.
    closing: bool,
    // Dropped before `buffers` (fields drop in order), after the cancel in
    // `drop`: the kernel then no longer writes to them.
    ring: IoUring,
    buffers: std::mem::ManuallyDrop<Buffers>,
}

impl Ring {
    /// A ring with its buffers, watching the epoll instance `epoll`.
    pub(super) fn new(epoll: RawFd) -> io::Result<Ring> {
        let ring = IoUring::builder()
            // One OS thread uses the ring (the reactor is the runtime's):
            // completions are then processed only when the reactor enters
            // the kernel to wait for them, in a batch.
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_taskrun_flag()
            // An entry that fails does not stop the ones after it: a queued
            // entry is never left behind to be submitted after its stream's
            // descriptor is closed (see `forget`).
            .setup_submit_all()
            .setup_cqsize(4 * u32::from(BUFFERS))
            .build(256)?;
        let buffers = Buffers::new()?;
        // SAFETY: the ring's memory is a page-aligned mapping of `BUFFERS`
        // entries that lives as long as `buffers`, which outlives the ring's
        // use of it (see `Drop for Ring`).
        unsafe {
            ring.submitter().register_buf_ring_with_flags(
                buffers.ring.as_ptr() as u64,
                BUFFERS,
                GROUP,
                0,
            )?;
        }
        let mut ring = Ring {
            epoll,
            in_flight: 0,
            closing: false,
            ring,
            buffers: std::mem::ManuallyDrop::new(buffers),
        };
        ring.watch_epoll()?;
        Ok(ring)
    }

    /// Arms the multishot poll of the epoll instance (again, once it ends).
    fn watch_epoll(&mut self) -> io::Result<()> {
        let poll = opcode::PollAdd::new(Fd(self.epoll), libc::POLLIN as u32)
            .multi(true)
            .build()
            .user_data(Kind::Epoll.tag(0));
        self.push(&poll, Kind::Epoll)
    }

    /// Queues `entry`, submitting what is queued first if the queue is full.
    fn push(&mut self, entry: &squeue::Entry, kind: Kind) -> io::Result<()> {
        loop {
            // SAFETY: fibra's entries point at no memory of the caller's: a
            // receive takes the ring's buffers, a poll or a cancel nothing.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                if kind != Kind::Cancel {
                    self.in_flight += 1;
                }
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

    /// Submits what was armed and waits up to `timeout` (forever if `None`)
    /// for a completion; with a zero timeout, enters the kernel only if
    /// something is queued or completions wait to be processed.
    pub(super) fn enter(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let submitted = match timeout {
            Some(Duration::ZERO) => {
                let mut sq = self.ring.submission();
                if sq.is_empty() && !sq.taskrun() && !sq.cq_overflow() {
                    return Ok(());
                }
                sq.sync();
                drop(sq);
                self.ring.submit()
            }
            None => self.ring.submit_and_wait(1),
            Some(timeout) => {
                let ts = Timespec::from(timeout);
                let args = SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(1, &args)
            }
        };
        match submitted {
            Ok(_) => Ok(()),
            Err(err) => match Errno::from_io_error(&err) {
                // The timeout passed, a signal came, or completions wait to
                // be taken: the caller reads the completion queue either way.
                Some(Errno::TIME | Errno::INTR | Errno::BUSY) => Ok(()),
                _ => Err(err),
            },
        }
    }

    /// Whether the ring has work for the reactor: entries to submit,
    /// completions to read, or the kernel's deferred work to run.
    pub(super) fn has_work(&mut self) -> bool {
        let sq = self.ring.submission();
        let submit_or_run = !sq.is_empty() || sq.taskrun() || sq.cq_overflow();
        drop(sq);
        submit_or_run || !self.ring.completion().is_empty()
    }

    /// Whether `received` has its receive in flight.
    pub(super) fn is_receiving(received: &Received) -> bool {
        received.watch == Watch::Receiving
    }

    /// The next completion, if one is there.
    ///
    /// # Errors
    ///
    /// The ring's, if the poll of epoll ended and could not be armed again.
    pub(super) fn next(&mut self) -> io::Result<Option<Completion>> {
        loop {
            let Some(cqe) = self.ring.completion().next() else {
                return Ok(None);
            };
            let (user_data, result, flags) = (cqe.user_data(), cqe.result(), cqe.flags());
            let kind = Kind::of(user_data);
            if kind != Kind::Cancel && !cqueue::more(flags) {
                self.in_flight -= 1;
            }
            match kind {
                // The receive it cancelled says so itself.
                Kind::Cancel => continue,
                Kind::Epoll => {
                    if !cqueue::more(flags) && !self.closing {
                        self.watch_epoll()?;
                    }
                    return Ok(Some(Completion::Epoll));
                }
                Kind::Receive | Kind::Poll => {
                    return Ok(Some(Completion::Stream(StreamCompletion {
                        user_data,
                        result,
                        flags,
                    })));
                }
            }
        }
    }

    /// Takes in a completion of `kind` (`Receive` or `Poll`) for
    /// `received`: its bytes are queued, its end or error kept, its buffer
    /// held or put back. A wake is owed to the stream's reader after it,
    /// whatever it says.
    pub(super) fn complete(&mut self, received: &mut Received, completion: StreamCompletion) {
        let StreamCompletion {
            user_data,
            result,
            flags,
        } = completion;
        match cqueue::buffer_select(flags) {
            Some(bid) if result > 0 => {
                received.chunks.push_back(Chunk {
                    bid,
                    start: 0,
                    end: result as u32,
                });
                self.buffers.held += 1;
            }
            Some(bid) => self.buffers.give_back(bid),
            None => {}
        }
        if cqueue::more(flags) {
            if received.chunks.len() >= MOST_HELD && !received.stopping {
                let cancel = opcode::AsyncCancel::new(Kind::Receive.tag(received.tag))
                    .build()
                    .user_data(Kind::Cancel.tag(0));
                // If it cannot be queued, the stream goes on receiving:
                // more memory held, nothing lost.
                received.stopping = self.push(&cancel, Kind::Cancel).is_ok();
            }
            return;
        }
        received.watch = Watch::Idle;
        received.stopping = false;
        // A poll's result is the events seen, or an error that the read's
        // own system call meets again.
        if Kind::of(user_data) == Kind::Receive {
            match result {
                0 => received.end = true,
                r if r < 0 => match Errno::from_raw_os_error(-r) {
                    Errno::NOBUFS => received.starved = true,
                    // Cancelled: it held `MOST_HELD` buffers, or the
                    // stream is being dropped.
                    Errno::CANCELED => {}
                    err => received.error = Some(err),
                },
                _ => {}
            }
        }
    }

    /// Puts back the buffer of a completion for a stream that is gone.
    pub(super) fn discard(&mut self, completion: StreamCompletion) {
        if let Some(bid) = cqueue::buffer_select(completion.flags) {
            self.buffers.give_back(bid);
        }
    }

    /// A read of `received`: copies into `bufs` from the chunks held (and,
    /// unless `peek`, consumes what it copied), or says what else to do.
    pub(super) fn take(
        &mut self,
        received: &mut Received,
        bufs: &mut [IoSliceMut<'_>],
        peek: bool,
    ) -> Taken {
        if received.chunks.is_empty() {
            return if let Some(err) = received.error {
                if !peek {
                    received.error = None;
                }
                Taken::Failed(err)
            } else if received.end {
                Taken::Bytes {
                    read: 0,
                    drained: false,
                }
            } else if received.watch == Watch::Idle {
                Taken::Direct
            } else {
                Taken::Nothing
            };
        }
        let mut copied = 0;
        let mut chunk_index = 0;
        'bufs: for buf in bufs.iter_mut() {
            let mut at = 0;
            while at < buf.len() {
                let Some(chunk) = received.chunks.get_mut(chunk_index) else {
                    break 'bufs;
                };
                let bytes = self.buffers.bytes(chunk);
                let n = bytes.len().min(buf.len() - at);
                buf[at..at + n].copy_from_slice(&bytes[..n]);
                at += n;
                copied += n;
                if peek {
                    if n == bytes.len() {
                        chunk_index += 1;
                    } else {
                        break 'bufs;
                    }
                } else if n == bytes.len() {
                    let done = received.chunks.pop_front().expect("the chunk just read");
                    self.buffers.held -= 1;
                    self.buffers.give_back(done.bid);
                } else {
                    chunk.start += n as u32;
                }
            }
        }
        Taken::Bytes {
            read: copied,
            // Nothing left, and the ring will say when more comes: the
            // next read waits for it (else it is a system call's to find).
            drained: received.chunks.is_empty() && received.watch != Watch::Idle,
        }
    }

    /// After a read's own system call found the socket empty (it would
    /// block, or read less than it asked): arms the receive, or, for a
    /// starved stream while buffers are short, a poll for input.
    ///
    /// # Errors
    ///
    /// The ring's, if it was full and could not submit; nothing is armed.
    pub(super) fn after_direct(&mut self, received: &mut Received) -> io::Result<()> {
        if received.watch != Watch::Idle || received.end {
            return Ok(());
        }
        let free = usize::from(BUFFERS) - self.buffers.held;
        let (watch, kind, entry) = if received.starved && free < ENOUGH_FREE {
            let poll = opcode::PollAdd::new(Fd(received.fd), libc::POLLIN as u32)
                .build()
                .user_data(Kind::Poll.tag(received.tag));
            (Watch::Polling, Kind::Poll, poll)
        } else {
            let receive = opcode::RecvMulti::new(Fd(received.fd), GROUP)
                .build()
                .user_data(Kind::Receive.tag(received.tag));
            (Watch::Receiving, Kind::Receive, receive)
        };
        self.push(&entry, kind)?;
        received.starved &= watch == Watch::Polling;
        received.watch = watch;
        Ok(())
    }

    /// Forgets a stream that is being dropped, before its descriptor is
    /// closed: cancels what it has in flight and puts its buffers back.
    pub(super) fn forget(&mut self, received: Received) {
        for chunk in &received.chunks {
            self.buffers.held -= 1;
            self.buffers.give_back(chunk.bid);
        }
        let kind = match received.watch {
            Watch::Idle => return,
            Watch::Receiving => Kind::Receive,
            Watch::Polling => Kind::Poll,
        };
        // What was armed and not yet submitted must reach the kernel first
        // (a cancel finds only submitted requests), or it would be
        // submitted after the descriptor is closed, and its number reused.
        // With `SUBMIT_ALL` one submit takes every entry; one that fails for
        // want of memory is retried, and if the queue still holds entries
        // the runtime cannot go on soundly.
        for _ in 0..100 {
            let _ = self.ring.submit();
            if self.ring.submission().is_empty() {
                break;
            }
        }
        assert!(
            self.ring.submission().is_empty(),
            "fibra: the io_uring ring cannot submit; a stream's receive could outlive its descriptor"
        );
        let _ = self
            .ring
            .submitter()
            .register_sync_cancel(None, CancelBuilder::user_data(kind.tag(received.tag)));
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Everything in flight is cancelled, and its last completion awaited:
        // after that the kernel neither writes to the buffers nor reads the
        // buffer ring, and both can be unmapped (after the ring). A
        // cancelled request may still be ending (its completion not posted
        // yet) when the cancel returns, hence the count.
        self.closing = true;
        let _ = self.ring.submit();
        let _ = self
            .ring
            .submitter()
            .register_sync_cancel(None, CancelBuilder::any());
        while self.in_flight > 0 {
            match self.next() {
                Ok(Some(_)) => continue,
                Ok(None) => {}
                Err(_) => break,
            }
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = self.ring.submitter().unregister_buf_ring(GROUP);
        // SAFETY: taken once, here; `self.buffers` is not used after.
        let buffers = unsafe { std::mem::ManuallyDrop::take(&mut self.buffers) };
        if self.in_flight > 0 {
            // The kernel could not be waited for: its requests may still
            // write to the buffers, which are kept mapped for good.
            buffers.leak();
        } else {
            // Unmapped here, before the ring's own mappings: nothing is in
            // flight.
            drop(buffers);
        }
    }
}

/// The buffer ring and the buffers (see the module docs).
struct Buffers {
    ring: NonNull<RingEntry>,
    memory: NonNull<u8>,
    /// The tail as fibra last published it.
    tail: u16,
    /// Buffers held in streams' chunks.
    held: usize,
}

impl Buffers {
    fn new() -> io::Result<Buffers> {
        let ring = map(usize::from(BUFFERS) * size_of::<RingEntry>())?.cast::<RingEntry>();
        let memory = match map(usize::from(BUFFERS) * BUFFER_SIZE) {
            Ok(memory) => memory,
            Err(err) => {
                // SAFETY: the mapping just made, unused.
                unsafe { unmap(ring.cast(), usize::from(BUFFERS) * size_of::<RingEntry>()) };
                return Err(err);
            }
        };
        let mut buffers = Buffers {
            ring,
            memory,
            tail: 0,
            held: 0,
        };
        for bid in 0..BUFFERS {
            buffers.give_back(bid);
        }
        Ok(buffers)
    }

    /// Bytes `chunk.start..chunk.end` of its buffer.
    fn bytes(&self, chunk: &Chunk) -> &[u8] {
        debug_assert!(chunk.start <= chunk.end && chunk.end as usize <= BUFFER_SIZE);
        // The completion that named `chunk.bid` said the kernel wrote `end`
        // bytes to it; the buffer stays out of the ring until `give_back`,
        // which comes after this borrow ends (`take` copies, then gives back).
        // SAFETY: those bytes are written and the kernel's no more;
        // `start..end` is within the buffer (a completion is at most its size).
        unsafe {
            let at = self
                .memory
                .as_ptr()
                .add(usize::from(chunk.bid) * BUFFER_SIZE + chunk.start as usize);
            std::slice::from_raw_parts(at, (chunk.end - chunk.start) as usize)
        }
    }

    /// Puts buffer `bid` at the ring's tail: the kernel's again.
    fn give_back(&mut self, bid: u16) {
        let index = usize::from(self.tail & (BUFFERS - 1));
        // The kernel reads entries between head and tail only, and fibra
        // never gives back more than it was given: the tail's entry is not
        // the kernel's. No reference spans entry 0's tail, which it reads.
        // SAFETY: `index` < BUFFERS, within the mapping; the entry is ours,
        // its fields (not `tail`) written through the raw pointer alone.
        unsafe {
            let entry = self.ring.as_ptr().add(index);
            (*entry).addr = self.memory.as_ptr().add(usize::from(bid) * BUFFER_SIZE) as u64;
            (*entry).len = BUFFER_SIZE as u32;
            (*entry).bid = bid;
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail is entry 0's last u16, aligned, in the ring's
        // mapping, read by the kernel with an acquire load and written only
        // here, atomically: the release store publishes the entry above.
        unsafe {
            let tail = &raw mut (*self.ring.as_ptr()).tail;
            AtomicU16::from_ptr(tail).store(self.tail, Ordering::Release);
        }
    }

    /// Keeps the mappings for good (the kernel may still use them).
    fn leak(self) {
        std::mem::forget(self);
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: both mappings are this value's, and the ring that used
        // them was dropped first, after cancelling all it had in flight.
        unsafe {
            unmap(
                self.ring.cast(),
                usize::from(BUFFERS) * size_of::<RingEntry>(),
            );
            unmap(self.memory, usize::from(BUFFERS) * BUFFER_SIZE);
        }
    }
}

/// `len` bytes of fresh, zeroed, page-aligned memory, whose pages the
/// kernel provides as they are first touched.
fn map(len: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: an anonymous private mapping, aliasing nothing.
    let at = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if at == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(NonNull::new(at.cast()).expect("mmap returns no null mapping"))
}

/// Unmaps what [`map`] returned.
///
/// # Safety
///
/// `at` and `len` are a mapping of `map`'s, which nothing uses any more.
unsafe fn unmap(at: NonNull<u8>, len: usize) {
    // SAFETY: as the caller promises.
    unsafe { libc::munmap(at.as_ptr().cast(), len) };
}

#[cfg(test)]
mod tests {
    use super::{BUFFERS, MOST_HELD};
    use crate::net::{TcpListener, TcpStream};
    use crate::runtime::{self, Builder, scheduler};
    use std::io::{IoSliceMut, Read, Write};
    use std::time::Duration;

    /// Runs `f` on a runtime whose streams receive through the ring, if
    /// this kernel gives one (an old kernel, or one with io_uring disabled,
    /// does not: then there is nothing to test here, and the epoll path is
    /// tested everywhere).
    fn on_the_ring(f: impl FnOnce() + 'static) {
        if io_uring::IoUring::new(2).is_err() {
            eprintln!("no io_uring here: skipped");
            return;
        }
        Builder::new().io_uring(true).run(move || {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let _made = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            assert!(
                scheduler::current().reactor.uses_ring(),
                "the ring was not made"
            );
            f();
        });
    }

    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    }

    /// Bytes 0, 1, 2, ... (mod 251: no period that divides a buffer's size).
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn a_read_waits_for_what_the_ring_receives_then_the_end() {
        on_the_ring(|| {
            let (mut client, server) = pair();
            let reader = crate::spawn(move || {
                let mut all = Vec::new();
                (&server).read_to_end(&mut all).unwrap();
                all
            });
            runtime::yield_now(); // the reader finds nothing and arms the receive
            client.write_all(b"hello").unwrap();
            crate::time::sleep(Duration::from_millis(5));
            client.write_all(b" world").unwrap();
            drop(client);
            assert_eq!(reader.join().unwrap(), b"hello world");
        });
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn peeks_and_vectored_reads_cross_the_buffers_in_order() {
        on_the_ring(|| {
            let (mut client, mut server) = pair();
            // Arm the receive, then send more than two buffers' worth.
            let mut nothing = [0; 1];
            server
                .set_read_timeout(Some(Duration::from_millis(1)))
                .unwrap();
            assert!(server.read(&mut nothing).is_err());
            server.set_read_timeout(None).unwrap();
            let sent = pattern(5000);
            client.write_all(&sent).unwrap();
            drop(client);
            let mut peeked = vec![0; 3000];
            let mut n = 0;
            while n < 3000 {
                n = server.peek(&mut peeked).unwrap();
            }
            assert_eq!(peeked, sent[..3000]);
            let mut got = Vec::new();
            loop {
                let (mut a, mut b) = ([0; 7], [0; 1500]);
                let mut bufs = [IoSliceMut::new(&mut a), IoSliceMut::new(&mut b)];
                let n = server.read_vectored(&mut bufs).unwrap();
                if n == 0 {
                    break;
                }
                let both: Vec<u8> = a.iter().chain(b.iter()).copied().take(n).collect();
                got.extend_from_slice(&both);
            }
            assert_eq!(got, sent);
        });
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn a_loop_of_peeks_sees_data_that_comes_later() {
        // As with `MSG_PEEK` on epoll: a peek that falls short lets the
        // reactor look at the ring, so the loop ends.
        on_the_ring(|| {
            let (mut client, server) = pair();
            // A read shorter than its buffer arms the receive.
            client.write_all(&[0]).unwrap();
            assert_eq!((&server).read(&mut [0; 16]).unwrap(), 1);
            let writer = crate::spawn(move || {
                client.write_all(b"01234").unwrap();
                crate::time::sleep(Duration::from_millis(5));
                client.write_all(b"56789").unwrap();
                client
            });
            let mut buf = [0; 10];
            while server.peek(&mut buf).unwrap() < 10 {}
            assert_eq!(&buf, b"0123456789");
            drop(writer.join().unwrap());
        });
    }

    /// Connects a pair, arms the server side's receive (a read shorter than
    /// its buffer), and sends it `sent` from a green thread of its own.
    fn receiving(sent: &[u8]) -> (TcpStream, runtime::JoinHandle<()>) {
        let (mut client, server) = pair();
        client.write_all(&[0]).unwrap();
        assert_eq!((&server).read(&mut [0; 16]).unwrap(), 1);
        let sent = sent.to_vec();
        let writer = crate::spawn(move || client.write_all(&sent).unwrap());
        (server, writer)
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn a_stream_whose_reader_lags_holds_few_buffers_and_loses_nothing() {
        on_the_ring(|| {
            let sent = pattern(4 << 20);
            let (server, writer) = receiving(&sent);
            let mut got = vec![0; sent.len()];
            let mut at = 0;
            let mut most = 0;
            while at < got.len() {
                crate::time::sleep(Duration::from_micros(200));
                most = most.max(held_by_all());
                let end = (at + 50_000).min(got.len());
                at += (&server).read(&mut got[at..end]).unwrap();
            }
            assert!(got == sent, "the stream's bytes came out of order");
            writer.join().unwrap();
            // The receive is stopped at `MOST_HELD`; what the socket held
            // when it was stopped comes on top (a batch, in one wait: 99
            // buffers here, about 200 KiB), never the ring.
            assert!(
                most < BUFFERS as usize / 4,
                "one stream held {most} buffers"
            );
        });
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn streams_that_do_not_read_starve_the_ring_and_others_still_read() {
        // Enough streams that do not read to take every buffer of the ring
        // (`ENOBUFS`): other streams go on by polls and system calls, and
        // the first ones, when they read at last, get everything in order.
        on_the_ring(|| {
            let sent = pattern(256 << 10);
            let idle: Vec<_> = (0..2 * BUFFERS as usize / MOST_HELD)
                .map(|_| receiving(&sent))
                .collect();
            crate::time::sleep(Duration::from_millis(50));
            assert!(
                held_by_all() > BUFFERS as usize - MOST_HELD,
                "the ring was not starved"
            );
            for _ in 0..3 {
                let (mut a, mut b) = pair();
                let echo = crate::spawn(move || {
                    let mut buf = [0; 3];
                    b.read_exact(&mut buf).unwrap();
                    b.write_all(&buf).unwrap();
                });
                a.write_all(b"abc").unwrap();
                let mut back = [0; 3];
                a.read_exact(&mut back).unwrap();
                assert_eq!(&back, b"abc");
                echo.join().unwrap();
            }
            for (server, writer) in idle {
                let mut got = vec![0; sent.len()];
                (&server).read_exact(&mut got).unwrap();
                assert!(got == sent, "a stream's bytes came out of order");
                writer.join().unwrap();
            }
        });
    }

    /// The buffers that this runtime's streams hold.
    fn held_by_all() -> usize {
        let reactor = &scheduler::current().reactor;
        reactor.ring.borrow().as_ref().unwrap().buffers.held
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn streams_dropped_with_data_held_give_their_buffers_back() {
        on_the_ring(|| {
            // Each round leaves a few buffers' worth unread in a dropped
            // stream, 3,000 buffers in all (the ring has 1,024): were they
            // not given back, the last rounds would be starved, and the
            // count below would say so.
            for _ in 0..1000 {
                let (mut client, mut server) = pair();
                let mut one = [0; 1];
                client.write_all(&[1]).unwrap();
                server.read_exact(&mut one).unwrap();
                client.write_all(&pattern(5000)).unwrap();
                let mut some = [0; 10];
                server.read_exact(&mut some).unwrap();
            }
            assert_eq!(held_by_all(), 0);
        });
    }
}

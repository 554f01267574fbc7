//! [`Async`]: any pollable file descriptor, registered with the reactor of the
//! runtime that made it.

use super::fd::{Fd, directions, ready_now, set_nonblocking};
use crate::net::registration::Registration;
use crate::runtime::reactor::Direction;
use mio::Interest;
use std::fmt;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::time::Duration;

/// A value with a pollable file descriptor — a pipe, a tty, an inotify or
/// netlink socket, a serial port — whose operations park only the calling
/// green thread until the reactor says the descriptor is ready (async-io's
/// `Async`, tokio's `AsyncFd`).
///
/// [`Async::new`] puts the descriptor in non-blocking mode and registers it
/// with the calling thread's runtime. Then [`read_with`](Async::read_with)
/// and [`write_with`](Async::write_with) run an operation of your own and,
/// each time it fails with `WouldBlock`, park the calling green thread until
/// the descriptor is ready and try again; [`Read`] and [`Write`] are
/// implemented that way for `Async<T>` when `T` has them, and for `&Async<T>`
/// when `&T` has them (so one green thread can read while another writes).
///
/// ```
/// use fibra::io::Async;
/// use std::io::{Read, Write};
///
/// fibra::run(|| {
///     let (reader, mut writer) = std::io::pipe().unwrap();
///     let mut reader = Async::new(reader).unwrap();
///     // A plain OS thread writes; until it does, this runtime's other green
///     // threads run.
///     std::thread::spawn(move || writer.write_all(b"hello").unwrap());
///     let mut text = String::new();
///     reader.read_to_string(&mut text).unwrap(); // to the end: the writer is gone
///     assert_eq!(text, "hello");
/// });
/// ```
///
/// Any number of green threads may wait on one `Async` in each direction:
/// they are served in turns, oldest first, as on a socket (see the
/// [`net`](crate::net) docs).
///
/// It belongs to the runtime that made it (it is neither `Send` nor `Sync`);
/// to move the value to another OS thread, take it out with
/// [`into_inner`](Async::into_inner) and wrap it again there.
pub struct Async<T: AsFd> {
    /// Declared first, so dropped first: the descriptor leaves the reactor
    /// before `io` closes it.
    registration: Registration<Fd>,
    io: T,
}

impl<T: AsFd> Async<T> {
    /// Sets `O_NONBLOCK` on `io`'s descriptor and registers it with the
    /// calling thread's runtime.
    ///
    /// `O_NONBLOCK` belongs to the open file description, not the
    /// descriptor: everything that shares it (a `dup`, a child process that
    /// inherited it, the shell whose terminal is this process's stdin) sees
    /// it too, and it stays set after [`into_inner`](Async::into_inner).
    ///
    /// A descriptor open only for reading (a pipe's read end) is registered
    /// for reading only, and one open only for writing for writing only:
    /// waiting on it the other way ([`writable`](Async::writable) on a read
    /// end, say) would wait forever.
    ///
    /// # Errors
    ///
    /// The kernel's, if the descriptor cannot be polled: on Linux a regular
    /// file or a directory is refused with `EPERM` (use
    /// [`blocking`](crate::blocking) for those); or if it cannot be made
    /// non-blocking.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    pub fn new(io: T) -> io::Result<Async<T>> {
        let flags = set_nonblocking(io.as_fd())?;
        Async::register(io, directions(flags))
    }

    /// Registers `io`, a socket already non-blocking, for both directions.
    pub(crate) fn from_nonblocking(io: T) -> io::Result<Async<T>> {
        Async::register(io, Interest::READABLE | Interest::WRITABLE)
    }

    fn register(io: T, interest: Interest) -> io::Result<Async<T>> {
        let registration = Registration::with_interest(Fd(io.as_fd().as_raw_fd()), interest)?;
        Ok(Async { registration, io })
    }

    /// The value inside.
    pub fn get_ref(&self) -> &T {
        &self.io
    }

    /// The value inside, to call what needs `&mut` (a method of its own, or
    /// [`read_with_mut`](Async::read_with_mut) does that and waits).
    ///
    /// The reactor watches the descriptor `Async::new` registered, by number,
    /// until the `Async` is dropped or taken apart. So through this reference:
    /// do not close the descriptor, and do not replace the value (by
    /// assignment or `mem::replace`) with one that has another descriptor —
    /// the new one would not be waited for, and the old number, if the
    /// system gave it to a new file meanwhile, would be watched (and finally
    /// deregistered) in its place. Neither is undefined behaviour, but
    /// waits then go wrong. Switching the descriptor back to blocking mode
    /// makes operations block the OS thread.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.io
    }

    /// Deregisters the descriptor and gives the value back (still
    /// non-blocking).
    pub fn into_inner(self) -> T {
        let Async { registration, io } = self;
        drop(registration);
        io
    }

    /// Parks the calling green thread until the descriptor is readable: a
    /// read would not block (or would report end of file, a hang-up or an
    /// error). It asks the kernel (a `poll` that does not wait) before it
    /// returns, so it never returns on stale readiness; the data may still be
    /// gone by the time you read, if another reader took it.
    ///
    /// # Errors
    ///
    /// `TimedOut` once the [read timeout](Async::set_read_timeout) has passed.
    pub fn readable(&self) -> io::Result<()> {
        self.read_with(|io| ready_now(io.as_fd(), libc::POLLIN))
    }

    /// Parks the calling green thread until the descriptor is writable; as
    /// [`readable`](Async::readable), with the
    /// [write timeout](Async::set_write_timeout).
    ///
    /// # Errors
    ///
    /// `TimedOut` once the write timeout has passed.
    pub fn writable(&self) -> io::Result<()> {
        self.write_with(|io| ready_now(io.as_fd(), libc::POLLOUT))
    }

    /// Runs `op` until it returns something other than a `WouldBlock` error,
    /// parking the calling green thread while the descriptor is not readable;
    /// returns what `op` returned.
    ///
    /// `op` is one attempt of a non-blocking operation: it returns at once,
    /// with `WouldBlock` when it has nothing to do yet. It must not wait in
    /// fibra itself (a sleep, a lock, a channel): other green threads waiting
    /// on this descriptor are handed their turn when `op` returns, and one
    /// that queued while `op` waited could be passed over until the
    /// descriptor's next readiness.
    ///
    /// ```
    /// use fibra::io::Async;
    /// use std::io::{Read, Write};
    ///
    /// fibra::run(|| {
    ///     let (reader, mut writer) = std::io::pipe().unwrap();
    ///     let reader = Async::new(reader).unwrap();
    ///     writer.write_all(b"ping").unwrap();
    ///     let mut buf = [0; 16];
    ///     let n = reader.read_with(|mut pipe| pipe.read(&mut buf)).unwrap();
    ///     assert_eq!(&buf[..n], b"ping");
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// `op`'s, or `TimedOut` once the [read timeout](Async::set_read_timeout)
    /// has passed without the descriptor becoming readable.
    pub fn read_with<R>(&self, mut op: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        self.registration.io(Direction::Read, |_| op(&self.io))
    }

    /// As [`read_with`](Async::read_with), for a system call made directly
    /// (`net::socket_io`'s), whose `Errno` is told `WouldBlock` as it is,
    /// without making an `io::Error` of it first.
    pub(crate) fn read_with_errno<R>(
        &self,
        mut op: impl FnMut(&T) -> rustix::io::Result<R>,
    ) -> io::Result<R> {
        self.registration.io(Direction::Read, |_| op(&self.io))
    }

    /// As [`read_with_errno`](Async::read_with_errno), waiting for the
    /// descriptor to be writable, with the write timeout.
    pub(crate) fn write_with_errno<R>(
        &self,
        mut op: impl FnMut(&T) -> rustix::io::Result<R>,
    ) -> io::Result<R> {
        self.registration.io(Direction::Write, |_| op(&self.io))
    }

    /// As [`read_with`](Async::read_with), for an operation that needs
    /// `&mut T` (the rules of [`get_mut`](Async::get_mut) hold for it).
    ///
    /// # Errors
    ///
    /// As [`read_with`](Async::read_with): `op`'s, or `TimedOut`.
    pub fn read_with_mut<R>(
        &mut self,
        mut op: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let Async { registration, io } = self;
        registration.io(Direction::Read, |_| op(io))
    }

    /// As [`read_with`](Async::read_with), waiting for the descriptor to be
    /// writable, with the [write timeout](Async::set_write_timeout).
    ///
    /// # Errors
    ///
    /// `op`'s, or `TimedOut` once the write timeout has passed without the
    /// descriptor becoming writable.
    pub fn write_with<R>(&self, mut op: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        self.registration.io(Direction::Write, |_| op(&self.io))
    }

    /// As [`write_with`](Async::write_with), for an operation that needs
    /// `&mut T` (the rules of [`get_mut`](Async::get_mut) hold for it).
    ///
    /// # Errors
    ///
    /// As [`write_with`](Async::write_with): `op`'s, or `TimedOut`.
    pub fn write_with_mut<R>(
        &mut self,
        mut op: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let Async { registration, io } = self;
        registration.io(Direction::Write, |_| op(io))
    }

    /// Bounds how long one read (a [`read_with`](Async::read_with), a
    /// [`readable`](Async::readable), a `read`) may wait (`None`, the
    /// default: forever); one that waits longer fails with
    /// `ErrorKind::TimedOut`. It applies to each call, and setting it is
    /// cheap (no system call).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`, as `std` does for sockets.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.registration.set_timeout(Direction::Read, timeout)
    }

    /// The read timeout set by [`set_read_timeout`](Async::set_read_timeout).
    ///
    /// # Errors
    ///
    /// Never: the `Result` is that of `std`'s sockets' `read_timeout`.
    pub fn read_timeout(&self) -> io::Result<Option<Duration>> {
        Ok(self.registration.timeout(Direction::Read))
    }

    /// Bounds how long one write may wait; as
    /// [`set_read_timeout`](Async::set_read_timeout).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.registration.set_timeout(Direction::Write, timeout)
    }

    /// The write timeout set by [`set_write_timeout`](Async::set_write_timeout).
    ///
    /// # Errors
    ///
    /// Never, as [`read_timeout`](Async::read_timeout).
    pub fn write_timeout(&self) -> io::Result<Option<Duration>> {
        Ok(self.registration.timeout(Direction::Write))
    }

    /// Records that the descriptor has nothing more to read until the reactor
    /// says otherwise (a stream read that filled less than its buffer), so
    /// that the next read waits instead of first failing with `WouldBlock`.
    pub(crate) fn clear_read_ready(&self) {
        self.registration.clear_ready(Direction::Read);
    }
}

impl<T: AsFd + Read> Read for Async<T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_with_mut(|io| io.read(buf))
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        self.read_with_mut(|io| io.read_vectored(bufs))
    }
}

impl<T: AsFd> Read for &Async<T>
where
    for<'a> &'a T: Read,
{
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_with(|mut io| io.read(buf))
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        self.read_with(|mut io| io.read_vectored(bufs))
    }
}

impl<T: AsFd + Write> Write for Async<T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_with_mut(|io| io.write(buf))
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.write_with_mut(|io| io.write_vectored(bufs))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_with_mut(|io| io.flush())
    }
}

impl<T: AsFd> Write for &Async<T>
where
    for<'a> &'a T: Write,
{
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_with(|mut io| io.write(buf))
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.write_with(|mut io| io.write_vectored(bufs))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_with(|mut io| io.flush())
    }
}

impl<T: AsFd> AsFd for Async<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}

impl<T: AsFd> AsRawFd for Async<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_fd().as_raw_fd()
    }
}

impl<T: AsFd + fmt::Debug> fmt::Debug for Async<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Async").field("io", &self.io).finish()
    }
}

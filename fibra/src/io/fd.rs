//! What [`Async`](super::Async) does with a bare file descriptor: makes it
//! non-blocking, asks the kernel whether it is ready at this moment, and
//! hands it to the reactor as a mio source.

use mio::event::Source;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

/// A descriptor as the reactor knows it: by number. The value that owns it
/// lives beside the registration, in [`Async`](super::Async), and outlives it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fd(pub(crate) RawFd);

impl Source for Fd {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        SourceFd(&self.0).deregister(registry)
    }
}

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// Sets `O_NONBLOCK` on `fd`'s open file description (a system call only if
/// it is not set yet); returns the description's status flags.
pub(crate) fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<libc::c_int> {
    // SAFETY: `F_GETFL` on a descriptor borrowed, so open, for the call.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    if flags & libc::O_NONBLOCK != 0 {
        return Ok(flags);
    }
    // SAFETY: `F_SETFL` on the same borrowed descriptor, with its own flags
    // and `O_NONBLOCK`.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(flags | libc::O_NONBLOCK)
}

/// The directions a descriptor with status `flags` is open for, to register
/// it for those only: a pipe's end goes one way, and kqueue may refuse to
/// watch it the other.
pub(crate) fn directions(flags: libc::c_int) -> Interest {
    match flags & libc::O_ACCMODE {
        libc::O_RDONLY => Interest::READABLE,
        libc::O_WRONLY => Interest::WRITABLE,
        _ => Interest::READABLE | Interest::WRITABLE,
    }
}

/// Whether `fd` is ready for `events` (`libc::POLLIN` or `libc::POLLOUT`) at
/// this moment, by a `poll` that does not wait: `Ok` if it is, or if it has
/// hung up or failed (the next operation reports that), or if `poll` cannot
/// tell for this kind of descriptor (macOS says `POLLNVAL` for some devices);
/// `WouldBlock` if it is not.
pub(crate) fn ready_now(fd: BorrowedFd<'_>, events: libc::c_short) -> io::Result<()> {
    let mut entry = libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    };
    loop {
        // SAFETY: one initialised `pollfd`, for a borrowed descriptor, and a
        // timeout of zero: the call does not wait.
        match unsafe { libc::poll(&mut entry, 1, 0) } {
            0 => return Err(io::ErrorKind::WouldBlock.into()),
            n if n > 0 => return Ok(()),
            _ => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
        }
    }
}

//! A stream socket's reads and writes as the system calls themselves
//! (rustix's: on Linux, the `syscall` instruction in line), not through
//! libc's `recv` and `send` under std's and mio's sockets.
//!
//! libc's are cancellation points: once the process has a second OS thread
//! (the stall detector's watchdog starts with the first runtime), glibc wraps
//! each one in `__pthread_enable_asynccancel` and
//! `__pthread_disable_asynccancel`, about 50 instructions a call, and std's
//! and mio's layers add about 30 more. An echo round trip makes five such
//! calls (two sends, three receives). fibra never cancels an OS thread
//! (`pthread_cancel`), so the wrappers buy it nothing.

use rustix::io;
use rustix::net::{RecvFlags, SendFlags};
use std::os::fd::AsFd;

/// `recv(fd, buf, 0)`: what `Read::read` of std's stream does. (An
/// `Errno`, not an `io::Error`: `Registration::io` tells `WouldBlock` from it
/// as it is.)
#[inline]
pub(super) fn recv(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    rustix::net::recv(fd, buf, RecvFlags::empty()).map(|(read, _)| read)
}

/// `send(fd, buf, MSG_NOSIGNAL)`: what `Write::write` of std's stream does.
/// A write to a stream whose peer has gone fails with `BrokenPipe` instead
/// of raising `SIGPIPE`.
#[inline]
pub(super) fn send(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    rustix::net::send(fd, buf, NO_SIGPIPE)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
const NO_SIGPIPE: SendFlags = SendFlags::NOSIGNAL;
/// macOS has no `MSG_NOSIGNAL`: std and mio set `SO_NOSIGPIPE` on the socket
/// when they make it instead.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const NO_SIGPIPE: SendFlags = SendFlags::empty();

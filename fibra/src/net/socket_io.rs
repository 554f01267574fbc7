//! A socket's reads and writes as the system calls themselves (rustix's: on
//! Linux, the `syscall` instruction in line), not through libc's `recv`,
//! `send`, `readv`, `writev`, `recvfrom` and `sendto` under std's and mio's
//! sockets.
//!
//! libc's are cancellation points: once the process has a second OS thread
//! (the stall detector's watchdog starts with the first runtime), glibc wraps
//! each one in `__pthread_enable_asynccancel` and
//! `__pthread_disable_asynccancel`, about 50 instructions a call, and std's
//! and mio's layers add about 30 more. An echo round trip makes five such
//! calls (two sends, three receives). fibra never cancels an OS thread
//! (`pthread_cancel`), so the wrappers buy it nothing.
//!
//! Every send here passes `MSG_NOSIGNAL` (Linux): a send to a peer that has
//! gone fails with `BrokenPipe` and raises no `SIGPIPE`, whether or not the
//! program ignores the signal (Rust's `main` does; a library loaded by a C
//! program may not). That includes vectored writes, which std makes with
//! `writev` (no flags): here they are `sendmsg`. On macOS, which has no
//! `MSG_NOSIGNAL`, std and mio set `SO_NOSIGPIPE` on a TCP socket when they
//! make it.
//!
//! The results are rustix's `Errno`, not `io::Error`: `Registration::io`
//! tells `WouldBlock` from it as it is.

use rustix::io::{self, Errno};
use rustix::net::{RecvFlags, SendAncillaryBuffer, SendFlags};
use std::io::{IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::AsFd;

/// `recv(fd, buf, 0)`: what `Read::read` of std's stream does.
#[inline]
pub(super) fn recv(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    rustix::net::recv(fd, buf, RecvFlags::empty()).map(|(read, _)| read)
}

/// `recv(fd, buf, MSG_PEEK)`: reads without consuming.
#[inline]
pub(super) fn peek(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    rustix::net::recv(fd, buf, RecvFlags::PEEK).map(|(read, _)| read)
}

/// `readv(fd, bufs)`: what `Read::read_vectored` of std's stream does.
#[inline]
pub(super) fn recv_vectored(fd: impl AsFd, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
    rustix::io::readv(fd, bufs)
}

/// `send(fd, buf, MSG_NOSIGNAL)`: what `Write::write` of std's stream does.
#[inline]
pub(super) fn send(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    rustix::net::send(fd, buf, NO_SIGPIPE)
}

/// `sendmsg(fd, bufs, MSG_NOSIGNAL)`, with no address and no ancillary data:
/// a vectored send.
#[inline]
pub(super) fn send_vectored(fd: impl AsFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    rustix::net::sendmsg(fd, bufs, &mut SendAncillaryBuffer::default(), NO_SIGPIPE)
}

/// `sendto(fd, buf, MSG_NOSIGNAL, addr)`: a datagram to `addr`.
#[inline]
pub(super) fn send_to(fd: impl AsFd, buf: &[u8], addr: &SocketAddr) -> io::Result<usize> {
    rustix::net::sendto(fd, buf, NO_SIGPIPE, addr)
}

/// `recvfrom(fd, buf, 0)` on an IP socket: a datagram's length and sender.
#[inline]
pub(super) fn recv_from(fd: impl AsFd, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
    let (read, _, from) = rustix::net::recvfrom(fd, buf, RecvFlags::empty())?;
    // An IP datagram socket always reports the sender; an address of another
    // family cannot come here.
    let from = from.ok_or(Errno::AFNOSUPPORT)?;
    Ok((read, SocketAddr::try_from(from)?))
}

#[cfg(any(target_os = "linux", target_os = "android"))]
const NO_SIGPIPE: SendFlags = SendFlags::NOSIGNAL;
/// macOS has no `MSG_NOSIGNAL` (see the module docs).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const NO_SIGPIPE: SendFlags = SendFlags::empty();

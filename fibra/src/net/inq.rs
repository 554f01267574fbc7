//! Reads that say whether they emptied the socket (Linux's `TCP_INQ`), so that
//! a green thread whose next read would find nothing parks at once instead of
//! first making a `recv` that fails with `EAGAIN`.
//!
//! The reactor's sockets are edge-triggered: after a read, the socket counts
//! as readable until a read reports `WouldBlock`, since a read that filled its
//! buffer may have left bytes behind, and no new event would come for those.
//! In a request–response exchange — a client that writes a request, then reads
//! the reply into a buffer of exactly its size — that costs one `recv` per
//! round trip that can only fail: one of the five system calls of an echo
//! round trip (see the reactor's docs for the figures).
//!
//! With the `TCP_INQ` socket option set, each `recvmsg` on a TCP socket
//! carries a control message with the bytes still queued after it. When that
//! is zero the socket is empty, and the read direction is marked not ready:
//! the next byte to arrive is an edge, which epoll reports, so nothing is
//! missed. (The kernel reports a peer's FIN as one byte still queued, so the
//! end of the stream is read, not waited for; an error or a hang-up is a
//! sticky event in the reactor.) Elsewhere, or on a kernel without the option
//! (before Linux 4.18), reads are plain ones.

use std::io::{self, IoSliceMut};
use std::os::fd::RawFd;

/// What one read got.
pub(super) struct Received {
    /// Bytes read (0: the end of the stream).
    pub(super) len: usize,
    /// Whether the socket is known to hold no more bytes after this read.
    pub(super) drained: bool,
}

/// A TCP socket's promise to report, with each `recvmsg`, the bytes left
/// queued after it: made only by [`Inq::enable`], which succeeds only on
/// Linux 4.18 or later (elsewhere the type has no value at all).
#[cfg(target_os = "linux")]
pub(super) struct Inq(());

/// A TCP socket's promise to report the bytes left queued after each read:
/// never made outside Linux.
#[cfg(not(target_os = "linux"))]
pub(super) enum Inq {}

impl Inq {
    /// Sets `TCP_INQ` on the TCP socket `fd`; `None` if the kernel refuses it.
    #[cfg(target_os = "linux")]
    pub(super) fn enable(fd: RawFd) -> Option<Inq> {
        let on: libc::c_int = 1;
        // SAFETY: `on` is a live `c_int` for the whole call and the length
        // passed is its size; `setsockopt` only reads it. A bad `fd` is an
        // error, not UB.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_TCP,
                libc::TCP_INQ,
                (&raw const on).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        (rc == 0).then_some(Inq(()))
    }

    /// Outside Linux there is no such option.
    #[cfg(not(target_os = "linux"))]
    pub(super) fn enable(_fd: RawFd) -> Option<Inq> {
        None
    }

    /// Reads into `bufs` from `fd`, the socket this was enabled on, with
    /// `recvmsg`, and says whether that emptied the socket.
    ///
    /// # Errors
    ///
    /// As `recv` (`WouldBlock` included).
    #[cfg(target_os = "linux")]
    pub(super) fn read(&self, fd: RawFd, bufs: &mut [IoSliceMut<'_>]) -> io::Result<Received> {
        /// Room for one control message holding one `c_int`, aligned as a
        /// `cmsghdr` (`CMSG_SPACE(sizeof(int))` is 24 bytes on 64-bit Linux).
        #[repr(C)]
        struct Control {
            header: libc::cmsghdr,
            data: [libc::c_int; 2],
        }
        // SAFETY: all-zero bytes are a valid `Control` (plain integers).
        let mut control: Control = unsafe { std::mem::zeroed() };
        // SAFETY: all-zero bytes are a valid `msghdr` (null pointers, zero
        // lengths).
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        // `IoSliceMut` is guaranteed to be ABI-compatible with `iovec` on Unix.
        msg.msg_iov = bufs.as_mut_ptr().cast();
        msg.msg_iovlen = bufs.len() as _;
        msg.msg_control = (&raw mut control).cast();
        msg.msg_controllen = size_of::<Control>() as _;
        // SAFETY: `msg` points at `bufs` (iovecs over live, writable,
        // exclusively borrowed buffers of their stated lengths) and at
        // `control` (writable, of the stated length), all of which outlive
        // the call; the kernel writes no further than those lengths.
        let len = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if len < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut drained = false;
        // SAFETY: `msg` was filled by a successful `recvmsg`, so its control
        // fields describe what the kernel wrote into `control`; the CMSG
        // macros walk only within `msg_controllen`, and a `TCP_CM_INQ`
        // message holds one `c_int` (read unaligned: nothing more is
        // promised).
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_TCP && (*cmsg).cmsg_type == libc::TCP_CM_INQ {
                    let queued = libc::CMSG_DATA(cmsg).cast::<libc::c_int>().read_unaligned();
                    drained = queued == 0;
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        Ok(Received {
            len: len as usize,
            drained,
        })
    }

    /// Outside Linux there is no `Inq` to read with.
    #[cfg(not(target_os = "linux"))]
    pub(super) fn read(&self, _fd: RawFd, _bufs: &mut [IoSliceMut<'_>]) -> io::Result<Received> {
        match *self {}
    }
}

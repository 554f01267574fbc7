//! Unix domain datagram sockets for green threads.

use super::socket_io;
use crate::io::Async;
use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// A Unix domain datagram socket (like
/// [`std::os::unix::net::UnixDatagram`]) whose sends and receives park only
/// the calling green thread.
///
/// ```
/// use fibra::net::UnixDatagram;
///
/// fibra::run(|| {
///     let (a, b) = UnixDatagram::pair().unwrap();
///     a.send(b"ping").unwrap();
///     let mut buf = [0; 16];
///     let n = b.recv(&mut buf).unwrap();
///     assert_eq!(&buf[..n], b"ping");
/// });
/// ```
pub struct UnixDatagram {
    inner: Async<mio::net::UnixDatagram>,
}

impl UnixDatagram {
    /// A socket bound to the socket file `path` (which must not exist yet).
    ///
    /// # Panics
    ///
    /// Outside a runtime (as every constructor of this module).
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        UnixDatagram::from_mio(mio::net::UnixDatagram::bind(path)?)
    }

    /// A socket bound to no address: it can send, and receive replies only
    /// once [`connect`](Self::connect)ed or through a [`pair`](Self::pair).
    pub fn unbound() -> io::Result<UnixDatagram> {
        UnixDatagram::from_mio(mio::net::UnixDatagram::unbound()?)
    }

    /// A pair of connected sockets, both in this runtime.
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = mio::net::UnixDatagram::pair()?;
        Ok((UnixDatagram::from_mio(a)?, UnixDatagram::from_mio(b)?))
    }

    /// Takes over a socket made with `std`, making it non-blocking.
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        UnixDatagram::from_mio(mio::net::UnixDatagram::from_std(socket))
    }

    /// Deregisters the socket and gives it back as a `std` one (still
    /// non-blocking), to hand to another OS thread or runtime.
    pub fn into_std(self) -> std::os::unix::net::UnixDatagram {
        self.inner.into_inner().into()
    }

    fn from_mio(socket: mio::net::UnixDatagram) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram {
            inner: Async::from_nonblocking(socket)?,
        })
    }

    /// Sets the peer that `send` and `recv` use (and the only one `recv`
    /// accepts datagrams from).
    pub fn connect(&self, path: impl AsRef<Path>) -> io::Result<()> {
        self.inner.get_ref().connect(path)
    }

    /// Sends `buf` to the socket at `path`; waits while the socket has no
    /// room.
    pub fn send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        let path = path.as_ref();
        self.inner.write_with(|s| s.send_to(buf, path))
    }

    /// Waits for a datagram; returns its length and sender (unnamed if the
    /// sender is not bound).
    pub fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.inner.read_with(|s| s.recv_from(buf))
    }

    /// Sends to the connected peer.
    pub fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write_with_errno(|s| socket_io::send(s, buf))
    }

    /// Waits for a datagram from the connected peer.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner
            .read_with_errno(|s| socket_io::recv(s, &mut *buf))
    }

    /// Bounds how long one receive may wait (`None`, the default: forever);
    /// one that waits longer fails with `ErrorKind::TimedOut`. As
    /// [`UnixStream::set_read_timeout`](super::UnixStream::set_read_timeout).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_read_timeout(timeout)
    }

    /// The read timeout set by [`set_read_timeout`](Self::set_read_timeout).
    pub fn read_timeout(&self) -> io::Result<Option<Duration>> {
        self.inner.read_timeout()
    }

    /// Bounds how long one send may wait for room; as
    /// [`set_read_timeout`](Self::set_read_timeout).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_write_timeout(timeout)
    }

    /// The write timeout set by [`set_write_timeout`](Self::set_write_timeout).
    pub fn write_timeout(&self) -> io::Result<Option<Duration>> {
        self.inner.write_timeout()
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.get_ref().local_addr()
    }

    /// The address of the peer set by [`connect`](Self::connect).
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.get_ref().peer_addr()
    }

    /// Shuts down the read half, the write half, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.inner.get_ref().shutdown(how)
    }

    /// The pending error on the socket, if any (clearing it).
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.get_ref().take_error()
    }

    pub(super) fn io(&self) -> &Async<mio::net::UnixDatagram> {
        &self.inner
    }
}

impl fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixDatagram")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

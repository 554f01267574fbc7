//! UDP for green threads.

use super::lookup::{ToSocketAddrs, lookup_host};
use super::registration::Registration;
use super::socket_io;
use super::tcp::each_addr;
use crate::runtime::reactor::Direction;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// A UDP socket (like [`std::net::UdpSocket`]) whose sends and receives park
/// only the calling green thread.
///
/// ```
/// use fibra::net::UdpSocket;
///
/// fibra::run(|| {
///     let a = UdpSocket::bind("127.0.0.1:0").unwrap();
///     let b = UdpSocket::bind("127.0.0.1:0").unwrap();
///     a.send_to(b"ping", b.local_addr().unwrap()).unwrap();
///     let mut buf = [0; 16];
///     let (n, from) = b.recv_from(&mut buf).unwrap();
///     assert_eq!((&buf[..n], from), (&b"ping"[..], a.local_addr().unwrap()));
/// });
/// ```
pub struct UdpSocket {
    inner: Registration<mio::net::UdpSocket>,
}

impl UdpSocket {
    /// Binds to the first of `addr`'s addresses that works.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    pub fn bind(addr: impl ToSocketAddrs) -> io::Result<UdpSocket> {
        each_addr(addr, |addr| {
            Ok(UdpSocket {
                inner: Registration::new(mio::net::UdpSocket::bind(addr)?)?,
            })
        })
    }

    /// Takes over a socket made with `std`, making it non-blocking.
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            inner: Registration::new(mio::net::UdpSocket::from_std(socket))?,
        })
    }

    /// Sends `buf` to `addr` (the first address it resolves to: a host name
    /// is resolved by [`lookup_host`](super::lookup_host), parking only the
    /// calling green thread).
    pub fn send_to(&self, buf: &[u8], addr: impl ToSocketAddrs) -> io::Result<usize> {
        let addr = lookup_host(addr)?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to send to"))?;
        self.inner
            .io(Direction::Write, |s| socket_io::send_to(s, buf, &addr))
    }

    /// Waits for a datagram; returns its length and sender.
    pub fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.inner
            .io(Direction::Read, |s| socket_io::recv_from(s, &mut *buf))
    }

    /// Sets the peer that `send` and `recv` use (and the only one `recv`
    /// accepts datagrams from).
    pub fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        each_addr(addr, |addr| self.inner.source().connect(addr))
    }

    /// Sends to the connected peer.
    pub fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.inner.io(Direction::Write, |s| socket_io::send(s, buf))
    }

    /// Waits for a datagram from the connected peer.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner
            .io(Direction::Read, |s| socket_io::recv(s, &mut *buf))
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.source().local_addr()
    }

    /// The address of the peer set by [`connect`](Self::connect).
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.source().peer_addr()
    }

    /// Bounds how long a receive ([`recv_from`](Self::recv_from),
    /// [`recv`](Self::recv)) may wait for a datagram (`None`, the default:
    /// forever); one that waits longer fails with `ErrorKind::TimedOut`
    /// (`std` says `WouldBlock` on Unix; a green thread never sees that). As
    /// [`TcpStream::set_read_timeout`](super::TcpStream::set_read_timeout),
    /// the timeout applies to each call.
    ///
    /// ```
    /// use fibra::net::UdpSocket;
    /// use std::io::ErrorKind;
    /// use std::time::Duration;
    ///
    /// fibra::run(|| {
    ///     let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    ///     socket.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
    ///     let err = socket.recv_from(&mut [0; 16]).unwrap_err(); // nobody sends
    ///     assert_eq!(err.kind(), ErrorKind::TimedOut);
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`, as `std` does.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_timeout(Direction::Read, timeout)
    }

    /// The read timeout set by [`set_read_timeout`](Self::set_read_timeout).
    pub fn read_timeout(&self) -> io::Result<Option<Duration>> {
        Ok(self.inner.timeout(Direction::Read))
    }

    /// Bounds how long a send ([`send_to`](Self::send_to), [`send`](Self::send))
    /// may wait for room in the socket's buffer; as
    /// [`set_read_timeout`](Self::set_read_timeout).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_timeout(Direction::Write, timeout)
    }

    /// The write timeout set by [`set_write_timeout`](Self::set_write_timeout).
    pub fn write_timeout(&self) -> io::Result<Option<Duration>> {
        Ok(self.inner.timeout(Direction::Write))
    }

    /// Sets `SO_BROADCAST`: whether datagrams may be sent to a broadcast address.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.inner.source().set_broadcast(on)
    }

    /// The pending error on the socket, if any (clearing it).
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.source().take_error()
    }
}

impl UdpSocket {
    pub(super) fn registration(&self) -> &Registration<mio::net::UdpSocket> {
        &self.inner
    }
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

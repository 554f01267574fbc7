//! UDP for green threads.

use super::registration::Registration;
use super::tcp::each_addr;
use crate::runtime::reactor::Direction;
use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

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

    /// Sends `buf` to `addr` (the first address it resolves to).
    pub fn send_to(&self, buf: &[u8], addr: impl ToSocketAddrs) -> io::Result<usize> {
        let addr = addr
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to send to"))?;
        self.inner.io(Direction::Write, |s| s.send_to(buf, addr))
    }

    /// Waits for a datagram; returns its length and sender.
    pub fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.inner.io(Direction::Read, |s| s.recv_from(buf))
    }

    /// Sets the peer that `send` and `recv` use (and the only one `recv`
    /// accepts datagrams from).
    pub fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        each_addr(addr, |addr| self.inner.source().connect(addr))
    }

    /// Sends to the connected peer.
    pub fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.inner.io(Direction::Write, |s| s.send(buf))
    }

    /// Waits for a datagram from the connected peer.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.io(Direction::Read, |s| s.recv(buf))
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.source().local_addr()
    }

    /// The address of the peer set by [`connect`](Self::connect).
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.source().peer_addr()
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

//! TCP for green threads: a listener and a stream whose blocking operations
//! park only the calling green thread.

use super::lookup::{ToSocketAddrs, lookup_host};
use super::registration::{Registration, check_timeout};
use super::socket_io;
use crate::runtime::reactor::Direction;
use std::fmt;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

/// Calls `op` with each address `addrs` resolves to (see [`lookup_host`]),
/// until one succeeds; returns the last error otherwise (or an `InvalidInput`
/// one if there was no address at all).
pub(super) fn each_addr<T>(
    addrs: impl ToSocketAddrs,
    mut op: impl FnMut(SocketAddr) -> io::Result<T>,
) -> io::Result<T> {
    let mut last = None;
    for addr in lookup_host(addrs)? {
        match op(addr) {
            Ok(value) => return Ok(value),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to use")))
}

/// How many connections the kernel queues for `accept` (it caps the number at
/// `net.core.somaxconn`). `std` and mio ask for 128, which a burst of clients
/// on loopback overflows before the accepting thread runs.
const LISTEN_BACKLOG: i32 = 1024;

/// A TCP server socket (like [`std::net::TcpListener`]) whose `accept` parks
/// only the calling green thread.
///
/// ```
/// use fibra::net::{TcpListener, TcpStream};
/// use std::io::{Read, Write};
///
/// fibra::run(|| {
///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
///     let addr = listener.local_addr().unwrap();
///     let server = fibra::spawn(move || {
///         let (mut conn, _) = listener.accept().unwrap();
///         let mut buf = [0; 5];
///         conn.read_exact(&mut buf).unwrap();
///         conn.write_all(&buf).unwrap(); // echo
///     });
///     let mut client = TcpStream::connect(addr).unwrap();
///     client.write_all(b"hello").unwrap();
///     let mut back = [0; 5];
///     client.read_exact(&mut back).unwrap();
///     assert_eq!(&back, b"hello");
///     server.join().unwrap();
/// });
/// ```
pub struct TcpListener {
    inner: Registration<mio::net::TcpListener>,
}

impl TcpListener {
    /// Binds to the first of `addr`'s addresses that works, with `SO_REUSEADDR`
    /// (as `std` does) and a listen backlog of 1,024. A host name is resolved
    /// by [`lookup_host`](super::lookup_host), parking only the calling green
    /// thread.
    ///
    /// # Panics
    ///
    /// Outside a runtime (as every constructor of this module).
    pub fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
        each_addr(addr, |addr| {
            let domain = socket2::Domain::for_address(addr);
            let socket = socket2::Socket::new(domain, socket2::Type::STREAM, None)?;
            socket.set_reuse_address(true)?;
            socket.bind(&addr.into())?;
            socket.listen(LISTEN_BACKLOG)?;
            TcpListener::from_std(socket.into())
        })
    }

    /// Takes over a listener made with `std` (for example one handed over from
    /// another OS thread), making it non-blocking.
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        TcpListener::from_mio(mio::net::TcpListener::from_std(listener))
    }

    fn from_mio(listener: mio::net::TcpListener) -> io::Result<TcpListener> {
        Ok(TcpListener {
            inner: Registration::new(listener)?,
        })
    }

    /// Waits for a connection and returns it with the peer's address.
    ///
    /// # Errors
    ///
    /// The socket's error, or `TimedOut` if a [read
    /// timeout](Self::set_read_timeout) is set and no connection came in time.
    pub fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (stream, addr) = self.inner.io(Direction::Read, |l| l.accept())?;
        Ok((TcpStream::from_mio(stream)?, addr))
    }

    /// Waits for a connection and returns it as a `std` stream, not registered
    /// with this runtime: the way to hand a connection to another OS thread
    /// (a Ractor, say), where [`TcpStream::from_std`] takes it over. It is
    /// non-blocking.
    pub fn accept_std(&self) -> io::Result<(std::net::TcpStream, SocketAddr)> {
        let (stream, addr) = self.inner.io(Direction::Read, |l| l.accept())?;
        Ok((stream.into(), addr))
    }

    /// An endless iterator of accepted connections (as
    /// [`std::net::TcpListener::incoming`]).
    pub fn incoming(&self) -> impl Iterator<Item = io::Result<TcpStream>> + '_ {
        std::iter::repeat_with(move || self.accept().map(|(stream, _)| stream))
    }

    /// The address the listener is bound to (with the port the system chose, if
    /// it was bound to port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.source().local_addr()
    }

    /// Bounds how long [`accept`](Self::accept) (and
    /// [`accept_std`](Self::accept_std), [`incoming`](Self::incoming)) waits
    /// for a connection (`None`, the default: forever); one that waits longer
    /// fails with `ErrorKind::TimedOut`. A listener's read is its accept:
    /// the kernel's `SO_RCVTIMEO` bounds a blocking `accept` the same way.
    /// The timeout applies to each call, as [`TcpStream`]'s do.
    ///
    /// ```
    /// use fibra::net::TcpListener;
    /// use std::io::ErrorKind;
    /// use std::time::Duration;
    ///
    /// fibra::run(|| {
    ///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    ///     listener.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
    ///     let err = listener.accept().unwrap_err(); // nobody connects
    ///     assert_eq!(err.kind(), ErrorKind::TimedOut);
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`, as `std`'s setters.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_timeout(Direction::Read, timeout)
    }

    /// The accept timeout set by [`set_read_timeout`](Self::set_read_timeout).
    pub fn read_timeout(&self) -> io::Result<Option<Duration>> {
        Ok(self.inner.timeout(Direction::Read))
    }

    /// The pending error on the socket, if any (clearing it).
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.source().take_error()
    }
}

impl TcpListener {
    pub(super) fn registration(&self) -> &Registration<mio::net::TcpListener> {
        &self.inner
    }
}

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpListener")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

/// A TCP connection (like [`std::net::TcpStream`]) whose reads, writes and
/// connect park only the calling green thread. It implements [`Read`] and
/// [`Write`], also through a shared reference, so that one green thread can read
/// while another writes.
pub struct TcpStream {
    inner: Registration<mio::net::TcpStream>,
}

impl TcpStream {
    /// Connects to the first of `addr`'s addresses that accepts. A host name
    /// (`"example.com:80"`, `("example.com", 80)`) is resolved by
    /// [`lookup_host`](super::lookup_host) on the blocking pool, parking only
    /// the calling green thread; a numeric address is used as it is.
    ///
    /// ```
    /// use fibra::net::{TcpListener, TcpStream};
    ///
    /// fibra::run(|| {
    ///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    ///     let port = listener.local_addr().unwrap().port();
    ///     let stream = TcpStream::connect(("localhost", port)).unwrap();
    ///     assert_eq!(stream.peer_addr().unwrap().port(), port);
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// The resolver's error, or the connection error of the last address
    /// tried, for example `ConnectionRefused`.
    pub fn connect(addr: impl ToSocketAddrs) -> io::Result<TcpStream> {
        each_addr(addr, |addr| {
            let stream = TcpStream::from_mio(mio::net::TcpStream::connect(addr)?)?;
            stream.wait_connected()?;
            Ok(stream)
        })
    }

    /// Connects to `addr`, waiting at most `timeout` for the connection to be
    /// made (as [`std::net::TcpStream::connect_timeout`]); only the calling
    /// green thread waits. The stream that comes back has no write timeout.
    ///
    /// ```
    /// use fibra::net::{TcpListener, TcpStream};
    /// use std::time::Duration;
    ///
    /// fibra::run(|| {
    ///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    ///     let addr = listener.local_addr().unwrap();
    ///     let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    ///     assert_eq!(stream.peer_addr().unwrap(), addr);
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// `TimedOut` if the connection was not made in time; `InvalidInput` for
    /// a zero `timeout`, as `std` does; else the connection error.
    pub fn connect_timeout(addr: &SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
        check_timeout(Some(timeout))?;
        let stream = TcpStream::from_mio(mio::net::TcpStream::connect(*addr)?)?;
        stream.inner.set_timeout(Direction::Write, Some(timeout))?;
        stream.wait_connected()?;
        stream.inner.set_timeout(Direction::Write, None)?;
        Ok(stream)
    }

    /// Waits until a connect started by mio has been made, or has failed.
    fn wait_connected(&self) -> io::Result<()> {
        // The connection is made (or has failed) when the socket becomes
        // writable; until then `peer_addr` says "not connected".
        self.inner.io(Direction::Write, |s| {
            if let Some(err) = s.take_error()? {
                return Err(err);
            }
            match s.peer_addr() {
                Ok(_) => Ok(()),
                Err(err) if err.kind() == io::ErrorKind::NotConnected => {
                    Err(io::ErrorKind::WouldBlock.into())
                }
                Err(err) => Err(err),
            }
        })
    }

    /// Takes over a connected stream made with `std` (for example one handed
    /// over from another OS thread), making it non-blocking.
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        TcpStream::from_mio(mio::net::TcpStream::from_std(stream))
    }

    fn from_mio(stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            inner: Registration::new_stream(stream)?,
        })
    }

    /// The address of the remote end.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.source().peer_addr()
    }

    /// The address of this end.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.source().local_addr()
    }

    /// Shuts down the read half, the write half, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.inner.source().shutdown(how)
    }

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes).
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.source().set_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.source().nodelay()
    }

    /// Bounds how long a read may wait for data (`None`, the default: forever);
    /// a read that waits longer fails with `ErrorKind::TimedOut` (`std` says
    /// `WouldBlock` on Unix; a green thread never sees that). The timeout
    /// applies to each call; setting it is cheap (no system call), so a caller
    /// that wants a deadline across calls sets the time left before each one.
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

    /// Bounds how long a write (or connect's wait) may wait for room in the
    /// socket's buffer; as [`set_read_timeout`](Self::set_read_timeout).
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

    /// Reads without consuming (as [`std::net::TcpStream::peek`]).
    pub fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner
            .receive(&mut [IoSliceMut::new(buf)], true, |s, bufs| {
                socket_io::peek(s, &mut bufs[0])
            })
    }

    /// The pending error on the socket, if any (clearing it).
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.source().take_error()
    }
}

impl Read for &TcpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner
            .receive(&mut [IoSliceMut::new(buf)], false, |s, bufs| {
                socket_io::recv(s, &mut bufs[0])
            })
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        self.inner
            .receive(bufs, false, |s, bufs| socket_io::recv_vectored(s, bufs))
    }
}

impl Write for &TcpStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.io(Direction::Write, |s| socket_io::send(s, buf))
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.inner
            .io(Direction::Write, |s| socket_io::send_vectored(s, bufs))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TcpStream {
    pub(super) fn registration(&self) -> &Registration<mio::net::TcpStream> {
        &self.inner
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

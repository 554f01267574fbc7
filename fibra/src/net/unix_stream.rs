//! Unix domain stream sockets for green threads: a listener and a stream
//! whose blocking operations park only the calling green thread.

use super::socket_io;
use crate::io::Async;
use std::fmt;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// A Unix domain socket server (like [`std::os::unix::net::UnixListener`])
/// whose `accept` parks only the calling green thread.
///
/// ```
/// use fibra::net::{UnixListener, UnixStream};
/// use std::io::{Read, Write};
///
/// let path = std::env::temp_dir().join(format!("fibra-echo-{}.sock", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// fibra::run(move || {
///     let listener = UnixListener::bind(&path).unwrap();
///     let server = fibra::spawn(move || {
///         let (mut conn, _) = listener.accept().unwrap();
///         let mut buf = [0; 5];
///         conn.read_exact(&mut buf).unwrap();
///         conn.write_all(&buf).unwrap(); // echo
///     });
///     let mut client = UnixStream::connect(&path).unwrap();
///     client.write_all(b"hello").unwrap();
///     let mut back = [0; 5];
///     client.read_exact(&mut back).unwrap();
///     assert_eq!(&back, b"hello");
///     server.join().unwrap();
///     std::fs::remove_file(&path).unwrap(); // a socket's file outlives it, as with std
/// });
/// ```
pub struct UnixListener {
    inner: Async<mio::net::UnixListener>,
}

impl UnixListener {
    /// Binds to the socket file `path` (which must not exist yet) and listens,
    /// with the system's largest backlog (`SOMAXCONN`).
    ///
    /// # Panics
    ///
    /// Outside a runtime (as every constructor of this module).
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        UnixListener::from_mio(mio::net::UnixListener::bind(path)?)
    }

    /// Takes over a listener made with `std` (for example one handed over
    /// from another OS thread), making it non-blocking.
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        UnixListener::from_mio(mio::net::UnixListener::from_std(listener))
    }

    /// Deregisters the listener and gives it back as a `std` one (still
    /// non-blocking), to hand to another OS thread or runtime.
    pub fn into_std(self) -> std::os::unix::net::UnixListener {
        self.inner.into_inner().into()
    }

    fn from_mio(listener: mio::net::UnixListener) -> io::Result<UnixListener> {
        Ok(UnixListener {
            inner: Async::from_nonblocking(listener)?,
        })
    }

    /// Waits for a connection and returns it with the peer's address
    /// (usually unnamed: a client need not bind).
    ///
    /// # Errors
    ///
    /// The kernel's, or `TimedOut` after the
    /// [read timeout](Self::set_read_timeout).
    pub fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let (stream, addr) = self.inner.read_with(|l| l.accept())?;
        Ok((UnixStream::from_mio(stream)?, addr))
    }

    /// An endless iterator of accepted connections (as
    /// [`std::os::unix::net::UnixListener::incoming`]).
    pub fn incoming(&self) -> impl Iterator<Item = io::Result<UnixStream>> + '_ {
        std::iter::repeat_with(move || self.accept().map(|(stream, _)| stream))
    }

    /// Bounds how long one [`accept`](Self::accept) may wait for a connection
    /// (`None`, the default: forever); one that waits longer fails with
    /// `ErrorKind::TimedOut`. As [`UnixStream::set_read_timeout`].
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_read_timeout(timeout)
    }

    /// The accept timeout set by [`set_read_timeout`](Self::set_read_timeout).
    pub fn read_timeout(&self) -> io::Result<Option<Duration>> {
        self.inner.read_timeout()
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.get_ref().local_addr()
    }

    /// The pending error on the socket, if any (clearing it).
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.get_ref().take_error()
    }

    pub(super) fn io(&self) -> &Async<mio::net::UnixListener> {
        &self.inner
    }
}

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixListener")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

/// The longest pause between two tries of a connect that found the
/// listener's queue full.
const MAX_CONNECT_PAUSE: Duration = Duration::from_millis(16);

/// A Unix domain stream connection (like [`std::os::unix::net::UnixStream`])
/// whose reads, writes and connect park only the calling green thread. It
/// implements [`Read`] and [`Write`], also through a shared reference, so that
/// one green thread can read while another writes.
///
/// ```
/// use fibra::net::UnixStream;
/// use std::io::{Read, Write};
///
/// fibra::run(|| {
///     let (mut a, b) = UnixStream::pair().unwrap();
///     let peer = fibra::spawn(move || {
///         let mut buf = [0; 4];
///         (&b).read_exact(&mut buf).unwrap();
///         (&b).write_all(&buf).unwrap();
///     });
///     a.write_all(b"ping").unwrap();
///     let mut back = [0; 4];
///     a.read_exact(&mut back).unwrap();
///     assert_eq!(&back, b"ping");
///     peer.join().unwrap();
/// });
/// ```
pub struct UnixStream {
    inner: Async<mio::net::UnixStream>,
}

impl UnixStream {
    /// Connects to the socket at `path`.
    ///
    /// When the listener's queue of connections not yet accepted is full,
    /// Linux refuses at once with `EAGAIN` and offers nothing to wait on;
    /// `connect` then tries again after a pause (1 ms, doubling up to 16 ms),
    /// parking only the calling green thread, for as long as it takes — as
    /// `std`'s blocking connect waits.
    ///
    /// # Errors
    ///
    /// The connection error: `NotFound` for no socket at `path`,
    /// `ConnectionRefused` for one nobody listens on.
    pub fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        let path = path.as_ref();
        let mut pause = Duration::from_millis(1);
        let stream = loop {
            match mio::net::UnixStream::connect(path) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    crate::time::sleep(pause);
                    pause = (pause * 2).min(MAX_CONNECT_PAUSE);
                }
                outcome => break UnixStream::from_mio(outcome?)?,
            }
        };
        // Where the connection is still being made (`EINPROGRESS`), it is
        // made, or has failed, when the socket becomes writable.
        stream.inner.write_with(|s| {
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
        })?;
        Ok(stream)
    }

    /// A pair of connected sockets (as
    /// [`std::os::unix::net::UnixStream::pair`]), both in this runtime.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = mio::net::UnixStream::pair()?;
        Ok((UnixStream::from_mio(a)?, UnixStream::from_mio(b)?))
    }

    /// Takes over a connected stream made with `std` (for example one handed
    /// over from another OS thread), making it non-blocking.
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        UnixStream::from_mio(mio::net::UnixStream::from_std(stream))
    }

    /// Deregisters the stream and gives it back as a `std` one (still
    /// non-blocking: call `set_nonblocking(false)` on it for blocking use),
    /// to hand to another OS thread or runtime.
    pub fn into_std(self) -> std::os::unix::net::UnixStream {
        self.inner.into_inner().into()
    }

    fn from_mio(stream: mio::net::UnixStream) -> io::Result<UnixStream> {
        Ok(UnixStream {
            inner: Async::from_nonblocking(stream)?,
        })
    }

    /// The address of the remote end.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.get_ref().peer_addr()
    }

    /// The address of this end.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.get_ref().local_addr()
    }

    /// Shuts down the read half, the write half, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.inner.get_ref().shutdown(how)
    }

    /// Bounds how long a read may wait for data (`None`, the default:
    /// forever); a read that waits longer fails with `ErrorKind::TimedOut`
    /// (`std` says `WouldBlock`; a green thread never sees that). The timeout
    /// applies to each call; setting it is cheap (no system call).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for `Some(Duration::ZERO)`, as `std` does.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_read_timeout(timeout)
    }

    /// The read timeout set by [`set_read_timeout`](Self::set_read_timeout).
    pub fn read_timeout(&self) -> io::Result<Option<Duration>> {
        self.inner.read_timeout()
    }

    /// Bounds how long a write (or connect's wait) may wait for room in the
    /// socket's buffer; as [`set_read_timeout`](Self::set_read_timeout).
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

    /// The pending error on the socket, if any (clearing it).
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.get_ref().take_error()
    }

    /// A read that filled less than its buffer (and was not end-of-stream)
    /// emptied the socket: the next read waits for the reactor instead of
    /// first failing with `WouldBlock` (as `TcpStream`'s reads do).
    fn after_read(&self, read: usize, room: usize) {
        if read > 0 && read < room {
            self.inner.clear_read_ready();
        }
    }

    pub(super) fn io(&self) -> &Async<mio::net::UnixStream> {
        &self.inner
    }
}

impl Read for &UnixStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self
            .inner
            .read_with_errno(|s| socket_io::recv(s, &mut *buf))?;
        self.after_read(n, buf.len());
        Ok(n)
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        let n = self
            .inner
            .read_with_errno(|s| socket_io::recv_vectored(s, &mut *bufs))?;
        self.after_read(n, bufs.iter().map(|b| b.len()).sum());
        Ok(n)
    }
}

impl Write for &UnixStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write_with_errno(|s| socket_io::send(s, buf))
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.inner
            .write_with_errno(|s| socket_io::send_vectored(s, bufs))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

//! Taking a connection over from HTTP (`101 Switching Protocols`, RFC 9110
//! §7.8): [`Request::upgrade`], the [`Upgraded`] stream it hands over, and
//! the [`UpgradeError`] for a request that did not ask.

use crate::{Request, Response, Version};
use bytes::Bytes;
use fibra::net::TcpStream;
use std::cell::RefCell;
use std::fmt;
use std::io::{self, Read, Write};
use std::time::Duration;

/// What a handler's upgrade runs once the `101` is sent: see
/// [`Request::upgrade`].
pub(crate) type OnUpgrade = dyn FnOnce(Upgraded);

impl Request {
    /// Answers this request by switching its connection to `protocol`
    /// (`"websocket"`, …): returns the `101 Switching Protocols` response to
    /// send, and once the server has sent it, it calls `then` on the
    /// connection's green thread with the connection as an [`Upgraded`]
    /// stream, which `then` owns from then on. The connection leaves HTTP for
    /// good: when `then` returns (or panics), it closes.
    ///
    /// The handler may add headers to the response (a WebSocket handshake's
    /// `Sec-WebSocket-Accept`); the server sends `Connection: upgrade` and
    /// the `Upgrade: protocol` header that this sets. Any bytes the client
    /// sent after the request (the new protocol's first, pipelined behind the
    /// request) are read first from the stream. It works alike over TCP and
    /// TLS, in both modes and with per-worker handlers.
    ///
    /// A request's body, if it has one, is read before `then` runs (a
    /// [`streaming`](crate::streaming) handler must read it to its end, or
    /// the client gets `500` instead of the switch). If the response's status
    /// is changed from `101` (by a middleware, say), no switch happens: the
    /// response is sent as it is, with no body, and `then` is dropped
    /// unrun. A `101` made another way (`Response::new(101)`) gets the
    /// client `500`: only this method switches a connection.
    ///
    /// **Shutdown.** An upgraded connection has no request in flight that
    /// could end: a graceful shutdown cancels it when it begins, as it
    /// closes connections idle between requests. `then` unwinds where it
    /// waits — its destructors run — and the socket closes. While it runs,
    /// the connection still counts as one of its worker's (a ractors-mode
    /// server gives new connections to the Ractor serving the fewest).
    ///
    /// ```no_run
    /// use fibra_http::{Request, Response, Router, Server};
    /// use std::io;
    ///
    /// // A line protocol after the switch: everything sent comes back.
    /// let router = Router::new().get("/echo", |request: &Request| {
    ///     request
    ///         .upgrade("echo", |stream| {
    ///             let _ = io::copy(&mut &stream, &mut &stream);
    ///         })
    ///         .unwrap_or_else(Response::from) // 426 if the client did not ask
    /// });
    /// Server::bind("127.0.0.1:8080")?.serve(router)?;
    /// # Ok::<(), io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// An [`UpgradeError`], which converts into a `426 Upgrade Required`
    /// response, if the request did not ask to switch to `protocol`: it is
    /// not HTTP/1.1, it has no `Connection: upgrade`, or its `Upgrade` header
    /// does not name `protocol` (compared without regard to case).
    pub fn upgrade(
        &self,
        protocol: &'static str,
        then: impl FnOnce(Upgraded) + 'static,
    ) -> Result<Response, UpgradeError> {
        let refuse = |why| Err(UpgradeError { protocol, why });
        if self.version() != Version::Http11 {
            return refuse("only an HTTP/1.1 request can switch protocols");
        }
        let listed = |name: &str, wanted: &str| {
            self.headers()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .flat_map(|(_, value)| value.split(|&b| b == b','))
                .any(|token| token.trim_ascii().eq_ignore_ascii_case(wanted.as_bytes()))
        };
        if !listed("connection", "upgrade") {
            return refuse("the request has no `Connection: upgrade`");
        }
        if !listed("upgrade", protocol) {
            return refuse("the request's `Upgrade` header does not offer the protocol");
        }
        let mut response = Response::new(101).with_header("upgrade", protocol);
        response.body = crate::Body::upgrade(Box::new(then));
        Ok(response)
    }
}

/// Why [`Request::upgrade`] refused: the request did not ask to switch to
/// the protocol. It converts into a `426 Upgrade Required` response that
/// names the protocol in its `Upgrade` header (RFC 9110 §15.5.22), with the
/// reason as its plain-text body.
///
/// ```
/// use fibra_http::{Request, Response};
///
/// let plain = Request::from(http::Request::get("/chat").body(Vec::new())?);
/// let refused = plain.upgrade("websocket", |_| {}).unwrap_err();
/// assert_eq!(refused.to_string(), "cannot switch to websocket: the request has no `Connection: upgrade`");
/// let response = Response::from(refused);
/// assert_eq!(response.status(), 426);
/// assert_eq!(response.header("upgrade"), Some("websocket"));
/// # Ok::<(), http::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeError {
    protocol: &'static str,
    why: &'static str,
}

impl UpgradeError {
    /// The protocol the handler would have switched to.
    pub fn protocol(&self) -> &'static str {
        self.protocol
    }
}

impl fmt::Display for UpgradeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot switch to {}: {}", self.protocol, self.why)
    }
}

impl std::error::Error for UpgradeError {}

/// `426 Upgrade Required`, naming the protocol, with the reason.
impl From<UpgradeError> for Response {
    fn from(refused: UpgradeError) -> Response {
        Response::text(format!("{refused}\n"))
            .with_status(426)
            .with_header("upgrade", refused.protocol)
    }
}

/// A connection taken over from HTTP by [`Request::upgrade`]: the client's
/// bytes to read and a way to send, over TCP or TLS alike.
///
/// It is a [`Read`] and a [`Write`], also through a shared reference (as
/// fibra's [`TcpStream`] is), so one green thread may read while another
/// writes — a WebSocket's reader and the writer that sends it what other
/// clients say: share it in an `Rc`. Each `write` sends all its bytes before
/// another write on the connection begins (writes from several green threads
/// never interleave within one call); one green thread reads at a time.
///
/// Reads wait for as long as it takes (no read timeout, unlike a request's):
/// a protocol with idle connections is the point of switching. Writes fail
/// after the server's [`write_timeout`](crate::Limits::write_timeout) for a
/// client that reads nothing. Both can be changed. It is `!Send`: it stays on
/// the runtime that serves the connection. Dropping it closes the
/// connection (over TLS, after a `close_notify` that tells the client the
/// end is not a cut).
pub struct Upgraded {
    io: Box<dyn Duplex>,
    /// What the server had read past the request, handed over first.
    read_ahead: RefCell<Bytes>,
    /// Held by a write while it sends.
    writing: fibra::sync::Mutex<()>,
}

impl Upgraded {
    pub(crate) fn new(io: Box<dyn Duplex>, read_ahead: Bytes) -> Upgraded {
        Upgraded {
            io,
            read_ahead: RefCell::new(read_ahead),
            writing: fibra::sync::Mutex::new(()),
        }
    }

    /// Bounds how long one read waits for the client (`None`, the default:
    /// forever); past it, the read fails with `TimedOut`.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a zero duration, as `std` does.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.io.tcp().set_read_timeout(timeout)
    }

    /// Bounds how long one write waits for the client to take its bytes
    /// (`None`: forever).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a zero duration, as `std` does.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.io.tcp().set_write_timeout(timeout)
    }

    /// Whether this connection is HTTPS (a TLS session under the new
    /// protocol).
    pub fn is_tls(&self) -> bool {
        self.io.is_tls()
    }
}

impl Read for &Upgraded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        {
            let mut ahead = self.read_ahead.borrow_mut();
            if !ahead.is_empty() {
                let n = ahead.len().min(buf.len());
                buf[..n].copy_from_slice(&ahead.split_to(n));
                return Ok(n);
            }
        }
        self.io.receive(buf, &self.writing)
    }
}

impl Write for &Upgraded {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let _writing = self.writing.lock();
        self.io.send_all(data)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for Upgraded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self).read(buf)
    }
}

impl Write for Upgraded {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        (&*self).write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl fmt::Debug for Upgraded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upgraded")
            .field("tls", &self.is_tls())
            .field("read_ahead", &self.read_ahead.borrow().len())
            .finish_non_exhaustive()
    }
}

/// A connection's transport once upgraded, used through a shared reference:
/// a read may wait while a write does. [`Upgraded`] keeps writes one at a
/// time.
pub(crate) trait Duplex {
    /// Reads what the client sends; what the read itself must send (TLS
    /// alerts) is sent holding `writing`.
    fn receive(&self, buf: &mut [u8], writing: &fibra::sync::Mutex<()>) -> io::Result<usize>;
    /// Sends all of `data`; the caller holds the lock that `receive` is
    /// given.
    fn send_all(&self, data: &[u8]) -> io::Result<()>;
    /// The TCP connection underneath, for its timeouts.
    fn tcp(&self) -> &TcpStream;
    fn is_tls(&self) -> bool {
        false
    }
}

impl Duplex for TcpStream {
    fn receive(&self, buf: &mut [u8], _: &fibra::sync::Mutex<()>) -> io::Result<usize> {
        let mut tcp = self;
        tcp.read(buf)
    }

    fn send_all(&self, data: &[u8]) -> io::Result<()> {
        let mut tcp = self;
        tcp.write_all(data)
    }

    fn tcp(&self) -> &TcpStream {
        self
    }
}

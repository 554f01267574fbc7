//! How much a client may send and how long it may take: the bounds that keep
//! one bad or slow client from costing more than its own connection.

use std::time::Duration;

/// The bounds a server puts on each connection. Each one, when passed, has a
/// defined outcome: a status code and a closed connection (or, for an idle
/// keep-alive connection, just the close).
///
/// ```
/// use fibra_http::Limits;
/// use std::time::Duration;
///
/// let limits = Limits {
///     max_body_bytes: 16 << 20,
///     request_timeout: Duration::from_secs(5),
///     ..Limits::default()
/// };
/// # let _ = limits;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The request line and headers together, in bytes; more is answered
    /// `431 Request Header Fields Too Large`, or `414 URI Too Long` when the
    /// request line alone is longer. Default 16 KiB.
    pub max_head_bytes: usize,
    /// The number of header fields; more is answered `431`. Default 64, at
    /// most [`Limits::MAX_HEADERS`].
    pub max_headers: usize,
    /// The request body, in bytes (after chunked decoding); more is answered
    /// `413 Content Too Large`. The body's buffer grows as its bytes arrive,
    /// not by the length announced. Default 1 MiB.
    pub max_body_bytes: usize,
    /// How long a request's head may take to arrive from its first byte, and
    /// how long each read of its body may wait for data; past it the client
    /// gets `408 Request Timeout` (this is what ends a slowloris client).
    /// Over HTTPS it also bounds the handshake, and a TLS record begun
    /// between requests: one not whole by then closes the connection.
    /// Default 10 s.
    pub request_timeout: Duration,
    /// How long a whole request, head and body, may take to arrive from its
    /// first byte, however steadily it comes; past it the client gets `408`.
    /// This ends a client that trickles a large body a byte at a time, each
    /// within `request_timeout` of the last. The handler's time does not
    /// count. Default 60 s (a 1 MiB body at about 17 KiB/s).
    pub whole_request_timeout: Duration,
    /// How long a keep-alive connection may sit idle between requests before
    /// it is closed (quietly: no request is in flight). Default 60 s.
    pub keep_alive_timeout: Duration,
    /// How long one write of a response may wait for the client to read;
    /// past it the connection is closed. Default 30 s.
    pub write_timeout: Duration,
}

impl Limits {
    /// The most header fields a request may have, whatever `max_headers` says:
    /// the parser's table of fields lives on the connection's stack.
    pub const MAX_HEADERS: usize = 128;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_head_bytes: 16 << 10,
            max_headers: 64,
            max_body_bytes: 1 << 20,
            request_timeout: Duration::from_secs(10),
            whole_request_timeout: Duration::from_secs(60),
            keep_alive_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(30),
        }
    }
}

//! A response as a handler builds it.

use crate::BodyWriter;
use crate::status;
use crate::upgrade::OnUpgrade;
use bytes::Bytes;
use http::StatusCode;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use std::borrow::Cow;
use std::fmt;
use std::io::{self, Read};

/// An HTTP response: a status, headers and a body.
///
/// The server frames it: it adds `Content-Length` for a body of bytes, or
/// sends a streamed body chunked (to an HTTP/1.0 client, which knows no
/// chunked coding, as it is, closing the connection after it), and it adds `Date` and, when the connection
/// ends after this response, `Connection: close`. Framing headers a handler
/// sets (`Content-Length`, `Transfer-Encoding`) are not sent; a handler that
/// sets `Connection: close` gets the connection closed after the response.
///
/// The status and headers are the [`http`] crate's [`StatusCode`] and
/// [`HeaderMap`] (see [`headers_mut`](Self::headers_mut)), so a response
/// converts to and from [`http::Response`] without copying anything (see
/// [`http_handler`](crate::http_handler)). Header names are sent in lower
/// case, as the `HeaderMap` keeps them.
///
/// ```
/// use fibra_http::Response;
///
/// let created = Response::new(201)
///     .with_header("location", "/items/7")
///     .with_body("created\n");
/// assert_eq!(created.status(), 201);
/// assert_eq!(created.header("Location"), Some("/items/7"));
/// ```
pub struct Response {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Body,
}

/// A response body: bytes, a reader streamed to the client chunked, or a
/// closure that writes the body as it goes ([`Body::writer`]).
///
/// Bytes are held as a [`Bytes`], which every conversion here takes over
/// without copying: a `Vec<u8>` or `String` hands over its buffer, a
/// `&'static` one is pointed to.
pub struct Body(Content);

pub(crate) enum Content {
    Bytes(Bytes),
    Stream(Box<dyn Read>),
    Writer(Box<WriteBody>),
    /// No body: the connection switches protocols ([`Request::upgrade`]).
    ///
    /// [`Request::upgrade`]: crate::Request::upgrade
    Upgrade(Box<OnUpgrade>),
}

/// What [`Body::writer`] runs.
pub(crate) type WriteBody = dyn FnOnce(&mut BodyWriter<'_>) -> io::Result<()>;

impl Body {
    /// A body streamed from `reader` until it reports the end, sent with
    /// chunked framing (its length need not be known). An HTTP/1.0 client
    /// knows no chunked coding: it gets the body as it is, and the close of
    /// the connection after it marks its end (RFC 9112 §6.1, §6.3). A read
    /// error ends the connection, since the status has already been sent.
    ///
    /// What the reader gives is gathered and sent 64 KiB at a time (and at
    /// its end), which suits a large body: a body whose pieces must reach
    /// the client as they are made (events, progress) is a
    /// [`Body::writer`], which flushes.
    pub fn stream(reader: impl Read + 'static) -> Body {
        Body(Content::Stream(Box::new(reader)))
    }

    /// A body that `write` writes as it goes, its pieces reaching the client
    /// as it [flushes](std::io::Write::flush) them: for server-sent events
    /// (see [`Response::sse`]), long polling, progress output.
    ///
    /// The handler returns at once with the status and headers; the server
    /// sends them, then runs `write` on the connection's green thread with a
    /// [`BodyWriter`] on the connection. `write` may block in fibra's
    /// operations (sleep, channels, sockets) between its writes, as a
    /// handler may; a slow client parks it in its writes (back-pressure), and
    /// a client that has gone makes them fail, which `write` returns with `?`
    /// to end. Its `Ok` ends the body; its `Err` (or a panic) closes the
    /// connection without the body's end, so that the client knows it is
    /// incomplete. For a `HEAD` request, or a status that has no body, it is
    /// not run.
    ///
    /// It runs on the connection's own green thread rather than on one of
    /// its own: the socket itself is the back-pressure, with no queue between
    /// writer and client to grow, and its state need not be `Send`.
    ///
    /// ```no_run
    /// use fibra_http::{Body, Request, Response, Router, Server};
    /// use std::io::Write;
    /// use std::time::Duration;
    ///
    /// let router = Router::new().get("/countdown", |_: &Request| {
    ///     Response::text(Body::writer(|out| {
    ///         for n in (1..=3).rev() {
    ///             writeln!(out, "{n}…")?;
    ///             out.flush()?; // the client sees this line now
    ///             fibra::time::sleep(Duration::from_secs(1));
    ///         }
    ///         writeln!(out, "lift-off")
    ///     }))
    /// });
    /// Server::bind("127.0.0.1:8080")?.serve(router)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn writer(write: impl FnOnce(&mut BodyWriter<'_>) -> io::Result<()> + 'static) -> Body {
        Body(Content::Writer(Box::new(write)))
    }

    /// The body, if it is bytes (not a stream); empty for the answer to an
    /// upgrade.
    pub fn as_bytes(&self) -> Option<&Bytes> {
        static NONE: Bytes = Bytes::new();
        match &self.0 {
            Content::Bytes(bytes) => Some(bytes),
            Content::Upgrade(_) => Some(&NONE),
            Content::Stream(_) | Content::Writer(_) => None,
        }
    }

    pub(crate) fn upgrade(then: Box<OnUpgrade>) -> Body {
        Body(Content::Upgrade(then))
    }

    /// Whether this is the answer to an upgrade.
    pub(crate) fn is_upgrade(&self) -> bool {
        matches!(self.0, Content::Upgrade(_))
    }

    pub(crate) fn into_content(self) -> Content {
        self.0
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Body {
        Body(Content::Bytes(bytes))
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Body {
        Body::from(Bytes::from_static(text.as_bytes()))
    }
}

impl From<String> for Body {
    fn from(text: String) -> Body {
        Body::from(Bytes::from(text))
    }
}

impl From<&'static [u8]> for Body {
    fn from(bytes: &'static [u8]) -> Body {
        Body::from(Bytes::from_static(bytes))
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Body {
        Body::from(Bytes::from(bytes))
    }
}

/// No body, as in `http::Response<()>`.
impl From<()> for Body {
    fn from((): ()) -> Body {
        Body::from(Bytes::new())
    }
}

/// A response with this status and an empty body.
impl From<StatusCode> for Response {
    #[inline]
    fn from(status: StatusCode) -> Response {
        Response {
            status,
            headers: crate::header_maps::take(),
            body: Body::from(()),
        }
    }
}

impl Response {
    /// A response with `status` and an empty body (an [`http::StatusCode`]
    /// converts too: `Response::from(StatusCode::CREATED)`).
    ///
    /// # Panics
    ///
    /// If `status` is not a three-digit code (100–999). A handler that panics
    /// gets its client a `500`.
    #[inline]
    pub fn new(status: u16) -> Response {
        Response::from(status_code(status))
    }

    /// `200 OK` with a `text/plain; charset=utf-8` body.
    pub fn text(body: impl Into<Body>) -> Response {
        const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
        Response::typed(TEXT, body.into())
    }

    /// `200 OK` with a `text/html; charset=utf-8` body.
    pub fn html(body: impl Into<Body>) -> Response {
        const HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");
        Response::typed(HTML, body.into())
    }

    /// `200 OK` with an `application/json` body (another status with
    /// [`with_status`](Self::with_status); with the `serde` feature,
    /// `Response::json_value` writes a value as JSON).
    pub fn json(body: impl Into<Body>) -> Response {
        const JSON: HeaderValue = HeaderValue::from_static("application/json");
        Response::typed(JSON, body.into())
    }

    /// Adds a header (a name may be added more than once).
    ///
    /// # Panics
    ///
    /// If `name` is not a header token or `value` holds a control character
    /// (CR or LF would let a value forge headers of its own).
    pub fn with_header(
        mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Cow<'static, str>>,
    ) -> Response {
        let (name, value) = (name.into(), value.into());
        let Ok(header) = HeaderName::from_bytes(name.as_bytes()) else {
            panic!("fibra-http: {name:?} is not a header name");
        };
        // Taken over, not copied: a `&'static str` is pointed to, a `String`
        // hands over its buffer.
        let bytes = match value {
            Cow::Borrowed(value) => Bytes::from_static(value.as_bytes()),
            Cow::Owned(value) => Bytes::from(value),
        };
        let Ok(value) = HeaderValue::from_maybe_shared(bytes) else {
            panic!("fibra-http: the value of header {name} holds a control character");
        };
        self.headers.append(header, value);
        self
    }

    /// `200 OK` with a `Content-Type` made at compile time: for the typed
    /// constructors, which so skip [`with_header`](Self::with_header)'s
    /// checks of a name and value known to be valid, and build the response
    /// in place.
    #[inline]
    fn typed(content_type: HeaderValue, body: Body) -> Response {
        Response {
            status: StatusCode::OK,
            headers: crate::header_maps::take_typed(content_type),
            body,
        }
    }

    /// Replaces the body.
    pub fn with_body(mut self, body: impl Into<Body>) -> Response {
        self.body = body.into();
        self
    }

    /// Replaces the status, keeping the headers and body: for a `201` or a
    /// `404` with a body typed by [`text`](Self::text),
    /// [`json`](Self::json) or [`html`](Self::html).
    ///
    /// ```
    /// use fibra_http::Response;
    ///
    /// let created = Response::json(r#"{"id":7}"#).with_status(201);
    /// assert_eq!(created.status(), 201);
    /// assert_eq!(created.header("content-type"), Some("application/json"));
    /// ```
    ///
    /// # Panics
    ///
    /// If `status` is not a three-digit code (100–999), as [`new`](Self::new).
    pub fn with_status(mut self, status: u16) -> Response {
        self.status = status_code(status);
        self
    }

    /// The status code as a number, e.g. `200`.
    pub fn status(&self) -> u16 {
        self.status.as_u16()
    }

    /// The status code as the `http` crate's type.
    pub fn status_code(&self) -> StatusCode {
        self.status
    }

    /// The first header called `name` (compared without regard to case), if
    /// it is UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        std::str::from_utf8(self.headers.get(name)?.as_bytes()).ok()
    }

    /// Every header, as the `http` crate's map.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The headers, to change with the `http` crate's API (typed names,
    /// values checked for control characters as they are made).
    ///
    /// ```
    /// use fibra_http::Response;
    /// use fibra_http::http::header::{CACHE_CONTROL, HeaderValue};
    ///
    /// let mut response = Response::text("cached\n");
    /// response
    ///     .headers_mut()
    ///     .insert(CACHE_CONTROL, HeaderValue::from_static("max-age=60"));
    /// assert_eq!(response.header("cache-control"), Some("max-age=60"));
    /// ```
    pub fn headers_mut(&mut self) -> &mut HeaderMap {
        &mut self.headers
    }

    /// The body, if it is bytes (not a stream).
    pub fn body_bytes(&self) -> Option<&[u8]> {
        self.body.as_bytes().map(|bytes| &bytes[..])
    }

    /// Whether the handler asked for the connection to close after this.
    pub(crate) fn wants_close(&self) -> bool {
        // A look at each name (a walk over a slice) costs less than hashing
        // one for the few headers a response has; the values are looked up
        // only where the handler set a `Connection`.
        self.headers.keys().any(|name| name == header::CONNECTION)
            && (self.headers.get_all(header::CONNECTION).iter()).any(|value| {
                (value.as_bytes().split(|&b| b == b','))
                    .any(|option| option.trim_ascii().eq_ignore_ascii_case(b"close"))
            })
    }

    /// Writes the status line and headers, ending with the blank line. The
    /// caller says how the body is framed.
    pub(crate) fn write_head(&self, out: &mut Vec<u8>, framing: Framing, keep_alive: KeepAlive) {
        let code = self.status();
        if code == 200 {
            // The most common line: a piece of known length, copied in
            // place, where one from the table takes a call to `memcpy`.
            out.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
        } else if let Some(line) = status::line(code) {
            out.extend_from_slice(line.as_bytes());
        } else {
            // A code without a reason phrase: its three digits (a
            // `StatusCode` is 100–999) go in with the line, as one piece.
            let mut line = *b"HTTP/1.1 000 \r\n";
            for (at, unit) in [(9, 100), (10, 10), (11, 1)] {
                line[at] = b'0' + (code / unit % 10) as u8;
            }
            out.extend_from_slice(&line);
        }
        crate::date::push_field(out);
        for (name, value) in &self.headers {
            if [
                header::CONTENT_LENGTH,
                header::TRANSFER_ENCODING,
                header::CONNECTION,
            ]
            .contains(name)
            {
                continue;
            }
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        match framing {
            Framing::Length(n) => push_content_length(out, n as u64),
            Framing::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
            Framing::UntilClose | Framing::None => {}
        }
        match keep_alive {
            KeepAlive::Close => out.extend_from_slice(b"connection: close\r\n"),
            KeepAlive::Announce => out.extend_from_slice(b"connection: keep-alive\r\n"),
            KeepAlive::Upgrade => out.extend_from_slice(b"connection: upgrade\r\n"),
            KeepAlive::Implied => {}
        }
        out.extend_from_slice(b"\r\n");
    }

    /// The body; the header map is kept for the next response on this
    /// thread (the head has been written).
    pub(crate) fn into_body(self) -> Body {
        crate::header_maps::give_back(self.headers);
        self.body
    }
}

/// How a response body is delimited on the wire.
#[derive(Clone, Copy)]
pub(crate) enum Framing {
    Length(usize),
    Chunked,
    /// A body of unknown length to an HTTP/1.0 client, which knows no
    /// chunked coding: it ends where the connection closes.
    UntilClose,
    /// No body and no length (1xx, 204, 304).
    None,
}

/// What the response says about the connection.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeepAlive {
    /// `Connection: close`: the connection ends after this response.
    Close,
    /// `Connection: keep-alive`, which an HTTP/1.0 client needs to hear.
    Announce,
    /// Nothing: HTTP/1.1 keeps connections open by default.
    Implied,
    /// `Connection: upgrade`: the connection switches protocols.
    Upgrade,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body", &self.body_bytes().map(<[u8]>::len))
            .finish()
    }
}

/// `status` as a status code.
///
/// # Panics
///
/// If it is not a three-digit code (100–999).
#[inline]
fn status_code(status: u16) -> StatusCode {
    match StatusCode::from_u16(status) {
        Ok(status) => status,
        Err(_) => panic!("fibra-http: {status} is not an HTTP status code"),
    }
}

/// Appends the field `content-length: N\r\n`, written as one piece.
pub(crate) fn push_content_length(out: &mut Vec<u8>, n: u64) {
    const NAME: &[u8] = b"content-length: ";
    let mut field = [0u8; NAME.len() + 20 + 2];
    let mut at = field.len() - 2;
    field[at..].copy_from_slice(b"\r\n");
    let mut n = n;
    loop {
        at -= 1;
        field[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    at -= NAME.len();
    field[at..at + NAME.len()].copy_from_slice(NAME);
    out.extend_from_slice(&field[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_lengths() {
        for n in [0u64, 7, 10, 1234567890, u64::MAX] {
            let mut out = Vec::new();
            push_content_length(&mut out, n);
            assert_eq!(out, format!("content-length: {n}\r\n").as_bytes());
        }
    }

    #[test]
    fn status_lines() {
        for (status, line) in [
            (200, "HTTP/1.1 200 OK\r\n"),
            (204, "HTTP/1.1 204 No Content\r\n"),
            (101, "HTTP/1.1 101 Switching Protocols\r\n"),
            (404, "HTTP/1.1 404 Not Found\r\n"),
            (599, "HTTP/1.1 599 \r\n"),
            (999, "HTTP/1.1 999 \r\n"),
        ] {
            let mut out = Vec::new();
            Response::new(status).write_head(&mut out, Framing::None, KeepAlive::Implied);
            assert!(out.starts_with(line.as_bytes()), "{status}");
        }
    }

    #[test]
    fn head_is_framed_by_the_server_not_the_handler() {
        let response = Response::text("hi")
            .with_header("content-length", "99")
            .with_header("x-one", "1");
        let mut out = Vec::new();
        response.write_head(&mut out, Framing::Length(2), KeepAlive::Close);
        let head = String::from_utf8(out).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\ndate: "), "{head}");
        assert!(head.contains("\r\ncontent-type: text/plain; charset=utf-8\r\n"));
        assert!(head.contains("\r\nx-one: 1\r\n"));
        assert!(head.contains("\r\ncontent-length: 2\r\n"));
        assert!(!head.contains("99"));
        assert!(head.ends_with("\r\nconnection: close\r\n\r\n"));
    }

    #[test]
    #[should_panic(expected = "control character")]
    fn a_header_value_cannot_forge_headers() {
        let _ = Response::new(200).with_header("x", "a\r\nset-cookie: b");
    }

    #[test]
    #[should_panic(expected = "not an HTTP status code")]
    fn status_codes_have_three_digits() {
        let _ = Response::new(42);
    }

    #[test]
    #[should_panic(expected = "1000 is not an HTTP status code")]
    fn a_replaced_status_has_three_digits_too() {
        let _ = Response::text("x").with_status(1000);
    }
}

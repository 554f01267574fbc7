//! A response as a handler builds it.

use crate::status;
use std::borrow::Cow;
use std::fmt;
use std::io::Read;

/// An HTTP response: a status, headers and a body.
///
/// The server frames it: it adds `Content-Length` for a body of bytes, or
/// sends a streamed body chunked, and it adds `Date` and, when the connection
/// ends after this response, `Connection: close`. Framing headers a handler
/// sets (`Content-Length`, `Transfer-Encoding`) are not sent; a handler that
/// sets `Connection: close` gets the connection closed after the response.
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
    status: u16,
    headers: Vec<(Cow<'static, str>, Cow<'static, str>)>,
    body: Body,
}

/// A response body: bytes, or a reader streamed to the client chunked.
pub struct Body(Content);

pub(crate) enum Content {
    Bytes(Cow<'static, [u8]>),
    Stream(Box<dyn Read>),
}

impl Body {
    /// A body streamed from `reader` until it reports the end, sent with
    /// chunked framing (its length need not be known). A read error ends the
    /// connection, since the status has already been sent.
    pub fn stream(reader: impl Read + 'static) -> Body {
        Body(Content::Stream(Box::new(reader)))
    }

    pub(crate) fn into_content(self) -> Content {
        self.0
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Body {
        Body(Content::Bytes(Cow::Borrowed(text.as_bytes())))
    }
}

impl From<String> for Body {
    fn from(text: String) -> Body {
        Body(Content::Bytes(Cow::Owned(text.into_bytes())))
    }
}

impl From<&'static [u8]> for Body {
    fn from(bytes: &'static [u8]) -> Body {
        Body(Content::Bytes(Cow::Borrowed(bytes)))
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Body {
        Body(Content::Bytes(Cow::Owned(bytes)))
    }
}

impl Response {
    /// A response with `status` and an empty body.
    ///
    /// # Panics
    ///
    /// If `status` is not a three-digit code (100–999). A handler that panics
    /// gets its client a `500`.
    pub fn new(status: u16) -> Response {
        assert!(
            (100..=999).contains(&status),
            "fibra-http: {status} is not an HTTP status code"
        );
        Response {
            status,
            headers: Vec::new(),
            body: Body::from(&b""[..]),
        }
    }

    /// `200 OK` with a `text/plain; charset=utf-8` body.
    pub fn text(body: impl Into<Body>) -> Response {
        Response::new(200)
            .with_header("content-type", "text/plain; charset=utf-8")
            .with_body(body)
    }

    /// `200 OK` with a `text/html; charset=utf-8` body.
    pub fn html(body: impl Into<Body>) -> Response {
        Response::new(200)
            .with_header("content-type", "text/html; charset=utf-8")
            .with_body(body)
    }

    /// `200 OK` with an `application/json` body.
    pub fn json(body: impl Into<Body>) -> Response {
        Response::new(200)
            .with_header("content-type", "application/json")
            .with_body(body)
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
        assert!(
            !name.is_empty() && name.bytes().all(is_token),
            "fibra-http: {name:?} is not a header name"
        );
        assert!(
            value
                .bytes()
                .all(|b| b == b'\t' || (b >= b' ' && b != 0x7f)),
            "fibra-http: the value of header {name} holds a control character"
        );
        self.headers.push((name, value));
        self
    }

    /// Replaces the body.
    pub fn with_body(mut self, body: impl Into<Body>) -> Response {
        self.body = body.into();
        self
    }

    pub fn status(&self) -> u16 {
        self.status
    }

    /// The first header called `name` (compared without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }

    /// The body, if it is bytes (not a stream).
    pub fn body_bytes(&self) -> Option<&[u8]> {
        match &self.body.0 {
            Content::Bytes(bytes) => Some(bytes),
            Content::Stream(_) => None,
        }
    }

    /// Whether the handler asked for the connection to close after this.
    pub(crate) fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")))
    }

    /// Writes the status line and headers, ending with the blank line. The
    /// caller says how the body is framed.
    pub(crate) fn write_head(&self, out: &mut Vec<u8>, framing: Framing, keep_alive: KeepAlive) {
        out.extend_from_slice(b"HTTP/1.1 ");
        push_decimal(out, self.status as u64);
        out.push(b' ');
        out.extend_from_slice(status::reason(self.status).as_bytes());
        out.extend_from_slice(b"\r\ndate: ");
        crate::date::push_now(out);
        out.extend_from_slice(b"\r\n");
        for (name, value) in &self.headers {
            if ["content-length", "transfer-encoding", "connection"]
                .iter()
                .any(|framing| name.eq_ignore_ascii_case(framing))
            {
                continue;
            }
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        match framing {
            Framing::Length(n) => {
                out.extend_from_slice(b"content-length: ");
                push_decimal(out, n as u64);
                out.extend_from_slice(b"\r\n");
            }
            Framing::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
            Framing::None => {}
        }
        match keep_alive {
            KeepAlive::Close => out.extend_from_slice(b"connection: close\r\n"),
            KeepAlive::Announce => out.extend_from_slice(b"connection: keep-alive\r\n"),
            KeepAlive::Implied => {}
        }
        out.extend_from_slice(b"\r\n");
    }

    pub(crate) fn into_body(self) -> Body {
        self.body
    }
}

/// How a response body is delimited on the wire.
#[derive(Clone, Copy)]
pub(crate) enum Framing {
    Length(usize),
    Chunked,
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

/// Whether `b` may appear in a header name (RFC 9110 `tchar`).
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Appends `n` in decimal.
pub(crate) fn push_decimal(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        for n in [0u64, 7, 10, 1234567890, u64::MAX] {
            let mut out = Vec::new();
            push_decimal(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
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
}

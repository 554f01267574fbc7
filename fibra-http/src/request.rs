//! A request as a handler sees it.
//!
//! The connection keeps one `Request` and refills it for each request it
//! reads: the head's bytes are copied into one buffer and every part of it is
//! a range of that buffer, so a keep-alive connection reads requests without
//! allocating once its buffers have grown to size.

use crate::host;
use std::fmt;
use std::net::SocketAddr;
use std::ops::Range;

/// The HTTP version of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// `HTTP/1.0`: the connection closes after the response unless the client
    /// asked for keep-alive.
    Http10,
    /// `HTTP/1.1` (and any later 1.x): keep-alive unless the client asked to
    /// close.
    Http11,
}

/// An HTTP request: method, target, version, headers and the whole body.
///
/// The body has been read before the handler runs (up to
/// [`Limits::max_body_bytes`](crate::Limits::max_body_bytes)), so it is a
/// byte slice; `&[u8]` implements [`std::io::Read`] for handlers that want a
/// reader:
///
/// ```
/// use fibra_http::{Request, Response};
/// use std::io::Read;
///
/// fn word_count(request: &Request) -> Response {
///     let mut text = String::new();
///     if request.body().read_to_string(&mut text).is_err() {
///         return Response::new(400).with_body("the body is not UTF-8\n");
///     }
///     Response::text(format!("{}\n", text.split_whitespace().count()))
/// }
/// # let _ = word_count;
/// ```
pub struct Request {
    head: Vec<u8>,
    method: Range<usize>,
    /// The whole target, as sent; `authority`, `path` and `query` are parts
    /// of it.
    target: Range<usize>,
    /// The target's authority, in absolute form (or authority form).
    authority: Option<Range<usize>>,
    path: Range<usize>,
    query: Option<Range<usize>>,
    version: Version,
    headers: Vec<(Range<usize>, Range<usize>)>,
    pub(crate) body: Vec<u8>,
    peer: Option<SocketAddr>,
}

impl Request {
    pub(crate) fn new(peer: Option<SocketAddr>) -> Request {
        Request {
            head: Vec::new(),
            method: 0..0,
            target: 0..0,
            authority: None,
            path: 0..0,
            query: None,
            version: Version::Http11,
            headers: Vec::new(),
            body: Vec::new(),
            peer,
        }
    }

    /// Refills this request from a parsed head (`raw` is the bytes the parser
    /// read), dropping the previous request's head and body.
    pub(crate) fn fill(&mut self, raw: &[u8], parsed: &httparse::Request<'_, '_>) {
        self.head.clear();
        self.head.extend_from_slice(raw);
        self.headers.clear();
        let base = raw.as_ptr() as usize;
        // The parser's slices all point into `raw`, so each is a range of it.
        let range = |part: &[u8]| {
            let start = part.as_ptr() as usize - base;
            start..start + part.len()
        };
        self.method = range(parsed.method.unwrap_or_default().as_bytes());
        self.target = range(parsed.path.unwrap_or_default().as_bytes());
        let mut target = self.target.clone();
        self.authority = None;
        if self.method() == "CONNECT" && is_authority_form(&raw[target.clone()]) {
            // Authority form: the whole target is the authority (and, with
            // nothing else in it, the path too).
            self.authority = Some(target.clone());
        } else if let Some(authority) = absolute_form_authority(&raw[target.clone()]) {
            self.authority = Some(target.start + authority.start..target.start + authority.end);
            target.start += authority.end;
        }
        match raw[target.clone()].iter().position(|&b| b == b'?') {
            Some(q) => {
                self.path = target.start..target.start + q;
                self.query = Some(target.start + q + 1..target.end);
            }
            None => {
                self.path = target;
                self.query = None;
            }
        }
        self.version = match parsed.version {
            Some(0) => Version::Http10,
            _ => Version::Http11,
        };
        for header in parsed.headers.iter() {
            self.headers
                .push((range(header.name.as_bytes()), range(header.value)));
        }
        self.body.clear();
        if self.body.capacity() > 64 << 10 {
            self.body.shrink_to(64 << 10);
        }
    }

    fn text(&self, range: &Range<usize>) -> &str {
        // The parser admits only visible ASCII in the method, the target and
        // header names, so this never falls back.
        std::str::from_utf8(&self.head[range.clone()]).unwrap_or_default()
    }

    /// The method, e.g. `GET`.
    pub fn method(&self) -> &str {
        self.text(&self.method)
    }

    /// The target's path, e.g. `/search` for `GET /search?q=fibra`, as sent
    /// (not percent-decoded). For a target in absolute form
    /// (`GET http://example.com/search?q=fibra`, as sent to proxies and
    /// accepted by servers, RFC 9112 §3.2.2) it is the path within it, and
    /// `/` if it has none (the host is [`authority`](Self::authority)); for
    /// `OPTIONS *` it is `*`.
    pub fn path(&self) -> &str {
        match self.text(&self.path) {
            "" => "/",
            path => path,
        }
    }

    /// The target's query, e.g. `q=fibra` for `GET /search?q=fibra`, as sent.
    pub fn query(&self) -> Option<&str> {
        self.query.as_ref().map(|q| self.text(q))
    }

    /// The whole target, as sent: `/search?q=fibra`, or
    /// `http://example.com/search?q=fibra` in absolute form.
    pub fn target(&self) -> &str {
        self.text(&self.target)
    }

    /// The host (and port) the request is for, as sent: the target's
    /// authority if it has one — `example.com:8080` for
    /// `GET http://example.com:8080/search`, or the target of
    /// `CONNECT example.com:443` — else the `Host` header (RFC 9112 §3.2.2:
    /// the target's authority is the one a server uses, whatever `Host`
    /// says). `None` where there is neither (an HTTP/1.0 request without
    /// `Host`, or with an empty one). The server has checked that it is
    /// `host[:port]` (RFC 3986), but not that it names this server.
    ///
    /// ```
    /// use fibra_http::Request;
    ///
    /// let proxied = Request::from(
    ///     http::Request::get("http://example.com:8080/search?q=fibra")
    ///         .header("host", "other.example")
    ///         .body(Vec::new())?,
    /// );
    /// assert_eq!(proxied.authority(), Some("example.com:8080"));
    /// assert_eq!(proxied.path(), "/search");
    /// assert_eq!(proxied.header("host"), Some("other.example"));
    ///
    /// let direct = Request::from(
    ///     http::Request::get("/search").header("host", "example.com").body(Vec::new())?,
    /// );
    /// assert_eq!(direct.authority(), Some("example.com"));
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn authority(&self) -> Option<&str> {
        match &self.authority {
            Some(authority) => Some(self.text(authority)),
            None => self.header("host").map(str::trim).filter(|h| !h.is_empty()),
        }
    }

    /// Whether the target has a form its method may use (RFC 9112 §3.2):
    /// a path (origin form), an absolute URI (`scheme://host[:port]…`),
    /// `*` for `OPTIONS` only, or `host[:port]` for `CONNECT` only.
    pub(crate) fn has_valid_target(&self) -> bool {
        let target = &self.head[self.target.clone()];
        match &self.authority {
            Some(authority) => {
                let authority = &self.head[authority.clone()];
                !authority.is_empty() && host::is_valid(authority)
            }
            None => target.starts_with(b"/") || (target == b"*" && self.method() == "OPTIONS"),
        }
    }

    /// The HTTP version the request was sent with.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The first header called `name` (compared without regard to case), if
    /// it is UTF-8; see [`header_bytes`](Self::header_bytes) for any value.
    pub fn header(&self, name: &str) -> Option<&str> {
        std::str::from_utf8(self.header_bytes(name)?).ok()
    }

    /// The first header called `name` (compared without regard to case).
    pub fn header_bytes(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| self.head[n.clone()].eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, value)| &self.head[value.clone()])
    }

    /// Every header, in the order sent (a repeated name appears repeatedly).
    pub fn headers(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.headers
            .iter()
            .map(|(name, value)| (self.text(name), &self.head[value.clone()]))
    }

    /// The body, decoded from `Content-Length` or chunked framing (empty if
    /// there was none).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The client's address (`None` where the connection has none).
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer
    }
}

/// Whether `target` is in authority form, `host:port` (RFC 9112 §3.2.3).
fn is_authority_form(target: &[u8]) -> bool {
    let port = target.iter().rposition(|&b| b == b':');
    host::is_valid(target) && port.is_some_and(|colon| !target[colon..].contains(&b']'))
}

/// Where the authority of a target in absolute form (`scheme://authority`,
/// then the path and query) is in it; `None` for any other form.
fn absolute_form_authority(target: &[u8]) -> Option<Range<usize>> {
    let colon = target.iter().position(|&b| b == b':')?;
    let (scheme, rest) = target.split_at(colon);
    let is_scheme = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    let after = rest.strip_prefix(b"://").filter(|_| is_scheme)?;
    let len = after
        .iter()
        .position(|&b| b == b'/' || b == b'?')
        .unwrap_or(after.len());
    let start = colon + 3;
    Some(start..start + len)
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method())
            .field("path", &self.path())
            .field("query", &self.query())
            .field("version", &self.version)
            .field("headers", &self.headers.len())
            .field("body", &self.body.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_forms() {
        assert_eq!(absolute_form_authority(b"/a?b"), None);
        assert_eq!(absolute_form_authority(b"*"), None);
        assert_eq!(absolute_form_authority(b"/x://y"), None);
        assert_eq!(absolute_form_authority(b"example.com:443"), None);
        assert_eq!(absolute_form_authority(b"http://x/hello"), Some(7..8));
        assert_eq!(
            absolute_form_authority(b"HTTPS://a.b:8080/p?q"),
            Some(8..16)
        );
        assert_eq!(absolute_form_authority(b"http://x"), Some(7..8));
        assert_eq!(absolute_form_authority(b"http://x?q=1"), Some(7..8));
        assert_eq!(absolute_form_authority(b"1http://x/"), None);
    }

    #[test]
    fn authority_forms() {
        for good in [&b"example.com:443"[..], b"[::1]:8443", b"127.0.0.1:80"] {
            assert!(is_authority_form(good), "{good:?}");
        }
        for bad in [&b"example.com"[..], b"[::1]", b"/x", b"*", b"a b:1", b"a:b"] {
            assert!(!is_authority_form(bad), "{bad:?}");
        }
    }
}

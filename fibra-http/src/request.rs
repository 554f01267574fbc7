//! A request as a handler sees it.
//!
//! The connection keeps one `Request` and refills it for each request it
//! reads: the head's bytes are copied into one buffer and every header name
//! and value is a range of that buffer, the method and the target, which the
//! parser handed over as text, ranges of another, a `String`; so a
//! keep-alive connection reads requests without allocating once its buffers
//! have grown to size, and routing by method and path validates no UTF-8
//! again.

use crate::host;
use crate::params::Params;
use std::borrow::Cow;
use std::cell::RefCell;
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
    /// The head as read: the header names and values are ranges of it.
    head: Vec<u8>,
    /// The target, and a method not in [`known_method`], which the parser
    /// hands over as `&str`: the ranges below are ranges of it, read with no
    /// UTF-8 check, since every request is routed by its method and path.
    text: String,
    method: Method,
    /// The whole target, as sent; `authority`, `path` and `query` are parts
    /// of it.
    target: Range<usize>,
    /// The target's authority, in absolute form (or authority form).
    authority: Option<Range<usize>>,
    path: Range<usize>,
    query: Option<Range<usize>>,
    version: Version,
    /// Each header's name and value, in `head`. A name is a token (ASCII),
    /// as the parser checked: it is compared as bytes, and read as `&str`
    /// only by [`headers`](Self::headers).
    headers: Vec<(Range<usize>, Range<usize>)>,
    pub(crate) body: Vec<u8>,
    peer: Option<SocketAddr>,
    /// The path parameters of the route whose handler runs, set by the
    /// router around that handler (it has only `&Request`).
    params: RefCell<Params>,
}

impl Request {
    pub(crate) fn new(peer: Option<SocketAddr>) -> Request {
        Request {
            head: Vec::new(),
            text: String::new(),
            method: Method::Known("GET"),
            target: 0..0,
            authority: None,
            path: 0..0,
            query: None,
            version: Version::Http11,
            headers: Vec::new(),
            body: Vec::new(),
            peer,
            params: RefCell::default(),
        }
    }

    /// Refills this request from a parsed head (`raw` is the bytes the parser
    /// read), dropping the previous request's head and body.
    pub(crate) fn fill(&mut self, raw: &[u8], parsed: &httparse::Request<'_, '_>) {
        self.head.clear();
        self.head.extend_from_slice(raw);
        self.text.clear();
        self.headers.clear();
        let base = raw.as_ptr() as usize;
        // The parser's slices all point into `raw`, so each is a range of it.
        let range = |part: &[u8]| {
            let start = part.as_ptr() as usize - base;
            start..start + part.len()
        };
        let method = parsed.method.unwrap_or_default();
        self.method = match known_method(method) {
            Some(known) => Method::Known(known),
            None => Method::Other(push_text(&mut self.text, method)),
        };
        self.target = push_text(&mut self.text, parsed.path.unwrap_or_default());
        let mut target = self.target.clone();
        let raw_target = &self.text.as_bytes()[target.clone()];
        self.authority = None;
        if method == "CONNECT" && is_authority_form(raw_target) {
            // Authority form: the whole target is the authority (and, with
            // nothing else in it, the path too).
            self.authority = Some(target.clone());
        } else if let Some(authority) = absolute_form_authority(raw_target) {
            self.authority = Some(target.start + authority.start..target.start + authority.end);
            target.start += authority.end;
        }
        match self.text.as_bytes()[target.clone()]
            .iter()
            .position(|&b| b == b'?')
        {
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
            (self.headers).push((range(header.name.as_bytes()), range(header.value)));
        }
        self.params.get_mut().truncate(0);
        self.body.clear();
        if self.body.capacity() > 64 << 10 {
            self.body.shrink_to(64 << 10);
        }
    }

    /// A part of `text`. Every range ends at the end of a part, or at an
    /// ASCII byte in it (`?`, the `/` after an authority), so on a `char`
    /// boundary: this never falls back.
    #[inline]
    fn text(&self, range: &Range<usize>) -> &str {
        self.text.get(range.clone()).unwrap_or_default()
    }

    /// The method, e.g. `GET`.
    #[inline]
    pub fn method(&self) -> &str {
        match &self.method {
            Method::Known(method) => method,
            Method::Other(method) => self.text(method),
        }
    }

    /// The target's path, e.g. `/search` for `GET /search?q=fibra`, as sent
    /// (not percent-decoded). For a target in absolute form
    /// (`GET http://example.com/search?q=fibra`, as sent to proxies and
    /// accepted by servers, RFC 9112 §3.2.2) it is the path within it, and
    /// `/` if it has none (the host is [`authority`](Self::authority)); for
    /// `OPTIONS *` it is `*`.
    #[inline]
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

    /// The query's `name=value` pairs, in order, percent-decoded as a form
    /// is (`application/x-www-form-urlencoded`: `+` is a space, and a byte
    /// sequence that is not UTF-8 once decoded becomes U+FFFD). A pair is
    /// borrowed from the request where nothing needed decoding. None for a
    /// target without a query; a name without `=` has an empty value.
    ///
    /// ```
    /// use fibra_http::Request;
    ///
    /// let request = Request::from(
    ///     http::Request::get("/search?q=green+threads&lang=caf%C3%A9&draft").body(Vec::new())?,
    /// );
    /// let mut pairs = request.query_pairs();
    /// assert_eq!(pairs.next(), Some(("q".into(), "green threads".into())));
    /// assert_eq!(pairs.next(), Some(("lang".into(), "café".into())));
    /// assert_eq!(pairs.next(), Some(("draft".into(), "".into())));
    /// assert_eq!(pairs.next(), None);
    /// let lang = request.query_pairs().find(|(name, _)| name == "lang").map(|(_, value)| value);
    /// assert_eq!(lang.as_deref(), Some("café"));
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn query_pairs(&self) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
        form_urlencoded::parse(self.query().unwrap_or_default().as_bytes())
    }

    /// The value of the path parameter `name` (`:name` or `*name`) of the
    /// [`Router`](crate::Router) route whose handler runs: for the route
    /// `/todos/:id` and the request `GET /todos/7`, `param("id")` is `7`.
    /// It is a part of the path, as sent (not percent-decoded), borrowed
    /// from it. `None` if the route has no such parameter, and outside a
    /// routed handler. In a router routed to by another, a name of the inner
    /// route hides the same name of the outer.
    ///
    /// ```
    /// use fibra_http::{Handler, Request, Response, Router};
    ///
    /// let router = Router::new().get("/users/:user/files/*path", |request: &Request| {
    ///     let (user, path) = (request.param("user").unwrap(), request.param("path").unwrap());
    ///     Response::text(format!("{path} of {user}\n"))
    /// });
    /// let request = Request::from(http::Request::get("/users/ann/files/notes/a.txt").body(Vec::new())?);
    /// assert_eq!(router.handle(&request).body_bytes(), Some(&b"notes/a.txt of ann\n"[..]));
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn param(&self, name: &str) -> Option<&str> {
        let value = self.params.borrow().get(name)?;
        self.path().get(value)
    }

    /// Runs `handle` with the parameters `capture` adds (ranges of
    /// [`path`](Self::path)); they are gone once it returns or unwinds.
    pub(crate) fn with_params<R>(
        &self,
        capture: impl FnOnce(&mut Params),
        handle: impl FnOnce() -> R,
    ) -> R {
        struct Restore<'a>(&'a RefCell<Params>, usize);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.0.borrow_mut().truncate(self.1);
            }
        }
        let _restore = Restore(&self.params, self.params.borrow().len());
        capture(&mut self.params.borrow_mut());
        handle()
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
        let text = self.text.as_bytes();
        let target = &text[self.target.clone()];
        match &self.authority {
            Some(authority) => {
                let authority = &text[authority.clone()];
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
        self.headers.iter().map(|(name, value)| {
            // A token, which the parser checked: ASCII, so this never falls
            // back.
            let name = std::str::from_utf8(&self.head[name.clone()]).unwrap_or_default();
            (name, &self.head[value.clone()])
        })
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

/// A request's method: nearly always one of the standard ones, which is not
/// copied.
enum Method {
    Known(&'static str),
    /// Another, in `text`.
    Other(Range<usize>),
}

/// The standard methods (RFC 9110 §9, and `PATCH`, RFC 5789): a request's
/// method, and a route's, that is one of them is this table's `&'static str`,
/// so that the router compares the two by address before their bytes.
static STANDARD_METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];

/// `method` as the `&'static str` of a standard method, if it is one.
/// Inlined into [`Request::fill`] although the router calls it too: a call
/// there costs more than the match.
#[inline(always)]
pub(crate) fn known_method(method: &str) -> Option<&'static str> {
    // A `match` on a few short strings compares lengths, then each
    // candidate's bytes in place (no call).
    let at = match method {
        "GET" => 0,
        "HEAD" => 1,
        "POST" => 2,
        "PUT" => 3,
        "DELETE" => 4,
        "CONNECT" => 5,
        "OPTIONS" => 6,
        "TRACE" => 7,
        "PATCH" => 8,
        _ => return None,
    };
    Some(STANDARD_METHODS[at])
}

/// Appends `part` to `text`: where it is in it.
fn push_text(text: &mut String, part: &str) -> Range<usize> {
    let start = text.len();
    text.push_str(part);
    start..text.len()
}

/// Whether `target` is in authority form, `host:port` (RFC 9112 §3.2.3).
fn is_authority_form(target: &[u8]) -> bool {
    let port = target.iter().rposition(|&b| b == b':');
    host::is_valid(target) && port.is_some_and(|colon| !target[colon..].contains(&b']'))
}

/// Where the authority of a target in absolute form (`scheme://authority`,
/// then the path and query) is in it; `None` for any other form.
fn absolute_form_authority(target: &[u8]) -> Option<Range<usize>> {
    // A scheme begins with a letter: an origin-form target (`/…`, nearly
    // every request's) is not searched for its colon.
    if !target.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let colon = target.iter().position(|&b| b == b':')?;
    let (scheme, rest) = target.split_at(colon);
    let is_scheme = scheme
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
    fn header_names_are_read_from_the_head() {
        let head = b"GET /a?b HTTP/1.1\r\nHost: x\r\nX-Tag: 1\r\nx-tag: 2\r\n\r\n";
        let mut fields = [httparse::EMPTY_HEADER; 4];
        let mut parsed = httparse::Request::new(&mut fields);
        assert!(parsed.parse(head).unwrap().is_complete());
        let mut request = Request::new(None);
        request.fill(head, &parsed);
        assert_eq!(request.header("x-TAG"), Some("1"));
        assert_eq!(request.header_bytes("HOST"), Some(&b"x"[..]));
        assert_eq!(request.header("x-ta"), None);
        let all: Vec<_> = request.headers().collect();
        assert_eq!(all, [("Host", &b"x"[..]), ("X-Tag", b"1"), ("x-tag", b"2")]);
        assert_eq!(
            (request.method(), request.path(), request.query()),
            ("GET", "/a", Some("b"))
        );
    }

    #[test]
    fn methods_known_or_not() {
        for method in ["GET", "PATCH", "PROPFIND", "get", "GETS"] {
            let head = format!("{method} / HTTP/1.1\r\nHost: x\r\n\r\n");
            let mut fields = [httparse::EMPTY_HEADER; 1];
            let mut parsed = httparse::Request::new(&mut fields);
            assert!(parsed.parse(head.as_bytes()).unwrap().is_complete());
            let mut request = Request::new(None);
            request.fill(head.as_bytes(), &parsed);
            assert_eq!((request.method(), request.path()), (method, "/"));
        }
        assert_eq!(known_method("DELETE"), Some("DELETE"));
        assert_eq!(known_method("delete"), None);
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

//! The request id middleware and the id the running handler reads.

use super::Next;
use crate::{Request, Response};
use http::{HeaderName, HeaderValue};
use std::cell::RefCell;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::ops::Deref;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The header a request id comes in and goes out in.
const HEADER: &str = "x-request-id";

/// The longest id taken from a client.
const MAX_LEN: usize = 128;

fibra::green_local! {
    /// The id of the request the running green thread serves, while
    /// `request_id`'s middleware runs it.
    static CURRENT: RefCell<Option<RequestId>> = RefCell::new(None);
}

/// A request's id, as [`current_request_id`] gives it: a string of 1 to 128
/// visible ASCII characters (it derefs to `str`), cheap to clone.
#[derive(Clone, PartialEq, Eq)]
pub struct RequestId(HeaderValue);

impl RequestId {
    /// The id as a string.
    pub fn as_str(&self) -> &str {
        // Made of visible ASCII only (see `is_acceptable` and `generate`).
        self.0.to_str().unwrap_or_default()
    }
}

impl Deref for RequestId {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// A middleware that gives each request an id: the request's `x-request-id`
/// header if it has one that is 1 to 128 visible ASCII characters, else a new
/// one, unique in this process and unlikely to repeat across processes. The
/// handlers inside read it with [`current_request_id`], and the response
/// carries it in `x-request-id` (unless the handler set one itself), so that
/// a client, a proxy and the server's logs can name one request alike.
///
/// An incoming id that does not fit is replaced, not trusted: it would
/// reach the logs.
///
/// ```
/// use fibra_http::middleware::{current_request_id, request_id};
/// use fibra_http::{Handler, Request, Response, Router};
///
/// let router = Router::new()
///     .get("/whoami", |_: &Request| Response::text(current_request_id().unwrap().to_string()))
///     .wrap(request_id());
/// fibra::run(move || {
///     let traced = Request::from(
///         http::Request::get("/whoami").header("x-request-id", "abc-123").body(Vec::new()).unwrap(),
///     );
///     let response = router.handle(&traced);
///     assert_eq!(response.header("x-request-id"), Some("abc-123"));
///     assert_eq!(response.body_bytes(), Some(&b"abc-123"[..]));
///
///     let fresh = Request::from(http::Request::get("/whoami").body(Vec::new()).unwrap());
///     let response = router.handle(&fresh);
///     let id = response.header("x-request-id").unwrap();
///     assert_eq!(response.body_bytes(), Some(id.as_bytes()));
/// });
/// ```
pub fn request_id() -> impl Fn(&Request, Next<'_>) -> Response + Send + Sync {
    |request: &Request, next: Next<'_>| {
        let id = match request.header_bytes(HEADER) {
            Some(id) if is_acceptable(id) => HeaderValue::from_bytes(id),
            _ => HeaderValue::from_bytes(&generate()),
        };
        // Both are visible ASCII, which a header value may hold.
        let id = RequestId(id.unwrap_or_else(|_| HeaderValue::from_static("-")));
        let mut response = {
            let _current = Current::enter(id.clone());
            next.run(request)
        };
        let name = HeaderName::from_static(HEADER);
        if !response.headers().contains_key(&name) {
            response.headers_mut().append(name, id.0);
        }
        response
    }
}

/// The id that [`request_id`]'s middleware gave the request the running
/// handler answers; `None` outside one (or on another green thread than the
/// request's).
pub fn current_request_id() -> Option<RequestId> {
    CURRENT.with_borrow(Option::clone)
}

/// The id of a request in force while it lives; the one before it (of an
/// outer `request_id`, or none) again once it is dropped, even by an unwind.
struct Current(Option<RequestId>);

impl Current {
    fn enter(id: RequestId) -> Current {
        Current(CURRENT.replace(Some(id)))
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        CURRENT.set(self.0.take());
    }
}

fn is_acceptable(id: &[u8]) -> bool {
    (1..=MAX_LEN).contains(&id.len()) && id.iter().all(u8::is_ascii_graphic)
}

/// A new id: this process's random prefix and a count, in hex
/// (`1f0c3d9e5a7b2c41-0`), written without `format!`'s machinery (this runs
/// for every request without an id).
fn generate() -> Vec<u8> {
    static PREFIX: LazyLock<u64> =
        LazyLock::new(|| RandomState::new().hash_one(std::process::id()));
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    let mut id = Vec::with_capacity(33);
    hex(&mut id, *PREFIX, 16);
    id.push(b'-');
    let digits = (64 - count.leading_zeros()).div_ceil(4).max(1) as usize;
    hex(&mut id, count, digits);
    id
}

/// Appends the `digits` lowest hex digits of `value` to `out`.
fn hex(out: &mut Vec<u8>, value: u64, digits: usize) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.extend(
        (0..digits)
            .rev()
            .map(|i| DIGITS[(value >> (4 * i)) as usize & 0xf]),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_clients_are_checked() {
        assert!(is_acceptable(b"abc-123"));
        assert!(is_acceptable("a".repeat(MAX_LEN).as_bytes()));
        for bad in ["", "a b", "a\tb", "é", &"a".repeat(MAX_LEN + 1)] {
            assert!(!is_acceptable(bad.as_bytes()), "{bad:?}");
        }
    }

    #[test]
    fn generated_ids_differ() {
        let (a, b) = (generate(), generate());
        assert_ne!(a, b);
        assert!(is_acceptable(&a), "{a:?}");
        let mut out = Vec::new();
        hex(&mut out, 0x1f0, 3);
        hex(&mut out, 0, 1);
        assert_eq!(out, b"1f00");
    }
}

//! The request id middleware and the id the running handler reads.

use super::Next;
use crate::{Request, Response};
use std::cell::RefCell;
use std::hash::{BuildHasher, RandomState};
use std::rc::Rc;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The header a request id comes in and goes out in.
const HEADER: &str = "x-request-id";

/// The longest id taken from a client.
const MAX_LEN: usize = 128;

fibra::green_local! {
    /// The id of the request the running green thread serves, while
    /// `request_id`'s middleware runs it.
    static CURRENT: RefCell<Option<Rc<str>>> = RefCell::new(None);
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
        let id: Rc<str> = match request.header(HEADER) {
            Some(id) if is_acceptable(id) => id.into(),
            _ => generate().into(),
        };
        let response = {
            let _current = Current::enter(id.clone());
            next.run(request)
        };
        if response.header(HEADER).is_some() {
            response
        } else {
            response.with_header(HEADER, id.to_string())
        }
    }
}

/// The id that [`request_id`]'s middleware gave the request the running
/// handler answers; `None` outside one (or on another green thread than the
/// request's).
pub fn current_request_id() -> Option<Rc<str>> {
    CURRENT.with_borrow(Option::clone)
}

/// The id of a request in force while it lives; the one before it (of an
/// outer `request_id`, or none) again once it is dropped, even by an unwind.
struct Current(Option<Rc<str>>);

impl Current {
    fn enter(id: Rc<str>) -> Current {
        Current(CURRENT.replace(Some(id)))
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        CURRENT.set(self.0.take());
    }
}

fn is_acceptable(id: &str) -> bool {
    (1..=MAX_LEN).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_graphic())
}

/// A new id: this process's random prefix and a count, in hex.
fn generate() -> String {
    static PREFIX: LazyLock<u64> =
        LazyLock::new(|| RandomState::new().hash_one(std::process::id()));
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    format!("{:016x}-{count:x}", *PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_clients_are_checked() {
        assert!(is_acceptable("abc-123"));
        assert!(is_acceptable(&"a".repeat(MAX_LEN)));
        for bad in ["", "a b", "a\tb", "é", &"a".repeat(MAX_LEN + 1)] {
            assert!(!is_acceptable(bad), "{bad:?}");
        }
    }

    #[test]
    fn generated_ids_differ() {
        let (a, b) = (generate(), generate());
        assert_ne!(a, b);
        assert!(is_acceptable(&a), "{a}");
    }
}

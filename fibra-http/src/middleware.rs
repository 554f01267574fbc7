//! Middleware: code that runs around a handler, for every request it answers.
//!
//! A middleware is a function of the request and [`Next`] — the handler it
//! wraps — that returns the response: it may look at the request, answer it
//! itself, or call `next.run(request)` and look at (or change) the answer.
//! [`Router::wrap`](crate::Router::wrap) wraps a router in one, and
//! [`Wrap::wrap`] wraps that again; [`Wrap::new`] wraps any other
//! [`Handler`].
//!
//! ```
//! use fibra_http::{Handler, Request, Response, Router};
//!
//! let router = Router::new()
//!     .get("/hello", |_: &Request| Response::text("Hello\n"))
//!     .wrap(|request: &Request, next: fibra_http::Next<'_>| {
//!         next.run(request).with_header("x-served-by", "fibra")
//!     });
//! let hello = Request::from(http::Request::get("/hello").body(Vec::new())?);
//! assert_eq!(router.handle(&hello).header("x-served-by"), Some("fibra"));
//! # Ok::<(), http::Error>(())
//! ```
//!
//! # Order
//!
//! Each `wrap` wraps everything before it, so **the last one wrapped sees
//! the request first and the response last**: in
//! `router.wrap(a).wrap(b)`, `b` runs, calls `a`, which calls the router.
//! Put the request id outermost, so that everything inside — the access
//! log, the deadline's answer, the handler — sees it; the access log
//! outside the deadline, so that it logs the deadline's `503` too:
//!
//! ```
//! use fibra_http::middleware::{deadline, request_id};
//! use fibra_http::{Request, Response, Router};
//! use std::time::Duration;
//!
//! let app = Router::new()
//!     .get("/hello", |_: &Request| Response::text("Hello\n"))
//!     .wrap(deadline(Duration::from_secs(10)))
//!     // .wrap(access_log()) with the `log` cargo feature
//!     .wrap(request_id());
//! # let _ = app;
//! ```
//!
//! # Why functions around a `Handler`
//!
//! A middleware is called with `&Request` and returns a [`Response`], like
//! a [`Handler`], and a wrapped handler is a `Handler` again
//! ([`Wrap`]), so it serves wherever a handler does —
//! [`Server::serve`](crate::Server::serve),
//! [`Server::serve_with`](crate::Server::serve_with), a route of another
//! router — and is `Send + Sync` exactly when the handler and the middleware
//! are. There is no `async` and no service type to implement: a handler
//! runs on its connection's green thread, so a middleware may simply wait
//! (for the handler, a lock, a timer) before and after it. A router that is
//! not wrapped costs nothing more than before.
//!
//! The built-ins: `access_log` (with the cargo feature `log`: a line per
//! request through the `log` crate; with `tracing`, an event per request),
//! [`deadline`] and [`request_id`].

use crate::{Handler, Request, Response};
use std::time::Duration;

#[cfg(any(feature = "log", feature = "tracing"))]
mod access_log;
mod request_id;

#[cfg(any(feature = "log", feature = "tracing"))]
pub use access_log::access_log;
pub use request_id::{RequestId, current_request_id, request_id};

/// Code run around a handler: the response to `request`, given `next`, the
/// handler it wraps. Implemented by every `Fn(&Request, Next<'_>) -> Response`.
pub trait Middleware: 'static {
    /// The response to `request`, answered here or by `next`.
    fn call(&self, request: &Request, next: Next<'_>) -> Response;
}

impl<F> Middleware for F
where
    F: Fn(&Request, Next<'_>) -> Response + 'static,
{
    fn call(&self, request: &Request, next: Next<'_>) -> Response {
        self(request, next)
    }
}

/// The handler a [`Middleware`] wraps: what answers the request once the
/// middleware lets it go on.
#[derive(Clone, Copy)]
pub struct Next<'a> {
    handler: &'a dyn Handler,
}

impl Next<'_> {
    /// The response of the wrapped handler (and of the middlewares inside
    /// this one) to `request`.
    pub fn run(self, request: &Request) -> Response {
        self.handler.handle(request)
    }
}

/// A handler wrapped in a middleware: made by
/// [`Router::wrap`](crate::Router::wrap), [`Wrap::wrap`] or [`Wrap::new`].
/// It is a [`Handler`], `Send + Sync` where the handler and the middleware
/// are.
pub struct Wrap<H, M> {
    handler: H,
    middleware: M,
}

impl<H: Handler, M: Middleware> Wrap<H, M> {
    /// `handler`, each of whose requests goes through `middleware` first.
    pub fn new(handler: H, middleware: M) -> Wrap<H, M> {
        Wrap {
            handler,
            middleware,
        }
    }

    /// This handler wrapped again, in `middleware`, which sees each request
    /// before the middlewares already here (see [the order](self#order)).
    pub fn wrap<N: Middleware>(self, middleware: N) -> Wrap<Self, N> {
        Wrap::new(self, middleware)
    }
}

impl<H: Handler, M: Middleware> Handler for Wrap<H, M> {
    fn handle(&self, request: &Request) -> Response {
        let next = Next {
            handler: &self.handler,
        };
        self.middleware.call(request, next)
    }
}

/// A middleware that gives each request `limit` to be answered in: the
/// handler runs under [`fibra::time::timeout`], on its connection's green
/// thread, and one still waiting when the limit passes is unwound from that
/// wait — its destructors run, the locks it held are free again — and the
/// client gets `503 Service Unavailable`. The connection stays open for the
/// next request.
///
/// The limit is enforced where the handler waits (sleeps, sockets,
/// channels, fibra's locks): a handler that computes without waiting runs
/// to its end, and its answer is sent. The other connections are served
/// meanwhile either way. It covers what the handlers inside make the
/// response in: not the reading of the request (bounded by the server's
/// [`Limits`](crate::Limits) timeouts, before any handler runs), nor the
/// sending of a streamed [`Body`](crate::Body), whose reader runs after
/// the handler has returned.
///
/// Why 503 and not 504: `504 Gateway Timeout` tells the client that *an
/// upstream server* did not answer a gateway in time, while here this
/// server itself could not answer in time — `503`, as Go's
/// `http.TimeoutHandler` answers. A handler that does call another server
/// and wants `504` can answer it itself, with a `timeout` of its own.
///
/// ```
/// use fibra_http::middleware::deadline;
/// use fibra_http::{Handler, Request, Response, Router};
/// use std::time::Duration;
///
/// let router = Router::new()
///     .get("/slow", |_: &Request| {
///         fibra::time::sleep(Duration::from_secs(60));
///         Response::text("too late\n")
///     })
///     .wrap(deadline(Duration::from_millis(20)));
/// fibra::run(move || {
///     let slow = Request::from(http::Request::get("/slow").body(Vec::new()).unwrap());
///     assert_eq!(router.handle(&slow).status(), 503);
/// });
/// ```
///
/// # Panics
///
/// The wrapped handler, when called outside a green thread (a server always
/// calls it on one).
pub fn deadline(limit: Duration) -> impl Fn(&Request, Next<'_>) -> Response + Send + Sync {
    move |request: &Request, next: Next<'_>| {
        fibra::time::timeout(limit, || next.run(request))
            .unwrap_or_else(|_| Response::text("the request took too long\n").with_status(503))
    }
}

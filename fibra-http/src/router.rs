//! Routing requests to handlers by method and path.

use crate::handler::Accepts;
use crate::middleware::{Middleware, Wrap};
use crate::pattern::Pattern;
use crate::request::known_method;
use crate::{Handler, Request, RequestBody, Response};
use std::borrow::Cow;

/// A handler that picks another by method and path.
///
/// # Paths
///
/// A route's path matches itself, unless segments of it (between slashes)
/// are parameters:
///
/// - `:name` matches any one non-empty segment: `/todos/:id` matches
///   `/todos/7` but not `/todos/`, `/todos` or `/todos/7/done`;
/// - `*name`, as the last segment, matches the rest of the path — nothing,
///   one segment or several: `/files/*path` matches `/files/`,
///   `/files/a.txt` and `/files/a/b.txt`, but not `/files`. A bare `*`
///   matches the same without naming it (`/static/*`).
///
/// The handler reads them with [`Request::param`], as sent (not
/// percent-decoded), borrowed from the request's path. A path without
/// parameters is found by comparing it whole, so it pays nothing for the
/// others.
///
/// Where several routes match, the most specific wins, whatever order they
/// were added in: comparing their segments from the left, at the first that
/// differs, a fixed segment beats a `:param`, which beats a `*rest`. So
/// `/todos/new` beats `/todos/:id`, which beats `/todos/*rest`. Two routes of
/// one method whose paths match exactly the same requests (the same path, or
/// the same shape with other names, as `/todos/:id` and `/todos/:key`) would
/// leave one of them unreachable: adding the second panics, naming both.
///
/// # Methods
///
/// A request is routed among the routes of its method; `HEAD` is answered by
/// the `GET` route when no `HEAD` route matches (the body is not sent). A
/// path no route matches gets `404 Not Found`; a path some route matches
/// with another method gets `405 Method Not Allowed` with an `Allow` header
/// naming those methods. Both answers are plain text and can be replaced
/// (see [`not_found`](Self::not_found)). `OPTIONS *` (a question about the
/// server, not a resource) gets `200 OK` with an `Allow` header of every
/// method routed, unless a route for `*` answers it.
///
/// ```
/// use fibra_http::{Request, Response, Router};
///
/// let router = Router::new()
///     .get("/hello", |_: &Request| Response::text("Hello, world!\n"))
///     .get("/todos/:id", |request: &Request| {
///         Response::text(format!("todo {}\n", request.param("id").unwrap_or_default()))
///     })
///     .post("/echo", |request: &Request| {
///         Response::new(200).with_body(request.body().to_vec())
///     });
/// # let _ = router;
/// ```
///
/// # Shared or per worker
///
/// A `Router` (of `dyn Handler + Send + Sync`, the default type) holds
/// handlers that may be shared between OS threads: one serves every worker
/// of a server, through [`Server::serve`](crate::Server::serve). A
/// [`Router::local`] (of `dyn Handler`) holds any handler — its state may be
/// an `Rc`, a `RefCell` or one of fibra's runtime-local locks — and a server
/// makes one on each worker with
/// [`Server::serve_with`](crate::Server::serve_with).
pub struct Router<H: ?Sized = dyn Handler + Send + Sync> {
    /// Routes whose path has no parameter.
    plain: Vec<Route<String, H>>,
    /// Routes with parameters, the most specific first (see
    /// [`Pattern::precedence`]), so the first that matches wins.
    patterns: Vec<Route<Pattern, H>>,
    not_found: Option<Box<H>>,
    method_not_allowed: Option<Box<H>>,
}

struct Route<P, H: ?Sized> {
    /// A standard method as [`known_method`] has it (see [`same_method`]).
    method: Cow<'static, str>,
    path: P,
    handler: Box<H>,
}

impl<H: ?Sized> Default for Router<H> {
    fn default() -> Self {
        Router {
            plain: Vec::new(),
            patterns: Vec::new(),
            not_found: None,
            method_not_allowed: None,
        }
    }
}

impl Router {
    /// A router with no routes, whose handlers may be shared between OS
    /// threads (`Send + Sync`): every request gets `404 Not Found` until
    /// routes are added.
    pub fn new() -> Router {
        Router::default()
    }
}

impl Router<dyn Handler> {
    /// A router with no routes whose handlers need not be `Send` or `Sync`,
    /// for a server that makes one on each of its workers with
    /// [`Server::serve_with`](crate::Server::serve_with) (in threads mode,
    /// once). Its handlers' state belongs to the worker that made it, so it
    /// is plain `Rc` and `RefCell` — or fibra's locks, which park a green
    /// thread instead of the OS thread — with no atomic and no lock between
    /// threads.
    ///
    /// ```
    /// use fibra_http::{Handler, Request, Response, Router};
    /// use std::cell::Cell;
    /// use std::rc::Rc;
    ///
    /// fn make_router() -> Router<dyn Handler> {
    ///     let hits = Rc::new(Cell::new(0));
    ///     Router::local().get("/hits", move |_: &Request| {
    ///         hits.set(hits.get() + 1);
    ///         Response::text(format!("{} on this worker\n", hits.get()))
    ///     })
    /// }
    /// // Server::bind("127.0.0.1:8080")?.serve_with(make_router)?;
    /// # let router = make_router();
    /// # let request = Request::from(http::Request::get("/hits").body(Vec::new()).unwrap());
    /// # router.handle(&request);
    /// # assert_eq!(router.handle(&request).body_bytes(), Some(&b"2 on this worker\n"[..]));
    /// ```
    ///
    /// [`Router::new`]'s handlers are shared by every worker, so they must
    /// be `Send + Sync`, and an `Rc` is refused:
    ///
    /// ```compile_fail,E0277
    /// use fibra_http::{Request, Response, Router};
    ///
    /// let hits = std::rc::Rc::new(std::cell::Cell::new(0));
    /// let router = Router::new().get("/hits", move |_: &Request| {
    ///     hits.set(hits.get() + 1);
    ///     Response::new(204)
    /// });
    /// ```
    pub fn local() -> Router<dyn Handler> {
        Router::default()
    }
}

impl<H: ?Sized + Handler> Router<H> {
    /// Routes `method` requests for `path` to `handler` (see [the
    /// paths](Self#paths) a route may have).
    ///
    /// # Panics
    ///
    /// If `path` has a parameter without a name, a name twice, or a `*`
    /// segment that is not the last; or if a route of `method` already
    /// matches exactly the same paths.
    pub fn route<F>(mut self, method: &str, path: &str, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        let handler = H::boxed(handler);
        let method = match known_method(method) {
            Some(known) => Cow::Borrowed(known),
            None => Cow::Owned(method.to_string()),
        };
        match Pattern::parse(path) {
            None => {
                if self
                    .plain
                    .iter()
                    .any(|r| r.method == method && r.path == path)
                {
                    panic!("fibra-http: two routes for {method} {path}");
                }
                self.plain.push(Route {
                    method,
                    path: path.to_string(),
                    handler,
                });
            }
            Some(pattern) => {
                let same = self
                    .patterns
                    .iter()
                    .find(|r| r.method == method && r.path.precedence(&pattern).is_eq());
                if let Some(same) = same {
                    panic!(
                        "fibra-http: routes {method} {} and {method} {path} match the same \
                         paths, so one could never be reached",
                        same.path.source()
                    );
                }
                let at = self
                    .patterns
                    .partition_point(|r| r.path.precedence(&pattern).is_le());
                self.patterns.insert(
                    at,
                    Route {
                        method,
                        path: pattern,
                        handler,
                    },
                );
            }
        }
        self
    }

    /// Routes `GET` (and `HEAD`) requests for `path` to `handler`.
    pub fn get<F>(self, path: &str, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.route("GET", path, handler)
    }

    /// Routes `POST` requests for `path` to `handler`.
    pub fn post<F>(self, path: &str, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.route("POST", path, handler)
    }

    /// Routes `PUT` requests for `path` to `handler`.
    pub fn put<F>(self, path: &str, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.route("PUT", path, handler)
    }

    /// Routes `PATCH` requests for `path` to `handler`.
    ///
    /// ```
    /// use fibra_http::{Handler, Request, Response, Router};
    ///
    /// let router = Router::new()
    ///     .get("/todos/:id", |_: &Request| Response::text("a todo\n"))
    ///     .patch("/todos/:id", |request: &Request| {
    ///         Response::text(format!("patched {}\n", request.param("id").unwrap()))
    ///     });
    /// let patch = Request::from(http::Request::patch("/todos/7").body(Vec::new())?);
    /// assert_eq!(router.handle(&patch).body_bytes(), Some(&b"patched 7\n"[..]));
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn patch<F>(self, path: &str, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.route("PATCH", path, handler)
    }

    /// Routes `DELETE` requests for `path` to `handler`.
    pub fn delete<F>(self, path: &str, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.route("DELETE", path, handler)
    }

    /// Routes `HEAD` requests for `path` to `handler`, instead of the `GET`
    /// route's (useful where the headers cost less than the body).
    ///
    /// ```
    /// use fibra_http::{Handler, Request, Response, Router};
    ///
    /// let router = Router::new()
    ///     .get("/report", |_: &Request| Response::text("a long report\n"))
    ///     .head("/report", |_: &Request| Response::new(200).with_header("x-cheap", "yes"));
    /// let head = Request::from(http::Request::head("/report").body(Vec::new())?);
    /// assert_eq!(router.handle(&head).header("x-cheap"), Some("yes"));
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn head<F>(self, path: &str, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.route("HEAD", path, handler)
    }

    /// Routes `OPTIONS` requests for `path` to `handler` (`*` for
    /// `OPTIONS *`, which the router otherwise answers itself).
    ///
    /// ```
    /// use fibra_http::{Handler, Request, Response, Router};
    ///
    /// let router = Router::new()
    ///     .get("/todos", |_: &Request| Response::json("[]"))
    ///     .options("/todos", |_: &Request| {
    ///         Response::new(204)
    ///             .with_header("allow", "GET, OPTIONS")
    ///             .with_header("access-control-allow-origin", "*")
    ///     });
    /// let options = Request::from(http::Request::options("/todos").body(Vec::new())?);
    /// assert_eq!(router.handle(&options).status(), 204);
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn options<F>(self, path: &str, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.route("OPTIONS", path, handler)
    }

    /// Answers the requests whose path no route matches with `handler`,
    /// instead of a plain-text `404 Not Found`.
    ///
    /// ```
    /// use fibra_http::{Handler, Request, Response, Router};
    ///
    /// let router = Router::new()
    ///     .get("/hello", |_: &Request| Response::text("Hello\n"))
    ///     .not_found(|request: &Request| {
    ///         Response::json(format!(r#"{{"error":"no {}"}}"#, request.path())).with_status(404)
    ///     });
    /// let lost = Request::from(http::Request::get("/nowhere").body(Vec::new())?);
    /// let response = router.handle(&lost);
    /// assert_eq!(response.status(), 404);
    /// assert_eq!(response.body_bytes(), Some(&br#"{"error":"no /nowhere"}"#[..]));
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn not_found<F>(mut self, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.not_found = Some(H::boxed(handler));
        self
    }

    /// Answers the requests whose path some route matches, but for other
    /// methods, with `handler`, instead of a plain-text
    /// `405 Method Not Allowed`. A `405` it returns without an `Allow`
    /// header gets the router's (the methods that path is routed for), as
    /// RFC 9110 §15.5.6 requires.
    ///
    /// ```
    /// use fibra_http::{Handler, Request, Response, Router};
    ///
    /// let router = Router::new()
    ///     .get("/todos", |_: &Request| Response::json("[]"))
    ///     .method_not_allowed(|_: &Request| {
    ///         Response::json(r#"{"error":"method not allowed"}"#).with_status(405)
    ///     });
    /// let delete = Request::from(http::Request::delete("/todos").body(Vec::new())?);
    /// let response = router.handle(&delete);
    /// assert_eq!(response.status(), 405);
    /// assert_eq!(response.header("allow"), Some("GET, HEAD"));
    /// assert_eq!(response.header("content-type"), Some("application/json"));
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn method_not_allowed<F>(mut self, handler: F) -> Self
    where
        H: Accepts<F>,
    {
        self.method_not_allowed = Some(H::boxed(handler));
        self
    }

    /// This router wrapped in `middleware`, which runs around every request
    /// it answers — routed, `404`, `405` and automatic `HEAD`/`OPTIONS`
    /// alike (see the [`middleware`](crate::middleware) module: the built-in
    /// access log, deadline and request id, and the order of several).
    /// The result is a [`Handler`] that serves wherever the router would;
    /// add the routes first.
    ///
    /// ```
    /// use fibra_http::{Handler, Next, Request, Response, Router};
    ///
    /// let router = Router::new()
    ///     .get("/admin", |_: &Request| Response::text("the secrets\n"))
    ///     .wrap(|request: &Request, next: Next<'_>| {
    ///         match request.header("authorization") {
    ///             Some("Bearer let-me-in") => next.run(request),
    ///             _ => Response::new(401).with_header("www-authenticate", "Bearer"),
    ///         }
    ///     });
    /// let anonymous = Request::from(http::Request::get("/admin").body(Vec::new())?);
    /// assert_eq!(router.handle(&anonymous).status(), 401);
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn wrap<M: Middleware>(self, middleware: M) -> Wrap<Self, M> {
        Wrap::new(self, middleware)
    }

    /// The route of `method` without parameters for `path`.
    fn find_plain(&self, method: &str, path: &str) -> Option<&H> {
        (self.plain.iter())
            .find(|r| same_method(&r.method, method) && r.path == path)
            .map(|route| &*route.handler)
    }

    /// The most specific route of `method` with parameters that matches
    /// `path`.
    fn find_pattern(&self, method: &str, path: &str) -> Option<(&H, &Pattern)> {
        (self.patterns.iter())
            .find(|r| same_method(&r.method, method) && r.path.matches(path, &mut |_, _| {}))
            .map(|route| (&*route.handler, &route.path))
    }

    /// Answers a request no route without parameters of its method took:
    /// a route with parameters, `HEAD` by `GET`, or the router itself.
    fn handle_rest(&self, request: &Request, method: &str, path: &str) -> Response {
        let with_params =
            |found: (&H, &Pattern)| with_params(request, path, found, |h| h.handle(request));
        if let Some(found) = self.find_pattern(method, path) {
            return with_params(found);
        }
        if method == "HEAD" {
            if let Some(handler) = self.find_plain("GET", path) {
                return handler.handle(request);
            }
            if let Some(found) = self.find_pattern("GET", path) {
                return with_params(found);
            }
        }
        if (method, path) == ("OPTIONS", "*") {
            // The server asked about itself (RFC 9110 §9.3.7): what it serves
            // anywhere.
            return Response::new(200).with_header("allow", self.allow(None));
        }
        match self.allow(Some(path)) {
            allowed if allowed.is_empty() => match &self.not_found {
                Some(handler) => handler.handle(request),
                None => Response::text("not found\n").with_status(404),
            },
            allowed => {
                let response = match &self.method_not_allowed {
                    Some(handler) => handler.handle(request),
                    None => Response::text("method not allowed\n").with_status(405),
                };
                if response.status() == 405 && response.header("allow").is_none() {
                    response.with_header("allow", allowed)
                } else {
                    response
                }
            }
        }
    }

    /// An `Allow` value: the methods of the routes matching `path` (every
    /// route for `None`), each once — and `HEAD` after `GET`, since a `GET`
    /// route answers it.
    fn allow(&self, path: Option<&str>) -> String {
        let plain = (self.plain.iter())
            .filter(|r| path.is_none_or(|path| r.path == path))
            .map(|r| &*r.method);
        let patterns = (self.patterns.iter())
            .filter(|r| path.is_none_or(|path| r.path.matches(path, &mut |_, _| {})))
            .map(|r| &*r.method);
        let mut allowed: Vec<&str> = Vec::new();
        for method in plain.chain(patterns) {
            for method in [method]
                .into_iter()
                .chain((method == "GET").then_some("HEAD"))
            {
                if !allowed.contains(&method) {
                    allowed.push(method);
                }
            }
        }
        allowed.join(", ")
    }
}

impl<H: ?Sized + Handler> Handler for Router<H> {
    fn handle(&self, request: &Request) -> Response {
        let (method, path) = (request.method(), request.path());
        // A plain path costs a comparison per route, as it would without
        // parameters anywhere.
        match self.find_plain(method, path) {
            Some(handler) => handler.handle(request),
            None => self.handle_rest(request, method, path),
        }
    }
    /// Asks the route of the request's method and path, if there is one:
    /// the router's own answers (`404`, `405`, `HEAD` by `GET`) wait for the
    /// body.
    fn handle_streaming(&self, request: &Request, body: &mut RequestBody<'_>) -> Option<Response> {
        let (method, path) = (request.method(), request.path());
        if let Some(handler) = self.find_plain(method, path) {
            return handler.handle_streaming(request, body);
        }
        let found = self.find_pattern(method, path)?;
        with_params(request, path, found, |h| h.handle_streaming(request, body))
    }
}

/// Whether a route's method is a request's: by address first, since a
/// standard method is the same `&'static str` in both (see
/// [`known_method`]), then by its bytes.
fn same_method(route: &str, request: &str) -> bool {
    std::ptr::eq(route, request) || route == request
}

/// Runs `call` on the handler `found` for `path`, with the parameters its
/// pattern takes from `path`.
fn with_params<H: ?Sized, R>(
    request: &Request,
    path: &str,
    (handler, pattern): (&H, &Pattern),
    call: impl FnOnce(&H) -> R,
) -> R {
    request.with_params(
        |params| {
            pattern.matches(path, &mut |name, value| params.push(name, value));
        },
        || call(handler),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(router: &impl Handler, target: &str) -> Response {
        router.handle(&Request::from(
            http::Request::get(target).body(Vec::new()).unwrap(),
        ))
    }

    fn body(response: &Response) -> &str {
        std::str::from_utf8(response.body_bytes().unwrap()).unwrap()
    }

    /// A handler that answers with its name and the parameters it sees.
    fn says(name: &'static str) -> impl Fn(&Request) -> Response + Send + Sync {
        move |request: &Request| {
            let params: Vec<String> = ["id", "rest", "user"]
                .into_iter()
                .filter_map(|n| request.param(n).map(|v| format!("{n}={v}")))
                .collect();
            Response::text(format!("{name} {}", params.join(" ")))
        }
    }

    #[test]
    fn the_most_specific_route_wins_whatever_the_order_added() {
        let routes = [
            ("/todos/*rest", "rest"),
            ("/todos/:id", "param"),
            ("/todos/new", "plain"),
            ("/todos/:id/done", "done"),
        ];
        for reversed in [false, true] {
            let mut router = Router::new();
            let mut order: Vec<_> = routes.to_vec();
            if reversed {
                order.reverse();
            }
            for (path, name) in order {
                router = router.get(path, says(name));
            }
            let cases = [
                ("/todos/new", "plain "),
                ("/todos/7", "param id=7"),
                ("/todos/7/done", "done id=7"),
                ("/todos/7/undone", "rest rest=7/undone"),
                ("/todos/", "rest rest="),
            ];
            for (path, expected) in cases {
                assert_eq!(body(&get(&router, path)), expected, "{path}");
            }
            assert_eq!(get(&router, "/todos").status(), 404);
        }
    }

    #[test]
    fn parameters_last_only_while_their_handler_runs() {
        let inner = Router::new().get("/api/users/:user", says("inner"));
        let router = Router::new().get("/api/*rest", inner);
        assert_eq!(
            body(&get(&router, "/api/users/ann")),
            "inner rest=users/ann user=ann"
        );
        let request = Request::from(
            http::Request::get("/api/users/bo")
                .body(Vec::new())
                .unwrap(),
        );
        router.handle(&request);
        assert_eq!(request.param("user"), None);
        assert_eq!(request.param("rest"), None);
    }

    #[test]
    fn head_falls_back_to_get_and_other_methods_get_405() {
        let router = Router::new()
            .get("/todos/:id", says("get"))
            .delete("/todos/:id", says("delete"))
            .post("/todos", says("post"));
        let head = Request::from(http::Request::head("/todos/3").body(Vec::new()).unwrap());
        assert_eq!(body(&router.handle(&head)), "get id=3");
        let put = Request::from(http::Request::put("/todos/3").body(Vec::new()).unwrap());
        let response = router.handle(&put);
        assert_eq!(response.status(), 405);
        assert_eq!(response.header("allow"), Some("GET, HEAD, DELETE"));
        assert_eq!(
            response.header("content-type"),
            Some("text/plain; charset=utf-8")
        );
        let response = get(&router, "/elsewhere");
        assert_eq!(response.status(), 404);
        assert_eq!(
            response.header("content-type"),
            Some("text/plain; charset=utf-8")
        );
    }

    #[test]
    #[should_panic(expected = "routes GET /todos/:id and GET /todos/:key match the same paths")]
    fn two_routes_of_one_shape_conflict() {
        let _ = Router::new()
            .get("/todos/:id", says("a"))
            .post("/todos/:key", says("b"))
            .get("/todos/:key", says("c"));
    }

    #[test]
    fn standard_and_extension_methods_route_alike() {
        // A method made at run time, as a handler's own string would be.
        let get = String::from("GET");
        let router = Router::new()
            .route(&get, "/a", says("get"))
            .route("PURGE", "/a", says("purge"))
            .route("PURGE", "/b/:id", says("purge b"));
        let request = |method: &str, path: &str| {
            let request = http::Request::builder().method(method).uri(path);
            Request::from(request.body(Vec::new()).unwrap())
        };
        assert_eq!(body(&router.handle(&request("GET", "/a"))), "get ");
        assert_eq!(body(&router.handle(&request("PURGE", "/a"))), "purge ");
        assert_eq!(
            body(&router.handle(&request("PURGE", "/b/1"))),
            "purge b id=1"
        );
        let put = router.handle(&request("PUT", "/a"));
        assert_eq!(put.header("allow"), Some("GET, HEAD, PURGE"));
        assert_eq!(router.handle(&request("purge", "/a")).status(), 405);
    }

    #[test]
    #[should_panic(expected = "two routes for GET /hello")]
    fn two_plain_routes_conflict() {
        let _ = Router::new()
            .get("/hello", says("a"))
            .get("/hello", says("b"));
    }
}

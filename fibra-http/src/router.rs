//! Routing requests to handlers by method and path.

use crate::{Handler, Request, Response};

/// A handler that picks another by method and path.
///
/// A route's path matches exactly, or, if it ends in `/*`, matches every path
/// under that prefix (`/static/*` matches `/static/app.js`). The first route
/// added that matches wins. `HEAD` is answered by the `GET` route when there
/// is no `HEAD` one (the body is not sent). A path no route matches gets
/// `404 Not Found`; a path some route matches with another method gets
/// `405 Method Not Allowed` with an `Allow` header. `OPTIONS *` (a question
/// about the server, not a resource) gets `200 OK` with an `Allow` header of
/// every method routed, unless a route for `*` answers it.
///
/// ```
/// use fibra_http::{Response, Router};
///
/// let router = Router::new()
///     .get("/hello", |_: &_| Response::text("Hello, world!\n"))
///     .post("/echo", |request: &fibra_http::Request| {
///         Response::new(200).with_body(request.body().to_vec())
///     });
/// # let _ = router;
/// ```
#[derive(Default)]
pub struct Router {
    routes: Vec<Route>,
}

struct Route {
    method: String,
    pattern: Pattern,
    handler: Box<dyn Handler>,
}

enum Pattern {
    Exact(String),
    /// The prefix, ending in `/`.
    Under(String),
}

impl Pattern {
    fn new(path: &str) -> Pattern {
        match path.strip_suffix('*') {
            Some(prefix) if prefix.ends_with('/') => Pattern::Under(prefix.to_string()),
            _ => Pattern::Exact(path.to_string()),
        }
    }

    fn matches(&self, path: &str) -> bool {
        match self {
            Pattern::Exact(exact) => path == exact,
            Pattern::Under(prefix) => path.starts_with(prefix.as_str()),
        }
    }
}

impl Router {
    /// A router with no routes: every request gets `404 Not Found`.
    pub fn new() -> Router {
        Router::default()
    }

    /// Routes `method` requests for `path` to `handler`.
    pub fn route(mut self, method: &str, path: &str, handler: impl Handler) -> Router {
        self.routes.push(Route {
            method: method.to_string(),
            pattern: Pattern::new(path),
            handler: Box::new(handler),
        });
        self
    }

    /// Routes `GET` (and `HEAD`) requests for `path` to `handler`.
    pub fn get(self, path: &str, handler: impl Handler) -> Router {
        self.route("GET", path, handler)
    }

    /// Routes `POST` requests for `path` to `handler`.
    pub fn post(self, path: &str, handler: impl Handler) -> Router {
        self.route("POST", path, handler)
    }

    /// Routes `PUT` requests for `path` to `handler`.
    pub fn put(self, path: &str, handler: impl Handler) -> Router {
        self.route("PUT", path, handler)
    }

    /// Routes `DELETE` requests for `path` to `handler`.
    pub fn delete(self, path: &str, handler: impl Handler) -> Router {
        self.route("DELETE", path, handler)
    }

    /// An `Allow` value: the methods of the routes whose pattern `matching`
    /// accepts, each once, in the order added — and `HEAD` after `GET`, since
    /// a `GET` route answers it.
    fn allow(&self, matching: impl Fn(&Pattern) -> bool) -> String {
        let mut allowed: Vec<&str> = Vec::new();
        for route in self.routes.iter().filter(|r| matching(&r.pattern)) {
            for method in [route.method.as_str()]
                .into_iter()
                .chain((route.method == "GET").then_some("HEAD"))
            {
                if !allowed.contains(&method) {
                    allowed.push(method);
                }
            }
        }
        allowed.join(", ")
    }

    fn find(&self, method: &str, path: &str) -> Option<&Route> {
        self.routes
            .iter()
            .find(|r| r.method == method && r.pattern.matches(path))
    }
}

impl Handler for Router {
    fn handle(&self, request: &Request) -> Response {
        let (method, path) = (request.method(), request.path());
        let route = self
            .find(method, path)
            .or_else(|| (method == "HEAD").then(|| self.find("GET", path)).flatten());
        if let Some(route) = route {
            return route.handler.handle(request);
        }
        if (method, path) == ("OPTIONS", "*") {
            // The server asked about itself (RFC 9110 §9.3.7): what it serves
            // anywhere.
            return Response::new(200).with_header("allow", self.allow(|_| true));
        }
        match self.allow(|pattern| pattern.matches(path)) {
            allowed if allowed.is_empty() => Response::new(404).with_body("not found\n"),
            allowed => Response::new(405)
                .with_header("allow", allowed)
                .with_body("method not allowed\n"),
        }
    }
}

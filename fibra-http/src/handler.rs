//! What answers requests.

use crate::{Request, RequestBody, Response};

/// Answers requests: a plain function or closure from a [`Request`] to a
/// [`Response`], or a [`Router`](crate::Router) of them.
///
/// A handler runs in the connection's green thread, so it may block in
/// fibra's operations — sleep, sockets, channels — without holding up other
/// connections. A handler that panics gets its client a
/// `500 Internal Server Error`, and that connection is closed.
///
/// Where it runs decides what it may hold. One handler given to
/// [`Server::serve`](crate::Server::serve) serves every connection, in
/// ractors mode from several OS threads at once, so it must be
/// `Send + Sync` (the compiler checks that what it captures may be shared,
/// as Ruby's `make_shareable` would at run time). A handler made on each
/// worker by [`Server::serve_with`](crate::Server::serve_with) stays on that
/// worker's OS thread, so it need not be either: its state may be an `Rc`,
/// a `RefCell` or one of fibra's runtime-local locks (see the crate docs,
/// "Sharing state between handlers").
pub trait Handler: 'static {
    /// The response to `request`; called on the green thread that serves its
    /// connection.
    fn handle(&self, request: &Request) -> Response;

    /// The response to a `request` whose body has not been read yet, reading
    /// it from `body` as it arrives; or `None` (the default), and the server
    /// reads the body whole and calls [`handle`](Self::handle). A
    /// [`streaming`](crate::streaming) handler answers here, and a
    /// [`Router`](crate::Router) asks its route's handler.
    fn handle_streaming(&self, request: &Request, body: &mut RequestBody<'_>) -> Option<Response> {
        let _ = (request, body);
        None
    }
}

impl<F> Handler for F
where
    F: Fn(&Request) -> Response + 'static,
{
    fn handle(&self, request: &Request) -> Response {
        self(request)
    }
}

/// How a [`Router`](crate::Router) keeps its handlers: `Self` is the
/// trait object it boxes them as, and `Self: Accepts<F>` says that a handler
/// of type `F` can be kept so.
///
/// There are two, as there are two kinds of router: `dyn Handler + Send +
/// Sync` (a [`Router::new`](crate::Router::new), shared by the workers)
/// accepts the handlers that are `Send + Sync`, and `dyn Handler` (a
/// [`Router::local`](crate::Router::local), made on each worker) accepts
/// every handler. The trait is sealed: these are all.
///
/// ```
/// use fibra_http::{Handler, Request, Response, Router};
/// use std::rc::Rc;
///
/// let name = Rc::new(String::from("local"));
/// let hello = move |_: &Request| Response::text(format!("Hello from a {name} router\n"));
/// // `dyn Handler: Accepts<F>` for this `F`, which holds an `Rc`:
/// let router: Router<dyn Handler> = Router::local().get("/hello", hello);
/// # let _ = router;
/// ```
pub trait Accepts<F>: Handler + sealed::Sealed {
    /// `handler`, boxed as `Self`.
    fn boxed(handler: F) -> Box<Self>;
}

impl<F: Handler + Send + Sync> Accepts<F> for dyn Handler + Send + Sync {
    fn boxed(handler: F) -> Box<Self> {
        Box::new(handler)
    }
}

impl<F: Handler> Accepts<F> for dyn Handler {
    fn boxed(handler: F) -> Box<Self> {
        Box::new(handler)
    }
}

mod sealed {
    use crate::Handler;

    pub trait Sealed {}

    impl Sealed for dyn Handler + Send + Sync {}

    impl Sealed for dyn Handler {}
}

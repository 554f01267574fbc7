//! What answers requests.

use crate::{Request, Response};

/// Answers requests: a plain function or closure from a [`Request`] to a
/// [`Response`], or a [`Router`](crate::Router) of them.
///
/// One handler serves every connection, in both modes: in ractors mode it is
/// shared by Ractors on several OS threads, hence `Send + Sync` (the compiler
/// checks that what it captures may be shared, as Ruby's `make_shareable`
/// would at run time). A handler runs in the connection's green thread, so it
/// may block in fibra's operations — sleep, sockets, channels — without
/// holding up other connections. A handler that panics gets its client a
/// `500 Internal Server Error`, and that connection is closed.
pub trait Handler: Send + Sync + 'static {
    /// The response to `request`; called on the green thread that serves its
    /// connection.
    fn handle(&self, request: &Request) -> Response;
}

impl<F> Handler for F
where
    F: Fn(&Request) -> Response + Send + Sync + 'static,
{
    fn handle(&self, request: &Request) -> Response {
        self(request)
    }
}

//! A request body read as it arrives: [`RequestBody`] and [`streaming`].

use crate::{Handler, Request, Response};
use std::fmt;
use std::io::{self, Read};

/// A request's body as a [`Read`], decoded (from `Content-Length` or chunked
/// framing) as it arrives: what a [`streaming`] handler reads instead of
/// [`Request::body`].
///
/// The server's limits hold as for a body read whole: past
/// [`max_body_bytes`](crate::Limits::max_body_bytes) a read fails and the
/// client gets `413`; a client that stalls longer than
/// [`request_timeout`](crate::Limits::request_timeout) (or sends past the
/// whole request's deadline) fails it and gets `408`; malformed chunked
/// framing gets `400` — whatever the handler answers instead. The errors'
/// kinds are `InvalidData`, `TimedOut`, and `UnexpectedEof` for a client
/// that left mid-body. A client that sent `Expect: 100-continue` is told to
/// go on at the first read.
///
/// A body the handler leaves unread is not read after it: the connection
/// closes after the response.
pub struct RequestBody<'a> {
    source: &'a mut dyn Read,
}

impl<'a> RequestBody<'a> {
    pub(crate) fn new(source: &'a mut dyn Read) -> Self {
        RequestBody { source }
    }
}

impl Read for RequestBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.source.read(buf)
    }
}

impl fmt::Debug for RequestBody<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestBody").finish_non_exhaustive()
    }
}

/// A handler that reads the request's body as it arrives, as a
/// [`RequestBody`], rather than after the server has read all of it: for
/// uploads larger than what should be held in memory, or processed as they
/// come.
///
/// The server calls it as soon as the request's head is read. A request with
/// no body gets an empty one. (Where a router answers instead — `404`, `405`,
/// a `HEAD` by its `GET` route — the handler is called with the body already
/// read, as any handler is.)
///
/// ```no_run
/// use fibra_http::{Request, Response, Router, Server, streaming};
/// use std::io::Read;
///
/// let router = Router::new().post(
///     "/upload",
///     streaming(|_: &Request, body: &mut fibra_http::RequestBody<'_>| {
///         let mut piece = [0; 16 << 10];
///         let mut total = 0;
///         loop {
///             match body.read(&mut piece) {
///                 Ok(0) => break,
///                 Ok(n) => total += n, // e.g. write it to a file
///                 // The server answers 413 or 408 itself.
///                 Err(_) => return Response::new(400),
///             }
///         }
///         Response::text(format!("{total} bytes\n"))
///     }),
/// );
/// Server::bind("127.0.0.1:8080")?.serve(router)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn streaming<F>(handler: F) -> Streaming<F>
where
    F: Fn(&Request, &mut RequestBody<'_>) -> Response + 'static,
{
    Streaming(handler)
}

/// A handler that reads its request's body as it arrives: see
/// [`streaming`].
#[derive(Clone, Copy, Debug)]
pub struct Streaming<F>(F);

impl<F> Handler for Streaming<F>
where
    F: Fn(&Request, &mut RequestBody<'_>) -> Response + 'static,
{
    fn handle(&self, request: &Request) -> Response {
        let mut read = request.body();
        (self.0)(request, &mut RequestBody::new(&mut read))
    }

    fn handle_streaming(&self, request: &Request, body: &mut RequestBody<'_>) -> Option<Response> {
        Some((self.0)(request, body))
    }
}

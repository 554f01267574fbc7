//! The [`http`] crate's types — what hyper, axum, reqwest and tower speak —
//! converted to and from fibra-http's [`Request`] and [`Response`], and
//! [`http_handler`], which serves a function written against them.
//!
//! What is copied follows from who owns what:
//!
//! - A connection owns its [`Request`] and lends it to the handler, then
//!   refills the same buffers with the next request. So a handler gets
//!   `http::Request<&[u8]>`, whose body **borrows** the connection's buffer:
//!   no copy, however large. The head (method, target, headers: at most
//!   [`Limits::max_head_bytes`](crate::Limits::max_head_bytes)) is parsed
//!   into the `http` types, which own their parts (a `HeaderMap` holds its
//!   names and values), so the head is copied.
//! - A [`Response`] is the handler's to give away, and it is made of the
//!   `http` crate's [`StatusCode`](http::StatusCode) and
//!   [`HeaderMap`](http::HeaderMap) and a [`Body`] of
//!   [`Bytes`](bytes::Bytes): `http::Response<B>` → [`Response`] and
//!   [`Response`] → `http::Response<Body>` **move** the status, the header
//!   map and the body (a `Vec<u8>`, `String` or `Bytes` body hands over its
//!   buffer).
//! - `http::Request<B>` → [`Request`], for testing a fibra-http handler
//!   without a socket, moves a `Vec<u8>` or `String` body and writes the
//!   head out as the connection would have read it.

use crate::{Body, Handler, Request, Response, Version};
use std::net::SocketAddr;

impl Request {
    /// This request as the `http` crate's, the body borrowed (not copied);
    /// the client's address, where there is one, is in its extensions as a
    /// [`SocketAddr`].
    ///
    /// ```
    /// use fibra_http::Request;
    ///
    /// let request = Request::from(
    ///     http::Request::post("/echo?loud")
    ///         .header("content-type", "text/plain")
    ///         .body(b"hi".to_vec())?,
    /// );
    /// let borrowed = request.to_http()?;
    /// assert_eq!(borrowed.uri().query(), Some("loud"));
    /// assert_eq!(borrowed.headers()["content-type"], "text/plain");
    /// assert_eq!(borrowed.body().as_ptr(), request.body().as_ptr());
    /// # Ok::<(), http::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// If the `http` crate refuses a part the server accepted: a target it
    /// does not parse as a URI (or one of 64 KiB or more).
    pub fn to_http(&self) -> Result<http::Request<&[u8]>, http::Error> {
        let mut request = http::Request::builder()
            .method(self.method())
            .uri(self.target())
            .version(match self.version() {
                Version::Http10 => http::Version::HTTP_10,
                Version::Http11 => http::Version::HTTP_11,
            });
        for (name, value) in self.headers() {
            request = request.header(name, value);
        }
        if let Some(peer) = self.peer_addr() {
            request = request.extension(peer);
        }
        request.body(self.body())
    }
}

/// A request as the server would have read it, for testing a handler
/// without a socket: the body moves (a `Vec<u8>` or `String` without a
/// copy, a `Bytes` without one when it is the only handle to what was a
/// `Vec<u8>`), a [`SocketAddr`] in the extensions becomes the
/// [`peer_addr`](Request::peer_addr), and a version other than HTTP/1.0 is
/// read as HTTP/1.1.
///
/// ```
/// use fibra_http::{Handler, Request, Response, Router};
///
/// let router = Router::new().get("/hello", |_: &Request| Response::text("hi\n"));
/// let response = router.handle(&Request::from(http::Request::get("/hello").body(Vec::new())?));
/// assert_eq!(response.body_bytes(), Some(&b"hi\n"[..]));
/// # Ok::<(), http::Error>(())
/// ```
impl<B: Into<Vec<u8>>> From<http::Request<B>> for Request {
    fn from(request: http::Request<B>) -> Request {
        let (parts, body) = request.into_parts();
        let mut head = Vec::new();
        head.extend_from_slice(parts.method.as_str().as_bytes());
        head.push(b' ');
        head.extend_from_slice(parts.uri.to_string().as_bytes());
        head.extend_from_slice(match parts.version {
            http::Version::HTTP_09 | http::Version::HTTP_10 => b" HTTP/1.0\r\n",
            _ => b" HTTP/1.1\r\n",
        });
        for (name, value) in &parts.headers {
            head.extend_from_slice(name.as_str().as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"\r\n");
        let mut fields = vec![httparse::EMPTY_HEADER; parts.headers.len()];
        let mut parsed = httparse::Request::new(&mut fields);
        // Every part was checked by the `http` crate against the same
        // grammar (method and names are tokens, values have no control
        // characters, the URI is printable ASCII), so the head parses.
        let parsed_whole = parsed.parse(&head).map(|status| status.is_complete());
        assert!(
            parsed_whole == Ok(true),
            "fibra-http: the http crate's request did not make an HTTP/1.1 head"
        );
        let mut request = Request::new(parts.extensions.get::<SocketAddr>().copied());
        request.fill(&head, &parsed);
        request.body = body.into();
        request
    }
}

/// The `http` crate's response, moved: status, header map and body. Its
/// version and extensions are dropped (the server answers in HTTP/1.1), and
/// its framing headers are not sent (see [`Response`]).
impl<B: Into<Body>> From<http::Response<B>> for Response {
    fn from(response: http::Response<B>) -> Response {
        let (parts, body) = response.into_parts();
        Response {
            status: parts.status,
            headers: parts.headers,
            body: body.into(),
        }
    }
}

/// The response as the `http` crate's, moved: for testing a fibra-http
/// handler with code written for `http` types.
///
/// ```
/// use fibra_http::Response;
///
/// let response = http::Response::from(Response::text("hi\n"));
/// assert_eq!(response.status(), http::StatusCode::OK);
/// assert_eq!(response.headers()["content-type"], "text/plain; charset=utf-8");
/// assert_eq!(response.body().as_bytes().map(|b| &b[..]), Some(&b"hi\n"[..]));
/// ```
impl From<Response> for http::Response<Body> {
    fn from(response: Response) -> http::Response<Body> {
        let mut converted = http::Response::new(response.body);
        *converted.status_mut() = response.status;
        *converted.headers_mut() = response.headers;
        converted
    }
}

/// Serves `handler`, a function from `http::Request<&[u8]>` to
/// `http::Response<B>` — the shape of a hyper service or an axum handler,
/// without `async` — so that code, middleware and tests written for the
/// `http` types serve here as they are. The body is borrowed, not copied
/// (see [`Request::to_http`]); the response moves (see [`Response`]). A
/// request whose target the `http` crate refuses as a URI gets
/// `400 Bad Request`.
///
/// ```
/// use fibra_http::http::{Request, Response, StatusCode};
/// use fibra_http::{http_handler, Handler};
///
/// fn greet(request: Request<&[u8]>) -> Response<String> {
///     let name = request.uri().query().unwrap_or("world");
///     Response::builder()
///         .status(StatusCode::OK)
///         .header("content-type", "text/plain")
///         .body(format!("Hello, {name}!\n"))
///         .unwrap()
/// }
///
/// // Tested as any function of `http` types, without a socket:
/// let response = greet(Request::get("/hello?fibra").body(&b""[..])?);
/// assert_eq!(response.body(), "Hello, fibra!\n");
///
/// // And served: `Server::bind(addr)?.serve(http_handler(greet))`, or
/// // through a `Router`, as here.
/// let handler = http_handler(greet);
/// let request = fibra_http::Request::from(Request::get("/hello?fibra").body(Vec::new())?);
/// assert_eq!(handler.handle(&request).body_bytes(), Some(&b"Hello, fibra!\n"[..]));
/// # Ok::<(), http::Error>(())
/// ```
pub fn http_handler<F, B>(handler: F) -> HttpHandler<F>
where
    F: Fn(http::Request<&[u8]>) -> http::Response<B> + Send + Sync + 'static,
    B: Into<Body>,
{
    HttpHandler(handler)
}

/// A function of `http` types serving as a [`Handler`]: see
/// [`http_handler`].
pub struct HttpHandler<F>(F);

impl<F, B> Handler for HttpHandler<F>
where
    F: Fn(http::Request<&[u8]>) -> http::Response<B> + Send + Sync + 'static,
    B: Into<Body>,
{
    fn handle(&self, request: &Request) -> Response {
        match request.to_http() {
            Ok(request) => Response::from((self.0)(request)),
            Err(_) => Response::new(400).with_body("the request target is not a URI\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http::header::{CONTENT_LENGTH, HeaderValue};

    #[test]
    fn a_request_moves_its_body_in_and_lends_it_out() {
        let body = b"the body".to_vec();
        let at = body.as_ptr();
        let peer: SocketAddr = "10.0.0.7:4242".parse().unwrap();
        let request = Request::from(
            http::Request::put("http://example.com/items/7?draft")
                .header("x-tag", "a")
                .header("X-Tag", "b")
                .header("x-bytes", HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap())
                .extension(peer)
                .body(body)
                .unwrap(),
        );
        assert_eq!(request.body().as_ptr(), at);
        assert_eq!(request.method(), "PUT");
        assert_eq!(request.path(), "/items/7");
        assert_eq!(request.query(), Some("draft"));
        assert_eq!(request.header("x-bytes"), Some("café"));
        assert_eq!(request.peer_addr(), Some(peer));

        let lent = request.to_http().unwrap();
        assert_eq!(lent.body().as_ptr(), at);
        assert_eq!(lent.method(), http::Method::PUT);
        assert_eq!(lent.uri(), "http://example.com/items/7?draft");
        assert_eq!(lent.version(), http::Version::HTTP_11);
        let tags: Vec<_> = lent.headers().get_all("x-tag").iter().collect();
        assert_eq!(tags, ["a", "b"]);
        assert_eq!(lent.extensions().get::<SocketAddr>(), Some(&peer));
    }

    #[test]
    fn odd_but_valid_requests_convert_both_ways() {
        for (method, target) in [
            ("OPTIONS", "*"),
            ("CONNECT", "example.com:443"),
            ("PURGE", "/cache/a%20b"),
        ] {
            let request = Request::from(
                http::Request::builder()
                    .method(method)
                    .uri(target)
                    .version(http::Version::HTTP_10)
                    .body(Vec::new())
                    .unwrap(),
            );
            assert_eq!(request.method(), method);
            assert_eq!(request.target(), target);
            assert_eq!(request.version(), Version::Http10);
            let lent = request.to_http().unwrap();
            assert_eq!(lent.uri(), target);
            assert_eq!(lent.version(), http::Version::HTTP_10);
        }
    }

    #[test]
    fn a_response_moves_its_body_both_ways() {
        let body = b"moved".to_vec();
        let at = body.as_ptr();
        let response = Response::from(
            http::Response::builder()
                .status(http::StatusCode::CREATED)
                .header("location", "/items/7")
                .body(body)
                .unwrap(),
        );
        assert_eq!(response.status(), 201);
        assert_eq!(response.header("Location"), Some("/items/7"));
        assert_eq!(response.body_bytes().unwrap().as_ptr(), at);

        let back = http::Response::from(response);
        assert_eq!(back.status(), http::StatusCode::CREATED);
        assert_eq!(back.headers()["location"], "/items/7");
        assert_eq!(back.body().as_bytes().unwrap().as_ptr(), at);

        let shared = Bytes::from_static(b"static");
        let response = Response::from(http::Response::new(shared.clone()));
        assert_eq!(response.body_bytes().unwrap().as_ptr(), shared.as_ptr());
    }

    #[test]
    fn a_status_code_is_a_response() {
        let response = Response::from(http::StatusCode::NO_CONTENT);
        assert_eq!(response.status(), 204);
        assert_eq!(response.status_code(), http::StatusCode::NO_CONTENT);
        assert_eq!(response.body_bytes(), Some(&b""[..]));
    }

    #[test]
    fn framing_headers_from_an_http_response_are_not_sent() {
        let response = Response::from(
            http::Response::builder()
                .header(CONTENT_LENGTH, "99")
                .header("transfer-encoding", "chunked")
                .header("x-kept", "1")
                .body("hi")
                .unwrap(),
        );
        let mut out = Vec::new();
        response.write_head(
            &mut out,
            crate::response::Framing::Length(2),
            crate::response::KeepAlive::Implied,
        );
        let head = String::from_utf8(out).unwrap();
        assert!(head.contains("\r\nx-kept: 1\r\n"), "{head}");
        assert!(head.contains("\r\ncontent-length: 2\r\n"), "{head}");
        assert!(!head.contains("99") && !head.contains("chunked"), "{head}");
    }

    #[test]
    fn an_http_handler_answers_through_the_handler_trait() {
        let handler = http_handler(|request: http::Request<&[u8]>| {
            http::Response::builder()
                .header("x-method", request.method().as_str())
                .body(request.body().to_vec())
                .unwrap()
        });
        let request = Request::from(http::Request::post("/echo").body("ping").unwrap());
        let response = handler.handle(&request);
        assert_eq!(response.status(), 200);
        assert_eq!(response.header("x-method"), Some("POST"));
        assert_eq!(response.body_bytes(), Some(&b"ping"[..]));
    }
}

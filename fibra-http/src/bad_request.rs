//! A request a handler refuses, and why: its `400 Bad Request`.

use crate::Response;
use std::fmt;

/// A request a handler refuses, with the reason: it converts into a
/// `400 Bad Request` [`Response`] whose plain-text body is the reason, so a
/// handler answers it with `return bad.into()`, or writes its work as a
/// function returning `Result<Response, BadRequest>` and answers
/// `.unwrap_or_else(Response::from)`.
///
/// With the `serde` feature, `Request::json` and `Request::query_as` return
/// one for input that does not parse, with serde's description of what is
/// wrong.
///
/// ```
/// use fibra_http::{BadRequest, Handler, Request, Response, Router};
///
/// fn page(request: &Request) -> Result<Response, BadRequest> {
///     let n: u32 = request
///         .param("n")
///         .and_then(|n| n.parse().ok())
///         .ok_or_else(|| BadRequest::new("the page is not a number"))?;
///     Ok(Response::text(format!("page {n}\n")))
/// }
///
/// let router = Router::new().get("/pages/:n", |r: &Request| page(r).unwrap_or_else(Response::from));
/// let bad = Request::from(http::Request::get("/pages/seven").body(Vec::new())?);
/// let response = router.handle(&bad);
/// assert_eq!(response.status(), 400);
/// assert_eq!(response.body_bytes(), Some(&b"the page is not a number\n"[..]));
/// # Ok::<(), http::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRequest {
    reason: String,
}

impl BadRequest {
    /// A refusal for `reason`, a sentence for the client.
    pub fn new(reason: impl Into<String>) -> BadRequest {
        BadRequest {
            reason: reason.into(),
        }
    }

    /// Why the request is refused.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for BadRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for BadRequest {}

/// `400 Bad Request`, with the reason and a newline as a
/// `text/plain; charset=utf-8` body.
impl From<BadRequest> for Response {
    fn from(bad: BadRequest) -> Response {
        let mut body = bad.reason;
        body.push('\n');
        Response::text(body).with_status(400)
    }
}

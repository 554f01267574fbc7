//! Typed requests and responses through serde (the `serde` feature): a
//! query or a JSON body read as a value, a value sent as JSON.

use crate::{BadRequest, Request, Response};
use serde::{Deserialize, Serialize};

impl Request {
    /// The query read as a `T` (its fields named as the query's names,
    /// percent-decoded as [`query_pairs`](Self::query_pairs)), with
    /// `serde_urlencoded`. A target without a query reads as an empty one,
    /// so a `T` whose fields are all `Option` or `#[serde(default)]` still
    /// reads.
    ///
    /// ```
    /// use fibra_http::Request;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Page {
    ///     n: u32,
    ///     #[serde(default)]
    ///     size: Option<u32>,
    /// }
    ///
    /// let request = Request::from(http::Request::get("/todos?n=2").body(Vec::new())?);
    /// let page: Page = request.query_as()?;
    /// assert_eq!((page.n, page.size), (2, None));
    ///
    /// let bad = Request::from(http::Request::get("/todos?n=two").body(Vec::new())?);
    /// let refused = bad.query_as::<Page>().err().expect("a refusal");
    /// assert_eq!(refused.reason(), "invalid query: invalid digit found in string");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`BadRequest`] for a query that does not read as a `T` (a field
    /// missing or of the wrong type), with serde's reason; it converts into
    /// a `400 Bad Request` response.
    pub fn query_as<'de, T: Deserialize<'de>>(&'de self) -> Result<T, BadRequest> {
        serde_urlencoded::from_str(self.query().unwrap_or_default())
            .map_err(|err| BadRequest::new(format!("invalid query: {err}")))
    }

    /// The body read as JSON into a `T`, with `serde_json` (its strings may
    /// borrow from the body). The `Content-Type` is not checked: a client
    /// that sends JSON as a form (as `curl -d` does) is served as well.
    ///
    /// ```
    /// use fibra_http::{Handler, Request, Response, Router};
    ///
    /// #[derive(serde::Deserialize, serde::Serialize)]
    /// struct Todo {
    ///     title: String,
    ///     done: bool,
    /// }
    ///
    /// let router = Router::new().post("/todos", |request: &Request| {
    ///     match request.json::<Todo>() {
    ///         Ok(todo) => Response::json_value(&todo).with_status(201),
    ///         Err(bad) => bad.into(), // 400, with the reason
    ///     }
    /// });
    /// let post = |body: &str| -> Result<Response, http::Error> {
    ///     Ok(router.handle(&Request::from(http::Request::post("/todos").body(body.to_string())?)))
    /// };
    /// let created = post(r#"{"title":"write docs","done":false}"#)?;
    /// assert_eq!(created.status(), 201);
    /// let refused = post(r#"{"title":"write docs"}"#)?;
    /// assert_eq!(refused.status(), 400);
    /// assert_eq!(
    ///     refused.body_bytes(),
    ///     Some(&b"invalid JSON body: missing field `done` at line 1 column 22\n"[..])
    /// );
    /// # Ok::<(), http::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`BadRequest`] for a body that is not JSON or not a `T`, with
    /// serde_json's reason and where in the body; it converts into a
    /// `400 Bad Request` response.
    pub fn json<'de, T: Deserialize<'de>>(&'de self) -> Result<T, BadRequest> {
        serde_json::from_slice(self.body())
            .map_err(|err| BadRequest::new(format!("invalid JSON body: {err}")))
    }
}

impl Response {
    /// `200 OK` with `value` as an `application/json` body, written by
    /// `serde_json` (another status with [`with_status`](Self::with_status)).
    ///
    /// ```
    /// use fibra_http::Response;
    ///
    /// #[derive(serde::Serialize)]
    /// struct Todo<'a> {
    ///     id: u64,
    ///     title: &'a str,
    /// }
    ///
    /// let response = Response::json_value(&Todo { id: 7, title: "write docs" });
    /// assert_eq!(response.header("content-type"), Some("application/json"));
    /// assert_eq!(response.body_bytes(), Some(&br#"{"id":7,"title":"write docs"}"#[..]));
    /// ```
    ///
    /// # Panics
    ///
    /// If `value` cannot be written as JSON: a map whose keys are not
    /// strings or numbers, or a `Serialize` implementation that fails. That
    /// is a bug in the handler, whose client gets a `500`.
    pub fn json_value<T: Serialize + ?Sized>(value: &T) -> Response {
        match serde_json::to_vec(value) {
            Ok(body) => Response::json(body),
            Err(err) => panic!("fibra-http: the response is not JSON: {err}"),
        }
    }
}

//! The access log middleware (cargo feature `log`).

use super::{Next, current_request_id};
use crate::{Request, Response};
use fibra::runtime::Cancelled;
use fibra::time::Expired;
use std::fmt::{self, Display};
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// The `log` target of the lines.
const TARGET: &str = "fibra_http::access";

/// A middleware that logs one line per request, through the `log` crate
/// (cargo feature `log`) at level `Info` with target `fibra_http::access`,
/// once the wrapped handler has answered:
///
/// ```text
/// 127.0.0.1:50312 "GET /todos/7" 200 27 0.412ms id=1f0c3d9e5a7b2c41-0
/// ```
///
/// The client's address (`-` where there is none), the method and path
/// (without the query, which may hold what a log should not), the status,
/// the body's length in bytes (`-` for a streamed [`Body`](crate::Body),
/// whose length is not known yet), how long the handlers inside took to
/// answer, and the request id where a [`request_id`](super::request_id)
/// middleware outside this one gave it one. A handler that panics is logged
/// with the `500` the server answers for it (and `-` bytes); one unwound by
/// the server's shutdown, or by a deadline outside this middleware, is not
/// logged here (put [`deadline`](super::deadline) inside it to log its
/// `503`).
///
/// Any `log` implementation collects the lines (`env_logger`, `simplelog`,
/// `log4rs`, or your own); with none installed, nothing is formatted.
///
/// With the cargo feature `tracing`, each request is also (or, without
/// `log`, only) a `tracing` event at level `INFO` with the same target,
/// whose fields are `peer`, `method`, `path`, `status`, `bytes`,
/// `duration_ms` and `request_id` (absent without one), for a subscriber
/// to format or filter as it likes.
///
/// ```
/// use fibra_http::middleware::access_log;
/// use fibra_http::{Request, Response, Router};
///
/// let router = Router::new()
///     .get("/hello", |_: &Request| Response::text("Hello\n"))
///     .wrap(access_log());
/// // env_logger::init(); Server::bind("127.0.0.1:8080")?.serve(router)?;
/// # let _ = router;
/// ```
pub fn access_log() -> impl Fn(&Request, Next<'_>) -> Response + Send + Sync {
    |request: &Request, next: Next<'_>| {
        let start = Instant::now();
        match panic::catch_unwind(AssertUnwindSafe(|| next.run(request))) {
            Ok(response) => {
                let bytes = response.body_bytes().map(<[u8]>::len);
                log_line(request, response.status(), bytes, start.elapsed());
                response
            }
            Err(payload) => {
                if !payload.is::<Cancelled>() && !payload.is::<Expired>() {
                    log_line(request, 500, None, start.elapsed());
                }
                panic::resume_unwind(payload)
            }
        }
    }
}

/// Logs the line for a request answered `status` with `bytes` of body (to
/// whichever of `log` and `tracing` are on).
fn log_line(request: &Request, status: u16, bytes: Option<usize>, took: Duration) {
    #[cfg(feature = "log")]
    if log::log_enabled!(target: TARGET, log::Level::Info) {
        let id = current_request_id().map(|id| format!(" id={id}"));
        log::info!(
            target: TARGET,
            "{} \"{} {}\" {status} {} {:.3}ms{}",
            Dash(request.peer_addr()),
            request.method(),
            request.path(),
            Dash(bytes),
            took.as_secs_f64() * 1e3,
            id.as_deref().unwrap_or_default(),
        );
    }
    #[cfg(feature = "tracing")]
    tracing::info!(
        target: TARGET,
        peer = %Dash(request.peer_addr()),
        method = request.method(),
        path = request.path(),
        status,
        bytes = %Dash(bytes),
        duration_ms = took.as_secs_f64() * 1e3,
        request_id = current_request_id().as_deref(),
        "request answered",
    );
}

/// Shows `-` for `None`.
struct Dash<T>(Option<T>);

impl<T: Display> Display for Dash<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(value) => value.fmt(f),
            None => f.write_str("-"),
        }
    }
}

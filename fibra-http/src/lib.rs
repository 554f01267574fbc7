//! A small HTTP/1.1 server on [fibra]: a green thread per connection, so a
//! handler is a plain function that may block — sleep, read a socket, wait on
//! a channel — without holding up other connections, and no `async` anywhere.
//!
//! ```no_run
//! use fibra_http::{Mode, Request, Response, Router, Server};
//! use std::time::Duration;
//!
//! let router = Router::new()
//!     .get("/hello", |_: &Request| Response::text("Hello, world!\n"))
//!     .get("/slow", |_: &Request| {
//!         fibra::time::sleep(Duration::from_secs(2)); // parks this connection only
//!         Response::text("done\n")
//!     });
//! Server::builder()
//!     .mode(Mode::ractors_per_core())
//!     .bind("127.0.0.1:8080")?
//!     .serve(router)?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Two modes, one handler
//!
//! - [`Mode::Threads`]: one OS thread, a green thread per connection — Ruby's
//!   threads under the GVL: IO overlaps, CPU work shares one core.
//! - [`Mode::Ractors`]: a Ractor per core, each with a green thread per
//!   connection it is given — Ruby's Ractors: CPU work runs on every core.
//!   A handler given to [`Server::serve`] is shared by all of them, so it is
//!   `Send + Sync`; [`Server::serve_with`] makes one on each instead (see
//!   below).
//!
//! # Routing
//!
//! A [`Router`] picks a handler by method and path: fixed paths, path
//! parameters (`/todos/:id`) and a trailing rest (`/files/*path`), read with
//! [`Request::param`]; the most specific route wins, and two routes that
//! cannot be told apart are refused when added. The query is read as pairs
//! with [`Request::query_pairs`]. With the `serde` cargo feature,
//! `Request::query_as` and `Request::json` read a query or a JSON body as a
//! typed value — refusing bad input with a [`BadRequest`], which converts
//! into a `400` with the reason — and `Response::json_value` answers with
//! one. `404` and `405` can be answered by handlers of your
//! own ([`Router::not_found`], [`Router::method_not_allowed`]).
//!
//! # Middleware
//!
//! [`Router::wrap`] runs a function around every request a router answers:
//! it sees the request, calls the handler through [`Next`] (or answers
//! itself) and sees the response. The [`middleware`] module has an access
//! log (one line per request through the `log` crate, with the `log` cargo
//! feature, or a `tracing` event, with `tracing`), a per-request deadline (`503` for a handler still waiting when
//! it passes, unwound with its destructors run) and a request id
//! (`x-request-id`, taken from the client or made, read by the handler);
//! its docs say in which order they compose.
//!
//! # Sharing state between handlers
//!
//! Every connection is served by a green thread, and every green thread of
//! a worker runs on that worker's one OS thread — the server's thread in
//! threads mode, each Ractor's in ractors mode. Where state lives follows
//! from that.
//!
//! **State of each worker** is made by the worker: [`Server::serve_with`]
//! runs a factory once on each (once in all, in threads mode) and serves
//! that worker's connections with the handler it returns, typically a
//! [`Router::local`]. Its state never leaves that OS thread, so it is plain
//! `Rc`, `Cell` and `RefCell` — no atomic operation, no lock between threads
//! — and, where a handler must keep it locked while it waits (on IO, a
//! timer, another request), one of fibra's locks,
//! [`fibra::sync::Mutex`] or [`RwLock`](fibra::sync::RwLock), which park the
//! waiting green thread only. Counters, caches, pools of connections to a
//! database or another service fit here; so does everything in threads
//! mode, where the one worker is the whole server.
//!
//! **State of the whole server**, which every worker must see alike, is
//! shared between OS threads: an `Arc` of what is immutable (the
//! configuration) or atomic (a total), an `Arc` of a `std::sync::Mutex`
//! that is locked only between two waits (see below), or an owner that the
//! others send work to: a Ractor, or a cross-thread queue
//! (`fibra::sync::Queue`). A factory captures it and clones it into each
//! worker's handler.
//!
//! ```
//! use fibra_http::{Handler, Request, Response, Router};
//! use std::cell::Cell;
//! use std::rc::Rc;
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! let total = Arc::new(AtomicU64::new(0)); // every worker's
//! let make_router = move || -> Router<dyn Handler> {
//!     let (total, mine) = (total.clone(), Rc::new(Cell::new(0))); // this worker's
//!     Router::local().get("/hits", move |_: &Request| {
//!         mine.set(mine.get() + 1);
//!         let all = total.fetch_add(1, Ordering::Relaxed) + 1;
//!         Response::text(format!("{} here, {all} in all\n", mine.get()))
//!     })
//! };
//! // Server::builder().mode(Mode::ractors_per_core()).bind(addr)?.serve_with(make_router)?;
//! # let (one, two) = (make_router(), make_router());
//! # let hits = || fibra_http::Request::from(http::Request::get("/hits").body(Vec::new()).unwrap());
//! # one.handle(&hits());
//! # assert_eq!(two.handle(&hits()).body_bytes(), Some(&b"1 here, 2 in all\n"[..]));
//! ```
//!
//! **Why a std lock held across a wait hangs the server.** A handler that
//! locks a `std::sync::Mutex` and then waits while holding it — sleeps,
//! reads a socket, waits on a channel or a fibra lock — parks its green
//! thread, and the OS thread runs the worker's other connections. The next
//! of them to lock the same mutex blocks *the OS thread* in the kernel: the
//! green thread holding the lock can no longer be resumed to unlock it, so
//! that worker serves nothing again, ever (fibra names the busy green thread
//! on stderr, but cannot end the wait). In ractors mode the workers that
//! lock it next hang in turn. A fibra lock parks the green thread that
//! waits instead, so the holder runs on; it is runtime-local (`!Send`), so
//! the compiler keeps it on its worker. A std lock shared between workers
//! is safe where nothing between its lock and its unlock can wait.
//!
//! # Streaming
//!
//! A body of bytes is sent whole, and [`Body::stream`] sends a reader
//! gathered 64 KiB at a time. A body whose pieces must reach the client as
//! they are made is a [`Body::writer`]: the handler returns the status and
//! headers, and its closure then writes the body on the connection's green
//! thread, each [`flush`](std::io::Write::flush) sending what it has. A slow
//! client parks the writer (the server holds at most 16 KiB for it), and one
//! that has gone fails its writes. [`Response::sse`] builds server-sent
//! events on it ([`Event`], [`EventStream`]), one flush per event.
//!
//! The other way, a request body is read whole before its handler runs,
//! up to [`Limits::max_body_bytes`]; a handler made with [`streaming`] reads
//! it as a [`RequestBody`] (a `Read`) as it arrives instead, within the same
//! limits:
//!
//! ```no_run
//! use fibra_http::{Event, Request, RequestBody, Response, Router, streaming};
//! use std::io;
//!
//! let router = Router::new()
//!     .get("/events", |_: &Request| {
//!         Response::sse(|events| events.send(&Event::new("hello").event("greeting")))
//!     })
//!     .post("/upload", streaming(|_: &Request, body: &mut RequestBody<'_>| {
//!         match io::copy(body, &mut io::sink()) {
//!             Ok(n) => Response::text(format!("{n} bytes\n")),
//!             Err(_) => Response::new(400),
//!         }
//!     }));
//! # let _ = router;
//! ```
//!
//! # Switching protocols
//!
//! A handler may take its connection over from HTTP: [`Request::upgrade`]
//! checks that the client asked to switch (HTTP/1.1, `Connection: upgrade`,
//! `Upgrade` naming the protocol; else an [`UpgradeError`], a `426`), returns
//! the `101 Switching Protocols` to send, and then runs a closure on the
//! connection's green thread with an [`Upgraded`] stream — a `Read + Write`
//! over TCP or TLS alike, starting with whatever the client sent behind its
//! request, readable by one green thread while another writes. A WebSocket
//! library that works over any `Read + Write` (tungstenite) speaks the new
//! protocol on it: `examples/websocket_chat.rs` is a chat server. A graceful
//! shutdown closes upgraded connections when it begins.
//!
//! # The `http` crate's types
//!
//! [`Response`] is made of the [`http`] crate's `StatusCode` and `HeaderMap`,
//! and converts to and from `http::Response` by moving them and the body.
//! [`Request::to_http`] lends a request as `http::Request<&[u8]>` (the body
//! borrowed, not copied), and [`http_handler`] serves a function from
//! `http::Request<&[u8]>` to `http::Response<B>`, so handler code and tests
//! written for hyper, axum or tower's types serve here unchanged:
//!
//! ```no_run
//! use fibra_http::{http, http_handler, Server};
//!
//! fn hello(_: http::Request<&[u8]>) -> http::Response<&'static str> {
//!     http::Response::new("Hello, world!\n")
//! }
//! Server::bind("127.0.0.1:8080")?.serve(http_handler(hello))?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # HTTPS
//!
//! With the `tls` cargo feature, `Builder::tls` takes a rustls
//! `ServerConfig` (its certificates, versions, ciphers) and the server
//! speaks HTTPS: a TLS session per connection, on the green thread that
//! serves it, with keep-alive, pipelining and the limits as over TCP. The
//! handshake must end within `request_timeout`, and one that fails — or a
//! client speaking plain HTTP — closes that connection only. `Builder::tls`'s
//! docs show a server in a few lines.
//!
//! The feature is off by default: rustls and its crypto provider (ring,
//! which builds C and assembly) would be in every user's build, and many
//! servers never need them — they sit behind a proxy or load balancer that
//! terminates TLS, or on a private network. Those who serve HTTPS
//! themselves turn it on:
//! `fibra-http = { version = "0.1", features = ["tls"] }`. rustls's
//! `ServerConfig::builder()` picks ring as the process's provider unless
//! another crate in the build also turns on rustls's aws-lc-rs; then name
//! one with `ServerConfig::builder_with_provider`.
//!
//! # The protocol
//!
//! HTTP/1.1 and 1.0 (a later 1.x is answered as 1.1, RFC 9110 §2.5; empty
//! lines before a request line are skipped, RFC 9112 §2.2): keep-alive (1.1
//! by default, 1.0 when asked) and pipelining (answered in order, in as few
//! writes as possible, and before the server waits for more of the client's
//! bytes); targets in origin, absolute and asterisk form (see
//! [`Request::path`] and [`Request::authority`]); request
//! bodies framed by `Content-Length` or chunked (decoded before the handler
//! runs; `Expect: 100-continue` is answered); responses framed by
//! `Content-Length`, or chunked for a streamed [`Body`] (to an HTTP/1.0
//! client, which knows no chunked coding, sent as it is and ended by the
//! connection's close); `HEAD` answered without a body; `Date` on every
//! response.
//!
//! # Bad input
//!
//! A client can cost only its own connection. Each failure has one outcome,
//! after which the connection closes (see [`Limits`] for the bounds):
//!
//! | the client | the answer |
//! |---|---|
//! | sends a malformed request line (a version that is not `HTTP/` DIGIT `.` DIGIT, such as `HTTP/01.1`, included) or header, a bad `Content-Length`, both or conflicting framings, more than one `Host` (in any version) or none in HTTP/1.1, or one that is not `host[:port]` (RFC 3986) | `400 Bad Request` |
//! | sends a target in no form its method may use (RFC 9112 §3.2): not a path (`/…`) nor an absolute URI with a valid `host[:port]` (`GET hello`, `GET !`), `*` with a method other than `OPTIONS`, `host:port` with one other than `CONNECT` | `400 Bad Request` |
//! | sends a chunked body with a chunk line outside RFC 9112's grammar (a bare LF or a control byte anywhere in it, whitespace that no `;` follows, a malformed extension), a chunk line over 1 KiB, more than 16 KiB of chunk extensions (and leading zeros) in one request, or a chunk or trailer line not ended by CRLF | `400 Bad Request` |
//! | sends a request line over `max_head_bytes` | `414 URI Too Long` |
//! | sends a head over `max_head_bytes` or more than `max_headers` fields | `431 Request Header Fields Too Large` |
//! | announces or sends a body over `max_body_bytes` | `413 Content Too Large` |
//! | sends `Transfer-Encoding` naming no coding (empty, or only commas), or with chunked not last or repeated | `400 Bad Request` |
//! | uses a transfer coding other than chunked (whatever `Content-Length` says) | `501 Not Implemented` |
//! | expects something other than `100-continue` | `417 Expectation Failed` |
//! | sends a request line with a well-formed HTTP version other than 1.x (`HTTP/2.0`, `HTTP/0.9`) | `505 HTTP Version Not Supported` |
//! | stalls within a request past `request_timeout` (slowloris), or takes longer than `whole_request_timeout` to send all of one | `408 Request Timeout` |
//! | idles between requests past `keep_alive_timeout`, disconnects or resets | the connection closes, nothing else |
//! | (HTTPS) sends part of a TLS record between requests and stalls: nothing of it can be read, but something has begun | the connection closes at `request_timeout` (not `keep_alive_timeout`), nothing else |
//! | triggers a panic in the handler | `500 Internal Server Error` |
//!
//! The server never stops accepting on a client's account.

#![deny(missing_docs)]

mod bad_request;
mod body_writer;
mod chunked;
mod conn;
mod connections;
mod date;
#[doc(hidden)]
pub mod fuzzing;
mod handler;
mod header_maps;
mod host;
mod http_types;
mod limits;
pub mod middleware;
mod params;
mod pattern;
mod request;
mod request_body;
mod response;
mod router;
mod server;
mod shutdown;
mod sse;
mod status;
#[cfg(feature = "tls")]
mod tls;
mod transport;
#[cfg(feature = "serde")]
mod typed;
mod upgrade;
mod version;

pub use bad_request::BadRequest;
pub use body_writer::BodyWriter;
pub use handler::{Accepts, Handler};
pub use http;
pub use http_types::{HttpHandler, http_handler};
pub use limits::Limits;
pub use middleware::{Middleware, Next, Wrap};
pub use request::{Request, Version};
pub use request_body::{RequestBody, Streaming, streaming};
pub use response::{Body, Response};
pub use router::Router;
pub use server::{Builder, Mode, Server};
pub use shutdown::ShutdownHandle;
pub use sse::{Event, EventStream};
pub use status::reason;
pub use upgrade::{UpgradeError, Upgraded};

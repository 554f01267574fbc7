//! fibra-http over real sockets: the protocol, every bad-input case (raw bytes
//! in, status and close asserted), graceful shutdown, and many connections.
//! Each case runs in both modes where the mode could matter.

mod common;

use common::Running;
use fibra_http::{Body, Limits, Mode, Request, Response, Router, Server, http, http_handler};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];

/// How many `/sleep` handlers have started, so that a test can act while one
/// is in flight without guessing how long the request takes to get there.
static SLEEPERS: AtomicUsize = AtomicUsize::new(0);

fn router() -> Router {
    Router::new()
        .get("/hello", |_: &Request| Response::text("Hello, world!\n"))
        .post("/echo", |r: &Request| {
            Response::new(200).with_body(r.body().to_vec())
        })
        .get("/sleep", |r: &Request| {
            SLEEPERS.fetch_add(1, Ordering::SeqCst);
            let ms = r.query().and_then(|q| q.parse().ok()).unwrap_or(100);
            fibra::time::sleep(Duration::from_millis(ms));
            Response::text("slept\n")
        })
        .get("/panic", |_: &Request| -> Response {
            panic!("a handler bug")
        })
        .get("/stream", |_: &Request| {
            let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
            Response::new(200).with_body(Body::stream(std::io::Cursor::new(data)))
        })
        .get("/agent", |r: &Request| {
            Response::text(r.header("user-agent").unwrap_or("none").to_string())
        })
        .get("/close", |_: &Request| {
            Response::text("bye\n").with_header("connection", "close")
        })
}

impl Running {
    fn start(mode: Mode, limits: Limits) -> Running {
        Running::build(Server::builder().mode(mode).limits(limits))
    }

    fn build(builder: fibra_http::Builder) -> Running {
        Running::serving(builder, router)
    }

    fn new(mode: Mode) -> Running {
        Running::start(mode, Limits::default())
    }
}

const GET_HELLO: &[u8] = b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    for mode in MODES {
        let server = Running::new(mode);
        let mut client = server.client();
        for _ in 0..100 {
            client.send(GET_HELLO);
            let reply = client.response();
            assert_eq!(reply.status, 200);
            assert_eq!(reply.body, b"Hello, world!\n");
            assert_eq!(reply.header("connection"), None);
            assert!(reply.header("date").is_some());
        }
    }
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    for mode in MODES {
        let server = Running::new(mode);
        let mut client = server.client();
        let mut burst = Vec::new();
        for i in 0..50 {
            burst.extend_from_slice(
                format!("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{i:02}")
                    .as_bytes(),
            );
        }
        burst.extend_from_slice(GET_HELLO);
        client.send(&burst);
        for i in 0..50 {
            let reply = client.response();
            assert_eq!(reply.status, 200);
            assert_eq!(reply.body, format!("{i:02}").as_bytes());
        }
        assert_eq!(client.response().body, b"Hello, world!\n");
    }
}

/// A handler written against the `http` crate's types, as for hyper or axum.
fn http_echo(request: http::Request<&[u8]>) -> http::Response<Vec<u8>> {
    let agent = request.headers().get(http::header::USER_AGENT).cloned();
    let mut response = http::Response::builder()
        .status(http::StatusCode::CREATED)
        .header("x-path", request.uri().path())
        .header("x-version", format!("{:?}", request.version()))
        .header(
            "x-peer",
            request
                .extensions()
                .get::<SocketAddr>()
                .is_some()
                .to_string(),
        )
        // Framing is the server's: these are not sent.
        .header(http::header::CONTENT_LENGTH, "999")
        .header(http::header::TRANSFER_ENCODING, "gzip");
    if let Some(agent) = agent {
        response = response.header("x-agent", agent);
    }
    response.body(request.body().to_vec()).unwrap()
}

#[test]
fn an_http_typed_handler_serves_keep_alive_and_pipelined_requests() {
    for mode in MODES {
        let server = Running::serving(Server::builder().mode(mode), || http_handler(http_echo));
        let mut client = server.client();
        let mut burst = Vec::new();
        for i in 0..3 {
            burst.extend_from_slice(
                format!(
                    "POST /echo/{i} HTTP/1.1\r\nHost: t\r\nUser-Agent: raw/{i}\r\n\
                     Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                )
                .as_bytes(),
            );
        }
        client.send(&burst);
        for i in 0..3 {
            let reply = client.response();
            assert_eq!(reply.status, 201);
            assert_eq!(reply.body, b"abc");
            assert_eq!(reply.header("x-path"), Some(format!("/echo/{i}").as_str()));
            assert_eq!(reply.header("x-agent"), Some(format!("raw/{i}").as_str()));
            assert_eq!(reply.header("x-version"), Some("HTTP/1.1"));
            assert_eq!(reply.header("x-peer"), Some("true"));
            assert_eq!(reply.header("content-length"), Some("3"));
            assert_eq!(reply.header("transfer-encoding"), None);
        }
        // A target that the server reads but the `http` crate's URI refuses.
        client.send(b"GET /a`b HTTP/1.0\r\n\r\n");
        assert_eq!(client.response().status, 400);
        assert!(client.is_closed());
    }
}

#[test]
fn http_1_0_closes_unless_asked_to_keep_alive() {
    let server = Running::new(Mode::Threads);
    let mut client = server.client();
    client.send(b"GET /hello HTTP/1.0\r\n\r\n");
    assert!(client.response().closes());
    assert!(client.is_closed());

    let mut client = server.client();
    for _ in 0..3 {
        client.send(b"GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let reply = client.response();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("connection"), Some("keep-alive"));
    }
}

#[test]
fn connection_close_from_either_side_ends_the_connection_after_the_response() {
    let server = Running::new(Mode::Threads);
    let mut client = server.client();
    client.send(b"GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let reply = client.response();
    assert_eq!((reply.status, reply.closes()), (200, true));
    assert!(client.is_closed());

    let mut client = server.client();
    client.send(b"GET /close HTTP/1.1\r\nHost: t\r\n\r\n");
    let reply = client.response();
    assert_eq!(
        (reply.body.as_slice(), reply.closes()),
        (&b"bye\n"[..], true)
    );
    assert!(client.is_closed());
}

#[test]
fn bodies_by_length_and_chunked_reach_the_handler() {
    for mode in MODES {
        let server = Running::new(mode);
        let mut client = server.client();
        client.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world");
        assert_eq!(client.response().body, b"hello world");

        client.send(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
              5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
        );
        assert_eq!(client.response().body, b"hello 0123456789");

        // A large body arriving in pieces, chunked.
        let piece = vec![b'x'; 40_000];
        client.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
        for _ in 0..5 {
            client.send(format!("{:x}\r\n", piece.len()).as_bytes());
            client.send(&piece);
            client.send(b"\r\n");
        }
        client.send(b"0\r\n\r\n");
        assert_eq!(client.response().body.len(), 200_000);
        // The connection is still in step.
        client.send(GET_HELLO);
        assert_eq!(client.response().body, b"Hello, world!\n");
    }
}

#[test]
fn expect_100_continue_is_answered_before_the_body_is_sent() {
    let server = Running::new(Mode::Threads);
    let mut client = server.client();
    client.send(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n",
    );
    let mut interim = [0; 25];
    client.stream.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    client.send(b"ping");
    assert_eq!(client.response().body, b"ping");
}

#[test]
fn a_streamed_response_is_sent_chunked() {
    for mode in MODES {
        let server = Running::new(mode);
        let mut client = server.client();
        client.send(b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\n");
        let reply = client.response();
        assert_eq!(reply.header("transfer-encoding"), Some("chunked"));
        assert_eq!(reply.body.len(), 100_000);
        assert!(
            reply
                .body
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i % 251) as u8)
        );
    }
}

#[test]
fn head_gets_the_headers_and_no_body() {
    let server = Running::new(Mode::Threads);
    let mut client = server.client();
    client.send(b"HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n");
    let reply = client.head_response();
    assert_eq!(reply.header("content-length"), Some("14"));
    // A body sent anyway would sit in front of the next response and break
    // its status line.
    client.send(GET_HELLO);
    let reply = client.response();
    assert_eq!(
        (reply.status, reply.body.as_slice()),
        (200, &b"Hello, world!\n"[..])
    );
}

#[test]
fn unknown_paths_and_methods_get_404_and_405() {
    let server = Running::new(Mode::Threads);
    let mut client = server.client();
    client.send(b"GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(client.response().status, 404);
    client.send(b"DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n");
    let reply = client.response();
    assert_eq!(
        (reply.status, reply.header("allow")),
        (405, Some("GET, HEAD")),
        "a GET route answers HEAD too"
    );
    client.send(GET_HELLO);
    assert_eq!(client.response().status, 200);
}

/// RFC 9112 §3.2.2: a server accepts a target in absolute form and routes
/// on its path; `OPTIONS *` asks about the server itself.
#[test]
fn absolute_form_targets_route_on_their_path_and_options_star_gets_200() {
    for mode in MODES {
        let server = Running::new(mode);
        let mut client = server.client();
        client.send(b"GET http://x/hello HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(client.response().body, b"Hello, world!\n");
        client.send(
            b"POST HTTPS://x:8443/echo?q=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi",
        );
        assert_eq!(client.response().body, b"hi");
        client.send(b"GET http://x HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(client.response().status, 404, "the path is /");
        client.send(b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
        let reply = client.response();
        assert_eq!(reply.status, 200);
        assert!(reply.body.is_empty());
        assert!(reply.header("allow").unwrap().contains("POST"));
        // Still in step.
        client.send(GET_HELLO);
        assert_eq!(client.response().status, 200);
    }
}

#[test]
fn malformed_requests_get_400_and_a_close() {
    for mode in MODES {
        let server = Running::new(mode);
        let cases: [&[u8]; 10] = [
            b"GARBAGE\r\n\r\n",
            b"GET /hello HTTP/1.x\r\nHost: t\r\n\r\n",
            b"GET /hello HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n",
            b"GET /hello HTTP/1.1\r\n\r\n",
            b"GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n",
        ];
        for raw in cases {
            server.client().rejected(raw, 400);
        }
        // The server still serves.
        let mut client = server.client();
        client.send(GET_HELLO);
        assert_eq!(client.response().status, 200);
    }
}

/// A chunk line is read as RFC 9112 writes it: a front-end that ends lines
/// at a bare LF would otherwise see other requests than the server does.
#[test]
fn a_chunk_line_that_is_not_strictly_well_formed_gets_400() {
    for mode in MODES {
        let server = Running::new(mode);
        let cases: [&[u8]; 7] = [
            // A bare LF in an extension: served once as "abcxyz".
            b"GET /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              3;\nabc\r\nxyz\r\n0\r\n\r\n",
            // ... and a request smuggled behind one.
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              2;\nAB\r\nCD\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              2\nAB\r\n0\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              2;a=\"\x01\"\r\nAB\r\n0\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              2;a b\r\nAB\r\n0\r\n\r\n",
            // The CRLF after the data, and the trailer section's.
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              2\r\nAB\n0\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              2\r\nAB\r\n0\r\nX-T: 1\n\r\n",
        ];
        for raw in cases {
            server.client().rejected(raw, 400);
        }
        // Extensions that keep to the grammar are read and dropped.
        let mut client = server.client();
        client.send(
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              2 ; a = b ; c=\"d\\\"e\"\r\nAB\r\n0\r\n\r\n",
        );
        assert_eq!(client.response().body, b"AB");
    }
}

/// RFC 9110 §2.5: a later 1.x is read as 1.1; another major version is not
/// HTTP/1.x at all.
#[test]
fn versions_past_1_1_are_read_as_1_1_or_get_505() {
    for mode in MODES {
        let server = Running::new(mode);
        let mut client = server.client();
        for _ in 0..2 {
            client.send(b"GET /hello HTTP/1.2\r\nHost: t\r\n\r\n");
            let reply = client.response();
            assert_eq!((reply.status, reply.closes()), (200, false));
        }
        client.send(b"GET /hello HTTP/1.9\r\nHost: t\r\nConnection: close\r\n\r\n");
        assert_eq!(client.response().status, 200);
        assert!(client.is_closed());
        for raw in [
            &b"GET /hello HTTP/2.0\r\nHost: t\r\n\r\n"[..],
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            b"GET /hello HTTP/3.0\r\nHost: t\r\n\r\n",
            b"GET /hello HTTP/9.9\r\nHost: t\r\n\r\n",
            b"GET /hello HTTP/0.9\r\n\r\n",
        ] {
            server.client().rejected(raw, 505);
        }
    }
}

/// RFC 9112 §3.2: a Host that is not `uri-host [":" port]` gets 400.
#[test]
fn an_invalid_host_gets_400() {
    for mode in MODES {
        let server = Running::new(mode);
        for host in ["a b", "a/b", "a@b", "x:y", "[::1", "[nope]", "a%zz"] {
            let raw = format!("GET /hello HTTP/1.1\r\nHost: {host}\r\n\r\n");
            server.client().rejected(raw.as_bytes(), 400);
        }
        let mut client = server.client();
        for host in ["example.com:8080", "127.0.0.1", "[::1]:80", ""] {
            client.send(format!("GET /hello HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes());
            assert_eq!(client.response().status, 200, "{host:?}");
        }
    }
}

#[test]
fn oversized_heads_get_431() {
    let limits = Limits {
        max_head_bytes: 1024,
        max_headers: 8,
        ..Limits::default()
    };
    let server = Running::start(Mode::Threads, limits);
    let long = format!(
        "GET /hello HTTP/1.1\r\nHost: t\r\nX-Long: {}\r\n\r\n",
        "a".repeat(2000)
    );
    server.client().rejected(long.as_bytes(), 431);
    // Too big even before the head ends.
    let endless = format!("GET /hello HTTP/1.1\r\nX-Long: {}", "a".repeat(4000));
    server.client().rejected(endless.as_bytes(), 431);
    let mut many = String::from("GET /hello HTTP/1.1\r\nHost: t\r\n");
    for i in 0..9 {
        many.push_str(&format!("X-{i}: {i}\r\n"));
    }
    many.push_str("\r\n");
    server.client().rejected(many.as_bytes(), 431);
}

#[test]
fn a_request_line_over_the_head_limit_gets_414() {
    for mode in MODES {
        let server = Running::new(mode);
        let long = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(100_000));
        server.client().rejected(long.as_bytes(), 414);
    }
    let limits = Limits {
        max_head_bytes: 1024,
        ..Limits::default()
    };
    let server = Running::start(Mode::Threads, limits);
    // Over the limit before the line ends, and in a complete head.
    let endless = format!("GET /{}", "a".repeat(2000));
    server.client().rejected(endless.as_bytes(), 414);
    let whole = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(1100));
    server.client().rejected(whole.as_bytes(), 414);
}

#[test]
fn oversized_bodies_get_413_without_being_read() {
    let limits = Limits {
        max_body_bytes: 1000,
        ..Limits::default()
    };
    for mode in MODES {
        let server = Running::start(mode, limits.clone());
        server.client().rejected(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n",
            413,
        );
        let mut chunked =
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        chunked.extend_from_slice(b"3e8\r\n");
        chunked.extend_from_slice(&[b'x'; 1000]);
        chunked.extend_from_slice(b"\r\n1\r\ny\r\n0\r\n\r\n");
        server.client().rejected(&chunked, 413);
        // At the limit is fine.
        let mut client = server.client();
        client.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n");
        client.send(&[b'z'; 1000]);
        assert_eq!(client.response().body.len(), 1000);
    }
}

/// Any Transfer-Encoding field counts, even one that names no coding: a
/// front-end that reads it would frame the body otherwise.
#[test]
fn a_transfer_encoding_that_does_not_end_in_chunked_gets_400() {
    for mode in MODES {
        let server = Running::new(mode);
        let cases: [&[u8]; 4] = [
            b"GET /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\nContent-Length: 5\r\n\r\nhello",
            b"GET /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,\r\nContent-Length: 5\r\n\r\nhello",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ];
        for raw in cases {
            server.client().rejected(raw, 400);
        }
    }
}

#[test]
fn unsupported_transfer_codings_get_501_and_expectations_417() {
    let server = Running::new(Mode::Threads);
    server.client().rejected(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        501,
    );
    server.client().rejected(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity\r\n\r\n",
        501,
    );
    // A coding that is not chunked framed nothing: Content-Length does not
    // stand in for it.
    server.client().rejected(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello",
        501,
    );
    server.client().rejected(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nExpect: the-moon\r\nContent-Length: 1\r\n\r\nx",
        417,
    );
}

#[test]
fn a_slowloris_client_gets_408_and_is_closed() {
    let limits = Limits {
        request_timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    for mode in MODES {
        let server = Running::start(mode, limits.clone());
        // A head trickled in, a byte at a time: the deadline covers the whole
        // head, so steady trickling does not keep the connection.
        let mut slow = server.client();
        let mut reply = None;
        for byte in b"GET /hello HTTP/1.1\r\nHost: t\r\nX-Slow: "
            .iter()
            .cycle()
            .take(200)
        {
            if slow.stream.write_all(&[*byte]).is_err() {
                break;
            }
            thread::sleep(Duration::from_millis(20));
            let mut peek = [0; 1];
            slow.stream.set_nonblocking(true).unwrap();
            let ready = slow.stream.peek(&mut peek).is_ok_and(|n| n > 0);
            slow.stream.set_nonblocking(false).unwrap();
            if ready {
                reply = Some(slow.response());
                break;
            }
        }
        let reply = reply.expect("a 408 before the trickle ended");
        assert_eq!((reply.status, reply.closes()), (408, true));
        assert!(slow.is_closed());

        // A body that stops coming.
        let mut stalled = server.client();
        stalled.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
        let reply = stalled.response();
        assert_eq!((reply.status, reply.closes()), (408, true));
        assert!(stalled.is_closed());

        // Others were served meanwhile and after.
        let mut client = server.client();
        client.send(GET_HELLO);
        assert_eq!(client.response().status, 200);
    }
}

/// A body trickled in, each byte well within `request_timeout` of the last,
/// is still bounded: the whole request has `whole_request_timeout`.
#[test]
fn a_trickled_body_gets_408_at_the_whole_request_deadline() {
    let limits = Limits {
        whole_request_timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    for mode in MODES {
        let server = Running::start(mode, limits.clone());
        let mut client = server.client();
        client.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n");
        let trickle = client.stream.try_clone().unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let trickler = {
            let done = done.clone();
            thread::spawn(move || {
                for _ in 0..1000 {
                    if done.load(Ordering::SeqCst) || (&trickle).write_all(b"x").is_err() {
                        return;
                    }
                    thread::sleep(Duration::from_millis(20));
                }
            })
        };
        let started = std::time::Instant::now();
        let reply = client.response();
        done.store(true, Ordering::SeqCst);
        assert_eq!((reply.status, reply.closes()), (408, true));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the deadline, not the trickle's end, ended it"
        );
        assert!(client.is_closed());
        trickler.join().unwrap();
    }
}

#[test]
fn an_idle_keep_alive_connection_is_closed_quietly() {
    let limits = Limits {
        keep_alive_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let server = Running::start(Mode::Threads, limits);
    let mut client = server.client();
    client.send(GET_HELLO);
    assert_eq!(client.response().status, 200);
    assert!(client.is_closed());
    assert!(client.buf.is_empty());
}

#[test]
fn a_client_that_resets_mid_request_costs_only_its_connection() {
    for mode in MODES {
        let server = Running::new(mode);
        let mut survivor = server.client();
        for _ in 0..20 {
            let rude = TcpStream::connect(server.addr).unwrap();
            (&rude)
                .write_all(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc")
                .unwrap();
            // SO_LINGER 0: the close sends a reset, not a FIN.
            socket2::SockRef::from(&rude)
                .set_linger(Some(Duration::ZERO))
                .unwrap();
            drop(rude);
            survivor.send(GET_HELLO);
            assert_eq!(survivor.response().status, 200);
        }
    }
}

#[test]
fn a_panicking_handler_gets_500_and_the_server_goes_on() {
    for mode in MODES {
        let server = Running::new(mode);
        server
            .client()
            .rejected(b"GET /panic HTTP/1.1\r\nHost: t\r\n\r\n", 500);
        let mut client = server.client();
        client.send(GET_HELLO);
        assert_eq!(client.response().status, 200);
    }
}

#[test]
fn graceful_shutdown_finishes_requests_in_flight() {
    for mode in MODES {
        let mut server = Running::new(mode);
        let mut idle = server.client();
        idle.send(GET_HELLO);
        assert_eq!(idle.response().status, 200);
        let mut busy = server.client();
        let started = SLEEPERS.load(Ordering::SeqCst);
        busy.send(b"GET /sleep?500 HTTP/1.1\r\nHost: t\r\n\r\n");
        // Shut down while the request is in its handler.
        while SLEEPERS.load(Ordering::SeqCst) == started {
            thread::sleep(Duration::from_millis(1));
        }
        let shutdown = server.shutdown.clone();
        let stopper = thread::spawn(move || shutdown.shutdown());
        let reply = busy.response();
        assert_eq!(
            (reply.status, reply.body.as_slice()),
            (200, &b"slept\n"[..])
        );
        assert!(
            reply.closes(),
            "the last response says the connection closes"
        );
        assert!(busy.is_closed());
        assert!(idle.is_closed(), "an idle connection is closed");
        stopper.join().unwrap();
        server.stop();
        assert!(
            TcpStream::connect(server.addr).is_err(),
            "no more connections are accepted"
        );
    }
}

#[test]
fn shutdown_closes_what_is_left_after_the_grace_period() {
    let limits = Limits {
        request_timeout: Duration::from_secs(120),
        whole_request_timeout: Duration::from_secs(300),
        ..Limits::default()
    };
    for mode in MODES {
        let mut server = Running::build(
            Server::builder()
                .mode(mode)
                .limits(limits.clone())
                .grace_period(Duration::from_millis(300)),
        );
        // A request in flight (its head read: the server asks for the body)
        // whose body never comes.
        let mut stuck = server.client();
        stuck.send(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n",
        );
        let mut interim = [0; 25];
        stuck.stream.read_exact(&mut interim).unwrap();
        assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
        stuck.send(b"abc");
        let started = std::time::Instant::now();
        server.stop();
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "serve returned after the grace period, not the request timeout"
        );
        assert!(stuck.is_closed(), "closed without a response");
    }
}

/// Raises the open-file limit to `wanted` (the hard limit too, which root
/// may do), or as far as allowed; returns the soft limit reached.
fn raise_fd_limit(wanted: u64) -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid rlimit struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        let raised = libc::rlimit {
            rlim_cur: wanted.max(limit.rlim_cur),
            rlim_max: wanted.max(limit.rlim_max),
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) != 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
    }
    limit.rlim_cur
}

/// The server of `ten_thousand_keep_alive_connections_at_once`, in a child
/// process so that the two ends of 10,000 connections do not share one
/// open-file table: it serves until its stdin closes.
const CHILD_SERVER: &str = "FIBRA_HTTP_TEST_CHILD_SERVER";

fn serve_as_child(mode: &str) {
    let mode = if mode == "threads" {
        Mode::Threads
    } else {
        Mode::Ractors(2)
    };
    raise_fd_limit(20_000);
    let server = Server::builder().mode(mode).bind("127.0.0.1:0").unwrap();
    println!("listening on {}", server.local_addr().unwrap());
    let shutdown = server.shutdown_handle();
    thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        shutdown.shutdown();
    });
    server.serve(router()).unwrap();
}

/// Starts this test binary as the server of `test`, in `mode`.
fn child_server(test: &str, mode: &str) -> (std::process::Child, SocketAddr) {
    use std::io::BufRead;
    use std::process::Stdio;
    let mut child = common::target_command(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_SERVER, mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = lines
        // The line may follow the test harness's own words on the same line.
        .find_map(|line| line.ok()?.split_once("listening on ")?.1.parse().ok())
        .expect("the child server's address");
    // Keep its stdout open to the end: the harness reports there.
    thread::spawn(move || lines.for_each(drop));
    (child, addr)
}

#[test]
fn ten_thousand_keep_alive_connections_at_once() {
    const CONNECTIONS: usize = 10_000;
    const TEST: &str = "ten_thousand_keep_alive_connections_at_once";
    if let Ok(mode) = std::env::var(CHILD_SERVER) {
        return serve_as_child(&mode);
    }
    let needed = CONNECTIONS as u64 + 1000;
    let limit = raise_fd_limit(needed);
    assert!(
        limit >= needed,
        "this test needs {needed} open files; the limit is {limit} (raise `ulimit -Hn`)"
    );
    for mode in ["threads", "ractors"] {
        let (mut server, addr) = child_server(TEST, mode);
        // The clients are green threads too: 10,000 of them on one OS thread.
        let served = fibra::run(move || {
            let connected = std::rc::Rc::new(std::cell::Cell::new(0));
            let clients: Vec<_> = (0..CONNECTIONS)
                .map(|_| {
                    let connected = connected.clone();
                    fibra::spawn(move || {
                        let mut stream = fibra::net::TcpStream::connect(addr)?;
                        connected.set(connected.get() + 1);
                        // Every connection is open before any sends twice.
                        while connected.get() < CONNECTIONS {
                            fibra::time::sleep(Duration::from_millis(20));
                        }
                        let mut ok = 0;
                        for _ in 0..2 {
                            stream.write_all(GET_HELLO)?;
                            let mut reply = Vec::new();
                            while !reply.ends_with(b"Hello, world!\n") {
                                let mut chunk = [0; 512];
                                let n = stream.read(&mut chunk)?;
                                if n == 0 {
                                    return Err(std::io::Error::from(ErrorKind::UnexpectedEof));
                                }
                                reply.extend_from_slice(&chunk[..n]);
                            }
                            ok += usize::from(reply.starts_with(b"HTTP/1.1 200 OK\r\n"));
                        }
                        std::io::Result::Ok(ok)
                    })
                })
                .collect();
            clients
                .into_iter()
                .map(|c| c.join().unwrap().expect("no connection fails"))
                .sum::<usize>()
        });
        assert_eq!(served, 2 * CONNECTIONS, "{mode}");
        drop(server.stdin.take());
        assert!(
            server.wait().unwrap().success(),
            "the {mode} server shut down cleanly"
        );
    }
}

//! Protocol cases over real sockets that an outside review of the server
//! found answered wrongly (issue 25: N1–N4 and the minor ones): pipelined
//! answers held back behind a body, chunked framing to HTTP/1.0, repeated
//! `Host`, unbounded chunk extensions, version and target forms. Each runs
//! in both modes; the HTTPS ones are in `tls.rs`.

mod common;

use common::{Client, Running};
use fibra_http::{Body, Limits, Mode, Request, Response, Router, Server};
use std::io::Read;
use std::time::Duration;

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];
const GET_HELLO: &[u8] = b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";

fn streamed() -> Vec<u8> {
    (0..100_000u32).map(|i| (i % 251) as u8).collect()
}

fn router() -> Router {
    Router::new()
        .get("/hello", |_: &Request| Response::text("Hello, world!\n"))
        .post("/echo", |r: &Request| {
            Response::new(200).with_body(r.body().to_vec())
        })
        .get("/stream", |_: &Request| {
            Response::new(200).with_body(Body::stream(std::io::Cursor::new(streamed())))
        })
        .get("/authority", |r: &Request| {
            Response::text(r.authority().unwrap_or("none").to_string())
        })
}

fn serve(mode: Mode, limits: Limits) -> Running {
    Running::serving(Server::builder().mode(mode).limits(limits), router)
}

/// Limits under which a request that waits for its body's rest waits far
/// longer than the client's read timeout: an answer held back until then
/// fails the test instead of arriving with the `408`.
fn patient() -> Limits {
    Limits {
        request_timeout: Duration::from_secs(120),
        whole_request_timeout: Duration::from_secs(300),
        ..Limits::default()
    }
}

/// N1: the answer to a pipelined request goes out before the server waits
/// for the rest of the next request's body (the client may wait for it
/// before sending the rest).
#[test]
fn a_pipelined_answer_is_sent_before_waiting_for_the_next_body() {
    for mode in MODES {
        let server = serve(mode, patient());
        let mut client = server.client();
        let mut burst = GET_HELLO.to_vec();
        burst.extend_from_slice(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nhello",
        );
        client.send(&burst);
        assert_eq!(client.response().body, b"Hello, world!\n", "{mode:?}");
        client.send(b"world");
        assert_eq!(client.response().body, b"helloworld");

        // A chunked body: its next chunk line, then its last chunk.
        let mut burst = GET_HELLO.to_vec();
        burst.extend_from_slice(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        );
        client.send(&burst);
        assert_eq!(client.response().body, b"Hello, world!\n");
        client.send(b"0\r\n\r\n");
        client.send(GET_HELLO);
        assert_eq!(client.response().body, b"hello");
        assert_eq!(client.response().body, b"Hello, world!\n");
    }
}

/// N2 (RFC 9112 §6.1: no chunked to HTTP/1.0): a streamed body is sent as it
/// is and the close ends it, even when the client asked for keep-alive.
#[test]
fn a_streamed_body_to_http_1_0_is_sent_as_it_is_and_the_close_ends_it() {
    for mode in MODES {
        let server = serve(mode, Limits::default());
        let mut client = server.client();
        client.send(b"GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let reply = client.head_response();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("transfer-encoding"), None);
        assert_eq!(reply.header("content-length"), None);
        assert!(reply.closes(), "{mode:?}");
        let mut body = std::mem::take(&mut client.buf);
        client.stream.read_to_end(&mut body).unwrap();
        assert!(body == streamed(), "{} bytes", body.len());

        // HTTP/1.1 still gets it chunked, on a connection kept alive.
        let mut client = server.client();
        client.send(b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\n");
        let reply = client.response();
        assert_eq!(reply.header("transfer-encoding"), Some("chunked"));
        assert!(reply.body == streamed());
        client.send(GET_HELLO);
        assert_eq!(client.response().status, 200);
    }
}

/// N3 (RFC 9112 §3.2): two `Host` lines are refused whatever the version.
#[test]
fn two_host_lines_get_400_in_any_version() {
    for mode in MODES {
        let server = serve(mode, Limits::default());
        for version in ["1.0", "1.1"] {
            let raw = format!("GET /hello HTTP/{version}\r\nHost: a\r\nHost: b\r\n\r\n");
            server.client().rejected(raw.as_bytes(), 400);
            let raw = format!("GET /hello HTTP/{version}\r\nHost: a\r\nhost: a\r\n\r\n");
            server.client().rejected(raw.as_bytes(), 400);
        }
        // HTTP/1.0 may still send none.
        let mut client = server.client();
        client.send(b"GET /hello HTTP/1.0\r\n\r\n");
        assert_eq!(client.response().status, 200);
    }
}

/// A chunked request of `chunks` one-byte chunks, each size line carrying
/// `padding` (an extension or leading zeros) of `len` bytes.
fn padded_chunks(chunks: usize, padding: impl Fn(usize) -> String) -> Vec<u8> {
    let mut raw = b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for i in 0..chunks {
        raw.extend_from_slice(format!("{}\r\nx\r\n", padding(i)).as_bytes());
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    raw
}

/// N4: a chunk line over 1 KiB is refused even when it arrives whole in one
/// read, and a request's chunk extensions (and leading zeros) are bounded in
/// total, as Go bounds them since CVE-2023-39326.
#[test]
fn chunk_lines_are_bounded_and_so_are_a_requests_extensions() {
    for mode in MODES {
        let server = serve(mode, Limits::default());
        // One line of 2,000 bytes, sent with its request in one write.
        let long = format!("1;a={}", "x".repeat(2000));
        server
            .client()
            .rejected(&padded_chunks(1, |_| long.clone()), 400);

        // Lines under 1 KiB each, 20 KB of extensions in all (for 20 bytes).
        let extension = |_| format!("1;a={}", "x".repeat(1000));
        server.client().rejected(&padded_chunks(20, extension), 400);
        // The same with leading zeros.
        let zeros = |_| format!("{}1", "0".repeat(1000));
        server.client().rejected(&padded_chunks(20, zeros), 400);

        // Under the bound: 10 KB of extensions, served.
        let mut client = server.client();
        client.send(&padded_chunks(10, extension));
        assert_eq!(client.response().body, b"xxxxxxxxxx", "{mode:?}");
        // The bound is per request: the next starts again from none.
        client.send(&padded_chunks(10, extension));
        assert_eq!(client.response().body, b"xxxxxxxxxx");
    }
}

/// A version is `HTTP/` DIGIT "." DIGIT (RFC 9112 §2.3): anything else is a
/// malformed request line (400); a well-formed version other than 1.x is
/// refused with 505. Empty lines before the request line change neither.
#[test]
fn malformed_versions_get_400_and_well_formed_unsupported_ones_505() {
    for mode in MODES {
        let server = serve(mode, Limits::default());
        for version in ["HTTP/01.1", "HTTP/4294967295.255", "HTTP/2", "HTTP/1.1.1"] {
            for lead in ["", "\r\n"] {
                let raw = format!("{lead}GET /hello {version}\r\nHost: t\r\n\r\n");
                server.client().rejected(raw.as_bytes(), 400);
            }
        }
        for lead in ["", "\r\n", "\r\n\n"] {
            let raw = format!("{lead}GET /hello HTTP/2.0\r\nHost: t\r\n\r\n");
            server.client().rejected(raw.as_bytes(), 505);
        }
        let mut client = server.client();
        for lead in ["", "\r\n", "\r\n\r\n"] {
            let raw = format!("{lead}GET /hello HTTP/1.2\r\nHost: t\r\n\r\n");
            client.send(raw.as_bytes());
            let reply = client.response();
            assert_eq!((reply.status, reply.closes()), (200, false), "{lead:?}");
        }
    }
}

/// RFC 9112 §3.2: a target is a path, an absolute URI, `*` (for `OPTIONS`)
/// or `host:port` (for `CONNECT`); anything else is refused, not routed.
#[test]
fn targets_in_no_form_their_method_may_use_get_400() {
    for mode in MODES {
        let server = serve(mode, Limits::default());
        for request in [
            "GET !",
            "GET hello",
            "GET *",
            "POST *",
            "GET example.com:80",
            "GET http:///hello",
            "GET http://user@example.com/hello",
            "GET http://a%zz/hello",
            "CONNECT !",
        ] {
            let raw = format!("{request} HTTP/1.1\r\nHost: t\r\n\r\n");
            server.client().rejected(raw.as_bytes(), 400);
        }
        let mut client = server.client();
        for (request, status) in [
            ("OPTIONS *", 200),
            ("GET /hello", 200),
            ("GET http://example.com/hello", 200),
            ("GET /nowhere", 404),
            ("CONNECT example.com:443", 404),
        ] {
            let raw = format!("{request} HTTP/1.1\r\nHost: t\r\n\r\n");
            client.send(raw.as_bytes());
            let reply = client.response();
            assert_eq!((reply.status, reply.closes()), (status, false), "{request}");
        }
    }
}

/// RFC 9112 §3.2.2: the authority of a target in absolute form, not `Host`,
/// names what the request is for; `Request::authority` gives it.
#[test]
fn a_handler_reads_the_authority_of_an_absolute_form_target() {
    for mode in MODES {
        let server = serve(mode, Limits::default());
        let mut client: Client = server.client();
        for (raw, authority) in [
            (
                &b"GET http://example.com:8080/authority?q HTTP/1.1\r\nHost: other\r\n\r\n"[..],
                &b"example.com:8080"[..],
            ),
            (
                b"GET https://[::1]/authority HTTP/1.1\r\nHost: other\r\n\r\n",
                b"[::1]",
            ),
            (
                b"GET /authority HTTP/1.1\r\nHost: example.com\r\n\r\n",
                b"example.com",
            ),
            (b"GET /authority HTTP/1.1\r\nHost:\r\n\r\n", b"none"),
            (
                b"GET /authority HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
                b"none",
            ),
        ] {
            client.send(raw);
            assert_eq!(client.response().body, authority, "{mode:?}");
        }
    }
}

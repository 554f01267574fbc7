//! HTTPS over real sockets (the `tls` feature), with a certificate made for
//! the test run: a rustls client (TLS 1.2 and 1.3) and curl against both
//! modes, keep-alive and pipelining as over TCP, and the connections that
//! fail — a handshake that stalls, plain HTTP on the TLS port — costing only
//! themselves.
#![cfg(feature = "tls")]

mod common;

use common::tls::{self, certificate, provider, server_config, tcp_client};
use common::{Client, Running};
use fibra_http::{
    Body, Event, Limits, Mode, Request, RequestBody, Response, Router, Server, streaming,
};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];
const GET_HELLO: &[u8] = b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n";
const BIG: usize = 1 << 20;
/// Set by the test to let `/events` send its last event and end; set by
/// `/events` when it has.
static RELEASE: AtomicBool = AtomicBool::new(false);
static EVENTS_DONE: AtomicBool = AtomicBool::new(false);

/// What `/upload` has read of its body so far (one upload at a time: the
/// test that sends them runs its cases in turn).
static UPLOADED: AtomicUsize = AtomicUsize::new(0);
const UPLOAD: usize = 4 << 20;

/// Reads the body as it arrives, in 16 KiB reads: its length and the sum of
/// its bytes.
fn upload(_: &Request, body: &mut RequestBody<'_>) -> Response {
    let mut piece = vec![0; 16 << 10];
    let (mut total, mut sum) = (0, 0u64);
    loop {
        match body.read(&mut piece) {
            Ok(0) => return Response::text(format!("{total} {sum}")),
            Ok(n) => {
                total += n;
                sum += piece[..n].iter().map(|&b| u64::from(b)).sum::<u64>();
                UPLOADED.store(total, Ordering::SeqCst);
            }
            Err(err) => return Response::text(format!("{err}")).with_status(400),
        }
    }
}

fn router() -> Router {
    Router::new()
        .post("/upload", streaming(upload))
        .get("/hello", |_: &Request| Response::text("Hello, world!\n"))
        .post("/echo", |r: &Request| {
            Response::new(200).with_body(r.body().to_vec())
        })
        .get("/big", |_: &Request| {
            Response::new(200).with_body(big_body())
        })
        .get("/peer", |r: &Request| {
            Response::text(format!("{}\n", r.peer_addr().unwrap().port()))
        })
        .get("/stream", |_: &Request| {
            Response::new(200).with_body(Body::stream(std::io::Cursor::new(big_body())))
        })
        .get("/events", |_: &Request| {
            Response::sse(|events| {
                events.send(&Event::new("first"))?;
                while !RELEASE.load(Ordering::SeqCst) {
                    fibra::time::sleep(Duration::from_millis(1));
                }
                events.send(&Event::new("last"))?;
                EVENTS_DONE.store(true, Ordering::SeqCst);
                Ok(())
            })
        })
}

fn big_body() -> Vec<u8> {
    (0..BIG).map(|i| (i % 251) as u8).collect()
}

fn https(mode: Mode, limits: Limits) -> Running {
    Running::serving(
        Server::builder()
            .mode(mode)
            .limits(limits)
            .tls(server_config()),
        router,
    )
}

type TlsClient = Client<StreamOwned<ClientConnection, TcpStream>>;

/// A rustls client that trusts the test's certificate, offering only
/// `version`.
fn tls_client(addr: SocketAddr, version: &'static rustls::SupportedProtocolVersion) -> TlsClient {
    Client::over(tls::connect(addr, version))
}

const VERSIONS: [&rustls::SupportedProtocolVersion; 2] =
    [&rustls::version::TLS12, &rustls::version::TLS13];

#[test]
fn https_keeps_alive_and_pipelines_as_tcp_does() {
    for mode in MODES {
        let server = https(mode, Limits::default());
        for version in VERSIONS {
            let mut client = tls_client(server.addr, version);
            for _ in 0..5 {
                client.send(GET_HELLO);
                let reply = client.response();
                assert_eq!(reply.status, 200);
                assert_eq!(reply.body, b"Hello, world!\n");
                assert_eq!(reply.header("connection"), None);
            }
            // Larger than what rustls buffers, both ways.
            client.send(b"GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n");
            assert_eq!(client.response().body, big_body());
            let upload = big_body();
            let mut burst = format!(
                "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n",
                upload.len()
            )
            .into_bytes();
            burst.extend_from_slice(&upload);
            for i in 0..20 {
                burst.extend_from_slice(
                    format!(
                        "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{i:02}"
                    )
                    .as_bytes(),
                );
            }
            burst.extend_from_slice(
                b"GET /hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            );
            client.send(&burst);
            assert_eq!(client.response().body, upload);
            for i in 0..20 {
                assert_eq!(client.response().body, format!("{i:02}").as_bytes());
            }
            let last = client.response();
            assert_eq!(last.body, b"Hello, world!\n");
            assert!(last.closes());
            assert!(client.is_closed(), "the session ends with close_notify");
        }
    }
}

#[test]
fn a_client_that_stalls_mid_handshake_is_closed() {
    let limits = Limits {
        request_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    for mode in MODES {
        let server = https(mode, limits.clone());
        // The first half of a real ClientHello, and then nothing.
        let mut hello = Vec::new();
        let mut roots = RootCertStore::empty();
        roots.add(certificate().der.clone()).unwrap();
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = ServerName::try_from("localhost").unwrap();
        let mut session = ClientConnection::new(Arc::new(config), name).unwrap();
        session.write_tls(&mut hello).unwrap();
        let mut stalled = tcp_client(server.addr);
        stalled.write_all(&hello[..hello.len() / 2]).unwrap();
        let mut answer = Vec::new();
        match stalled.read_to_end(&mut answer) {
            Ok(_) => {}
            Err(err) if err.kind() == ErrorKind::ConnectionReset => {}
            Err(err) => panic!("the stalled handshake was not closed: {err}"),
        }
        // Meanwhile and after, others are served.
        let mut client = tls_client(server.addr, &rustls::version::TLS13);
        client.send(GET_HELLO);
        assert_eq!(client.response().status, 200);
    }
}

#[test]
fn plain_http_on_the_tls_port_closes_that_connection_only() {
    for mode in MODES {
        let server = https(mode, Limits::default());
        let mut kept = tls_client(server.addr, &rustls::version::TLS13);
        kept.send(GET_HELLO);
        assert_eq!(kept.response().status, 200);

        let mut plain = tcp_client(server.addr);
        plain.write_all(GET_HELLO).unwrap();
        let mut answer = Vec::new();
        match plain.read_to_end(&mut answer) {
            Ok(_) => {}
            Err(err) if err.kind() == ErrorKind::ConnectionReset => {}
            Err(err) => panic!("plain HTTP on the TLS port was not closed: {err}"),
        }
        // At most a TLS alert (content type 21), never an HTTP response.
        assert!(
            answer.is_empty() || answer[0] == 21,
            "{}",
            String::from_utf8_lossy(&answer)
        );

        // The connection already open, and new ones, go on.
        kept.send(GET_HELLO);
        assert_eq!(kept.response().body, b"Hello, world!\n");
        let mut fresh = tls_client(server.addr, &rustls::version::TLS12);
        fresh.send(GET_HELLO);
        assert_eq!(fresh.response().status, 200);
    }
}

#[test]
fn curl_fetches_over_https_on_one_connection() {
    if std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: curl is not on this machine");
        return;
    }
    let ca = std::env::temp_dir().join(format!("fibra-http-tls-test-{}.pem", std::process::id()));
    std::fs::write(&ca, &certificate().pem).unwrap();
    for mode in MODES {
        let server = https(mode, Limits::default());
        let port = server.addr.port();
        let url = format!("https://localhost:{port}/peer");
        let output = std::process::Command::new("curl")
            .args(["--silent", "--show-error", "--fail", "--http1.1"])
            .arg("--cacert")
            .arg(&ca)
            .args(["--resolve", &format!("localhost:{port}:127.0.0.1")])
            .args([&url, &url, &url])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let ports: Vec<&str> = std::str::from_utf8(&output.stdout)
            .unwrap()
            .lines()
            .collect();
        assert_eq!(ports.len(), 3, "{ports:?}");
        assert!(
            ports.iter().all(|p| *p == ports[0]),
            "curl kept one connection alive: {ports:?}"
        );
    }
    std::fs::remove_file(&ca).unwrap();
}

/// A connection between requests that gets part of a TLS record, and no
/// more, has begun a request: it is closed at `request_timeout`, not kept
/// for `keep_alive_timeout` as an idle one is.
#[test]
fn a_tls_record_that_never_completes_is_closed_at_the_request_timeout() {
    let limits = Limits {
        request_timeout: Duration::from_millis(300),
        keep_alive_timeout: Duration::from_secs(120),
        ..Limits::default()
    };
    for mode in MODES {
        let server = https(mode, limits.clone());
        for version in VERSIONS {
            let mut idle = tls_client(server.addr, version);
            idle.send(GET_HELLO);
            assert_eq!(idle.response().status, 200);

            let mut client = tls_client(server.addr, version);
            client.send(GET_HELLO);
            assert_eq!(client.response().status, 200);
            // Half of the record that carries the next request.
            client.stream.conn.writer().write_all(GET_HELLO).unwrap();
            let mut record = Vec::new();
            client.stream.conn.write_tls(&mut record).unwrap();
            let half = &record[..record.len() / 2];
            client.stream.sock.write_all(half).unwrap();
            // Closed long before the client's read timeout (20 s).
            let mut answer = Vec::new();
            match client.stream.sock.read_to_end(&mut answer) {
                Ok(_) => {}
                Err(err) if err.kind() == ErrorKind::ConnectionReset => {}
                Err(err) => panic!("a half record kept the connection ({mode:?}): {err}"),
            }

            // Idle as long, the other connection is still served.
            idle.send(GET_HELLO);
            assert_eq!(idle.response().body, b"Hello, world!\n");
        }
    }
}

/// As over TCP (N1): the answer to a pipelined request is sent before the
/// server waits for the rest of the next request's body.
#[test]
fn a_pipelined_answer_is_sent_over_tls_before_waiting_for_the_next_body() {
    let limits = Limits {
        request_timeout: Duration::from_secs(120),
        whole_request_timeout: Duration::from_secs(300),
        ..Limits::default()
    };
    for mode in MODES {
        let server = https(mode, limits.clone());
        let mut client = tls_client(server.addr, &rustls::version::TLS13);
        let mut burst = GET_HELLO.to_vec();
        burst.extend_from_slice(
            b"POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nhello",
        );
        client.send(&burst);
        assert_eq!(client.response().body, b"Hello, world!\n", "{mode:?}");
        client.send(b"world");
        assert_eq!(client.response().body, b"helloworld");
    }
}

/// As over TCP (N2): a streamed body to HTTP/1.0 is sent as it is; over TLS
/// its end is the session's `close_notify`, so a cut-off body is told from
/// a whole one.
#[test]
fn a_streamed_body_to_http_1_0_over_tls_ends_with_close_notify() {
    for mode in MODES {
        let server = https(mode, Limits::default());
        let mut client = tls_client(server.addr, &rustls::version::TLS12);
        client.send(b"GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let reply = client.head_response();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("transfer-encoding"), None);
        assert!(reply.closes(), "{mode:?}");
        let mut body = std::mem::take(&mut client.buf);
        // An end without close_notify would be an UnexpectedEof error here.
        client.stream.read_to_end(&mut body).unwrap();
        assert!(body == big_body(), "{} bytes", body.len());
    }
}

/// A flushed event goes out as a TLS record of its own at once: the client
/// reads it while the handler is still parked.
#[test]
fn an_event_reaches_the_client_over_tls_while_the_handler_waits() {
    for mode in MODES {
        RELEASE.store(false, Ordering::SeqCst);
        EVENTS_DONE.store(false, Ordering::SeqCst);
        let server = https(mode, Limits::default());
        let mut client = tls_client(server.addr, &rustls::version::TLS13);
        client.send(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n");
        let head = client.head_response();
        assert_eq!(head.header("content-type"), Some("text/event-stream"));
        while !client.buf.ends_with(b"data: first\n\n\r\n") {
            client.more();
        }
        assert!(!EVENTS_DONE.load(Ordering::SeqCst), "{mode:?}");
        RELEASE.store(true, Ordering::SeqCst);
        assert_eq!(client.chunked_body(), b"data: first\n\ndata: last\n\n");
        assert!(EVENTS_DONE.load(Ordering::SeqCst));
    }
}

/// 4 MiB streamed over TLS, as `Content-Length` and as chunks, read by the
/// handler as it arrives: it has read the first MiB before the client sends
/// the rest, and gets every byte.
#[test]
fn a_streamed_upload_over_tls_is_read_as_it_arrives() {
    let data: Vec<u8> = (0..UPLOAD).map(|i| (i % 251) as u8).collect();
    let sum: u64 = data.iter().map(|&b| u64::from(b)).sum();
    let limits = Limits {
        max_body_bytes: 2 * UPLOAD,
        ..Limits::default()
    };
    for mode in MODES {
        let server = https(mode, limits.clone());
        for chunked in [false, true] {
            UPLOADED.store(0, Ordering::SeqCst);
            let mut client = tls_client(server.addr, &rustls::version::TLS13);
            let send_part = |client: &mut TlsClient, part: &[u8]| {
                if chunked {
                    for piece in part.chunks(100_000) {
                        client.send(format!("{:x}\r\n", piece.len()).as_bytes());
                        client.send(piece);
                        client.send(b"\r\n");
                    }
                } else {
                    client.send(part);
                }
            };
            let framing = if chunked {
                "Transfer-Encoding: chunked".to_string()
            } else {
                format!("Content-Length: {UPLOAD}")
            };
            client.send(
                format!("POST /upload HTTP/1.1\r\nHost: localhost\r\n{framing}\r\n\r\n").as_bytes(),
            );
            let (first, rest) = data.split_at(1 << 20);
            send_part(&mut client, first);
            client.stream.flush().unwrap();
            // Waits (20 s at most) for the handler to have read the first MiB.
            let mut waited = 0;
            while UPLOADED.load(Ordering::SeqCst) < first.len() {
                assert!(waited < 20_000, "the first MiB was not read: {mode:?}");
                std::thread::sleep(Duration::from_millis(1));
                waited += 1;
            }
            send_part(&mut client, rest);
            if chunked {
                client.send(b"0\r\n\r\n");
            }
            let reply = client.response();
            assert_eq!(reply.status, 200);
            assert_eq!(reply.body, format!("{UPLOAD} {sum}").as_bytes(), "{mode:?}");
            // The connection goes on.
            client.send(GET_HELLO);
            assert_eq!(client.response().body, b"Hello, world!\n");
        }
    }
}

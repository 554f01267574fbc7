//! Streaming over real sockets, in both modes: a response body written as
//! the handler goes (`Body::writer`, server-sent events) reaches the client
//! while the handler is still running, parks the handler when the client
//! does not read, and ends the handler with an error when the client leaves;
//! a request body read as it arrives (`streaming`) reaches the handler
//! before the upload ends, within the server's limits.

mod common;

use common::{Client, Running};
use fibra_http::{
    Body, Event, Limits, Mode, Request, RequestBody, Response, Router, Server, streaming,
};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];

/// Set by the test to let `/events` send its second event and end.
static RELEASE: AtomicBool = AtomicBool::new(false);
/// Set when `/events` has returned.
static EVENTS_DONE: AtomicBool = AtomicBool::new(false);
/// Set when `/forever` saw a send fail: its client has gone.
static GONE: AtomicBool = AtomicBool::new(false);
/// What `/flood` has written so far, the most it held unsent, and whether
/// it is done.
static FLOODED: AtomicUsize = AtomicUsize::new(0);
static MOST_BUFFERED: AtomicUsize = AtomicUsize::new(0);
static FLOOD_DONE: AtomicBool = AtomicBool::new(false);
const FLOOD: usize = 32 << 20;
/// What `/upload` has read of its body so far, and the error that ended its
/// reading, if one did.
static UPLOADED: AtomicUsize = AtomicUsize::new(0);
static UPLOAD_ERROR: std::sync::Mutex<Option<std::io::ErrorKind>> = std::sync::Mutex::new(None);
const UPLOAD: usize = 10 << 20;

/// Counts the body's bytes as they arrive, in 16 KiB reads.
fn upload(_: &Request, body: &mut RequestBody<'_>) -> Response {
    match common::read_in_pieces(body, |total| UPLOADED.store(total, Ordering::SeqCst)) {
        Ok(total) => Response::text(format!("{total}")),
        Err(err) => {
            *UPLOAD_ERROR.lock().unwrap() = Some(err.kind());
            Response::text("the handler's answer")
        }
    }
}

/// Parks the green thread until `flag` is set (by the test's thread).
fn wait_for(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        fibra::time::sleep(Duration::from_millis(1));
    }
}

/// Waits on the test's thread, at most 20 s, for `done`.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < until, "{what} did not happen");
        thread::sleep(Duration::from_millis(1));
    }
}

fn router() -> Router {
    Router::new()
        .get("/hello", |_: &Request| Response::text("Hello, world!\n"))
        .get("/events", |_: &Request| {
            Response::sse(|events| {
                events.send(&Event::new("first").event("greeting").id("1"))?;
                wait_for(&RELEASE);
                events.keep_alive()?;
                events.send(&Event::new("second\nline"))?;
                EVENTS_DONE.store(true, Ordering::SeqCst);
                Ok(())
            })
        })
        .get("/countdown", |_: &Request| {
            Response::text(Body::writer(|out| {
                for n in (1..=3).rev() {
                    writeln!(out, "{n}")?;
                    out.flush()?;
                }
                writeln!(out, "lift-off")
            }))
        })
        .get("/forever", |_: &Request| {
            Response::sse(|events| {
                let sent = (0..).try_for_each(|n| {
                    fibra::time::sleep(Duration::from_millis(1));
                    events.send(&Event::new(format!("tick {n}")))
                });
                GONE.store(true, Ordering::SeqCst);
                sent
            })
        })
        .get("/flood", |_: &Request| {
            Response::new(200).with_body(Body::writer(|out| {
                let piece = [b'x'; 10_000];
                let mut written = 0;
                while written < FLOOD {
                    let n = (FLOOD - written).min(piece.len());
                    out.write_all(&piece[..n])?;
                    written += n;
                    FLOODED.store(written, Ordering::SeqCst);
                    MOST_BUFFERED.fetch_max(out.buffered(), Ordering::SeqCst);
                }
                FLOOD_DONE.store(true, Ordering::SeqCst);
                Ok(())
            }))
        })
        .post("/upload", streaming(upload))
        .post(
            "/ignore",
            streaming(|_: &Request, _: &mut RequestBody<'_>| Response::text("not read")),
        )
        .get("/broken", |_: &Request| {
            Response::text(Body::writer(|out| {
                out.write_all(b"half")?;
                out.flush()?;
                Err(std::io::Error::other("the source failed"))
            }))
        })
}

fn serve(mode: Mode) -> Running {
    serve_within(mode, Limits::default())
}

fn serve_within(mode: Mode, limits: Limits) -> Running {
    Running::serving(Server::builder().mode(mode).limits(limits), router)
}

/// Resets what `/upload` records, for a test that holds the guard: one such
/// test at a time.
fn reset_upload() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    UPLOADED.store(0, Ordering::SeqCst);
    *UPLOAD_ERROR.lock().unwrap() = None;
    serial
}

/// Reads until the client's buffer holds `text`.
fn read_until<S: Read + Write>(client: &mut Client<S>, text: &[u8]) {
    while !client.buf.windows(text.len()).any(|w| w == text) {
        client.more();
    }
}

#[test]
fn the_first_event_reaches_the_client_while_the_handler_waits() {
    for mode in MODES {
        RELEASE.store(false, Ordering::SeqCst);
        EVENTS_DONE.store(false, Ordering::SeqCst);
        let server = serve(mode);
        let mut client = server.client();
        client.send(b"GET /events HTTP/1.1\r\nHost: t\r\n\r\n");
        let head = client.head_response();
        assert_eq!(head.status, 200);
        assert_eq!(head.header("content-type"), Some("text/event-stream"));
        assert_eq!(head.header("cache-control"), Some("no-cache"));
        assert_eq!(head.header("transfer-encoding"), Some("chunked"));
        read_until(&mut client, b"data: first\n\n");
        // The handler is parked until the test releases it.
        assert!(!EVENTS_DONE.load(Ordering::SeqCst), "{mode:?}");
        RELEASE.store(true, Ordering::SeqCst);
        let body = client.chunked_body();
        assert_eq!(
            body,
            b"event: greeting\nid: 1\ndata: first\n\n:\n\ndata: second\ndata: line\n\n"
        );
        assert!(EVENTS_DONE.load(Ordering::SeqCst));
        // The connection serves the next request.
        client.send(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(client.response().body, b"Hello, world!\n");
    }
}

#[test]
fn a_written_body_is_raw_and_closed_for_http_1_0_and_skipped_for_head() {
    for mode in MODES {
        let server = serve(mode);
        let mut client = server.client();
        client.send(b"GET /countdown HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(client.response().body, b"3\n2\n1\nlift-off\n");
        client.send(b"HEAD /countdown HTTP/1.1\r\nHost: t\r\n\r\n");
        let head = client.head_response();
        assert_eq!(head.status, 200);
        client.send(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(client.response().body, b"Hello, world!\n");

        let mut client = server.client();
        client.send(b"GET /countdown HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let head = client.head_response();
        assert_eq!(head.header("transfer-encoding"), None);
        assert!(head.closes(), "{mode:?}");
        let mut body = std::mem::take(&mut client.buf);
        client.stream.read_to_end(&mut body).unwrap();
        assert_eq!(body, b"3\n2\n1\nlift-off\n");
    }
}

#[test]
fn a_writer_that_fails_closes_the_connection_without_the_last_chunk() {
    for mode in MODES {
        let server = serve(mode);
        let mut client = server.client();
        client.send(b"GET /broken HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(client.head_response().status, 200);
        let mut rest = std::mem::take(&mut client.buf);
        client.stream.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"4\r\nhalf\r\n", "{mode:?}");
    }
}

#[test]
fn a_client_that_goes_away_ends_the_handler_with_an_error() {
    for mode in MODES {
        GONE.store(false, Ordering::SeqCst);
        let server = serve(mode);
        let mut client = server.client();
        client.send(b"GET /forever HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(client.head_response().status, 200);
        read_until(&mut client, b"data: tick 2\n\n");
        drop(client);
        eventually("the handler's end", || GONE.load(Ordering::SeqCst));
        let mut client = server.client();
        client.send(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(client.response().body, b"Hello, world!\n");
    }
}

#[test]
fn a_client_that_does_not_read_parks_the_writer() {
    for mode in MODES {
        FLOODED.store(0, Ordering::SeqCst);
        MOST_BUFFERED.store(0, Ordering::SeqCst);
        FLOOD_DONE.store(false, Ordering::SeqCst);
        let server = serve(mode);
        let mut client = server.client();
        client.send(b"GET /flood HTTP/1.1\r\nHost: t\r\n\r\n");
        // The writer fills the sockets' buffers, then stops: the count holds
        // still for a while.
        eventually("the writer's start", || FLOODED.load(Ordering::SeqCst) > 0);
        let mut still = 0;
        let mut last = 0;
        eventually("the writer parked", || {
            thread::sleep(Duration::from_millis(20));
            let now = FLOODED.load(Ordering::SeqCst);
            still = if now == last { still + 1 } else { 0 };
            last = now;
            still == 10
        });
        assert!(!FLOOD_DONE.load(Ordering::SeqCst), "{mode:?}");
        assert!(last < FLOOD, "{last} of {FLOOD} bytes written");
        let most = MOST_BUFFERED.load(Ordering::SeqCst);
        assert!(most <= 16 << 10, "the writer held {most} bytes");
        // Once the client reads, the writer goes on to the end.
        let reply = client.response();
        assert_eq!(reply.body.len(), FLOOD);
        assert!(FLOOD_DONE.load(Ordering::SeqCst));
    }
}

/// 10 MiB as `Content-Length` and as chunks: the handler has read the first
/// MiB before the client sends the rest. (The server's limit on bodies
/// holds for streamed ones too: it is raised here.)
#[test]
fn an_upload_reaches_a_streaming_handler_as_it_arrives() {
    let data = vec![b'u'; UPLOAD];
    let limits = Limits {
        max_body_bytes: 2 * UPLOAD,
        ..Limits::default()
    };
    for mode in MODES {
        for chunked in [false, true] {
            let _serial = reset_upload();
            let server = serve_within(mode, limits.clone());
            let mut client = server.client();
            let send_part = |client: &mut Client, part: &[u8]| {
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
            client
                .send(format!("POST /upload HTTP/1.1\r\nHost: t\r\n{framing}\r\n\r\n").as_bytes());
            let (first, rest) = data.split_at(1 << 20);
            send_part(&mut client, first);
            eventually("the first MiB read", || {
                UPLOADED.load(Ordering::SeqCst) >= first.len()
            });
            send_part(&mut client, rest);
            if chunked {
                client.send(b"0\r\n\r\n");
            }
            let reply = client.response();
            assert_eq!(reply.status, 200);
            assert_eq!(reply.body, UPLOAD.to_string().as_bytes(), "{mode:?}");
            assert_eq!(*UPLOAD_ERROR.lock().unwrap(), None);
            // The connection goes on.
            client.send(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
            assert_eq!(client.response().body, b"Hello, world!\n");
        }
    }
}

#[test]
fn a_streamed_upload_past_the_limit_gets_413() {
    let limits = Limits {
        max_body_bytes: 1 << 20,
        ..Limits::default()
    };
    for mode in MODES {
        let _serial = reset_upload();
        let server = serve_within(mode, limits.clone());
        // Announced too large: refused before the handler, as ever.
        server.client().rejected(
            b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n",
            413,
        );
        assert_eq!(UPLOADED.load(Ordering::SeqCst), 0);
        // Chunks that go past it: the handler reads up to the limit, gets an
        // error, and the client gets 413 whatever the handler answered.
        let mut raw =
            b"POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for _ in 0..30 {
            raw.extend_from_slice(b"10000\r\n");
            raw.extend_from_slice(&[b'x'; 0x10000]);
            raw.extend_from_slice(b"\r\n");
        }
        let mut client = server.client();
        client.send(&raw);
        let reply = client.response();
        assert_eq!(reply.status, 413, "{mode:?}");
        assert!(reply.closes());
        assert_eq!(
            *UPLOAD_ERROR.lock().unwrap(),
            Some(std::io::ErrorKind::InvalidData)
        );
        assert_eq!(UPLOADED.load(Ordering::SeqCst), 1 << 20);
    }
}

#[test]
fn a_streamed_upload_that_stalls_gets_408() {
    let limits = Limits {
        request_timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    for mode in MODES {
        let _serial = reset_upload();
        let server = serve_within(mode, limits.clone());
        let mut client = server.client();
        client.send(b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nten bytes.");
        let reply = client.response();
        assert_eq!(reply.status, 408, "{mode:?}");
        assert!(reply.closes());
        assert_eq!(UPLOADED.load(Ordering::SeqCst), 10);
        assert_eq!(
            *UPLOAD_ERROR.lock().unwrap(),
            Some(std::io::ErrorKind::TimedOut)
        );
    }
}

/// A body left unread is not read after the handler: the response closes
/// the connection.
#[test]
fn a_body_left_unread_closes_the_connection_after_the_response() {
    for mode in MODES {
        let server = serve(mode);
        let mut client = server.client();
        let mut raw =
            b"POST /ignore HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n".to_vec();
        raw.resize(raw.len() + 100_000, b'i');
        client.send(&raw);
        let reply = client.response();
        assert_eq!(reply.body, b"not read");
        assert!(reply.closes(), "{mode:?}");
        assert!(client.is_closed());
    }
}

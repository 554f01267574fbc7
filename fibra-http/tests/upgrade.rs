//! Switching protocols (`Request::upgrade`) over real sockets, in both
//! modes: the WebSocket chat example (`examples/websocket_chat.rs`) talking
//! to tungstenite's client over TCP and (the `tls` feature) TLS — echo and
//! broadcast, a client that closes, one that vanishes mid-frame, bytes sent
//! right behind the request — requests that did not ask to switch, a `101`
//! not made by `upgrade` or made with the request's body unread, a shared
//! (`Send + Sync`) handler that upgrades, and what a graceful shutdown does
//! to upgraded connections.

mod common;
#[path = "../examples/websocket_chat.rs"]
mod example;

use common::{Client, Running};
use example::{Hub, chat_router};
use fibra_http::{Mode, Request, RequestBody, Response, Router, Server, streaming};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;
use tungstenite::{Message, WebSocket};

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];
const TIMEOUT: Duration = Duration::from_secs(20);

fn chat_server(builder: fibra_http::Builder) -> (Running, Arc<Hub>) {
    let hub = Arc::new(Hub::default());
    let shared = hub.clone();
    let server = Running::serving_with(builder, move || chat_router(shared.clone()));
    (server, hub)
}

fn tcp(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    // A test that would hang fails instead.
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    stream
}

/// A WebSocket client of the chat over `stream`, once it is in the chat:
/// it has sent `name` and heard it back, so the hub has it.
fn join<S: Read + Write>(addr: SocketAddr, stream: S, name: &str) -> WebSocket<S> {
    let (mut socket, response) = tungstenite::client(format!("ws://{addr}/chat"), stream)
        .unwrap_or_else(|err| panic!("handshake: {err}"));
    assert_eq!(response.status(), 101);
    socket.send(Message::text(name)).unwrap();
    assert_eq!(next(&mut socket), Message::text(name));
    socket
}

/// The next data message (pings and pongs are the library's).
fn next<S: Read + Write>(socket: &mut WebSocket<S>) -> Message {
    loop {
        match socket.read().expect("a message in time") {
            Message::Ping(_) | Message::Pong(_) => {}
            message => return message,
        }
    }
}

/// Two clients chat over whatever `connect` makes, then close properly.
fn chat_between<S: Read + Write>(addr: SocketAddr, connect: impl Fn() -> S) {
    let mut ann = join(addr, connect(), "ann joined");
    let mut bob = join(addr, connect(), "bob joined");
    assert_eq!(next(&mut ann), Message::text("bob joined"));
    // Text goes to everyone, the sender included.
    ann.send(Message::text("hello, bob")).unwrap();
    assert_eq!(next(&mut bob), Message::text("hello, bob"));
    assert_eq!(next(&mut ann), Message::text("hello, bob"));
    // Binary is echoed to its sender only: ann's next message is bob's text.
    let large: Vec<u8> = (0..100_000).map(|i| (i % 251) as u8).collect();
    ann.send(Message::binary(large.clone())).unwrap();
    assert_eq!(next(&mut ann), Message::binary(large));
    bob.send(Message::text("bye")).unwrap();
    assert_eq!(next(&mut ann), Message::text("bye"));
    assert_eq!(next(&mut bob), Message::text("bye"));
    // A close frame is answered, and the connection ends.
    for mut socket in [ann, bob] {
        socket.close(None).unwrap();
        loop {
            match socket.read() {
                Ok(_) => {}
                Err(tungstenite::Error::ConnectionClosed) => break,
                Err(err) => panic!("a clean close, not {err}"),
            }
        }
    }
}

/// Waits until the hub has `count` clients (each leaves as its connection
/// ends, which the test cannot observe directly).
fn until_connected(hub: &Hub, count: usize) {
    for _ in 0..2000 {
        if hub.connected() == count {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the hub still has {} clients, not {count}", hub.connected());
}

#[test]
fn websocket_clients_chat_over_tcp() {
    for mode in MODES {
        let (server, hub) = chat_server(Server::builder().mode(mode));
        chat_between(server.addr, || tcp(server.addr));
        until_connected(&hub, 0);
    }
}

#[cfg(feature = "tls")]
#[test]
fn websocket_clients_chat_over_tls() {
    for mode in MODES {
        let builder = Server::builder()
            .mode(mode)
            .tls(common::tls::server_config());
        let (server, hub) = chat_server(builder);
        for version in [&rustls::version::TLS12, &rustls::version::TLS13] {
            chat_between(server.addr, || common::tls::connect(server.addr, version));
            until_connected(&hub, 0);
        }
    }
}

/// A masked client frame (RFC 6455 §5.2) carrying `payload`, of `opcode`.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mask = [7, 1, 8, 2];
    let mut frame = vec![0x80 | opcode, 0x80 | payload.len() as u8];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    frame
}

const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\n\
    Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
    Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";

#[test]
fn bytes_sent_behind_the_request_are_read_first() {
    for mode in MODES {
        let (server, _hub) = chat_server(Server::builder().mode(mode));
        let mut client = Client::over(tcp(server.addr));
        // The handshake and the first frame in one write.
        let mut burst = HANDSHAKE.to_vec();
        burst.extend(frame(0x1, b"early"));
        client.send(&burst);
        let reply = client.head_response();
        assert_eq!(reply.status, 101);
        assert_eq!(reply.header("upgrade"), Some("websocket"));
        assert_eq!(reply.header("connection"), Some("upgrade"));
        // RFC 6455 §1.3's example key and its answer.
        assert_eq!(
            reply.header("sec-websocket-accept"),
            Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        );
        // The server's frame back: unmasked text, "early".
        while client.buf.len() < 7 {
            client.more();
        }
        assert_eq!(client.buf[..7], [0x81, 5, b'e', b'a', b'r', b'l', b'y']);
    }
}

#[test]
fn a_client_that_vanishes_mid_frame_costs_only_itself() {
    for mode in MODES {
        let (server, hub) = chat_server(Server::builder().mode(mode));
        let mut ann = join(server.addr, tcp(server.addr), "ann joined");
        {
            let mut gone = Client::over(tcp(server.addr));
            gone.send(HANDSHAKE);
            assert_eq!(gone.head_response().status, 101);
            until_connected(&hub, 2);
            // A frame header announcing 100 bytes, 3 of them, and the close.
            gone.send(&[0x81, 0x80 | 100, 1, 2, 3, 4, b'a', b'b', b'c']);
        }
        until_connected(&hub, 1);
        ann.send(Message::text("still here")).unwrap();
        assert_eq!(next(&mut ann), Message::text("still here"));
    }
}

#[test]
fn a_request_that_did_not_ask_to_switch_gets_426() {
    for mode in MODES {
        let (server, _hub) = chat_server(Server::builder().mode(mode));
        let mut client = server.client();
        for (request, why) in [
            (
                "GET /chat HTTP/1.1\r\nHost: t\r\n\r\n",
                "the request has no `Connection: upgrade`",
            ),
            (
                "GET /chat HTTP/1.1\r\nHost: t\r\nConnection: keep-alive, Upgrade\r\nUpgrade: h2c\r\n\r\n",
                "the request's `Upgrade` header does not offer the protocol",
            ),
            (
                "GET /chat HTTP/1.0\r\nConnection: upgrade, keep-alive\r\nUpgrade: websocket\r\n\r\n",
                "only an HTTP/1.1 request can switch protocols",
            ),
        ] {
            client.send(request.as_bytes());
            let reply = client.response();
            assert_eq!(reply.status, 426, "{request}");
            assert_eq!(reply.header("upgrade"), Some("websocket"));
            let body = String::from_utf8(reply.body).unwrap();
            assert_eq!(body, format!("cannot switch to websocket: {why}\n"));
        }
        // The connection serves on after each refusal.
        client.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(client.response().body, b"0 connected\n");
        // Asked to switch, without the WebSocket handshake's key: 400.
        client.send(
            b"GET /chat HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
        );
        assert_eq!(client.response().status, 400);
    }
}

/// A line protocol, served by a shared router: each line comes back upper
/// case.
fn shouting() -> Router {
    Router::new()
        .get("/shout", |request: &Request| {
            request
                .upgrade("shout", |mut stream| {
                    let mut line = Vec::new();
                    let mut byte = [0];
                    while let Ok(1) = stream.read(&mut byte) {
                        line.push(byte[0].to_ascii_uppercase());
                        if byte[0] == b'\n' {
                            if stream.write_all(&line).is_err() {
                                return;
                            }
                            line.clear();
                        }
                    }
                })
                .unwrap_or_else(Response::from)
        })
        .get("/fake", |_: &Request| Response::new(101))
        .post(
            "/unread",
            streaming(|request: &Request, _: &mut RequestBody<'_>| {
                request
                    .upgrade("shout", |_| {})
                    .unwrap_or_else(Response::from)
            }),
        )
}

#[test]
fn a_shared_handler_switches_and_a_101_of_its_own_gets_500() {
    for mode in MODES {
        let server = Running::serving(Server::builder().mode(mode), shouting);
        let mut client = server.client();
        client.send(b"GET /fake HTTP/1.1\r\nHost: t\r\n\r\n");
        let reply = client.response();
        assert_eq!(reply.status, 500);
        assert!(reply.closes());
        // A switch with the request's body unread: its bytes would be taken
        // for the new protocol's.
        let mut client = server.client();
        client.send(
            b"POST /unread HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\nUpgrade: shout\r\n\
              Content-Length: 5\r\n\r\nhello",
        );
        let reply = client.response();
        assert_eq!(reply.status, 500);
        assert_eq!(
            reply.body,
            b"the handler switched protocols with the request body unread\n"
        );
        let mut client = server.client();
        client.send(
            b"GET /shout HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\nUpgrade: SHOUT\r\n\r\nhello\n",
        );
        let reply = client.head_response();
        assert_eq!(reply.status, 101);
        assert_eq!(reply.header("upgrade"), Some("shout"));
        client.send(b"there\n");
        while client.buf.len() < 12 {
            client.more();
        }
        assert_eq!(client.buf, b"HELLO\nTHERE\n");
    }
}

#[test]
fn a_graceful_shutdown_closes_upgraded_connections_at_once() {
    for mode in MODES {
        // A long grace period, which an upgraded connection does not wait
        // for: it has no request in flight to finish.
        let builder = Server::builder()
            .mode(mode)
            .grace_period(Duration::from_secs(3600));
        let (mut server, hub) = chat_server(builder);
        let mut ann = join(server.addr, tcp(server.addr), "ann joined");
        let (returned, serve_done) = mpsc::channel();
        std::thread::spawn(move || {
            server.stop();
            returned.send(()).unwrap();
        });
        serve_done
            .recv_timeout(TIMEOUT)
            .expect("serve returns without waiting for the grace period");
        // The client's connection is closed (no close frame: the handler
        // was cancelled where it waited), and it left the hub as it unwound.
        match ann.read() {
            Err(tungstenite::Error::Io(_) | tungstenite::Error::Protocol(_)) => {}
            other => panic!("the connection closed, not {other:?}"),
        }
        assert_eq!(hub.connected(), 0);
    }
}

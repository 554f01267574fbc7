//! A WebSocket chat on fibra-http, with the `tungstenite` crate speaking the
//! protocol over the connection that [`Request::upgrade`] hands over.
//!
//! ```text
//! cargo run -p fibra-http --example websocket_chat -- --port 8080 --mode ractors
//! websocat ws://127.0.0.1:8080/chat     # in two terminals: type in one
//! ```
//!
//! A text message goes to every client connected, its sender included (who
//! sees it come back); a binary message is echoed to its sender only. Each
//! connection's green thread reads its client's messages, and a second green
//! thread of its own writes what it is sent, taking it from a
//! [`fibra::sync::SizedQueue`]: the queues cross OS threads, so the clients
//! of every Ractor share one chat. A client that falls 64 messages behind is
//! disconnected rather than held in memory.
//!
//! `tests/upgrade.rs` serves this file's [`chat_router`] to tungstenite's
//! client, over TCP and TLS, in both modes.

use clap::{Parser, ValueEnum};
use fibra::sync::SizedQueue;
use fibra_http::{Handler, Mode, Request, Response, Router, Server, Upgraded};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tungstenite::protocol::Role;
use tungstenite::{Message, WebSocket};

/// How many messages a client may fall behind before it is disconnected.
const BEHIND: usize = 64;

/// The clients connected, on every worker: each by the queue its writer
/// takes messages from.
///
/// The std lock is held only to push and never across a wait (`try_push`
/// does not wait), so it cannot hang a worker (see fibra-http's crate docs,
/// "Sharing state between handlers").
#[derive(Default)]
pub struct Hub {
    next: AtomicU64,
    clients: Mutex<HashMap<u64, SizedQueue<Message>>>,
}

impl Hub {
    /// Sends `message` to every client; those too far behind are let go.
    fn broadcast(&self, message: &Message) {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        clients.retain(|_, queue| match queue.try_push(message.clone()) {
            Ok(()) => true,
            Err(_) => {
                queue.close();
                false
            }
        });
    }

    fn join(&self) -> Member<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let queue = SizedQueue::new(BEHIND);
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        clients.insert(id, queue.clone());
        Member {
            hub: self,
            id,
            queue,
        }
    }

    /// How many clients are connected.
    pub fn connected(&self) -> usize {
        let clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        clients.len()
    }
}

/// A client's place in the hub, left however its connection ends (a
/// graceful shutdown cancels it, unwinding through here).
struct Member<'a> {
    hub: &'a Hub,
    id: u64,
    queue: SizedQueue<Message>,
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        self.queue.close();
        let mut clients = self
            .hub
            .clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        clients.remove(&self.id);
    }
}

/// The upgraded connection, shared by a client's reader and writer.
struct Shared(Rc<Upgraded>);

impl Read for Shared {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self.0).read(buf)
    }
}

impl Write for Shared {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        (&*self.0).write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&*self.0).flush()
    }
}

/// Serves one client of the chat, once its connection is a WebSocket.
fn chat(hub: &Hub, stream: Upgraded) {
    let stream = Rc::new(stream);
    let member = hub.join();
    // The writer: what the hub sends this client, until it leaves. Each
    // frame goes in one write, so the reader's own replies (a pong, the
    // close) never cut into one.
    let (queue, out) = (member.queue.clone(), Shared(stream.clone()));
    let writer = fibra::spawn(move || {
        let mut socket = WebSocket::from_raw_socket(out, Role::Server, None);
        while let Some(message) = queue.pop() {
            if socket.send(message).is_err() {
                break;
            }
        }
    });
    let mut socket = WebSocket::from_raw_socket(Shared(stream), Role::Server, None);
    loop {
        match socket.read() {
            Ok(message @ Message::Text(_)) => hub.broadcast(&message),
            Ok(message @ Message::Binary(_)) => {
                if member.queue.try_push(message).is_err() {
                    break; // too far behind
                }
            }
            // Pings are answered, and a close is answered before the next
            // read ends the loop, by tungstenite.
            Ok(_) => {}
            // The client closed, left or broke the protocol.
            Err(_) => break,
        }
    }
    drop(member);
    let _ = writer.join();
}

/// The chat's router, made on each worker: `GET /chat` switches to
/// WebSocket (`426` for a request that does not ask to), `GET /` says how
/// many are connected.
pub fn chat_router(hub: Arc<Hub>) -> Router<dyn Handler> {
    let counted = hub.clone();
    Router::local()
        .get("/chat", move |request: &Request| {
            let hub = hub.clone();
            let switched = match request.upgrade("websocket", move |stream| chat(&hub, stream)) {
                Ok(switched) => switched,
                Err(refused) => return Response::from(refused),
            };
            match (
                request.header("sec-websocket-key"),
                request.header("sec-websocket-version"),
            ) {
                (Some(key), Some("13")) => switched.with_header(
                    "sec-websocket-accept",
                    tungstenite::handshake::derive_accept_key(key.as_bytes()),
                ),
                _ => Response::text("a WebSocket handshake needs a key and version 13\n")
                    .with_status(400)
                    .with_header("sec-websocket-version", "13"),
            }
        })
        .get("/", move |_: &Request| {
            Response::text(format!("{} connected\n", counted.connected()))
        })
}

#[derive(Parser)]
#[command(about = "A WebSocket chat on fibra-http and tungstenite")]
struct Args {
    /// The port on 127.0.0.1 (0: any free one; the line printed says which).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// threads: one OS thread; ractors: a Ractor per core.
    #[arg(long, value_enum, default_value_t = ModeArg::Threads)]
    mode: ModeArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Threads,
    Ractors,
}

#[allow(dead_code)] // a test includes this file for its router
fn main() -> io::Result<()> {
    let args = Args::parse();
    let mode = match args.mode {
        ModeArg::Threads => Mode::Threads,
        ModeArg::Ractors => Mode::ractors_per_core(),
    };
    let server = Server::builder()
        .mode(mode)
        .bind(("127.0.0.1", args.port))?;
    println!("chat on ws://{}/chat", server.local_addr()?);
    let hub = Arc::new(Hub::default());
    server.serve_with(move || chat_router(hub.clone()))
}

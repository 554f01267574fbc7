//! What the behaviour tests share: a server on a thread of its own, a strict
//! blocking client over any stream (TCP or TLS), and a command that starts a
//! child process built for the target under test. Each test file uses
//! a part of it.
#![allow(dead_code)]

pub mod captured;
#[cfg(feature = "tls")]
pub mod tls;

use fibra_http::{Handler, Server, ShutdownHandle};
use std::ffi::OsStr;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::thread;
use std::time::Duration;

/// A server on a thread of its own, shut down when dropped.
pub struct Running {
    pub addr: SocketAddr,
    pub shutdown: ShutdownHandle,
    thread: Option<thread::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    /// A server of the handler that `handler` makes (on the server's thread),
    /// shared by its workers.
    pub fn serving<H: Handler + Send + Sync>(
        builder: fibra_http::Builder,
        handler: fn() -> H,
    ) -> Running {
        Running::spawn(builder, move |server| server.serve(handler()))
    }

    /// A server whose workers each make their own handler with `make`.
    pub fn serving_with<H: Handler>(
        builder: fibra_http::Builder,
        make: impl Fn() -> H + Send + Sync + 'static,
    ) -> Running {
        Running::spawn(builder, move |server| server.serve_with(make))
    }

    fn spawn(
        builder: fibra_http::Builder,
        serve: impl FnOnce(Server) -> std::io::Result<()> + Send + 'static,
    ) -> Running {
        let server = builder.bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let shutdown = server.shutdown_handle();
        let thread = Some(thread::spawn(move || serve(server)));
        Running {
            addr,
            shutdown,
            thread,
        }
    }

    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// Shuts down and waits for `serve` to return.
    pub fn stop(&mut self) {
        self.shutdown.shutdown();
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap().unwrap();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !thread::panicking() {
            self.stop();
        }
    }
}

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn closes(&self) -> bool {
        self.header("connection") == Some("close")
    }
}

/// A blocking client that reads responses the way a strict one would.
pub struct Client<S = TcpStream> {
    pub stream: S,
    pub buf: Vec<u8>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        // A test that would hang fails instead.
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Client {
            stream,
            buf: Vec::new(),
        }
    }
}

impl<S: Read + Write> Client<S> {
    /// A client over `stream`, e.g. a TLS session.
    pub fn over(stream: S) -> Client<S> {
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, raw: &[u8]) {
        self.stream.write_all(raw).unwrap();
    }

    pub fn more(&mut self) {
        let mut chunk = [0; 16 << 10];
        let n = self.stream.read(&mut chunk).expect("a response in time");
        assert!(n > 0, "the server closed before a whole response");
        self.buf.extend_from_slice(&chunk[..n]);
    }

    /// Reads one response (skipping `100 Continue`).
    pub fn response(&mut self) -> Reply {
        self.read_response(true)
    }

    /// Reads one response's head, as a client that sent `HEAD` must.
    pub fn head_response(&mut self) -> Reply {
        self.read_response(false)
    }

    fn read_response(&mut self, with_body: bool) -> Reply {
        loop {
            let mut fields = [httparse::EMPTY_HEADER; 32];
            let mut parsed = httparse::Response::new(&mut fields);
            let len = match parsed.parse(&self.buf).expect("a well-formed response") {
                httparse::Status::Complete(len) => len,
                httparse::Status::Partial => {
                    self.more();
                    continue;
                }
            };
            let status = parsed.code.unwrap();
            let headers: Vec<(String, String)> = parsed
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_string(),
                        String::from_utf8(h.value.to_vec()).unwrap(),
                    )
                })
                .collect();
            self.buf.drain(..len);
            if status == 100 {
                continue;
            }
            let mut reply = Reply {
                status,
                headers,
                body: Vec::new(),
            };
            if !with_body {
                return reply;
            }
            if reply.header("transfer-encoding") == Some("chunked") {
                reply.body = self.chunked_body();
            } else if let Some(length) = reply.header("content-length") {
                let length: usize = length.parse().unwrap();
                while self.buf.len() < length {
                    self.more();
                }
                reply.body = self.buf.drain(..length).collect();
            }
            return reply;
        }
    }

    pub fn chunked_body(&mut self) -> Vec<u8> {
        let mut body = Vec::new();
        loop {
            let (used, size) = match httparse::parse_chunk_size(&self.buf).unwrap() {
                httparse::Status::Complete(c) => c,
                httparse::Status::Partial => {
                    self.more();
                    continue;
                }
            };
            let size = size as usize;
            while self.buf.len() < used + size + 2 {
                self.more();
            }
            body.extend_from_slice(&self.buf[used..used + size]);
            assert_eq!(&self.buf[used + size..used + size + 2], b"\r\n");
            self.buf.drain(..used + size + 2);
            if size == 0 {
                return body;
            }
        }
    }

    /// Whether the server has closed the connection (after what was read).
    pub fn is_closed(&mut self) -> bool {
        let mut byte = [0];
        match self.stream.read(&mut byte) {
            Ok(0) => true,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => true,
            Ok(_) => false,
            Err(e) => panic!("no close: {e}"),
        }
    }

    /// Sends `raw`, expects a response with `status` that closes the
    /// connection, and then the close.
    pub fn rejected(mut self, raw: &[u8], status: u16) -> Reply {
        self.send(raw);
        let reply = self.response();
        assert_eq!(
            reply.status,
            status,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        assert!(reply.closes(), "a rejection closes the connection");
        assert!(self.is_closed());
        reply
    }
}

/// A command that runs `program`, a binary built for the target under test
/// (usually this test binary again, to watch a child abort).
///
/// Under qemu-user (`cargo test --target aarch64-unknown-linux-gnu` on x86_64,
/// `.cargo/config.toml`), the machine cannot run such a binary by itself: the
/// runner passes its own command line in `FIBRA_TEST_RUNNER`, and the child is
/// started through it too. Natively the variable is unset.
pub fn target_command(program: impl AsRef<OsStr>) -> Command {
    match std::env::var("FIBRA_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => {
            let mut words = runner.split_whitespace();
            let mut command = Command::new(words.next().expect("a runner"));
            command.args(words).arg(program);
            command
        }
        _ => Command::new(program),
    }
}

/// Reads `body` to its end in 16 KiB pieces, telling `seen` the total after
/// each: what a handler that streams an upload does with it. The total, or
/// the error that ended the reading.
pub fn read_in_pieces(body: &mut impl Read, mut seen: impl FnMut(usize)) -> std::io::Result<usize> {
    let mut piece = vec![0; 16 << 10];
    let mut total = 0;
    loop {
        match body.read(&mut piece)? {
            0 => return Ok(total),
            n => {
                total += n;
                seen(total);
            }
        }
    }
}

//! The monoio server, run as `fibra-bench --child http-throughput monoio
//! --port N --fib N --sleep-ms MS` (the contract of [`super`]): monoio's
//! thread-per-core design as its own benchmark servers (monoio-rs/
//! monoio-benchmark) run it, a runtime on the io_uring driver per core
//! ([`super::super::monoio_runtime`]),
//! each with a listener of its own on the same port (`SO_REUSEPORT`: the
//! kernel deals the connections out), a task per connection. Requests are
//! parsed with httparse, and the responses to every request that one read
//! brought (pipelined ones) go out in one write of an owned buffer
//! ([`framing`]). `/io` sleeps the task on monoio's timer; `/cpu` computes on
//! the core's thread, holding it, as may_minihttp's and fibra's ractors mode
//! do.

mod framing;

use super::super::monoio_runtime;
use super::{Contract, Work, fib};
use clap::Parser;
use framing::{Connection, Date, Parsed, Status};
use monoio::buf::IoBufMut;
use monoio::io::{AsyncReadRent, AsyncWriteRentExt};
use monoio::net::{ListenerOpts, TcpListener, TcpStream};
use std::borrow::Cow;
use std::convert::Infallible;
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::mpsc::{self, Sender};

/// The bytes a connection reads at a time, at least.
const READ_SIZE: usize = 4096;

/// The longest request head the server waits for the end of; a longer one is
/// refused (431) and its connection closed.
const MAX_HEAD: usize = 64 * 1024;

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    contract: Contract,
}

/// What a core's thread tells the main thread.
enum Event {
    /// Its listener is bound, at this address.
    Listening(SocketAddr),
    /// It stopped serving, for this reason.
    Stopped(String),
}

/// Parses the arguments, starts a runtime and a listener on each core, says
/// where they listen once all do, and serves until killed.
pub fn main(args: &[String]) -> Result<(), String> {
    let args = Args::try_parse_from(
        std::iter::once("fibra-bench --child http-throughput monoio")
            .chain(args.iter().map(String::as_str)),
    )
    .map_err(|e| e.to_string())?;
    let work = args.contract.work();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (events, heard) = mpsc::channel();
    let listening = || match heard.recv() {
        Ok(Event::Listening(addr)) => Ok(addr),
        Ok(Event::Stopped(why)) => Err(why),
        Err(_) => Err("every core's thread ended".to_string()),
    };
    // The first core's listener takes the port (a free one for port 0); the
    // others then join it there.
    let asked = SocketAddr::from((Ipv4Addr::LOCALHOST, args.contract.port));
    start_core(0, asked, work, events.clone())?;
    let addr = listening()?;
    for core in 1..cores {
        start_core(core, addr, work, events.clone())?;
    }
    for _ in 1..cores {
        listening()?;
    }
    let mut stdout = io::stdout();
    writeln!(stdout, "listening on {addr}")
        .and_then(|()| stdout.flush())
        .map_err(|e| e.to_string())?;
    // Each core said it listens, once: what comes next is a core that
    // stopped serving, on an error, which ends the server.
    Err(match listening() {
        Ok(addr) => format!("a core listened twice, on {addr}"),
        Err(why) => why,
    })
}

/// Starts core `core`'s thread: a runtime serving a listener on `addr`, which
/// says when it listens and when it stops on `events`.
fn start_core(
    core: usize,
    addr: SocketAddr,
    work: Work,
    events: Sender<Event>,
) -> Result<(), String> {
    std::thread::Builder::new()
        .name(format!("monoio-{core}"))
        .spawn(move || {
            let stopped = monoio_runtime::runtime()
                .and_then(|mut runtime| runtime.block_on(serve(addr, work, &events)));
            let why = match stopped {
                Ok(never) => match never {},
                Err(e) => e,
            };
            // The main thread may have ended the process already.
            let _ = events.send(Event::Stopped(format!("core {core}'s server: {why}")));
        })
        .map(drop)
        .map_err(|e| format!("a thread for core {core}: {e}"))
}

/// Listens on `addr` beside the other cores' listeners, says where on
/// `events`, and serves each connection accepted in a task of its own.
async fn serve(addr: SocketAddr, work: Work, events: &Sender<Event>) -> io::Result<Infallible> {
    let listener = TcpListener::bind_with_config(addr, &ListenerOpts::new().reuse_port(true))?;
    // The main thread waits for this.
    let _ = events.send(Event::Listening(listener.local_addr()?));
    loop {
        let (conn, _) = listener.accept().await?;
        conn.set_nodelay(true)?;
        monoio::spawn(async move {
            // A connection the client breaks off (wrk, at the end of a run)
            // ends here, and is no concern of the server's.
            let _ = answer(conn, work).await;
        });
    }
}

/// Answers the requests that come on `conn`, in order, until it closes or a
/// response closes it.
async fn answer(mut conn: TcpStream, work: Work) -> io::Result<()> {
    let mut input: Vec<u8> = Vec::with_capacity(READ_SIZE);
    let mut output: Vec<u8> = Vec::with_capacity(READ_SIZE);
    let mut date = Date::default();
    loop {
        // Every whole request read so far, answered into `output`.
        let mut answered = 0;
        let mut then = Connection::Persistent;
        while then != Connection::Close {
            match framing::parse(&input[answered..]) {
                Parsed::Request {
                    length,
                    path,
                    connection,
                } => {
                    answered += length;
                    let route = Route::of(path);
                    let (status, body) = route.answer(work).await;
                    framing::respond(&mut output, status, date.now(), &body, connection);
                    then = connection;
                }
                Parsed::Partial if input.len() - answered > MAX_HEAD => {
                    then = Connection::Close;
                    framing::respond(&mut output, framing::TOO_LARGE, date.now(), b"", then);
                }
                Parsed::Partial => break,
                Parsed::Bad => {
                    then = Connection::Close;
                    let body = b"bad request\n";
                    framing::respond(&mut output, framing::BAD_REQUEST, date.now(), body, then);
                }
            }
        }
        input.drain(..answered);
        if !output.is_empty() {
            let (written, buf) = conn.write_all(output).await;
            written?;
            output = buf;
            output.clear();
        }
        if then == Connection::Close {
            return Ok(());
        }
        input.reserve(READ_SIZE);
        let end = input.len();
        let (read, buf) = conn.read(input.slice_mut(end..)).await;
        input = buf.into_inner();
        if read? == 0 {
            return Ok(());
        }
    }
}

/// The contract's routes.
#[derive(Clone, Copy)]
enum Route {
    Hello,
    Io,
    Cpu,
    IoCpu,
    NotFound,
}

impl Route {
    fn of(path: &str) -> Route {
        match path {
            "/hello" => Route::Hello,
            "/io" => Route::Io,
            "/cpu" => Route::Cpu,
            "/io-cpu" => Route::IoCpu,
            _ => Route::NotFound,
        }
    }

    /// The response's status and body: `/io` sleeps this task, `/cpu`
    /// computes on this core's thread.
    async fn answer(self, work: Work) -> (Status, Cow<'static, [u8]>) {
        let computed = || Cow::Owned(format!("{}\n", fib(work.fib)).into_bytes());
        match self {
            Route::Hello => (framing::OK, Cow::Borrowed(b"Hello, world!\n")),
            Route::Io => {
                monoio::time::sleep(work.sleep).await;
                (framing::OK, Cow::Borrowed(b"io\n"))
            }
            Route::Cpu => (framing::OK, computed()),
            Route::IoCpu => {
                monoio::time::sleep(work.sleep).await;
                (framing::OK, computed())
            }
            Route::NotFound => (framing::NOT_FOUND, Cow::Borrowed(b"not found\n")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::time::Duration;

    const WORK: Work = Work {
        fib: 10,
        sleep: Duration::from_millis(1),
    };

    /// A monoio runtime, or `None` (with a line saying why) where the kernel
    /// refuses io_uring: there the benchmark's row fails with the same reason.
    fn runtime() -> Option<monoio_runtime::Runtime> {
        monoio_runtime::runtime()
            .inspect_err(|why| eprintln!("skipped: {why}"))
            .ok()
    }

    /// Sends `pieces` on a connection to `addr`, one write each, and reads
    /// what comes back until the server closes the connection.
    fn exchange(addr: SocketAddr, pieces: &'static [&'static str]) -> io::Result<String> {
        let mut stream = std::net::TcpStream::connect(addr)?;
        // A server that never closes fails the test instead of hanging it.
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        for piece in pieces {
            stream.write_all(piece.as_bytes())?;
        }
        let mut back = String::new();
        stream.read_to_string(&mut back)?;
        Ok(back)
    }

    /// What the client thread returned, waited for without holding up the
    /// runtime: it must go on to submit the close of the server's end of the
    /// connection, an io_uring operation like any other, which the client
    /// reads to.
    async fn joined<T>(client: std::thread::JoinHandle<T>) -> T {
        while !client.is_finished() {
            monoio::time::sleep(Duration::from_millis(1)).await;
        }
        client.join().unwrap()
    }

    /// Each response in `text`: its status line and its body.
    fn responses(text: &str) -> Vec<(&str, &str)> {
        let mut found = Vec::new();
        let mut rest = text;
        while let Some((head, after)) = rest.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("no Content-Length in {head:?}"));
            found.push((head.lines().next().unwrap(), &after[..length]));
            rest = &after[length..];
        }
        assert_eq!(rest, "", "bytes after the last response");
        found
    }

    #[test]
    fn answers_pipelined_and_split_requests_in_order_then_closes() {
        let Some(mut runtime) = runtime() else { return };
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            // Two requests and the start of a third in one write; the rest of
            // it and a last one, which asks to close, in another.
            let client = std::thread::spawn(move || {
                exchange(
                    addr,
                    &[
                        "GET /hello HTTP/1.1\r\n\r\nGET /cpu HTTP/1.1\r\nHost: x\r\n\r\nGET /io-c",
                        "pu HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\nConnection: close\r\n\r\n",
                    ],
                )
            });
            let (conn, _) = listener.accept().await.unwrap();
            answer(conn, WORK).await.unwrap();
            let back = joined(client).await.unwrap();
            assert_eq!(
                responses(&back),
                [
                    ("HTTP/1.1 200 Ok", "Hello, world!\n"),
                    ("HTTP/1.1 200 Ok", "55\n"),
                    ("HTTP/1.1 200 Ok", "55\n"),
                    ("HTTP/1.1 404 Not Found", "not found\n"),
                ]
            );
            assert_eq!(back.matches("Connection: close\r\n").count(), 1, "{back}");
        });
    }

    #[test]
    fn refuses_a_bad_request_and_closes() {
        let Some(mut runtime) = runtime() else { return };
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            let client = std::thread::spawn(move || {
                exchange(addr, &["GET /hello HTTP/1.1\r\n\r\nGET /hello\r\n\r\n"])
            });
            let (conn, _) = listener.accept().await.unwrap();
            answer(conn, WORK).await.unwrap();
            let back = joined(client).await.unwrap();
            assert_eq!(
                responses(&back),
                [
                    ("HTTP/1.1 200 Ok", "Hello, world!\n"),
                    ("HTTP/1.1 400 Bad Request", "bad request\n"),
                ]
            );
        });
    }

    #[test]
    fn cores_share_one_port() {
        if runtime().is_none() {
            return;
        }
        let (events, heard) = mpsc::channel();
        // Their threads serve until the test process ends.
        start_core(
            0,
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            WORK,
            events.clone(),
        )
        .unwrap();
        let Ok(Event::Listening(addr)) = heard.recv() else {
            panic!("core 0 did not listen")
        };
        start_core(1, addr, WORK, events).unwrap();
        let Ok(Event::Listening(second)) = heard.recv() else {
            panic!("core 1 did not listen")
        };
        assert_eq!(second, addr);
        for _ in 0..8 {
            let back = exchange(addr, &["GET /io HTTP/1.0\r\n\r\n"]).unwrap();
            assert_eq!(responses(&back), [("HTTP/1.1 200 Ok", "io\n")]);
            assert!(back.contains("Connection: close\r\n"), "{back}");
        }
    }
}

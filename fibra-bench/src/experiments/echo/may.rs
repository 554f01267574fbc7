//! The echo on the `may` crate, in a process of its own
//! ([`crate::experiments::may_child`] says why): may::net sockets and a
//! coroutine per connection on each side, all on one worker thread, so that it
//! runs on one OS thread as fibra's and tokio's echo do.

use super::{Clocks, Size, client, serve};
use crate::experiments::may_child;
use may::coroutine::JoinHandle;
use may::net::{TcpListener, TcpStream};
use std::io;
use std::time::Duration;

/// Starts may's scheduler with one worker and runs [`round_trips`] in a
/// coroutine; for the child program alone (may runs in no other process).
pub fn echo(size: Size) -> io::Result<(Duration, Duration)> {
    may_child::start(1);
    may_child::spawn(move || round_trips(size))
        .join()
        .map_err(|_| io::Error::other("the echo coroutine panicked"))?
}

/// Opens `size.connections` connections to an echo server, then times their
/// round trips, all made at once: their wall time and this process's CPU
/// time; in a coroutine.
fn round_trips(size: Size) -> io::Result<(Duration, Duration)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    // Left running when the process exits; the connections' coroutines end
    // when their clients close.
    let _server: JoinHandle<io::Result<()>> = may_child::spawn(move || {
        loop {
            let (conn, _) = listener.accept()?;
            conn.set_nodelay(true)?;
            may_child::spawn(move || serve(conn));
        }
    });
    let mut streams = Vec::with_capacity(size.connections);
    for _ in 0..size.connections {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        streams.push(stream);
        // As for fibra: let the accept loop drain the backlog.
        may::coroutine::yield_now();
    }
    let clocks = Clocks::start();
    let clients: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(i, stream)| may_child::spawn(move || client(stream, i as u8, size)))
        .collect();
    for client in clients {
        client
            .join()
            .map_err(|_| io::Error::other("a client coroutine panicked"))??;
    }
    Ok(clocks.stop())
}

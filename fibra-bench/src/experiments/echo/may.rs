//! The echo on the `may` crate, in a process of its own
//! ([`crate::experiments::may_child`] says why): `fibra-bench --child echo <C>
//! <R> <B>`, printing the echo line of peers/README.md. may::net sockets and a
//! coroutine per connection on each side, all on one worker thread, so that it
//! runs on one OS thread as fibra's and tokio's echo do.

use super::{Size, client, serve};
use crate::experiments::{limits, may_child};
use crate::peers::protocol::count;
use may::coroutine::JoinHandle;
use may::net::{TcpListener, TcpStream};
use std::io;
use std::time::{Duration, Instant};

pub fn main(args: &[String]) -> Result<(), String> {
    let size = parse_args(args)?;
    limits::raise_open_files(2 * size.connections as u64 + 64)?;
    may_child::start(1);
    let timed = may_child::spawn(move || echo(size));
    let elapsed = timed.join().map_err(|_| "the echo coroutine panicked")?;
    let elapsed = elapsed.map_err(|e| e.to_string())?;
    println!("round_trips={} ns={}", size.total(), elapsed.as_nanos());
    Ok(())
}

/// The size from `<C> <R> <B>`, each at least 1.
fn parse_args(args: &[String]) -> Result<Size, String> {
    let usage = || "usage: fibra-bench --child echo <C> <R> <B>   (each >= 1)".to_string();
    let [connections, round_trips, bytes] = args else {
        return Err(usage());
    };
    let at_least_one = |arg: &str| count(arg).filter(|&n| n >= 1).ok_or_else(usage);
    let to_usize = |n: u64| usize::try_from(n).map_err(|_| usage());
    Ok(Size {
        connections: to_usize(at_least_one(connections)?)?,
        round_trips: at_least_one(round_trips)?,
        bytes: to_usize(at_least_one(bytes)?)?,
    })
}

/// Opens `size.connections` connections to an echo server, then times their
/// round trips, all made at once; in a coroutine.
fn echo(size: Size) -> io::Result<Duration> {
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
    let start = Instant::now();
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
    Ok(start.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_connections_round_trips_and_bytes() {
        let size = parse_args(&args("1000 200 64")).unwrap();
        assert_eq!(
            (size.connections, size.round_trips, size.bytes),
            (1000, 200, 64)
        );
        for bad in [
            "",
            "1000 200",
            "1000 200 64 1",
            "0 200 64",
            "10 0 64",
            "10 2 0",
            "10 2 1e3",
            "-1 2 3",
        ] {
            let err = parse_args(&args(bad)).unwrap_err();
            assert!(err.starts_with("usage: "), "{bad:?}: {err}");
        }
    }
}

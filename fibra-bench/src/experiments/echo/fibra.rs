//! The echo on fibra: one `fibra::run`, a green thread per connection on each
//! side.

use super::{Clocks, Size, client, serve};
use fibra::net::{TcpListener, TcpStream};
use std::io;
use std::time::Duration;

/// Opens `size.connections` connections to an echo server, then times their
/// round trips, all made at once: their wall time and this process's CPU time.
pub fn echo(size: Size) -> io::Result<(Duration, Duration)> {
    echo_on(fibra::runtime::Builder::new().io_uring(false), size)
}

/// [`echo`] on a runtime whose streams receive through io_uring
/// ([`fibra::runtime::Builder::io_uring`]).
#[cfg(target_os = "linux")]
pub fn echo_io_uring(size: Size) -> io::Result<(Duration, Duration)> {
    echo_on(fibra::runtime::Builder::new().io_uring(true), size)
}

fn echo_on(runtime: fibra::runtime::Builder, size: Size) -> io::Result<(Duration, Duration)> {
    runtime.run(move || {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        // Cancelled when `run` returns; the connections' threads end when their
        // clients close.
        fibra::spawn(move || -> io::Result<()> {
            loop {
                let (conn, _) = listener.accept()?;
                conn.set_nodelay(true)?;
                fibra::spawn(move || serve(conn));
            }
        });
        let mut streams = Vec::with_capacity(size.connections);
        for _ in 0..size.connections {
            let stream = TcpStream::connect(addr)?;
            stream.set_nodelay(true)?;
            streams.push(stream);
            // A loopback connect completes without parking; let the accept loop
            // keep the listener's backlog (128) from overflowing, which would
            // stall a connect for a 1 s SYN retransmission.
            fibra::runtime::yield_now();
        }
        let clocks = Clocks::start();
        let clients: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(i, stream)| fibra::spawn(move || client(stream, i as u8, size)))
            .collect();
        for client in clients {
            client
                .join()
                .map_err(|e| io::Error::other(e.to_string()))??;
        }
        Ok(clocks.stop())
    })
}

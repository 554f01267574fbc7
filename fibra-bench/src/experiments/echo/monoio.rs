//! The echo on monoio: one runtime on its io_uring driver, a task per
//! connection on each side, each reading and writing with monoio's owned
//! buffers (the buffer goes to the kernel with the operation and comes back
//! with its result).

use super::{Clocks, SERVER_BUFFER, Size};
use crate::experiments::monoio_runtime;
use monoio::buf::IoBuf;
use monoio::io::{AsyncReadRent, AsyncReadRentExt, AsyncWriteRentExt};
use monoio::net::{TcpListener, TcpStream};
use std::io;
use std::time::Duration;

/// Opens `size.connections` connections to an echo server, then times their
/// round trips, all made at once: their wall time and this process's CPU time.
///
/// # Errors
///
/// Among others, the kernel refused io_uring ([`monoio_runtime::runtime`]).
pub fn echo(size: Size) -> io::Result<(Duration, Duration)> {
    monoio_runtime::runtime()?.block_on(async move {
        // monoio's default backlog (1,024) holds every connection the clients
        // open before the accept loop takes them.
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        // Dropped with the runtime; the connections' tasks end when their
        // clients close.
        let _server = monoio::spawn(accept(listener));
        let mut streams = Vec::with_capacity(size.connections);
        for _ in 0..size.connections {
            // The connect is an io_uring operation: the accept loop runs while
            // it waits.
            let stream = TcpStream::connect_addr(addr).await?;
            stream.set_nodelay(true)?;
            streams.push(stream);
        }
        let clocks = Clocks::start();
        let clients: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(i, stream)| monoio::spawn(client(stream, i as u8, size)))
            .collect();
        for client in clients {
            client.await?;
        }
        Ok(clocks.stop())
    })
}

/// Serves each connection `listener` accepts in a task of its own.
async fn accept(listener: TcpListener) -> io::Result<()> {
    loop {
        let (conn, _) = listener.accept().await?;
        conn.set_nodelay(true)?;
        monoio::spawn(serve(conn));
    }
}

/// Writes back what it reads until the client closes.
async fn serve(mut conn: TcpStream) -> io::Result<()> {
    let mut buf = vec![0; SERVER_BUFFER].into_boxed_slice();
    loop {
        let (read, back) = conn.read(buf).await;
        let n = read?;
        if n == 0 {
            return Ok(());
        }
        let (written, back) = conn.write_all(back.slice(..n)).await;
        written?;
        buf = back.into_inner();
    }
}

/// Sends a message of `size.bytes` bytes and reads it back, `size.round_trips`
/// times.
async fn client(mut stream: TcpStream, fill: u8, size: Size) -> io::Result<()> {
    let mut message = vec![fill; size.bytes].into_boxed_slice();
    let mut back = vec![0; size.bytes].into_boxed_slice();
    for _ in 0..size.round_trips {
        let (written, sent) = stream.write_all(message).await;
        written?;
        message = sent;
        let (read, echoed) = stream.read_exact(back).await;
        read?;
        back = echoed;
    }
    if back != message {
        return Err(io::Error::other("the echo differs from the message"));
    }
    Ok(())
}

//! The echo on tokio: one current-thread runtime, a task per connection on each
//! side.

use super::{Clocks, SERVER_BUFFER, Size};
use std::io;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Opens `size.connections` connections to an echo server, then times their
/// round trips, all made at once: their wall time and this process's CPU time.
pub fn echo(size: Size) -> io::Result<(Duration, Duration)> {
    crate::experiments::tokio_runtime().block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        // Dropped with the runtime; the connections' tasks end when their
        // clients close.
        let _server: JoinHandle<io::Result<()>> = tokio::spawn(async move {
            loop {
                let (conn, _) = listener.accept().await?;
                conn.set_nodelay(true)?;
                tokio::spawn(serve(conn));
            }
        });
        let mut streams = Vec::with_capacity(size.connections);
        for _ in 0..size.connections {
            let stream = TcpStream::connect(addr).await?;
            stream.set_nodelay(true)?;
            streams.push(stream);
            // As for fibra: let the accept loop drain the backlog.
            tokio::task::yield_now().await;
        }
        let clocks = Clocks::start();
        let clients: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(i, stream)| tokio::spawn(client(stream, i as u8, size)))
            .collect();
        for client in clients {
            client.await??;
        }
        Ok(clocks.stop())
    })
}

/// Writes back what it reads until the client closes.
async fn serve(mut conn: TcpStream) -> io::Result<()> {
    let mut buf = [0; SERVER_BUFFER];
    loop {
        match conn.read(&mut buf).await? {
            0 => return Ok(()),
            n => conn.write_all(&buf[..n]).await?,
        }
    }
}

/// Sends a message of `size.bytes` bytes and reads it back, `size.round_trips`
/// times.
async fn client(mut stream: TcpStream, fill: u8, size: Size) -> io::Result<()> {
    let message = vec![fill; size.bytes];
    let mut back = vec![0; size.bytes];
    for _ in 0..size.round_trips {
        stream.write_all(&message).await?;
        stream.read_exact(&mut back).await?;
    }
    if back != message {
        return Err(io::Error::other("the echo differs from the message"));
    }
    Ok(())
}

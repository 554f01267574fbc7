//! HTTPS: a rustls session over a connection's fibra `TcpStream`, driven
//! by the connection's own green thread.
//!
//! rustls does no IO of its own: it is fed the bytes read from the socket
//! (`read_tls`, `process_new_packets`) and drained of the bytes to write
//! (`write_tls`). Here both go through fibra's `TcpStream`, whose reads and
//! writes park only this green thread, so a TLS connection waits the way a
//! plain one does, and everything above the [`Transport`] — keep-alive,
//! pipelining, the limits — is the same code over TCP and over TLS.

use crate::transport::Transport;
use fibra::net::TcpStream;
use rustls::{ServerConfig, ServerConnection};
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A TLS session on a TCP connection, past its handshake.
pub(crate) struct TlsStream {
    tcp: TcpStream,
    tls: ServerConnection,
}

impl TlsStream {
    /// Runs the server's side of the handshake on `tcp`, for at most
    /// `limit`: a client that stalls in it, or fails it, costs only this
    /// connection (which the caller then drops, closing it).
    ///
    /// # Errors
    ///
    /// `TimedOut` past `limit`; `InvalidData` for a handshake rustls refuses
    /// (after the alert that says why is sent, as far as it can be) —
    /// including a client speaking plain HTTP; `UnexpectedEof` if the
    /// client leaves; or the socket's error.
    pub(crate) fn accept(
        tcp: TcpStream,
        config: Arc<ServerConfig>,
        limit: Duration,
    ) -> io::Result<TlsStream> {
        let tls = ServerConnection::new(config).map_err(io::Error::other)?;
        let mut stream = TlsStream { tcp, tls };
        let deadline = Instant::now() + limit;
        while stream.tls.is_handshaking() {
            if stream.receive(deadline)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(stream)
    }

    /// Sends what rustls has to send (handshake messages, alerts, records).
    fn flush(&mut self) -> io::Result<()> {
        while self.tls.wants_write() {
            self.tls.write_tls(&mut self.tcp)?;
        }
        Ok(())
    }

    /// Sends what is pending, then reads what the client sends by
    /// `deadline` and decrypts it; returns how many bytes arrived (0: the
    /// client closed).
    fn receive(&mut self, deadline: Instant) -> io::Result<usize> {
        self.flush()?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.tcp.set_read_timeout(Some(left))?;
        let read = self.tls.read_tls(&mut self.tcp)?;
        if let Err(err) = self.tls.process_new_packets() {
            // rustls has queued the alert that tells the client why; the
            // connection ends either way.
            let _ = self.flush();
            return Err(io::Error::new(io::ErrorKind::InvalidData, err));
        }
        Ok(read)
    }
}

impl Transport for TlsStream {
    fn read_within(&mut self, buf: &mut [u8], limit: Duration) -> io::Result<usize> {
        let deadline = Instant::now() + limit;
        loop {
            match self.tls.reader().read(buf) {
                // Data, or 0: the client's `close_notify`.
                Ok(read) => return Ok(read),
                // Nothing decrypted is waiting: read more records.
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
            if self.receive(deadline)? == 0 {
                return Ok(0);
            }
        }
    }

    fn send(&mut self, mut data: &[u8]) -> io::Result<()> {
        loop {
            // rustls buffers a bounded amount of records: it takes `data`
            // a part at a time, each once the last is on the wire.
            self.flush()?;
            if data.is_empty() {
                return Ok(());
            }
            match self.tls.writer().write(data)? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                written => data = &data[written..],
            }
        }
    }

    fn close_write(&mut self) {
        self.tls.send_close_notify();
        // A client that has already gone makes these fail; nothing is lost.
        let _ = self.flush();
        let _ = self.tcp.shutdown(Shutdown::Write);
    }
}

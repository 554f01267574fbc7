//! HTTPS: a rustls session over a connection's fibra `TcpStream`, driven
//! by the connection's own green thread.
//!
//! rustls does no IO of its own: it is fed the bytes read from the socket
//! (`read_tls`, `process_new_packets`) and drained of the bytes to write
//! (`write_tls`). Here both go through fibra's `TcpStream`, whose reads and
//! writes park only this green thread, so a TLS connection waits the way a
//! plain one does, and everything above the [`Transport`] — keep-alive,
//! pipelining, the limits — is the same code over TCP and over TLS.

mod duplex;
mod records;

use crate::transport::Transport;
use crate::upgrade::Duplex;
use duplex::TlsDuplex;
use fibra::net::TcpStream;
use records::Records;
use rustls::{ServerConfig, ServerConnection};
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A TLS session on a TCP connection, past its handshake.
pub(crate) struct TlsStream {
    tcp: TcpStream,
    tls: ServerConnection,
    /// Where the bytes read stand between records.
    records: Records,
    /// How long a record may take to arrive whole from its first byte, when
    /// a read would wait longer (for an idle connection's next request).
    record_limit: Duration,
}

impl TlsStream {
    /// Runs the server's side of the handshake on `tcp`, for at most
    /// `limit`: a client that stalls in it, or fails it, costs only this
    /// connection (which the caller then drops, closing it). Later, `limit`
    /// is also how long a record may take to arrive whole while the
    /// connection waits for a request: a record begun is a request begun
    /// (see `read_within` below).
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
        let mut stream = TlsStream {
            tcp,
            tls,
            records: Records::default(),
            record_limit: limit,
        };
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
        let mut followed = Followed {
            tcp: &self.tcp,
            records: &mut self.records,
        };
        let read = self.tls.read_tls(&mut followed)?;
        if let Err(err) = self.tls.process_new_packets() {
            // rustls has queued the alert that tells the client why; the
            // connection ends either way.
            let _ = self.flush();
            return Err(io::Error::new(io::ErrorKind::InvalidData, err));
        }
        Ok(read)
    }
}

/// The TCP stream, read while its records are followed.
struct Followed<'a> {
    tcp: &'a TcpStream,
    records: &'a mut Records,
}

impl Read for Followed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.tcp.read(buf)?;
        self.records.follow(&buf[..read]);
        Ok(read)
    }
}

impl Transport for TlsStream {
    /// As over TCP, but what arrives is decrypted records: bytes of a record
    /// not yet whole cannot be read. So a connection that waits for its next
    /// request (`limit` is `keep_alive_timeout`) and receives part of a
    /// record waits at most `record_limit` (`request_timeout`) from then for
    /// the rest, as for a request head begun, not the idle connection's
    /// `limit`. (The other waits are no longer than `record_limit` anyway.)
    fn read_within(&mut self, buf: &mut [u8], limit: Duration) -> io::Result<usize> {
        let idle_deadline = Instant::now() + limit;
        let mut partial_since = self.records.is_partial().then(Instant::now);
        loop {
            match self.tls.reader().read(buf) {
                // Data, or 0: the client's `close_notify`.
                Ok(read) => return Ok(read),
                // Nothing decrypted is waiting: read more records.
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
            let deadline = partial_since.map_or(idle_deadline, |since| {
                idle_deadline.min(since + self.record_limit)
            });
            if self.receive(deadline)? == 0 {
                return Ok(0);
            }
            partial_since = if self.records.is_partial() {
                partial_since.or_else(|| Some(Instant::now()))
            } else {
                None
            };
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

    fn into_duplex(self) -> Option<Box<dyn Duplex>> {
        self.tcp.set_read_timeout(None).ok()?;
        Some(Box::new(TlsDuplex::new(self)))
    }
}

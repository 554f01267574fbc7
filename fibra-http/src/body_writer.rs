//! A response body that the handler writes as it goes: [`BodyWriter`].

use crate::transport::Transport;
use std::io::{self, Write};

/// The most body bytes a [`BodyWriter`] holds before it sends them: what a
/// slow client can make the server keep for one response.
pub(crate) const WRITER_BUFFER: usize = 16 << 10;
/// Room kept before the payload for the chunk's size line (`4000\r\n` for
/// the fullest buffer).
const HEADROOM: usize = 6;

/// Where a streaming handler writes its response body: given to the closure
/// of [`Body::writer`](crate::Body::writer) on the connection's own green
/// thread, after the status and headers have been sent.
///
/// It is a [`Write`] that gathers what it is given (up to 16 KiB) and sends
/// it on [`flush`](Write::flush), when it is full, and when the closure
/// returns: a handler calls `flush` where the client should see what it has
/// so far — after each server-sent event, each line of progress. Each send
/// is one chunk of the chunked body (for an HTTP/1.0 client, which knows no
/// chunked coding, the bytes as they are, and the connection's close ends
/// the body).
///
/// - **Back-pressure:** a send writes to the socket, so a client that reads
///   slowly parks the handler's green thread in `write` or `flush` until it
///   catches up; the server holds no more than the 16 KiB gathered. A client
///   that reads nothing at all fails the send after the server's
///   [`write_timeout`](crate::Limits::write_timeout).
/// - **A client that goes away** makes the next send fail: `write` or
///   `flush` returns the error (`BrokenPipe`, `ConnectionReset`, …), and so
///   does every later one; the handler returns it with `?` and the
///   connection closes.
///
/// If the closure returns an error (or panics), the body ends without its
/// last chunk and the connection closes, which tells the client the body is
/// incomplete: the status was sent long before.
pub struct BodyWriter<'a> {
    io: &'a mut dyn Transport,
    chunked: bool,
    /// `HEADROOM` bytes for the size line, then the payload gathered.
    buf: Vec<u8>,
    /// Set once a send failed: the connection is broken for good.
    broken: bool,
}

impl<'a> BodyWriter<'a> {
    pub(crate) fn new(io: &'a mut dyn Transport, chunked: bool) -> Self {
        let mut buf = Vec::with_capacity(HEADROOM + WRITER_BUFFER + 2);
        buf.resize(HEADROOM, 0);
        BodyWriter {
            io,
            chunked,
            buf,
            broken: false,
        }
    }

    /// How many body bytes are gathered and not yet sent (never more than
    /// 16 KiB).
    pub fn buffered(&self) -> usize {
        self.buf.len() - HEADROOM
    }

    /// Sends what is gathered, then the body's end (the last chunk).
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.flush()?;
        if self.chunked {
            self.send(b"0\r\n\r\n")?;
        }
        Ok(())
    }

    fn send(&mut self, data: &[u8]) -> io::Result<()> {
        if self.broken {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the client is gone",
            ));
        }
        let sent = self.io.send(data);
        self.broken = sent.is_err();
        sent
    }
}

impl Write for BodyWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buffered() == WRITER_BUFFER {
            self.flush()?;
        }
        let n = data.len().min(WRITER_BUFFER - self.buffered());
        self.buf.extend_from_slice(&data[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        let len = self.buffered();
        if len == 0 {
            return Ok(());
        }
        let mut from = HEADROOM;
        if self.chunked {
            // The size line goes right before the payload, in the room kept.
            let line = format!("{len:x}\r\n");
            from -= line.len();
            self.buf[from..HEADROOM].copy_from_slice(line.as_bytes());
            self.buf.extend_from_slice(b"\r\n");
        }
        let buf = std::mem::take(&mut self.buf);
        let sent = self.send(&buf[from..]);
        self.buf = buf;
        self.buf.truncate(HEADROOM);
        sent
    }
}

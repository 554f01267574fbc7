//! The request reader driven from bytes in memory, for `cargo fuzz` (see
//! `fibra-http/fuzz/`). Not part of the API.

use crate::conn::{self, Watch};
use crate::transport::Transport;
use crate::{Limits, Request, Response, Router};
use std::cell::Cell;
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// A client made of bytes: `input`'s first byte sets how many bytes each read
/// returns (0: a read that times out first), the rest is what the client
/// sends; then it closes. What the server writes is kept.
struct Client<'a> {
    sent: &'a [u8],
    piece: usize,
    stall: bool,
    received: Vec<u8>,
}

impl Transport for Client<'_> {
    fn read_within(&mut self, buf: &mut [u8], _limit: Duration) -> io::Result<usize> {
        if std::mem::take(&mut self.stall) {
            return Err(io::ErrorKind::TimedOut.into());
        }
        let n = self.piece.min(self.sent.len()).min(buf.len());
        buf[..n].copy_from_slice(&self.sent[..n]);
        self.sent = &self.sent[n..];
        Ok(n)
    }

    fn send(&mut self, data: &[u8]) -> io::Result<()> {
        self.received.extend_from_slice(data);
        Ok(())
    }

    fn close_write(&mut self) {}
}

/// Serves the requests in `input` (see [`Client`]) with small limits and a
/// router that echoes, streams and rejects; returns what the server wrote.
pub fn serve_bytes(input: &[u8]) -> Vec<u8> {
    let Some((&piece, sent)) = input.split_first() else {
        return Vec::new();
    };
    let router = Router::new()
        .get("/", |_: &Request| Response::text("root\n"))
        .post("/echo", |r: &Request| {
            Response::new(200).with_body(r.body().to_vec())
        })
        .get("/stream", |_: &Request| {
            Response::new(200).with_body(crate::Body::stream(&b"streamed body"[..]))
        });
    let limits = Limits {
        max_head_bytes: 1024,
        max_headers: 8,
        max_body_bytes: 4096,
        ..Limits::default()
    };
    let mut client = Client {
        sent,
        piece: usize::from(piece).max(1),
        stall: piece == 0,
        received: Vec::new(),
    };
    let watch = Watch {
        idle: &Cell::new(false),
        stopping: &AtomicBool::new(false),
    };
    conn::serve(&mut client, None, &router, &limits, watch);
    client.received
}

//! The request reader driven from bytes in memory, for `cargo fuzz` (see
//! `fibra-http/fuzz/`). Not part of the API.

use crate::conn::{self, Watch};
use crate::transport::Transport;
use crate::{Limits, Request, RequestBody, Response, Router, streaming};
use std::cell::Cell;
use std::io::{self, Read};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// A client made of bytes. The first byte of `input` says how it sends the
/// rest: its low 7 bits how many bytes each read returns (0 counts as 1); its
/// top bit what happens once all is sent — set, the client stalls (reads time
/// out); clear, it closes. What the server writes is kept.
pub(crate) struct Client<'a> {
    sent: &'a [u8],
    piece: usize,
    stalls_at_end: bool,
    received: Vec<u8>,
}

impl Client<'_> {
    /// The client `input` describes; `None` for an empty input.
    pub(crate) fn new(input: &[u8]) -> Option<Client<'_>> {
        let (&piece, sent) = input.split_first()?;
        Some(Client {
            sent,
            piece: usize::from(piece & 0x7f).max(1),
            stalls_at_end: piece & 0x80 != 0,
            received: Vec::new(),
        })
    }
}

impl Transport for Client<'_> {
    fn read_within(&mut self, buf: &mut [u8], _limit: Duration) -> io::Result<usize> {
        if self.sent.is_empty() && self.stalls_at_end {
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

/// Serves the requests in `input` (the first byte says how they arrive: see
/// `fibra-http/fuzz/README.md`) with small limits and a
/// router that echoes (a body read whole, and one read as it arrives),
/// streams, reads path parameters and query pairs, and rejects; returns what
/// the server wrote.
pub fn serve_bytes(input: &[u8]) -> Vec<u8> {
    let Some(mut client) = Client::new(input) else {
        return Vec::new();
    };
    let router = Router::new()
        .get("/", |_: &Request| Response::text("root\n"))
        .post("/echo", |r: &Request| {
            Response::new(200).with_body(r.body().to_vec())
        })
        .post(
            "/upload",
            streaming(|_: &Request, body: &mut RequestBody<'_>| {
                let mut received = Vec::new();
                match body.read_to_end(&mut received) {
                    Ok(_) => Response::new(200).with_body(received),
                    // The server answers the body's fault itself.
                    Err(_) => Response::new(200),
                }
            }),
        )
        .get("/stream", |_: &Request| {
            Response::new(200).with_body(crate::Body::stream(&b"streamed body"[..]))
        })
        .get("/p/:a/*rest", |r: &Request| {
            let pairs: Vec<String> = r.query_pairs().map(|(n, v)| format!("{n}={v}")).collect();
            Response::text(format!(
                "{:?} {:?} {pairs:?}\n",
                r.param("a"),
                r.param("rest")
            ))
        });
    let limits = Limits {
        max_head_bytes: 1024,
        max_headers: 8,
        max_body_bytes: 4096,
        ..Limits::default()
    };
    let watch = Watch {
        idle: &Cell::new(false),
        stopping: &AtomicBool::new(false),
    };
    conn::serve(&mut client, None, &router, &limits, watch);
    client.received
}

/// Checks that `written` is a sequence of whole, well-formed HTTP/1.1
/// responses, as a client would read them. A response framed for a body but
/// sent without one (the answer to `HEAD`) is recognised by what follows it.
///
/// # Errors
///
/// What is malformed, and where.
pub fn check_written(written: &[u8]) -> Result<(), String> {
    if written.is_empty() {
        return Ok(());
    }
    let mut fields = [httparse::EMPTY_HEADER; 32];
    let mut parsed = httparse::Response::new(&mut fields);
    let head = match parsed.parse(written) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Err("a response head is cut short".into()),
        Err(err) => return Err(format!("a response head does not parse: {err}")),
    };
    let status = parsed.code.unwrap_or_default();
    let value = |name: &str| {
        parsed
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    };
    let rest = &written[head..];
    if crate::status::forbids_body(status) {
        return check_written(rest);
    }
    let with_body = if value("transfer-encoding") == Some(b"chunked") {
        skip_chunks(rest).and_then(check_written)
    } else if let Some(length) = value("content-length") {
        let length = std::str::from_utf8(length)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .ok_or(format!("a {status} response has a malformed length"))?;
        rest.get(length..)
            .ok_or_else(|| "a body is cut short".to_string())
            .and_then(check_written)
    } else if value("connection") == Some(b"close") {
        // A body the close ends (to an HTTP/1.0 client): all the rest.
        return Ok(());
    } else {
        return Err(format!("a {status} response has no length"));
    };
    with_body.or_else(|why| check_written(rest).map_err(|_| why))
}

/// What follows a chunked body.
fn skip_chunks(mut data: &[u8]) -> Result<&[u8], String> {
    loop {
        let (used, size) = match httparse::parse_chunk_size(data) {
            Ok(httparse::Status::Complete(chunk)) => chunk,
            _ => return Err("a chunk size does not parse".into()),
        };
        let size = usize::try_from(size).map_err(|_| "a chunk is too large")?;
        let end = used + size;
        if data.get(end..end + 2) != Some(b"\r\n") {
            return Err("a chunk is cut short".into());
        }
        data = &data[end + 2..];
        if size == 0 {
            return Ok(data);
        }
    }
}

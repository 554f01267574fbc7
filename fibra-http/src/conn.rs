//! One connection's life: read a request, read its body, run the handler,
//! write the response, and again while the connection is kept alive.
//!
//! Pipelined requests are answered in order, and their responses go out in one
//! write: the responses are gathered while more complete requests are already
//! buffered, and written before the connection waits to read. Everything a
//! client can get wrong ends in a defined way — a status and a close
//! ([`Stop::Reject`]) or, when no request is in flight, just the close
//! ([`Stop::Quiet`]); nothing a client sends makes this code panic.

use crate::chunked::{self, Unread};
use crate::host;
use crate::request::Version;
use crate::response::{Content, Framing, KeepAlive, WriteBody};
use crate::status::forbids_body;
use crate::transport::Transport;
use crate::upgrade::{OnUpgrade, Upgraded};
use crate::version::{self, Unknown};
use crate::{BodyWriter, Handler, Limits, Request, RequestBody, Response};
use bytes::Bytes;
use fibra::runtime::Cancelled;
use std::cell::Cell;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The read buffer's first size; it grows (to about twice `max_head_bytes`)
/// only for larger heads.
const INITIAL_BUFFER: usize = 8 << 10;
/// Gathered responses are written once they reach this size.
const FLUSH_AT: usize = 64 << 10;
/// A response body at least this large is written from where it is, not
/// copied behind the head.
const COPY_BODY_BELOW: usize = 16 << 10;
/// A request body grows ahead of its bytes by what it already holds (so a
/// fast upload reads in ever larger pieces), but by at least
/// `FIRST_BODY_PIECE` and at most `BODY_PIECE`: a client that trickles a body
/// it announced as large costs little more than the bytes it sent.
const FIRST_BODY_PIECE: usize = 1 << 10;
const BODY_PIECE: usize = 16 << 10;
/// The longest chunk-size line read (digits, chunk extensions and CRLF).
const MAX_CHUNK_LINE: usize = 1 << 10;
/// The most bytes a request's chunk-size lines may carry beyond their sizes
/// (extensions, leading zeros: see [`chunked::SizeLine::extra`]), all lines
/// together: extensions are read and dropped, so without a bound a client
/// could send megabytes of them for a small body (as Go bounds them since
/// CVE-2023-39326).
const MAX_CHUNK_EXTRA: usize = 16 << 10;
/// After a response that closes the connection, what the client still sends
/// is read and dropped for this long, and up to `LINGER_BYTES`, so that the
/// close does not reset the connection under the response (RFC 9112 §9.6).
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 256 << 10;

/// What the server lets a connection know, and learns from it.
pub(crate) struct Watch<'a> {
    /// Set while the connection waits for a new request with nothing of one
    /// read yet, and once it is upgraded: then a graceful shutdown closes it
    /// at once (it loses no request, and an upgraded one has none to end).
    pub idle: &'a Cell<bool>,
    /// The server is shutting down: finish the request in flight, then close.
    pub stopping: &'a AtomicBool,
}

/// Serves requests from `io` until the client or the server ends the
/// connection.
pub(crate) fn serve(
    io: impl Transport,
    peer: Option<SocketAddr>,
    handler: &dyn Handler,
    limits: &Limits,
    watch: Watch<'_>,
) {
    let mut conn = Conn::new(io, peer, handler, limits, watch);
    match conn.requests() {
        Ok(None) | Err(Stop::Quiet) => {}
        Ok(Some(then)) => conn.upgrade(then),
        Err(Stop::Reject(status, why)) => conn.reject(status, why),
    }
}

/// Why a connection ends early.
enum Stop {
    /// The client left, an idle connection timed out, a write failed, or the
    /// server is stopping between requests: close without a word.
    Quiet,
    /// The request cannot be served: answer this status and reason, close.
    Reject(u16, &'static str),
}

/// What a request's head says about how to read and answer it.
struct Head {
    body: BodyFraming,
    keep_alive: bool,
    expects_continue: bool,
    /// A `HEAD` request: the response's body is not sent.
    head_only: bool,
}

enum BodyFraming {
    None,
    Length(usize),
    Chunked,
}

struct Conn<'a, T> {
    io: T,
    handler: &'a dyn Handler,
    limits: &'a Limits,
    watch: Watch<'a>,
    /// Bytes read and not yet consumed are `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Responses not yet written.
    out: Vec<u8>,
    /// When the request being read must have arrived whole, body included
    /// (`whole_request_timeout` from its first byte); set for a request
    /// whose head had to be waited for, or that has a body.
    deadline: Instant,
    request: Request,
    /// What runs on the connection once the response switching protocols
    /// is sent.
    upgrade: Option<Box<OnUpgrade>>,
}

impl<'a, T: Transport> Conn<'a, T> {
    fn new(
        io: T,
        peer: Option<SocketAddr>,
        handler: &'a dyn Handler,
        limits: &'a Limits,
        watch: Watch<'a>,
    ) -> Self {
        Conn {
            io,
            handler,
            limits,
            watch,
            buf: vec![0; INITIAL_BUFFER],
            start: 0,
            end: 0,
            out: Vec::new(),
            deadline: Instant::now(),
            request: Request::new(peer),
            upgrade: None,
        }
    }

    /// Serves requests until the connection ends, or until a response
    /// switches protocols: then what runs on the connection next.
    fn requests(&mut self) -> Result<Option<Box<OnUpgrade>>, Stop> {
        loop {
            let head = self.read_head()?;
            let (response, body_unread) = match self.answer_streaming(&head)? {
                Some(answer) => answer,
                None => {
                    self.read_body(&head)?;
                    (self.answer()?, false)
                }
            };
            if !self.respond(&head, response, body_unread)? {
                if let Some(then) = self.upgrade.take() {
                    return Ok(Some(then));
                }
                self.flush()?;
                self.linger();
                return Ok(None);
            }
        }
    }

    /// Reads and parses the next request's head into `self.request`.
    fn read_head(&mut self) -> Result<Head, Stop> {
        let max_headers = self.limits.max_headers.min(Limits::MAX_HEADERS);
        // Set once a request has begun to arrive and must be waited for: its
        // head must be complete by then (a client that trickles it in is a
        // slowloris). A head that arrived whole needs no clock read.
        let mut head_deadline = None;
        loop {
            if self.start < self.end {
                // Left uninitialised: the parser writes the fields it fills,
                // and zeroing the whole table per request costs more than
                // parsing a small head.
                let mut fields = [const { MaybeUninit::uninit() }; Limits::MAX_HEADERS];
                let mut parsed = httparse::Request::new(&mut []);
                let data = &self.buf[self.start..self.end];
                match parsed.parse_with_uninit_headers(data, &mut fields[..max_headers]) {
                    Ok(httparse::Status::Complete(len)) => {
                        if len > self.limits.max_head_bytes {
                            return Err(head_too_large(data, self.limits));
                        }
                        self.request.fill(&data[..len], &parsed);
                        self.start += len;
                        if !self.request.has_valid_target() {
                            return Err(Stop::Reject(400, "malformed request target"));
                        }
                        let head = analyse(&parsed, self.request.version(), self.limits)?;
                        if head_deadline.is_none() && !matches!(head.body, BodyFraming::None) {
                            // The head came whole: the body's deadline
                            // counts from here.
                            self.deadline = Instant::now() + self.limits.whole_request_timeout;
                        }
                        return Ok(head);
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(httparse::Error::TooManyHeaders) => {
                        return Err(Stop::Reject(431, "too many header fields"));
                    }
                    Err(httparse::Error::Version) => match version::classify(data) {
                        Unknown::LaterMinor(at) => {
                            // Read as HTTP/1.1, which the parser knows.
                            self.buf[self.start + at] = b'1';
                            continue;
                        }
                        Unknown::OtherMajor => {
                            return Err(Stop::Reject(505, "only HTTP/1.x is supported"));
                        }
                        Unknown::Malformed => {
                            return Err(Stop::Reject(400, "malformed HTTP version"));
                        }
                        Unknown::Partial => {}
                    },
                    Err(err) => return Err(Stop::Reject(400, parse_error(err))),
                }
                if self.end - self.start >= self.limits.max_head_bytes {
                    return Err(head_too_large(&self.buf[self.start..self.end], self.limits));
                }
                if head_deadline.is_none() {
                    let now = Instant::now();
                    self.deadline = now + self.limits.whole_request_timeout;
                    head_deadline = Some(self.deadline.min(now + self.limits.request_timeout));
                }
            }
            // Answers to pipelined requests go out before the connection waits.
            self.flush()?;
            let idle = head_deadline.is_none();
            let limit = match head_deadline {
                None if self.watch.stopping.load(Ordering::Relaxed) => return Err(Stop::Quiet),
                None => self.limits.keep_alive_timeout,
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            };
            self.watch.idle.set(idle);
            let read = self.fill(limit);
            self.watch.idle.set(false);
            match read {
                Ok(0) => return Err(Stop::Quiet),
                Ok(_) => {}
                Err(err) if err.kind() == io::ErrorKind::TimedOut && !idle => {
                    return Err(Stop::Reject(408, "the request head did not arrive in time"));
                }
                Err(_) => return Err(Stop::Quiet),
            }
        }
    }

    /// Reads the body the head announced into `self.request.body`.
    fn read_body(&mut self, head: &Head) -> Result<(), Stop> {
        match head.body {
            BodyFraming::None => Ok(()),
            BodyFraming::Length(length) => {
                if head.expects_continue && self.end - self.start < length {
                    self.send_continue()?;
                }
                self.body_bytes(length)
            }
            BodyFraming::Chunked => {
                if head.expects_continue && self.start == self.end {
                    self.send_continue()?;
                }
                self.read_chunks()
            }
        }
    }

    /// Decodes a chunked body (RFC 9112 §7.1); trailer fields are read and
    /// dropped. Every line must end with CRLF, and the chunk-size line is
    /// read strictly (see [`chunked`]): a lenient reading is what request
    /// smuggling uses.
    fn read_chunks(&mut self) -> Result<(), Stop> {
        let mut extra = 0;
        loop {
            let size = self.chunk_size(&mut extra)?;
            if size == 0 {
                return self.skip_trailers();
            }
            let room = self.limits.max_body_bytes - self.request.body.len();
            if size > room as u64 {
                return Err(Stop::Reject(413, "the request body is too large"));
            }
            self.body_bytes(size as usize)?;
            self.chunk_end()?;
        }
    }

    /// Reads a chunk-size line; `extra` counts the request's bytes of chunk
    /// extensions so far.
    fn chunk_size(&mut self, extra: &mut usize) -> Result<u64, Stop> {
        loop {
            // No more than `MAX_CHUNK_LINE` is read as a line, however much
            // has arrived.
            let end = self.end.min(self.start + MAX_CHUNK_LINE);
            match chunked::size_line(&self.buf[self.start..end]) {
                Ok(line) => {
                    *extra += line.extra;
                    if *extra > MAX_CHUNK_EXTRA {
                        return Err(Stop::Reject(400, "too many chunk extension bytes"));
                    }
                    self.start += line.len;
                    return Ok(line.size);
                }
                Err(Unread::Partial) if end - self.start < MAX_CHUNK_LINE => self.more()?,
                Err(Unread::Partial) => {
                    return Err(Stop::Reject(400, "a chunk size line is too long"));
                }
                Err(Unread::Malformed) => {
                    return Err(Stop::Reject(400, "malformed chunk size line"));
                }
            }
        }
    }

    /// Reads the CRLF that ends a chunk's data.
    fn chunk_end(&mut self) -> Result<(), Stop> {
        while self.end - self.start < 2 {
            self.more()?;
        }
        if &self.buf[self.start..self.start + 2] != b"\r\n" {
            return Err(Stop::Reject(400, "a chunk does not end with CRLF"));
        }
        self.start += 2;
        Ok(())
    }

    /// Reads some of the body into `out`: what is buffered, or else what
    /// arrives (first sending the answers gathered before this request).
    fn body_piece(&mut self, out: &mut [u8]) -> Result<usize, Stop> {
        let buffered = (self.end - self.start).min(out.len());
        if buffered > 0 {
            out[..buffered].copy_from_slice(&self.buf[self.start..self.start + buffered]);
            self.start += buffered;
            return Ok(buffered);
        }
        self.flush()?;
        progress(self.io.read_within(out, self.body_wait()))
    }

    /// Moves the next `n` bytes of the body into `self.request.body`: those
    /// already buffered, then the rest read straight into the body, growing
    /// it a piece at a time as bytes arrive (`FIRST_BODY_PIECE`) — never by
    /// the length a client merely announces.
    fn body_bytes(&mut self, n: usize) -> Result<(), Stop> {
        let buffered = n.min(self.end - self.start);
        let body = &mut self.request.body;
        body.extend_from_slice(&self.buf[self.start..self.start + buffered]);
        self.start += buffered;
        let mut filled = body.len();
        let end = filled + (n - buffered);
        if filled < end {
            // The rest must be waited for: answers to the requests before
            // this one go out first.
            self.flush()?;
        }
        while filled < end {
            let limit = self.body_wait();
            let body = &mut self.request.body;
            if filled == body.len() {
                let piece = filled.clamp(FIRST_BODY_PIECE, BODY_PIECE);
                body.resize(end.min(filled + piece), 0);
            }
            filled += progress(self.io.read_within(&mut body[filled..], limit))?;
        }
        Ok(())
    }

    fn skip_trailers(&mut self) -> Result<(), Stop> {
        let max_headers = self.limits.max_headers.min(Limits::MAX_HEADERS);
        loop {
            let mut fields = [httparse::EMPTY_HEADER; Limits::MAX_HEADERS];
            match httparse::parse_headers(
                &self.buf[self.start..self.end],
                &mut fields[..max_headers],
            ) {
                Ok(httparse::Status::Complete((used, _))) => {
                    if chunked::has_bare_lf(&self.buf[self.start..self.start + used]) {
                        return Err(Stop::Reject(400, "a trailer line does not end with CRLF"));
                    }
                    self.start += used;
                    return Ok(());
                }
                Ok(httparse::Status::Partial) => {
                    if self.end - self.start >= self.limits.max_head_bytes {
                        return Err(Stop::Reject(431, "the trailer fields are too large"));
                    }
                    self.more()?;
                }
                Err(httparse::Error::TooManyHeaders) => {
                    return Err(Stop::Reject(431, "too many trailer fields"));
                }
                Err(err) => return Err(Stop::Reject(400, parse_error(err))),
            }
        }
    }

    /// Runs the handler on the request read whole.
    fn answer(&mut self) -> Result<Response, Stop> {
        let (handler, request) = (self.handler, &self.request);
        match panic::catch_unwind(AssertUnwindSafe(|| handler.handle(request))) {
            Ok(response) => Ok(response),
            Err(payload) if payload.is::<Cancelled>() => panic::resume_unwind(payload),
            Err(_) => Err(Stop::Reject(500, "the handler failed")),
        }
    }

    /// Offers a request with a body, its body not yet read, to a handler
    /// that reads it as it arrives ([`Handler::handle_streaming`]): its
    /// response, and whether it left some of the body unread; or `None` if
    /// the handler wants the body whole. A body that broke a limit as it
    /// was read is answered as when read whole, whatever the handler says.
    fn answer_streaming(&mut self, head: &Head) -> Result<Option<(Response, bool)>, Stop> {
        let piece = match head.body {
            BodyFraming::None => return Ok(None),
            BodyFraming::Length(left) => Piece::Data {
                left,
                chunked: false,
            },
            BodyFraming::Chunked => Piece::SizeLine,
        };
        // Lent to the handler while the connection is lent to the body.
        let request = std::mem::replace(&mut self.request, Request::new(None));
        let handler = self.handler;
        let mut body = Streamed {
            conn: self,
            piece,
            expects_continue: head.expects_continue,
            read: 0,
            extra: 0,
            failed: None,
        };
        let answer = panic::catch_unwind(AssertUnwindSafe(|| {
            handler.handle_streaming(&request, &mut RequestBody::new(&mut body))
        }));
        let (failed, unread) = (body.failed.take(), !matches!(body.piece, Piece::Done));
        self.request = request;
        match (answer, failed) {
            (Err(payload), _) if payload.is::<Cancelled>() => panic::resume_unwind(payload),
            (_, Some(stop)) => Err(stop),
            (Err(_), None) => Err(Stop::Reject(500, "the handler failed")),
            (Ok(answer), None) => Ok(answer.map(|response| (response, unread))),
        }
    }

    /// Queues the handler's response; returns whether the connection stays
    /// open for another request (not if the handler left some of the body
    /// unread).
    fn respond(
        &mut self,
        head: &Head,
        response: Response,
        body_unread: bool,
    ) -> Result<bool, Stop> {
        let version = self.request.version();
        let status = response.status();
        let no_body = forbids_body(status);
        let upgrade = no_body && upgrades(&response, body_unread)?;
        let send_body = !no_body && !head.head_only;
        let framing = match response.body_bytes() {
            _ if no_body => Framing::None,
            Some(bytes) => Framing::Length(bytes.len()),
            // HTTP/1.0 has no chunked coding (RFC 9112 §6.1): a body of
            // unknown length ends where the connection does.
            None if version == Version::Http10 => Framing::UntilClose,
            None => Framing::Chunked,
        };
        let keep_alive = head.keep_alive
            && !upgrade
            && !body_unread
            && !matches!(framing, Framing::UntilClose)
            && !response.wants_close()
            && !self.watch.stopping.load(Ordering::Relaxed);
        let announce = match (keep_alive, version) {
            (false, _) if upgrade => KeepAlive::Upgrade,
            (false, _) => KeepAlive::Close,
            (true, Version::Http10) => KeepAlive::Announce,
            (true, Version::Http11) => KeepAlive::Implied,
        };
        response.write_head(&mut self.out, framing, announce);
        match response.into_body().into_content() {
            Content::Bytes(bytes) if send_body => {
                if bytes.len() < COPY_BODY_BELOW {
                    self.out.extend_from_slice(&bytes);
                } else {
                    self.flush()?;
                    self.io.send(&bytes).map_err(|_| Stop::Quiet)?;
                }
            }
            Content::Stream(reader) if send_body => {
                self.stream(reader, matches!(framing, Framing::Chunked))?;
            }
            Content::Writer(write) if send_body => {
                // The head goes out before the body is written: a client
                // waiting for events sees the status at once.
                self.flush()?;
                self.write_body(write, matches!(framing, Framing::Chunked))?;
            }
            Content::Upgrade(then) if upgrade => self.upgrade = Some(then),
            _ => {}
        }
        if self.out.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(keep_alive)
    }

    /// Sends a streamed body, as chunks if `chunked` (else as it is, for a
    /// body that the connection's close ends), gathered `FLUSH_AT` at a time.
    fn stream(&mut self, mut reader: Box<dyn Read>, chunked: bool) -> Result<(), Stop> {
        let mut scratch = vec![0; 16 << 10];
        loop {
            // The status is gone already: a failing reader can only end the
            // connection, which tells the client the body is incomplete.
            let n = match reader.read(&mut scratch) {
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    let _ = self.flush();
                    return Err(Stop::Quiet);
                }
            };
            if n == 0 {
                if chunked {
                    self.out.extend_from_slice(b"0\r\n\r\n");
                }
                return Ok(());
            }
            if chunked {
                self.out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
            }
            self.out.extend_from_slice(&scratch[..n]);
            if chunked {
                self.out.extend_from_slice(b"\r\n");
            }
            if self.out.len() >= FLUSH_AT {
                self.flush()?;
            }
        }
    }

    /// Runs a handler's body writer on the connection (see
    /// [`Body::writer`](crate::Body::writer)), as chunks if `chunked`.
    fn write_body(&mut self, write: Box<WriteBody>, chunked: bool) -> Result<(), Stop> {
        let mut writer = BodyWriter::new(&mut self.io, chunked);
        match panic::catch_unwind(AssertUnwindSafe(|| write(&mut writer))) {
            Ok(Ok(())) => writer.finish().map_err(|_| Stop::Quiet),
            Err(payload) if payload.is::<Cancelled>() => panic::resume_unwind(payload),
            // The status is gone already: the close tells the client that
            // the body is incomplete.
            Ok(Err(_)) | Err(_) => Err(Stop::Quiet),
        }
    }

    /// Sends the response switching protocols, and runs `then` on the
    /// connection from there: what was read past the request first, the
    /// transport after it (see [`Request::upgrade`]).
    fn upgrade(mut self, then: Box<OnUpgrade>) {
        if self.flush().is_err() {
            return;
        }
        // From here a graceful shutdown closes the connection at once; one
        // that has begun already closes it now.
        self.watch.idle.set(true);
        if self.watch.stopping.load(Ordering::Relaxed) {
            return;
        }
        let read_ahead = Bytes::copy_from_slice(&self.buf[self.start..self.end]);
        let Some(io) = self.io.into_duplex() else {
            return;
        };
        let upgraded = Upgraded::new(io, read_ahead);
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| then(upgraded))) {
            // Only the connection ends, as when a handler panics, unless the
            // server cancels it.
            if payload.is::<Cancelled>() {
                panic::resume_unwind(payload);
            }
        }
    }

    /// Answers `status` with `why` and closes the connection.
    fn reject(&mut self, status: u16, why: &'static str) {
        let body = format!("{why}\n");
        let response =
            Response::new(status).with_header("content-type", "text/plain; charset=utf-8");
        response.write_head(&mut self.out, Framing::Length(body.len()), KeepAlive::Close);
        self.out.extend_from_slice(body.as_bytes());
        if self.flush().is_ok() {
            self.linger();
        }
    }

    /// Closes the sending side, then reads and drops what the client still
    /// sends, for a while, so that the client reads the last response before
    /// the connection is reset.
    fn linger(&mut self) {
        self.io.close_write();
        let until = Instant::now() + LINGER;
        let mut dropped = 0;
        while dropped < LINGER_BYTES {
            let left = until.saturating_duration_since(Instant::now());
            match self.io.read_within(&mut self.buf, left) {
                Ok(0) | Err(_) => return,
                Ok(n) => dropped += n,
            }
        }
    }

    fn send_continue(&mut self) -> Result<(), Stop> {
        self.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        self.flush()
    }

    /// Writes the gathered responses.
    fn flush(&mut self) -> Result<(), Stop> {
        if self.out.is_empty() {
            return Ok(());
        }
        let sent = self.io.send(&self.out);
        self.out.clear();
        if self.out.capacity() > 4 * FLUSH_AT {
            self.out.shrink_to(FLUSH_AT);
        }
        sent.map_err(|_| Stop::Quiet)
    }

    /// Reads more of a request's body, first sending the answers gathered
    /// for the pipelined requests before it: the client may wait for them
    /// before it sends the rest.
    fn more(&mut self) -> Result<(), Stop> {
        self.flush()?;
        progress(self.fill(self.body_wait())).map(drop)
    }

    /// How long a read of the body may wait: `request_timeout` for something
    /// to arrive, and no later than the whole request's deadline.
    fn body_wait(&self) -> Duration {
        let left = self.deadline.saturating_duration_since(Instant::now());
        left.min(self.limits.request_timeout)
    }

    /// Reads into the free end of the buffer, first making room: moving the
    /// unconsumed bytes to the front, or growing the buffer.
    fn fill(&mut self, limit: Duration) -> io::Result<usize> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            } else {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        let n = self.io.read_within(&mut self.buf[self.end..], limit)?;
        self.end += n;
        Ok(n)
    }
}

/// A request body read as it arrives, by a handler through a
/// [`RequestBody`].
struct Streamed<'c, 'a, T> {
    conn: &'c mut Conn<'a, T>,
    piece: Piece,
    /// The client waits for `100 Continue` before it sends the body.
    expects_continue: bool,
    /// Body bytes read so far, and chunk-extension bytes.
    read: usize,
    extra: usize,
    /// How the body broke a limit, or the client left: the connection's
    /// answer, whatever the handler's.
    failed: Option<Stop>,
}

/// Where a streamed body's reading stands.
enum Piece {
    SizeLine,
    Data { left: usize, chunked: bool },
    ChunkEnd,
    Done,
}

impl<T: Transport> Streamed<'_, '_, T> {
    fn next(&mut self, out: &mut [u8]) -> Result<usize, Stop> {
        if std::mem::take(&mut self.expects_continue) && self.conn.start == self.conn.end {
            self.conn.send_continue()?;
        }
        loop {
            match self.piece {
                Piece::Done => return Ok(0),
                Piece::SizeLine => {
                    let size = self.conn.chunk_size(&mut self.extra)?;
                    if size == 0 {
                        self.conn.skip_trailers()?;
                        self.piece = Piece::Done;
                        return Ok(0);
                    }
                    let room = self.conn.limits.max_body_bytes - self.read;
                    if size > room as u64 {
                        return Err(Stop::Reject(413, "the request body is too large"));
                    }
                    self.piece = Piece::Data {
                        left: size as usize,
                        chunked: true,
                    };
                }
                Piece::Data { left, chunked } => {
                    if out.is_empty() {
                        return Ok(0);
                    }
                    let want = left.min(out.len());
                    let n = self.conn.body_piece(&mut out[..want])?;
                    self.read += n;
                    self.piece = match (left - n, chunked) {
                        (0, true) => Piece::ChunkEnd,
                        (0, false) => Piece::Done,
                        (left, chunked) => Piece::Data { left, chunked },
                    };
                    return Ok(n);
                }
                Piece::ChunkEnd => {
                    self.conn.chunk_end()?;
                    self.piece = Piece::SizeLine;
                }
            }
        }
    }
}

impl<T: Transport> Read for Streamed<'_, '_, T> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.failed.is_none() {
            match self.next(out) {
                Ok(n) => return Ok(n),
                Err(stop) => self.failed = Some(stop),
            }
        }
        Err(match &self.failed {
            Some(Stop::Reject(408, why)) => io::Error::new(io::ErrorKind::TimedOut, *why),
            Some(Stop::Reject(_, why)) => io::Error::new(io::ErrorKind::InvalidData, *why),
            _ => io::Error::new(io::ErrorKind::UnexpectedEof, "the client left mid-body"),
        })
    }
}

/// Whether `response`, whose status forbids a body, switches protocols:
/// a `101` that [`Request::upgrade`] made (another `101` is refused, since
/// nothing would speak the new protocol), with the request's body read.
fn upgrades(response: &Response, body_unread: bool) -> Result<bool, Stop> {
    let made_by_upgrade = response.body.is_upgrade();
    match response.status() {
        101 if !made_by_upgrade => Err(Stop::Reject(
            500,
            "a 101 response that Request::upgrade did not make",
        )),
        101 if body_unread => Err(Stop::Reject(
            500,
            "the handler switched protocols with the request body unread",
        )),
        101 => Ok(true),
        _ => Ok(false),
    }
}

/// The outcome of a read in the middle of a request's body: data, or the end
/// of the connection (the client left: quietly; it stalled, or its request
/// passed its deadline: `408`).
fn progress(read: io::Result<usize>) -> Result<usize, Stop> {
    match read {
        Ok(0) => Err(Stop::Quiet),
        Ok(n) => Ok(n),
        Err(err) if err.kind() == io::ErrorKind::TimedOut => {
            Err(Stop::Reject(408, "the request body did not arrive in time"))
        }
        Err(_) => Err(Stop::Quiet),
    }
}

/// The answer to a request head (beginning `head`) over `max_head_bytes`:
/// `414 URI Too Long` when its request line alone is (the target is what
/// makes a request line long), else `431`.
fn head_too_large(head: &[u8], limits: &Limits) -> Stop {
    let within = &head[..head.len().min(limits.max_head_bytes)];
    if within.contains(&b'\n') {
        Stop::Reject(431, "the request head is too large")
    } else {
        Stop::Reject(414, "the request line is too long")
    }
}

/// Reads the head's framing and connection headers (RFC 9112 §6, §9), from
/// the parser's own slices of the head (`version` as the request has it).
fn analyse(
    parsed: &httparse::Request<'_, '_>,
    version: Version,
    limits: &Limits,
) -> Result<Head, Stop> {
    let mut length: Option<u64> = None;
    // Whether a Transfer-Encoding field is present, even an empty one: it
    // still overrides Content-Length for a recipient that reads it.
    let mut coded = false;
    let mut chunked = false;
    let (mut close, mut keep) = (false, false);
    let mut expects_continue = false;
    let mut hosts = 0;
    for header in parsed.headers.iter() {
        let (name, value) = (header.name.as_bytes(), header.value);
        // The fields read here have names of different lengths: a name is
        // compared with the one of its length, if any.
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                let n = parse_length(value)
                    .ok_or(Stop::Reject(400, "Content-Length is not a number"))?;
                if length.is_some_and(|l| l != n) {
                    return Err(Stop::Reject(400, "conflicting Content-Length values"));
                }
                length = Some(n);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                coded = true;
                for coding in tokens(value) {
                    if chunked {
                        // `chunked` must be the last coding, and only once.
                        return Err(Stop::Reject(400, "chunked is not the last transfer coding"));
                    }
                    if !coding.eq_ignore_ascii_case(b"chunked") {
                        return Err(Stop::Reject(501, "unsupported transfer coding"));
                    }
                    chunked = true;
                }
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                for option in tokens(value) {
                    close |= option.eq_ignore_ascii_case(b"close");
                    keep |= option.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            6 if name.eq_ignore_ascii_case(b"expect") => {
                if !value.eq_ignore_ascii_case(b"100-continue") {
                    return Err(Stop::Reject(417, "unsupported expectation"));
                }
                expects_continue = true;
            }
            4 if name.eq_ignore_ascii_case(b"host") => {
                if !host::is_valid(value) {
                    return Err(Stop::Reject(400, "malformed Host"));
                }
                hosts += 1;
            }
            _ => {}
        }
    }
    // RFC 9112 §3.2: more than one Host is refused in any version; none,
    // only from an HTTP/1.0 client.
    if hosts > 1 {
        return Err(Stop::Reject(400, "more than one Host header"));
    }
    if version == Version::Http11 && hosts == 0 {
        return Err(Stop::Reject(400, "an HTTP/1.1 request needs a Host header"));
    }
    if coded && !chunked {
        // No coding at all (`Transfer-Encoding:` or `,`): chunked is not the
        // final coding, so the body's length is unknown (RFC 9112 §6.3).
        return Err(Stop::Reject(400, "Transfer-Encoding names no coding"));
    }
    if chunked && (length.is_some() || version == Version::Http10) {
        // Both framings, or chunked in HTTP/1.0: the framing is ambiguous, a
        // request-smuggling risk (RFC 9112 §6.1, §6.3).
        return Err(Stop::Reject(400, "ambiguous message framing"));
    }
    let body = match length {
        _ if chunked => BodyFraming::Chunked,
        Some(n) if n > limits.max_body_bytes as u64 => {
            return Err(Stop::Reject(413, "the request body is too large"));
        }
        Some(0) | None => BodyFraming::None,
        Some(n) => BodyFraming::Length(n as usize),
    };
    Ok(Head {
        body,
        keep_alive: !close && (version == Version::Http11 || keep),
        expects_continue: expects_continue && version == Version::Http11,
        head_only: parsed.method == Some("HEAD"),
    })
}

/// A `Content-Length` value: decimal digits only.
fn parse_length(value: &[u8]) -> Option<u64> {
    let digits = value.trim_ascii();
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0')))
}

/// The comma-separated elements of a header value, trimmed, empty ones
/// skipped.
fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

fn parse_error(err: httparse::Error) -> &'static str {
    match err {
        httparse::Error::HeaderName | httparse::Error::HeaderValue => "malformed header field",
        httparse::Error::NewLine => "malformed line ending",
        _ => "malformed request line",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        assert_eq!(parse_length(b"0"), Some(0));
        assert_eq!(parse_length(b" 42 "), Some(42));
        assert_eq!(
            parse_length(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        for bad in [
            &b""[..],
            b"-1",
            b"+1",
            b"1 2",
            b"0x10",
            b"99999999999999999999",
        ] {
            assert_eq!(parse_length(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_body_grows_as_it_arrives_not_by_the_length_announced() {
        let input = b"\x80POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc";
        let client = crate::fuzzing::Client::new(input).unwrap();
        let handler = |_: &Request| Response::new(200);
        let limits = Limits::default();
        let watch = Watch {
            idle: &Cell::new(false),
            stopping: &AtomicBool::new(false),
        };
        let mut conn = Conn::new(client, None, &handler, &limits, watch);
        let head = conn.read_head().ok().unwrap();
        assert!(matches!(head.body, BodyFraming::Length(1_000_000)));
        // The client stalls after three bytes of the body.
        assert!(matches!(conn.read_body(&head), Err(Stop::Reject(408, _))));
        assert!(conn.request.body.starts_with(b"abc"));
        assert!(conn.request.body.capacity() <= 2 * BODY_PIECE);
    }

    #[test]
    fn token_lists() {
        let list: Vec<&[u8]> = tokens(b" gzip ,, chunked").collect();
        assert_eq!(list, [&b"gzip"[..], b"chunked"]);
    }
}

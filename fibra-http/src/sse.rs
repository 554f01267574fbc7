//! Server-sent events: [`Response::sse`], [`EventStream`] and [`Event`].

use crate::{Body, Response};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Duration;

impl Response {
    /// `200 OK` with a stream of server-sent events (`text/event-stream`, the
    /// HTML standard's `EventSource`): `send` runs on the connection's green
    /// thread as a [`Body::writer`] does, and each event it sends reaches the
    /// client at once.
    ///
    /// `send` typically waits for what to tell (a [`fibra::sync`] channel, a
    /// `watch`, a timer) and sends a [`keep_alive`](EventStream::keep_alive)
    /// comment when nothing happened for a while, so that proxies keep the
    /// connection open. When the client goes away, the next send fails:
    /// return the error with `?` and the connection closes.
    ///
    /// ```no_run
    /// use fibra_http::{Event, Request, Response, Router, Server};
    /// use std::time::Duration;
    ///
    /// let router = Router::new().get("/ticks", |_: &Request| {
    ///     Response::sse(|events| {
    ///         for n in 0..10 {
    ///             events.send(&Event::new(format!("tick {n}")).event("tick").id(n.to_string()))?;
    ///             fibra::time::sleep(Duration::from_secs(1));
    ///             events.keep_alive()?;
    ///         }
    ///         Ok(())
    ///     })
    /// });
    /// Server::bind("127.0.0.1:8080")?.serve(router)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// `curl -N http://127.0.0.1:8080/ticks` then prints, a second apart:
    ///
    /// ```text
    /// event: tick
    /// id: 0
    /// data: tick 0
    ///
    /// :
    ///
    /// event: tick
    /// id: 1
    /// data: tick 1
    /// ```
    pub fn sse(send: impl FnOnce(&mut EventStream<'_>) -> io::Result<()> + 'static) -> Response {
        Response::new(200)
            .with_header("content-type", "text/event-stream")
            .with_header("cache-control", "no-cache")
            .with_body(Body::writer(|out| send(&mut EventStream::new(out))))
    }
}

/// Where server-sent events are written: each [`send`](Self::send) writes
/// one event and flushes it to the client. Made by [`Response::sse`], or
/// over any [`Write`] with [`new`](Self::new).
pub struct EventStream<'w> {
    out: &'w mut dyn Write,
    /// One event's text, kept to spare an allocation per event.
    text: String,
}

impl<'w> EventStream<'w> {
    /// Events written to `out`.
    ///
    /// ```
    /// use fibra_http::{Event, EventStream};
    ///
    /// let mut out = Vec::new();
    /// let mut events = EventStream::new(&mut out);
    /// events.send(&Event::new("one\ntwo").event("update").id("7"))?;
    /// events.keep_alive()?;
    /// assert_eq!(out, b"event: update\nid: 7\ndata: one\ndata: two\n\n:\n\n");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new(out: &'w mut dyn Write) -> Self {
        EventStream {
            out,
            text: String::new(),
        }
    }

    /// Sends `event` and flushes it, so that the client gets it now.
    ///
    /// # Errors
    ///
    /// Those of the writer: for a response, the client has gone.
    pub fn send(&mut self, event: &Event) -> io::Result<()> {
        self.text.clear();
        event.write_to(&mut self.text);
        self.out.write_all(self.text.as_bytes())?;
        self.out.flush()
    }

    /// Sends an empty comment (`:`), which clients ignore: it keeps an idle
    /// connection open through proxies, and finds out whether the client is
    /// still there (when it is gone, a later send fails).
    pub fn keep_alive(&mut self) -> io::Result<()> {
        self.out.write_all(b":\n\n")?;
        self.out.flush()
    }

    /// Sends a comment line (`: text`), which clients ignore.
    ///
    /// # Panics
    ///
    /// If `text` holds a CR or LF, which would end the comment.
    pub fn comment(&mut self, text: &str) -> io::Result<()> {
        assert!(one_line(text), "fibra-http: a comment holds a line break");
        write!(self.out, ": {text}\n\n")?;
        self.out.flush()
    }
}

/// One server-sent event: its data, and optionally its type (`event`), its
/// `id` (which a client sends back as `Last-Event-ID` when it reconnects)
/// and the reconnection delay it asks for (`retry`).
#[derive(Clone, Debug)]
pub struct Event {
    data: Cow<'static, str>,
    event: Option<Cow<'static, str>>,
    id: Option<Cow<'static, str>>,
    retry: Option<Duration>,
}

impl Event {
    /// An event carrying `data`, sent as one `data:` line per line of it
    /// (CRLF, LF or CR ends a line), which the client joins with LFs.
    pub fn new(data: impl Into<Cow<'static, str>>) -> Event {
        Event {
            data: data.into(),
            event: None,
            id: None,
            retry: None,
        }
    }

    /// Sets its type: a client's `addEventListener(name, …)` gets it (without
    /// one, `onmessage` does).
    ///
    /// # Panics
    ///
    /// If `name` holds a CR or LF.
    pub fn event(mut self, name: impl Into<Cow<'static, str>>) -> Event {
        let name = name.into();
        assert!(
            one_line(&name),
            "fibra-http: an event name holds a line break"
        );
        self.event = Some(name);
        self
    }

    /// Sets its id.
    ///
    /// # Panics
    ///
    /// If `id` holds a CR, LF or NUL (a client ignores an id with a NUL).
    pub fn id(mut self, id: impl Into<Cow<'static, str>>) -> Event {
        let id = id.into();
        assert!(
            one_line(&id) && !id.contains('\0'),
            "fibra-http: an event id holds a line break or NUL"
        );
        self.id = Some(id);
        self
    }

    /// Asks the client to wait `delay` before it reconnects, should the
    /// connection drop.
    pub fn retry(mut self, delay: Duration) -> Event {
        self.retry = Some(delay);
        self
    }

    fn write_to(&self, text: &mut String) {
        if let Some(event) = &self.event {
            let _ = writeln!(text, "event: {event}");
        }
        if let Some(id) = &self.id {
            let _ = writeln!(text, "id: {id}");
        }
        if let Some(retry) = self.retry {
            let _ = writeln!(text, "retry: {}", retry.as_millis());
        }
        let data = self.data.replace("\r\n", "\n").replace('\r', "\n");
        for line in data.split('\n') {
            let _ = writeln!(text, "data: {line}");
        }
        text.push('\n');
    }
}

fn one_line(text: &str) -> bool {
    !text.contains(['\r', '\n'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(event: &Event) -> String {
        let mut out = Vec::new();
        EventStream::new(&mut out).send(event).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn events_are_framed_line_by_line() {
        assert_eq!(sent(&Event::new("")), "data: \n\n");
        assert_eq!(
            sent(&Event::new("a\r\nb\rc\nd").retry(Duration::from_secs(2))),
            "retry: 2000\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
        );
    }

    #[test]
    fn comments() {
        let mut out = Vec::new();
        EventStream::new(&mut out).comment("still here").unwrap();
        assert_eq!(out, b": still here\n\n");
    }

    #[test]
    #[should_panic(expected = "line break")]
    fn a_name_cannot_forge_fields() {
        let _ = Event::new("x").event("a\ndata: forged");
    }
}

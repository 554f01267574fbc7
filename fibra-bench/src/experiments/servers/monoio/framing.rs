//! HTTP/1.x on the wire for the monoio server: each request parsed out of the
//! front of a connection's buffer with httparse (a request may come in
//! pieces, and pipelined ones come together), and each response appended to
//! the connection's output with the headers may_minihttp's carry (`Server`,
//! `Date`, `Content-Length`, `Content-Type`), and `Connection` where the
//! connection's fate differs from its version's default.

use std::time::{SystemTime, UNIX_EPOCH};

/// The most headers a request may have; more make a bad request.
const MAX_HEADERS: usize = 32;

/// What the front of a connection's buffer holds.
#[derive(Debug, PartialEq)]
pub enum Parsed<'a> {
    /// A whole request, `length` bytes long (a head: a request with a body
    /// is [`Parsed::Bad`]), for `path`.
    Request {
        length: usize,
        path: &'a str,
        connection: Connection,
    },
    /// The start of a request: more must be read.
    Partial,
    /// What httparse rejects, or a request with a body, which the contract's
    /// routes never take: answered 400, and the connection closed.
    Bad,
}

/// What becomes of a connection after a response.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Connection {
    /// Kept open, HTTP/1.1's default: no header says so.
    Persistent,
    /// Kept open as an HTTP/1.0 client asked: `Connection: keep-alive`.
    KeepAlive,
    /// Closed after the response: `Connection: close`.
    Close,
}

impl Connection {
    /// The request's `Connection` header value (`None` if it has none) and
    /// its HTTP/1.`minor` decide.
    fn of(minor: u8, header: Option<&[u8]>) -> Connection {
        let asked = |token: &str| {
            header.is_some_and(|value| {
                value
                    .split(|&b| b == b',')
                    .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
            })
        };
        match minor {
            _ if asked("close") => Connection::Close,
            0 if asked("keep-alive") => Connection::KeepAlive,
            0 => Connection::Close,
            _ => Connection::Persistent,
        }
    }

    /// The `Connection` header a response carries.
    fn header(self) -> Option<&'static str> {
        match self {
            Connection::Persistent => None,
            Connection::KeepAlive => Some("keep-alive"),
            Connection::Close => Some("close"),
        }
    }
}

/// Parses the request at the front of `buf`.
pub fn parse(buf: &[u8]) -> Parsed<'_> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let length = match request.parse(buf) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Bad,
    };
    let mut connection = None;
    for header in request.headers.iter() {
        let name = header.name;
        let empty_body = header.value.trim_ascii() == b"0";
        if name.eq_ignore_ascii_case("transfer-encoding")
            || (name.eq_ignore_ascii_case("content-length") && !empty_body)
        {
            return Parsed::Bad;
        }
        if name.eq_ignore_ascii_case("connection") {
            connection = Some(header.value);
        }
    }
    // A complete parse has both.
    let (Some(path), Some(minor)) = (request.path, request.version) else {
        return Parsed::Bad;
    };
    Parsed::Request {
        length,
        path,
        connection: Connection::of(minor, connection),
    }
}

/// A response's status: its code and reason.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Status {
    /// The status line, `HTTP/1.1 200 Ok`, as may_minihttp writes it.
    line: &'static str,
}

pub const OK: Status = Status {
    line: "HTTP/1.1 200 Ok",
};
pub const NOT_FOUND: Status = Status {
    line: "HTTP/1.1 404 Not Found",
};
pub const BAD_REQUEST: Status = Status {
    line: "HTTP/1.1 400 Bad Request",
};
pub const TOO_LARGE: Status = Status {
    line: "HTTP/1.1 431 Request Header Fields Too Large",
};

/// Appends to `out` a `text/plain` response of `status` with `body`, dated
/// `date`, saying what becomes of the connection where its version's
/// default does not.
pub fn respond(out: &mut Vec<u8>, status: Status, date: &str, body: &[u8], then: Connection) {
    out.extend_from_slice(status.line.as_bytes());
    out.extend_from_slice(b"\r\nServer: monoio\r\nDate: ");
    out.extend_from_slice(date.as_bytes());
    out.extend_from_slice(b"\r\nContent-Length: ");
    out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
    out.extend_from_slice(b"\r\nContent-Type: text/plain\r\n");
    if let Some(value) = then.header() {
        out.extend_from_slice(b"Connection: ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

/// The `Date` header's value, formatted again only when the second changes.
#[derive(Default)]
pub struct Date {
    second: Option<u64>,
    text: String,
}

impl Date {
    /// The value for now.
    pub fn now(&mut self) -> &str {
        let now = SystemTime::now();
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if self.second != Some(second) {
            self.second = Some(second);
            self.text = httpdate::fmt_http_date(now);
        }
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: &[u8] = b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

    fn request(length: usize, path: &str, connection: Connection) -> Parsed<'_> {
        Parsed::Request {
            length,
            path,
            connection,
        }
    }

    #[test]
    fn parses_requests_one_after_another_from_one_buffer() {
        let pipelined = [HELLO, b"GET /cpu HTTP/1.1\r\n\r\nGET /io HT"].concat();
        assert_eq!(
            parse(&pipelined),
            request(HELLO.len(), "/hello", Connection::Persistent)
        );
        let rest = &pipelined[HELLO.len()..];
        assert_eq!(parse(rest), request(21, "/cpu", Connection::Persistent));
        assert_eq!(parse(&rest[21..]), Parsed::Partial);
        // Every cut of a request is partial until its last byte.
        for cut in 0..HELLO.len() {
            assert_eq!(parse(&HELLO[..cut]), Parsed::Partial, "{cut}");
        }
    }

    #[test]
    fn keeps_a_connection_as_its_version_and_header_say() {
        let connection = |head: &str| match parse(head.as_bytes()) {
            Parsed::Request { connection, .. } => connection,
            other => panic!("{head:?}: {other:?}"),
        };
        assert_eq!(connection("GET / HTTP/1.1\r\n\r\n"), Connection::Persistent);
        assert_eq!(
            connection("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n"),
            Connection::Close
        );
        assert_eq!(connection("GET / HTTP/1.0\r\n\r\n"), Connection::Close);
        assert_eq!(
            connection("GET / HTTP/1.0\r\nconnection: Keep-Alive\r\n\r\n"),
            Connection::KeepAlive
        );
        assert_eq!(
            connection("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"),
            Connection::Close
        );
    }

    #[test]
    fn refuses_what_httparse_rejects_and_bodies() {
        for bad in [
            "GET /hello HTTP/1.1\r\nHost\r\n\r\n",
            "GET /hello HTTP/2.0\r\n\r\n",
            "GET /hello HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
            "POST /hello HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ] {
            assert_eq!(parse(bad.as_bytes()), Parsed::Bad, "{bad:?}");
        }
        let empty_body = "POST /hello HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            parse(empty_body.as_bytes()),
            request(empty_body.len(), "/hello", Connection::Persistent)
        );
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "A: b\r\n".repeat(MAX_HEADERS + 1)
        );
        assert_eq!(parse(many.as_bytes()), Parsed::Bad);
    }

    #[test]
    fn writes_may_minihttps_headers_and_the_connections_fate() {
        let date = "Thu, 26 Nov 2026 21:00:00 GMT";
        let mut out = Vec::new();
        respond(
            &mut out,
            OK,
            date,
            b"Hello, world!\n",
            Connection::Persistent,
        );
        respond(&mut out, NOT_FOUND, date, b"not found\n", Connection::Close);
        let expected = format!(
            "HTTP/1.1 200 Ok\r\nServer: monoio\r\nDate: {date}\r\nContent-Length: 14\r\n\
             Content-Type: text/plain\r\n\r\nHello, world!\n\
             HTTP/1.1 404 Not Found\r\nServer: monoio\r\nDate: {date}\r\nContent-Length: 10\r\n\
             Content-Type: text/plain\r\nConnection: close\r\n\r\nnot found\n"
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn dates_in_http_format() {
        let mut date = Date::default();
        let now = date.now().to_string();
        let parsed = httpdate::parse_http_date(&now).unwrap();
        let apart = SystemTime::now().duration_since(parsed).unwrap();
        // Whole seconds, so behind now and never ahead; by far less than a
        // minute on any machine.
        assert!(apart.as_secs() < 60, "{now}");
    }
}

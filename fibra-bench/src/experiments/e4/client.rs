//! fibra-bench's own client for E4. `ab -c 10` sends one request alone before
//! the others (EXPERIMENTS.md), so it never has ten in flight at first; this
//! client opens all its connections first, then sends a request on each at
//! the same moment, from an OS thread each.

use crate::peers::process;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

/// Opens `n` connections to `addr`, then sends `GET path` on all of them at
/// once, in HTTP/1.0 as `ab` does (the server closes each connection after its
/// response); returns the time from the first sending to the last whole
/// response.
/// Each response must be a 200 whose body holds `expect`.
///
/// # Errors
///
/// What went wrong first: a connection, no response within `timeout`, a
/// response that is not a 200 or lacks `expect`.
pub fn at_once(
    addr: SocketAddr,
    path: &str,
    expect: &str,
    n: usize,
    timeout: Duration,
) -> Result<Duration, String> {
    let streams = (0..n)
        .map(|_| TcpStream::connect_timeout(&addr, timeout))
        .collect::<io::Result<Vec<_>>>()
        .map_err(|e| format!("connecting: {e}"))?;
    let go = Arc::new(Barrier::new(n));
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    let clients: Vec<_> = streams
        .into_iter()
        .map(|stream| {
            let (go, request, expect) = (go.clone(), request.clone(), expect.to_string());
            thread::spawn(move || {
                go.wait();
                get(stream, &request, &expect, timeout)
            })
        })
        .collect();
    let spans = clients
        .into_iter()
        .map(|client| {
            client
                .join()
                .map_err(|_| "a client thread panicked".to_string())?
        })
        .collect::<Result<Vec<(Instant, Instant)>, String>>()?;
    let first = spans.iter().map(|&(sent, _)| sent).min();
    let last = spans.iter().map(|&(_, done)| done).max();
    Ok(match (first, last) {
        (Some(first), Some(last)) => last - first,
        _ => Duration::ZERO,
    })
}

/// Sends `request` on `stream` and reads the response to the end; returns
/// when it was sent and when the response ended. (Each client thread takes its
/// own times: the threads leave the barrier in any order, so no one of them
/// knows when the others sent.)
fn get(
    mut stream: TcpStream,
    request: &str,
    expect: &str,
    timeout: Duration,
) -> Result<(Instant, Instant), String> {
    let mut response = Vec::new();
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| format!("request: {e}"))?;
    let sent = Instant::now();
    stream
        .write_all(request.as_bytes())
        .and_then(|()| stream.read_to_end(&mut response))
        .map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                format!("no response within {}", process::secs(timeout))
            }
            _ => format!("request: {e}"),
        })?;
    let done = Instant::now();
    check(&String::from_utf8_lossy(&response), expect)?;
    Ok((sent, done))
}

/// Whether `response` is a 200 whose body holds `expect`.
fn check(response: &str, expect: &str) -> Result<(), String> {
    let status_line = response.lines().next().unwrap_or("");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((response, ""));
    match status_line.split_whitespace().nth(1) {
        _ if head.is_empty() => Err("the server closed the connection without a response".into()),
        Some("200") if body.contains(expect) => Ok(()),
        Some("200") => Err(format!("the body lacks {expect:?}: {:?}", body.trim())),
        _ => Err(format!("answered {:?}", status_line.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_status_and_body() {
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nio\n";
        assert_eq!(check(ok, "io\n"), Ok(()));
        assert_eq!(
            check(ok, "832040"),
            Err(r#"the body lacks "832040": "io""#.into())
        );
        assert_eq!(
            check("HTTP/1.1 404 Not Found\r\n\r\nnot found\n", "io"),
            Err(r#"answered "HTTP/1.1 404 Not Found""#.into())
        );
        assert_eq!(
            check("", "io"),
            Err("the server closed the connection without a response".into())
        );
    }
}

//! A 10 MiB upload read as a stream costs the server far less memory than the
//! body: the process's peak resident memory grows by well under the body's
//! size while a `streaming` handler reads it in 16 KiB pieces, in both modes.
//!
//! A test binary of its own, so that no other test allocates while the peak
//! is watched. Linux only: `/proc/self/clear_refs` resets the peak
//! (`VmHWM`). Skipped under valgrind, whose own memory is the process's too.
#![cfg(target_os = "linux")]

mod common;

use common::Running;
use fibra_http::{Limits, Mode, Request, RequestBody, Response, Router, Server, streaming};
use std::fs;

const UPLOAD: usize = 10 << 20;

/// Reads the body in 16 KiB pieces and answers with its length.
fn count(_: &Request, body: &mut RequestBody<'_>) -> Response {
    match common::read_in_pieces(body, |_| {}) {
        Ok(total) => Response::text(format!("{total}")),
        Err(err) => Response::new(500).with_body(err.to_string()),
    }
}

fn router() -> Router {
    Router::new()
        .get("/hello", |_: &Request| Response::text("Hello, world!\n"))
        .post("/upload", streaming(count))
}

/// A line of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`).
fn status_bytes(field: &str) -> usize {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    let kib: usize = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line:?}"));
    kib << 10
}

fn under_valgrind() -> bool {
    fs::read_to_string("/proc/self/maps").is_ok_and(|maps| maps.contains("vgpreload"))
}

#[test]
fn a_streamed_upload_grows_the_peak_memory_by_far_less_than_its_size() {
    if under_valgrind() {
        eprintln!("skipped: valgrind's own memory is counted in this process's");
        return;
    }
    let data = vec![b'u'; UPLOAD];
    let limits = Limits {
        max_body_bytes: 2 * UPLOAD,
        ..Limits::default()
    };
    for mode in [Mode::Threads, Mode::Ractors(2)] {
        let server = Running::serving(Server::builder().mode(mode).limits(limits.clone()), router);
        let mut client = server.client();
        // The connection, its green thread and the workers exist before the
        // peak is reset: what is measured is the upload alone.
        client.send(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(client.response().status, 200);
        fs::write("/proc/self/clear_refs", "5").expect("resetting the peak resident memory");
        let before = status_bytes("VmRSS:");
        client.send(
            format!("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: {UPLOAD}\r\n\r\n")
                .as_bytes(),
        );
        client.send(&data);
        let reply = client.response();
        let growth = status_bytes("VmHWM:").saturating_sub(before);
        assert_eq!(reply.status, 200, "{mode:?}");
        assert_eq!(reply.body, UPLOAD.to_string().as_bytes(), "{mode:?}");
        eprintln!(
            "{mode:?}: the peak grew by {} KiB for a {} KiB upload",
            growth >> 10,
            UPLOAD >> 10
        );
        assert!(
            growth < UPLOAD / 4,
            "{mode:?}: the peak resident memory grew by {growth} bytes for a {UPLOAD}-byte upload"
        );
    }
}

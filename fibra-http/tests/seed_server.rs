//! The seed experiment's server (`examples/seed-server.rs`) as its operators
//! run it: a signal to stop it lets the request in flight finish, and it
//! exits cleanly. `cargo test` builds the example next to this test.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join("examples/seed-server");
    assert!(
        path.exists(),
        "{} is missing: run `cargo test -p fibra-http`, which builds the examples",
        path.display()
    );
    path
}

/// Starts the server with a short `/io`; returns it and its address.
fn start(mode: &[&str]) -> (Child, SocketAddr) {
    let mut child = common::target_command(example())
        .args(["--port", "0", "--sleep-ms", "300"])
        .args(mode)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, addr)
}

fn signal(child: &Child, name: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[test]
fn a_signal_lets_the_request_in_flight_finish_and_exits_0() {
    for (signal_name, mode) in [
        ("TERM", &["--mode", "threads"][..]),
        ("INT", &["--mode", "ractors", "--workers", "2"][..]),
    ] {
        let (mut child, addr) = start(mode);
        let mut client = TcpStream::connect(addr).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        // The server asking for the body proves the request is in flight.
        client
            .write_all(
                b"GET /io HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n",
            )
            .unwrap();
        let mut interim = [0; 25];
        client.read_exact(&mut interim).unwrap();
        assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
        client.write_all(b"x").unwrap();
        signal(&child, signal_name);
        let mut reply = String::new();
        client.read_to_string(&mut reply).unwrap();
        assert!(
            reply.starts_with("HTTP/1.1 200 OK\r\n"),
            "{signal_name}: {reply}"
        );
        assert!(
            reply
                .to_ascii_lowercase()
                .contains("\r\nconnection: close\r\n")
        );
        assert!(reply.ends_with("\r\n\r\nio\n"), "{reply}");
        let status = child.wait().unwrap();
        assert!(status.success(), "SIG{signal_name}: {status}");
    }
}

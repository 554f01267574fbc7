//! A write to a stream whose peer has gone fails with `BrokenPipe` and raises
//! no `SIGPIPE`, even in a program that has not ignored the signal (Rust's
//! `main` ignores it; a library loaded by a C program may run where it is
//! not): plain and vectored writes, TCP and Unix streams.
//!
//! Alone in its test binary: it puts `SIGPIPE` back to its default action
//! (end the process) for the whole process, which a test beside it writing to
//! a closed pipe would not expect.
#![cfg(any(target_os = "linux", target_os = "android"))]

use fibra::net::{TcpListener, TcpStream, UnixStream};
use std::io::{self, IoSlice, Write};

/// Writes to `stream` until it fails (the peer is gone: the first writes may
/// still be taken by the kernel), plain writes or vectored ones.
fn write_until_refused(mut stream: impl Write, vectored: bool) -> io::Error {
    let chunk = [7u8; 4096];
    for _ in 0..1_000 {
        let written = if vectored {
            stream.write_vectored(&[IoSlice::new(&chunk), IoSlice::new(&chunk)])
        } else {
            stream.write(&chunk)
        };
        if let Err(err) = written {
            return err;
        }
    }
    panic!("1,000 writes to a stream whose peer had gone all succeeded");
}

fn refused(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
    )
}

#[test]
fn writes_to_a_gone_peer_fail_without_sigpipe() {
    // SAFETY: setting a signal's disposition to its default is async-signal
    // safe and has no precondition; this binary holds no other test.
    let previous = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    assert_ne!(previous, libc::SIG_ERR);
    fibra::run(|| {
        for vectored in [false, true] {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            drop(listener.accept().unwrap());
            let err = write_until_refused(&client, vectored);
            assert!(refused(&err), "TCP, vectored {vectored}: {err:?}");

            let (ours, theirs) = UnixStream::pair().unwrap();
            drop(theirs);
            let err = write_until_refused(&ours, vectored);
            assert!(refused(&err), "Unix stream, vectored {vectored}: {err:?}");
        }
    });
}

//! [`dump_on_signal`]: a dump on stderr when the process gets a signal, as Go
//! prints its goroutines on `SIGQUIT`.
//!
//! A signal handler may only call async-signal-safe functions, and a dump
//! takes locks, allocates and waits for runtimes. So the signal's action (see
//! [`signal`](crate::signal)'s) marks the dump pending and writes one byte to a
//! pipe, and a dedicated OS thread, started by the first call, reads it and
//! prints the dump. Nothing is installed until a program asks.

use super::dump::dump;
use crate::signal::{Action, Notify, Signal};
use std::io::{self, PipeReader, Read, Write};
use std::sync::{Arc, OnceLock};

/// Prints a [`dump`](crate::runtime::dump()) to stderr each time the process receives
/// `signal`, from a dedicated OS thread (a burst of signals that arrives
/// while it prints gives one more dump, not one each).
/// Nothing is installed unless a program calls it; from then on the signal
/// no longer has its default action (e.g. ending the process for `SIGQUIT`
/// or `SIGUSR1`), as with [`signal::listen`](crate::signal::listen), and
/// [listeners](crate::signal::Listener) of the same signal receive it too.
///
/// ```no_run
/// use fibra::signal::Signal;
///
/// fibra::runtime::dump_on_signal(Signal::Quit).unwrap();
/// // From a shell: kill -QUIT <pid>
/// ```
///
/// # Errors
///
/// `InvalidInput` for a signal that cannot be caught (`SIGKILL`, `SIGSTOP`),
/// or one fibra or the program needs for faults (`SIGSEGV`, `SIGBUS`,
/// `SIGILL`, `SIGFPE`: fibra reports fiber stack overflows through the first
/// two), or a number that is no signal; the OS's error if the pipe, the thread
/// or the handler cannot be had.
pub fn dump_on_signal(signal: Signal) -> io::Result<()> {
    Action::register(signal, printer()?, 0)?.keep();
    Ok(())
}

/// What the signals' actions notify: the thread that prints dumps, started
/// once with its pipe.
fn printer() -> io::Result<Arc<Notify>> {
    static PRINTER: OnceLock<Result<Arc<Notify>, (io::ErrorKind, String)>> = OnceLock::new();
    PRINTER
        .get_or_init(|| {
            let (read, notify) = Notify::new(1).map_err(|e| (e.kind(), e.to_string()))?;
            let pending = notify.clone();
            std::thread::Builder::new()
                .name("fibra-dump".into())
                .spawn(move || print_dumps(read, &pending))
                .map_err(|e| (e.kind(), e.to_string()))?;
            Ok(notify)
        })
        .clone()
        .map_err(|(kind, why)| {
            io::Error::new(kind, format!("fibra: cannot set up signal dumps: {why}"))
        })
}

fn print_dumps(mut read: PipeReader, pending: &Notify) {
    let mut buffer = [0u8; 64];
    loop {
        match read.read(&mut buffer) {
            Ok(0) => return,
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
        if pending.take(0) {
            let text = dump().to_string();
            let _ = io::stderr().lock().write_all(text.as_bytes());
        }
    }
}

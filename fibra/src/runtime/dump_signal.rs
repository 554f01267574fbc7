//! [`dump_on_signal`]: a dump on stderr when the process gets a signal, as Go
//! prints its goroutines on `SIGQUIT`.
//!
//! A signal handler may only call async-signal-safe functions, and a dump
//! takes locks, allocates and waits for runtimes. So the handler writes one
//! byte to a pipe, and a dedicated OS thread, started by the first call, reads
//! it and prints the dump. Nothing is installed until a program asks.

use super::dump::dump;
use std::io::{self, Write};
use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// The pipe's write end, for the handler (-1 until the first call).
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// Prints a [`dump`](super::dump()) to stderr each time the process receives
/// `signal` (a `libc::SIG*` number), from a dedicated OS thread.
/// Nothing is installed unless a program calls it; it replaces the signal's
/// previous disposition (its default action, e.g. ending the process for
/// `SIGQUIT` or `SIGUSR1`).
///
/// ```no_run
/// fibra::runtime::dump_on_signal(libc::SIGQUIT).unwrap();
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
pub fn dump_on_signal(signal: i32) -> io::Result<()> {
    let refused = [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
    ];
    if signal <= 0 || refused.contains(&signal) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "fibra: signal {signal} cannot carry a dump (it cannot be caught, or is needed for faults)"
            ),
        ));
    }
    start_printer()?;
    // SAFETY: the action is fully initialised (zeroed, then the handler and an
    // empty mask set); the handler only loads an atomic and calls `write`,
    // both async-signal-safe, and keeps `errno`.
    let installed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut())
    };
    if installed != 0 {
        let err = io::Error::last_os_error();
        return Err(io::Error::new(
            err.kind(),
            format!("fibra: cannot install a handler for signal {signal}: {err}"),
        ));
    }
    Ok(())
}

extern "C" fn on_signal(_: libc::c_int) {
    let fd = WAKE.load(Relaxed);
    if fd < 0 {
        return;
    }
    // SAFETY: `errno` is this thread's; it is read and restored around the
    // write, which is async-signal-safe and writes one byte from a local.
    unsafe {
        let errno = errno();
        let byte = 1u8;
        libc::write(fd, (&raw const byte).cast(), 1);
        *errno_location() = errno;
    }
}

/// Makes the pipe and starts the thread that prints dumps (once).
fn start_printer() -> io::Result<()> {
    static STARTED: OnceLock<Result<(), (io::ErrorKind, String)>> = OnceLock::new();
    STARTED
        .get_or_init(|| {
            let (read, write) = pipe().map_err(|e| (e.kind(), e.to_string()))?;
            std::thread::Builder::new()
                .name("fibra-dump".into())
                .spawn(move || print_dumps(read))
                .map_err(|e| (e.kind(), e.to_string()))?;
            WAKE.store(write, Relaxed);
            Ok(())
        })
        .clone()
        .map_err(|(kind, why)| {
            io::Error::new(kind, format!("fibra: cannot set up signal dumps: {why}"))
        })
}

/// A pipe whose write end never blocks (a burst of signals that fills it
/// just coalesces into the dumps already pending).
fn pipe() -> io::Result<(RawFd, RawFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors `pipe` writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    for (fd, flags) in [(fds[0], 0), (fds[1], libc::O_NONBLOCK)] {
        // SAFETY: plain fcntl calls on the descriptors just made.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(fd, libc::F_SETFL, flags);
        }
    }
    Ok((fds[0], fds[1]))
}

fn print_dumps(read: RawFd) {
    let mut buffer = [0u8; 64];
    loop {
        // SAFETY: reads into a local buffer of the size given.
        let n = unsafe { libc::read(read, buffer.as_mut_ptr().cast(), buffer.len()) };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return;
        }
        let text = dump().to_string();
        let _ = io::stderr().lock().write_all(text.as_bytes());
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn errno_location() -> *mut libc::c_int {
    // SAFETY: always valid for the calling thread.
    unsafe { libc::__errno_location() }
}

#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
unsafe fn errno_location() -> *mut libc::c_int {
    // SAFETY: always valid for the calling thread.
    unsafe { libc::__error() }
}

unsafe fn errno() -> libc::c_int {
    // SAFETY: see `errno_location`.
    unsafe { *errno_location() }
}

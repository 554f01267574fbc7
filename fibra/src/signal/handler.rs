//! The part of signal handling that is process-wide: what runs in the
//! signal handler. A signal's handler is installed by `signal-hook-registry`
//! the first time anything of fibra's (or of another crate that uses it)
//! asks for that signal, and runs the *actions* registered for it. fibra's
//! action for one receiver — a [`Listener`](super::Listener), or the thread
//! of [`dump_on_signal`](crate::runtime::dump_on_signal) — marks the signal
//! pending in that receiver's [`Notify`] and writes one byte to its pipe,
//! which the receiver reads to wake.

use super::Signal;
use crate::io::set_nonblocking;
use signal_hook_registry::SigId;
use std::io::{self, PipeReader, PipeWriter};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the actions of one receiver touch from the signal handler: a pending
/// flag for each of its signals, and its pipe's write end (non-blocking).
pub(crate) struct Notify {
    pending: Box<[AtomicBool]>,
    wake: PipeWriter,
}

impl Notify {
    /// A receiver's flags, for `signals` signals, and its pipe, whose read
    /// end it reads to wake.
    pub(crate) fn new(signals: usize) -> io::Result<(PipeReader, Arc<Notify>)> {
        let (read, wake) = io::pipe()?;
        // A full pipe must never block the handler: its reader has bytes
        // to wake for already.
        set_nonblocking(wake.as_fd())?;
        let pending = (0..signals).map(|_| AtomicBool::new(false)).collect();
        Ok((read, Arc::new(Notify { pending, wake })))
    }

    /// Marks signal `index` pending and wakes the reader. Runs in the signal
    /// handler: it only stores to an atomic and calls `write(2)`, both
    /// async-signal-safe, and cannot panic.
    fn signal(&self, index: usize) {
        if let Some(flag) = self.pending.get(index) {
            flag.store(true, Ordering::Release);
        }
        self.wake();
    }

    /// Writes a byte to the pipe, for a reader to wake (from the handler, or
    /// from a reader that leaves signals pending for others).
    pub(crate) fn wake(&self) {
        let byte = 1u8;
        // SAFETY: writes one byte from a local to a descriptor this `Notify`
        // owns. A failure (the pipe is full: its reader has bytes to wake
        // for already) needs nothing done.
        unsafe { libc::write(self.wake.as_raw_fd(), (&raw const byte).cast(), 1) };
    }

    /// Whether signal `index` came since the last look, clearing it.
    pub(crate) fn take(&self, index: usize) -> bool {
        self.pending[index].swap(false, Ordering::Acquire)
    }

    /// Whether any signal is pending.
    pub(crate) fn any_pending(&self) -> bool {
        self.pending.iter().any(|flag| flag.load(Ordering::Acquire))
    }
}

/// One action registered with the signal's handler; dropping it removes it.
/// Once the removal returns, no handler is running the action any more
/// (`signal-hook-registry` waits for them): the `Notify` it holds, and so the
/// pipe it writes to, can go.
pub(crate) struct Action(SigId);

impl Action {
    /// Registers the action that marks signal `index` of `notify` when
    /// `signal` arrives, installing the signal's handler if it is the first.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a signal that cannot be caught (`SIGKILL`,
    /// `SIGSTOP`), or one fibra or the program needs for faults (`SIGSEGV`,
    /// `SIGBUS`, `SIGILL`, `SIGFPE`: fibra reports fiber stack overflows
    /// through the first two), or a number that is no signal here; the OS's
    /// error if the handler cannot be installed.
    pub(crate) fn register(
        signal: Signal,
        notify: Arc<Notify>,
        index: usize,
    ) -> io::Result<Action> {
        let raw = catchable(signal)?;
        // SAFETY: the action is async-signal-safe (`Notify::signal`: an
        // atomic store and a `write(2)`, no allocation, lock or panic), and
        // `raw` is none of `signal_hook_registry::FORBIDDEN` (`catchable`).
        let id = unsafe { signal_hook_registry::register(raw, move || notify.signal(index)) }
            .map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!("fibra: cannot install a handler for {signal}: {err}"),
                )
            })?;
        Ok(Action(id))
    }

    /// Keeps the action for the rest of the process's life.
    pub(crate) fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for Action {
    fn drop(&mut self) {
        signal_hook_registry::unregister(self.0);
    }
}

/// `signal`'s number, if a handler may be installed for it.
fn catchable(signal: Signal) -> io::Result<libc::c_int> {
    let raw = signal.as_raw();
    let refused = [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
    ];
    if refused.contains(&raw) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "fibra: {signal} cannot be handled (it cannot be caught, or fibra and the program need it for faults)"
            ),
        ));
    }
    // `sigaddset` refuses what is no signal here (and, with glibc, the
    // signals its threads reserve).
    // SAFETY: the set is initialised by `sigemptyset` before `sigaddset`
    // reads it; both only touch the set.
    let valid = unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), raw) == 0
    };
    if !valid {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("fibra: {signal} is no signal on this system"),
        ));
    }
    Ok(raw)
}

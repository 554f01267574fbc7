//! [`Listener`]: the signals one green thread (or several, in turns) waits
//! for.

use super::Signal;
use super::handler::{Action, Notify};
use crate::io::Async;
use std::cell::Cell;
use std::fmt;
use std::io::{self, PipeReader, Read};
use std::sync::Arc;

/// Starts listening for `signals`: from now on, each one the process
/// receives is kept for the returned [`Listener`] until it
/// [receives](Listener::recv) it, and no longer has its default action (see
/// the [module docs](super) for what that means, and for what happens with
/// several listeners).
///
/// ```
/// use fibra::signal::{self, Signal};
///
/// fibra::run(|| {
///     let signals = signal::listen(&[Signal::Usr1]).unwrap();
///     // SAFETY: `raise` is safe to call; the process now handles SIGUSR1.
///     unsafe { libc::raise(libc::SIGUSR1) };
///     assert_eq!(signals.recv(), Signal::Usr1);
/// });
/// ```
///
/// # Errors
///
/// `InvalidInput` for an empty list, for a signal that cannot be caught
/// (`SIGKILL`, `SIGSTOP`) or that fibra and the program need for faults
/// (`SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGFPE`), or for a number that is no
/// signal on this system; the OS's error if the pipe or the handler cannot
/// be had.
///
/// # Panics
///
/// Outside a runtime: the listener's pipe is registered with the calling
/// thread's reactor. (To wait for signals on a plain OS thread, run a
/// runtime on it: `fibra::run(|| signal::listen(…)?.recv())`.)
pub fn listen(signals: &[Signal]) -> io::Result<Listener> {
    let mut unique: Vec<Signal> = Vec::with_capacity(signals.len());
    for &signal in signals {
        if !unique.iter().any(|s| s.as_raw() == signal.as_raw()) {
            unique.push(signal);
        }
    }
    if unique.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "fibra: a signal listener needs at least one signal",
        ));
    }
    let (read, notify) = Notify::new(unique.len())?;
    let wake = Async::new(read)?;
    let actions = unique
        .iter()
        .enumerate()
        .map(|(index, &signal)| Action::register(signal, notify.clone(), index))
        .collect::<io::Result<_>>()?;
    Ok(Listener {
        actions,
        wake,
        notify,
        signals: unique.into_boxed_slice(),
        next: Cell::new(0),
    })
}

/// The signals a green thread waits for, made by [`listen`]. It belongs to
/// the runtime that made it (it is neither `Send` nor `Sync`); share it
/// between that runtime's green threads with an `Rc`.
///
/// A signal that arrives again before the listener has received it is
/// received once, as the kernel itself merges a signal that is already
/// pending. Signals that arrived before [`listen`] are not seen.
pub struct Listener {
    /// Declared first, so removed first: no handler writes to the pipe once
    /// its read end is closed.
    #[expect(dead_code, reason = "kept for its drop, which removes the actions")]
    actions: Vec<Action>,
    /// The pipe's read end: each signal writes a byte to wake a receiver.
    wake: Async<PipeReader>,
    notify: Arc<Notify>,
    /// The signals, as [`listen`] was given them (without repeats); their
    /// index is their flag's in `notify`.
    signals: Box<[Signal]>,
    /// Where the next look for a pending signal starts: after the last one
    /// received, so that a signal that keeps coming never hides another.
    next: Cell<usize>,
}

impl Listener {
    /// Parks the calling green thread until one of the signals arrives, and
    /// returns it (at once if one came since the last receive). Several
    /// green threads may wait on one listener: each signal goes to one of
    /// them.
    ///
    /// # Panics
    ///
    /// If the listener's pipe cannot be read (it can only fail with
    /// `EAGAIN`, which parks, or `EINTR`, which retries).
    pub fn recv(&self) -> Signal {
        let mut read_bytes = false;
        loop {
            if let Some(signal) = self.try_recv() {
                // The bytes this thread read may have stood for more signals
                // than the one it takes: another waiter must wake for them.
                if read_bytes && self.notify.any_pending() {
                    self.notify.wake();
                }
                return signal;
            }
            // The handler marks the signal pending, then writes its byte:
            // once a byte is read, the mark is there to see.
            read_bytes = true;
            let mut bytes = [0u8; 64];
            match self.wake.read_with(|mut pipe| pipe.read(&mut bytes)) {
                Ok(_) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => panic!("fibra: a signal listener cannot read its pipe: {err}"),
            }
        }
    }

    /// A signal that arrived since the last receive, if one did; never
    /// waits.
    pub fn try_recv(&self) -> Option<Signal> {
        let count = self.signals.len();
        let start = self.next.get();
        let index = (start..count)
            .chain(0..start)
            .find(|&index| self.notify.take(index))?;
        self.next.set((index + 1) % count);
        Some(self.signals[index])
    }

    /// The signals this listener receives.
    pub fn signals(&self) -> &[Signal] {
        &self.signals
    }
}

/// An endless iterator: each [`next`](Iterator::next) is a
/// [`recv`](Listener::recv).
impl Iterator for Listener {
    type Item = Signal;

    fn next(&mut self) -> Option<Signal> {
        Some(self.recv())
    }
}

/// An endless iterator: each [`next`](Iterator::next) is a
/// [`recv`](Listener::recv).
impl Iterator for &Listener {
    type Item = Signal;

    fn next(&mut self) -> Option<Signal> {
        Some(self.recv())
    }
}

impl fmt::Debug for Listener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener")
            .field("signals", &self.signals)
            .finish()
    }
}

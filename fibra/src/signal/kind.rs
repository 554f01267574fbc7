//! [`Signal`]: a signal by name, with its number on this system.

use std::fmt;

/// A Unix signal, by the name it has on Linux and macOS alike (its number
/// differs: `SIGUSR1` is 10 on Linux and 30 on macOS), or any other by its
/// number.
///
/// ```
/// use fibra::signal::Signal;
///
/// assert_eq!(Signal::Term.as_raw(), libc::SIGTERM);
/// assert_eq!(Signal::from_raw(libc::SIGINT), Signal::Int);
/// assert_eq!(Signal::Usr1.to_string(), "SIGUSR1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Signal {
    /// `SIGTERM`: please end (what `kill`, systemd and container runtimes
    /// send to stop a service). By default it ends the process.
    Term,
    /// `SIGINT`: the terminal's Ctrl-C. By default it ends the process.
    Int,
    /// `SIGHUP`: the terminal hung up; daemons take it as "reload your
    /// configuration". By default it ends the process.
    Hup,
    /// `SIGQUIT`: the terminal's Ctrl-\\. By default it ends the process
    /// with a core dump.
    Quit,
    /// `SIGUSR1`, the program's to define. By default it ends the process.
    Usr1,
    /// `SIGUSR2`, the program's to define. By default it ends the process.
    Usr2,
    /// `SIGWINCH`: the terminal changed size. Ignored by default.
    Winch,
    /// `SIGPIPE`: a write to a pipe or socket nobody reads any more. Rust
    /// programs ignore it (the write fails with `BrokenPipe` instead).
    Pipe,
    /// `SIGALRM`: the timer of `alarm(2)` expired. By default it ends the
    /// process.
    Alrm,
    /// `SIGCHLD`: a child process ended or stopped. Ignored by default.
    Child,
    /// Another signal, by its number (a real-time signal such as
    /// `libc::SIGRTMIN() + 1` on Linux, say). `Other(libc::SIGTERM)` names
    /// the same signal as [`Term`](Signal::Term) but is another value: a
    /// [`Listener`](super::Listener) gives back the value it was given;
    /// [`Signal::from_raw`] gives the name where there is one.
    Other(i32),
}

impl Signal {
    /// The signals with a name, in the order of the enum.
    const NAMED: [Signal; 10] = [
        Signal::Term,
        Signal::Int,
        Signal::Hup,
        Signal::Quit,
        Signal::Usr1,
        Signal::Usr2,
        Signal::Winch,
        Signal::Pipe,
        Signal::Alrm,
        Signal::Child,
    ];

    /// The signal's number on this system (a `libc::SIG*` value).
    pub const fn as_raw(self) -> i32 {
        match self {
            Signal::Term => libc::SIGTERM,
            Signal::Int => libc::SIGINT,
            Signal::Hup => libc::SIGHUP,
            Signal::Quit => libc::SIGQUIT,
            Signal::Usr1 => libc::SIGUSR1,
            Signal::Usr2 => libc::SIGUSR2,
            Signal::Winch => libc::SIGWINCH,
            Signal::Pipe => libc::SIGPIPE,
            Signal::Alrm => libc::SIGALRM,
            Signal::Child => libc::SIGCHLD,
            Signal::Other(raw) => raw,
        }
    }

    /// The signal numbered `raw` on this system: by its name if it has one
    /// here, else [`Signal::Other`]. Whether the number is a signal at all is
    /// checked where it is used ([`listen`](super::listen) refuses one that
    /// is not).
    pub fn from_raw(raw: i32) -> Signal {
        Signal::NAMED
            .into_iter()
            .find(|signal| signal.as_raw() == raw)
            .unwrap_or(Signal::Other(raw))
    }
}

/// The C name (`SIGTERM`), or `signal N` for [`Signal::Other`].
impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Signal::Term => "SIGTERM",
            Signal::Int => "SIGINT",
            Signal::Hup => "SIGHUP",
            Signal::Quit => "SIGQUIT",
            Signal::Usr1 => "SIGUSR1",
            Signal::Usr2 => "SIGUSR2",
            Signal::Winch => "SIGWINCH",
            Signal::Pipe => "SIGPIPE",
            Signal::Alrm => "SIGALRM",
            Signal::Child => "SIGCHLD",
            Signal::Other(raw) => return write!(f, "signal {raw}"),
        };
        f.write_str(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_goes_to_its_number_and_back() {
        for signal in Signal::NAMED {
            assert_eq!(Signal::from_raw(signal.as_raw()), signal);
            assert!(signal.to_string().starts_with("SIG"), "{signal}");
        }
        let numbers: std::collections::HashSet<_> =
            Signal::NAMED.iter().map(|s| s.as_raw()).collect();
        assert_eq!(numbers.len(), Signal::NAMED.len());
        assert_eq!(Signal::from_raw(1000), Signal::Other(1000));
        assert_eq!(Signal::Other(1000).as_raw(), 1000);
        assert_eq!(Signal::Other(1000).to_string(), "signal 1000");
    }
}

//! Where a runtime's reports go — the stall lines, the deadlock report and
//! the line about green threads abandoned at the end: to stderr (unless
//! turned off with [`Builder::report_to_stderr`](super::Builder::report_to_stderr)
//! or `FIBRA_STDERR=0`), and, with the cargo features `tracing` or `log`, as
//! events with the target `fibra` too.

use std::sync::OnceLock;

/// The environment variable that turns the stderr lines off (`0`) for
/// runtimes whose [`Builder`](super::Builder) does not say.
pub(super) const ENV: &str = "FIBRA_STDERR";

/// What a report is about: it sets the event's level and its `kind` field.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Report {
    /// A green thread has held its OS thread past the stall threshold
    /// (`WARN`, kind `"stall"`).
    Stall,
    /// The thread of a stall reported let go (`INFO`, kind `"stall_ended"`).
    StallEnded,
    /// Every green thread is parked and nothing can wake one; the runtime
    /// panics after (`ERROR`, kind `"deadlock"`).
    Deadlock,
    /// Green threads could not finish unwinding at the end of the runtime
    /// (`WARN`, kind `"abandoned"`).
    Abandoned,
}

/// Whether a runtime prints its reports on stderr: the builder's choice if
/// it made one, else the environment's (`FIBRA_STDERR=0` is off), else on.
pub(super) fn to_stderr(configured: Option<bool>) -> bool {
    configured.unwrap_or_else(|| {
        static FROM_ENV: OnceLock<bool> = OnceLock::new();
        *FROM_ENV.get_or_init(|| std::env::var_os(ENV).is_none_or(|v| v.to_str() != Some("0")))
    })
}

/// Reports `line` (which begins `fibra: `), to stderr if `to_stderr`, and as
/// an event where a feature asks for one.
#[cold]
pub(crate) fn report(what: Report, to_stderr: bool, line: &str) {
    if to_stderr {
        eprintln!("{line}");
    }
    #[cfg(feature = "tracing")]
    match what {
        Report::Stall => tracing::warn!(target: "fibra", kind = "stall", "{line}"),
        Report::StallEnded => tracing::info!(target: "fibra", kind = "stall_ended", "{line}"),
        Report::Deadlock => tracing::error!(target: "fibra", kind = "deadlock", "{line}"),
        Report::Abandoned => tracing::warn!(target: "fibra", kind = "abandoned", "{line}"),
    }
    #[cfg(feature = "log")]
    match what {
        Report::Stall | Report::Abandoned => log::warn!(target: "fibra", "{line}"),
        Report::StallEnded => log::info!(target: "fibra", "{line}"),
        Report::Deadlock => log::error!(target: "fibra", "{line}"),
    }
    #[cfg(not(any(feature = "tracing", feature = "log")))]
    let _ = what;
}

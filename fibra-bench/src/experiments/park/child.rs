//! The park-scale program of the runtimes that are Rust crates, run as
//! `fibra-bench --child park-scale <N> <LIMIT_S> <RUNTIME>` so that the memory
//! measured is that runtime's alone. Prints the protocol line of
//! peers/README.md, and why creating stopped short on stderr, if it did.

use super::run::{Parked, Run};
use super::{corosensei, fibra, may, tokio};
use crate::experiments::scale::parse_args;
use crate::experiments::wall;
use crate::worker::panic_message;
use std::panic;
use std::sync::OnceLock;

/// The runtimes measured in this program, each called by its argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Crate {
    FibraFibers,
    FibraThreads,
    FibraCompacted,
    Tokio,
    May,
    Corosensei,
}

impl Crate {
    const ALL: [Crate; 6] = [
        Crate::FibraFibers,
        Crate::FibraThreads,
        Crate::FibraCompacted,
        Crate::Tokio,
        Crate::May,
        Crate::Corosensei,
    ];

    /// Its `<RUNTIME>` argument.
    pub fn arg(self) -> &'static str {
        match self {
            Crate::FibraFibers => "fibers",
            Crate::FibraThreads => "threads",
            Crate::FibraCompacted => "compacted",
            Crate::Tokio => "tokio",
            Crate::May => "may",
            Crate::Corosensei => "corosensei",
        }
    }

    /// Creates the run's units, each parked once, and takes the figures while
    /// they all are.
    fn park(self, run: &'static Run) -> Result<Parked, String> {
        match self {
            Crate::FibraFibers => fibra::fibers(run),
            Crate::FibraThreads => fibra::threads(run),
            Crate::FibraCompacted => fibra::compacted_threads(run),
            Crate::Tokio => tokio::tasks(run),
            Crate::May => may::coroutines(run),
            Crate::Corosensei => corosensei::coroutines(run),
        }
    }
}

/// The process's run, for the panic hook.
static RUN: OnceLock<Run> = OnceLock::new();

pub fn main(args: &[String]) -> Result<(), String> {
    let names: Vec<&str> = Crate::ALL.iter().map(|c| c.arg()).collect();
    let usage = format!(
        "usage: fibra-bench --child park-scale <N> <LIMIT_S> <{}>   (N >= 1)",
        names.join("|")
    );
    let [counts @ .., runtime] = args else {
        return Err(usage);
    };
    let (n, limit) = parse_args(counts).ok_or(&usage)?;
    let runtime = Crate::ALL
        .into_iter()
        .find(|c| c.arg() == runtime)
        .ok_or(&usage)?;
    let run = RUN.get_or_init(|| Run::new(n, limit).exiting_at_finish());
    report_panics(run);
    let parked = runtime.park(run)?;
    run.report(&parked);
    Ok(())
}

/// Makes a panic once the run has begun end it as a refusal would: the
/// protocol line (how far it got), the panic's message as the reason, and the
/// process ends at once, for `may` panics where it cannot have a stack and
/// then hangs (see [`crate::experiments::may_child`]). Any other panic goes
/// to the default hook.
fn report_panics(run: &'static Run) {
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let message = panic_message(info.payload());
        let why = wall::explain(&format!("panicked: {message}"));
        if run.begun.get().is_some()
            && let Ok(parked) = run.parked(Some(why))
            && run.report(&parked)
        {
            std::process::exit(0);
        }
        default(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_arguments() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(
            main(&args(&["10", "40"]))
                .unwrap_err()
                .starts_with("usage:")
        );
        assert!(
            main(&args(&["10", "40", "nope"]))
                .unwrap_err()
                .starts_with("usage:")
        );
        assert!(
            main(&args(&["0", "40", "fibers"]))
                .unwrap_err()
                .starts_with("usage:")
        );
        for c in Crate::ALL {
            assert!(main(&args(&["x", "40", c.arg()])).is_err());
        }
    }
}

//! The park-scale program of the runtimes that are Rust crates, run as
//! `fibra-bench --child park-scale <N> <LIMIT_S> <RUNTIME>` so that the memory
//! measured is that runtime's alone. Prints the protocol line of
//! peers/README.md, and why creating stopped short on stderr, if it did.

use super::{corosensei, fibra, may, tokio};
use crate::experiments::scale::{parse_args, status_kb};
use crate::experiments::wall;
use crate::worker::panic_message;
use std::panic;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
    let run = RUN.get_or_init(|| Run::new(n, limit));
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

/// One run of a runtime: what it was asked, its clock and baseline, and how
/// far it has got.
pub struct Run {
    pub n: u64,
    limit: Duration,
    /// The clock and VmRSS (kB), from just before the first unit.
    begun: OnceLock<(Instant, u64)>,
    created: AtomicU64,
    reported: AtomicBool,
}

/// A run's figures, taken while every unit it created is alive and parked.
#[derive(Debug)]
pub struct Parked {
    pub created: u64,
    pub elapsed: Duration,
    pub rss_before_kb: u64,
    pub rss_kb: u64,
    /// Why creating stopped short of N, if it did.
    pub stopped: Option<String>,
}

impl Run {
    pub fn new(n: u64, limit: Duration) -> Run {
        Run {
            n,
            limit,
            begun: OnceLock::new(),
            created: AtomicU64::new(0),
            reported: AtomicBool::new(false),
        }
    }

    /// Takes the baseline and starts the clock: called once the runtime is
    /// set up (its scheduler started), just before the first unit.
    pub fn begin(&self) -> Result<(), String> {
        let rss = status_kb("VmRSS")?;
        self.begun
            .set((Instant::now(), rss))
            .map_err(|_| "the run began twice".to_string())
    }

    /// Creates units with `create`, given each one's number, until there are
    /// N, the time limit has passed, or `create` fails; returns why it stopped
    /// short, if it did.
    pub fn create(&self, mut create: impl FnMut(u64) -> Result<(), String>) -> Option<String> {
        let (start, _) = self.begun.get().expect("a run begins before it creates");
        for i in 0..self.n {
            if i % 1024 == 0 && start.elapsed() > self.limit {
                return Some(format!("the time limit of {} s", self.limit.as_secs()));
            }
            if let Err(why) = create(i) {
                return Some(wall::explain(&why));
            }
            self.created.store(i + 1, Ordering::Relaxed);
        }
        None
    }

    /// The units created so far.
    pub fn created(&self) -> u64 {
        self.created.load(Ordering::Relaxed)
    }

    /// The figures: to be taken once every unit created is parked, while they
    /// all are.
    pub fn parked(&self, stopped: Option<String>) -> Result<Parked, String> {
        let (start, rss_before_kb) = self.begun.get().ok_or("the run has not begun")?;
        let elapsed = start.elapsed();
        Ok(Parked {
            created: self.created(),
            elapsed,
            rss_before_kb: *rss_before_kb,
            rss_kb: status_kb("VmRSS")?,
            stopped,
        })
    }

    /// Prints `parked`'s line (and why it stopped short on stderr) unless a
    /// report was printed already; returns whether it printed.
    fn report(&self, parked: &Parked) -> bool {
        if self.reported.swap(true, Ordering::Relaxed) {
            return false;
        }
        if let Some(why) = &parked.stopped {
            eprintln!("{why}");
        }
        println!("{}", parked.line(self.n));
        true
    }
}

impl Parked {
    /// The protocol line of a run asked for `n` units.
    fn line(&self, n: u64) -> String {
        format!(
            "n={n} created={} ns={} rss_before_kb={} rss_kb={}",
            self.created,
            self.elapsed.as_nanos(),
            self.rss_before_kb,
            self.rss_kb
        )
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A run of `n` units with a time limit of `limit_s` seconds, for the
    /// runtimes' tests.
    pub fn run(n: u64, limit_s: u64) -> &'static Run {
        Box::leak(Box::new(Run::new(n, Duration::from_secs(limit_s))))
    }

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

    #[test]
    fn stops_where_creating_fails_and_says_why() {
        let run = run(100, 40);
        run.begin().unwrap();
        let stopped = run.create(|i| match i {
            5 => Err("Cannot allocate memory (os error 12)".into()),
            _ => Ok(()),
        });
        assert_eq!(
            stopped.as_deref(),
            Some("Cannot allocate memory (os error 12)")
        );
        let parked = run.parked(stopped).unwrap();
        assert_eq!(parked.created, 5);
        assert!(parked.rss_kb > 0 && parked.rss_before_kb > 0);
        let line = parked.line(run.n);
        assert!(line.starts_with("n=100 created=5 ns="), "{line}");
        let figures = crate::experiments::scale::parse(&line, 100, "rss_kb").unwrap();
        assert!(!figures.complete());
    }

    #[test]
    fn stops_at_the_time_limit() {
        let run = run(100, 0);
        run.begin().unwrap();
        std::thread::sleep(Duration::from_millis(2));
        let stopped = run.create(|_| Ok(()));
        assert_eq!(stopped.as_deref(), Some("the time limit of 0 s"));
        assert_eq!(run.created(), 0);
        assert!(run.begin().is_err(), "a run begins once");
    }
}

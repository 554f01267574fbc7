//! One park-scale run in the child process: the units asked for, the clock
//! and the memory baseline, how far creating got, and the protocol line
//! (peers/README.md) that reports it. Each runtime's module creates its units
//! through a [`Run`] and hands back its [`Parked`] figures.

use crate::experiments::scale::status_kb;
use crate::experiments::wall;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One run of a runtime: what it was asked, its clock and baseline, and how
/// far it has got.
pub struct Run {
    pub n: u64,
    limit: Duration,
    /// The clock and VmRSS (kB), from just before the first unit.
    pub(super) begun: OnceLock<(Instant, u64)>,
    created: AtomicU64,
    reported: AtomicBool,
    /// Whether [`Run::finish`] ends the process (the child's runs) or
    /// returns (the unit tests').
    exit_at_finish: bool,
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
            exit_at_finish: false,
        }
    }

    /// This run, made to end its process in [`Run::finish`]: the child's.
    pub fn exiting_at_finish(self) -> Run {
        Run {
            exit_at_finish: true,
            ..self
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

    /// The figures, as [`Run::parked`] takes them; in the child process the
    /// run ends here, with every unit still parked: its line is printed and
    /// the process exits. Tearing down what was made is not measured, and
    /// took longer than making it: a fibra runtime's end cancels each parked
    /// thread, which unwinds, and dropped fibers unwind too (1,000,000 fibra
    /// threads: 21.5 s to create, 43.1 s in all, on a busy 2-core machine);
    /// every runtime's child ends without it, as Go's and Java's programs do.
    pub fn finish(&self, stopped: Option<String>) -> Result<Parked, String> {
        let parked = self.parked(stopped)?;
        if self.exit_at_finish {
            self.report(&parked);
            std::process::exit(0);
        }
        Ok(parked)
    }

    /// Prints `parked`'s line (and why it stopped short on stderr) unless a
    /// report was printed already; returns whether it printed.
    pub(super) fn report(&self, parked: &Parked) -> bool {
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
        // The test process's other tests allocate and free meanwhile, so its
        // resident memory may have fallen below the baseline (which the
        // parser rightly refuses from a real run); only the shape is tested.
        let parked = Parked {
            rss_kb: parked.rss_kb.max(parked.rss_before_kb),
            ..parked
        };
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

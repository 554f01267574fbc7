//! How long each experiment takes, for the progress line's "left" and for the
//! promise that a default run ends within ten minutes on two cores: the
//! figures of a quiet 2-core machine with every peer installed, build excluded
//! (the peers' first build is not in them). `--full` has none: its runs take
//! as long as the seeds' sizes need.

use crate::ctx::Level;
use std::time::{Duration, Instant};

/// Seconds each experiment takes at the default level and with `--quick`, on
/// the project's 2-core AMD EPYC VM with every peer installed. The default
/// ones are what each experiment took in the quiet default run of 2026-11-26
/// (21:05 UTC; each run prints what each experiment took, to correct these
/// by), with park-scale's cut to its creating (its children no longer tear
/// down what they made) and monoio's rows added to echo and http-throughput;
/// the `--quick` ones are worked out more roughly from their runs' count and
/// length.
const SECONDS: &[(&str, u64, u64)] = &[
    // (experiment, default, --quick)
    ("e1", 90, 40),
    ("e2", 10, 10),
    ("e3", 60, 45),
    ("e4", 85, 30),
    ("spawn", 10, 5),
    ("echo", 27, 8),
    ("http-throughput", 85, 65),
    ("https-throughput", 33, 28),
    ("ractor-pingpong", 30, 15),
    ("ractor-fanin", 10, 8),
    ("ractor-scale", 16, 12),
    ("park-scale", 100, 20),
    ("fs", 6, 5),
];

/// How long the experiment called `name` takes at `level`; `None` for
/// `--full`, or for an experiment without a figure.
pub fn of(name: &str, level: Level) -> Option<Duration> {
    let &(_, default, quick) = SECONDS.iter().find(|(n, ..)| *n == name)?;
    match level {
        Level::Default => Some(Duration::from_secs(default)),
        Level::Quick => Some(Duration::from_secs(quick)),
        Level::Full => None,
    }
}

/// A run's experiments, each with its estimate, and which is running since
/// when: what is left of the run.
pub struct Schedule {
    estimates: Vec<Option<Duration>>,
    /// The running experiment (an index into `estimates`) and when it began.
    current: Option<(usize, Instant)>,
}

impl Schedule {
    pub fn new(estimates: Vec<Option<Duration>>) -> Schedule {
        Schedule {
            estimates,
            current: None,
        }
    }

    /// The `k`-th experiment (from 0) begins at `now`.
    pub fn begin(&mut self, k: usize, now: Instant) {
        self.current = Some((k, now));
    }

    /// What is left at `now`: the rest of the running experiment's estimate
    /// (none once it has overrun it) and the estimates of those after it;
    /// `None` where one of them has no estimate.
    pub fn left(&self, now: Instant) -> Option<Duration> {
        let (k, since) = self.current.unwrap_or((0, now));
        let running = self.estimates.get(k).copied().flatten()?;
        let later = self.estimates.get(k + 1..).unwrap_or_default();
        let later: Option<Duration> = later.iter().copied().sum();
        Some(running.saturating_sub(now.saturating_duration_since(since)) + later?)
    }
}

/// A time as the progress line and the run's last line write it: `7 min 05
/// s`, `42 s`.
pub fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        _ => format!("{} min {:02} s", s / 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::EXPERIMENTS;

    /// What a default run may take on two cores, build excluded (README).
    const DEFAULT_RUN_LIMIT: Duration = Duration::from_secs(10 * 60);

    #[test]
    fn the_default_run_fits_its_ten_minutes() {
        let mut total = Duration::ZERO;
        for e in EXPERIMENTS.iter().filter(|e| e.default) {
            let default =
                of(e.name, Level::Default).unwrap_or_else(|| panic!("{} has no estimate", e.name));
            assert!(of(e.name, Level::Quick).unwrap() <= default, "{}", e.name);
            assert_eq!(of(e.name, Level::Full), None);
            total += default;
        }
        assert!(total <= DEFAULT_RUN_LIMIT, "{}", minutes(total));
        for (name, ..) in SECONDS {
            assert!(crate::experiments::find(name).is_some(), "{name}");
        }
    }

    #[test]
    fn what_is_left_counts_down_the_running_experiment_and_adds_the_rest() {
        let s = Duration::from_secs;
        let t0 = Instant::now();
        let mut schedule = Schedule::new(vec![Some(s(60)), Some(s(30)), Some(s(10))]);
        assert_eq!(schedule.left(t0), Some(s(100)));
        schedule.begin(0, t0);
        assert_eq!(schedule.left(t0 + s(20)), Some(s(80)));
        // Overrun: only the later ones are left.
        assert_eq!(schedule.left(t0 + s(90)), Some(s(40)));
        schedule.begin(2, t0 + s(120));
        assert_eq!(schedule.left(t0 + s(125)), Some(s(5)));
        let mut unknown = Schedule::new(vec![Some(s(60)), None]);
        unknown.begin(0, t0);
        assert_eq!(unknown.left(t0), None);
        unknown.begin(1, t0);
        assert_eq!(unknown.left(t0), None);
        assert_eq!(Schedule::new(Vec::new()).left(t0), None);
    }

    #[test]
    fn writes_minutes() {
        assert_eq!(minutes(Duration::from_millis(42_900)), "42 s");
        assert_eq!(minutes(Duration::from_secs(425)), "7 min 05 s");
        assert_eq!(minutes(Duration::from_secs(600)), "10 min 00 s");
    }
}

//! The progress line while the bench runs: which experiment of how many, the
//! time gone and about how much is left ([`crate::estimate`]), and what it is
//! measuring now (a runtime, a run). A run takes minutes and prints nothing
//! until each experiment ends, so the line says where it is.
//!
//! indicatif draws it on stderr and takes it down while a table is printed, so
//! that tables stay whole. It is drawn only when stdout and stderr are both
//! terminals: output piped to a file or to `tee` gets no spinner in it.

use crate::estimate::{Schedule, minutes};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use std::fmt;
use std::io::{IsTerminal, Write};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The line of this run; none before [`start`] (in tests, in a child program),
/// when every call here but [`print()`]'s printing does nothing.
static LINE: OnceLock<ProgressBar> = OnceLock::new();

/// The run's experiments with their estimates, and the one running: what the
/// line's `{left}` says.
static SCHEDULE: Mutex<Option<Schedule>> = Mutex::new(None);

/// Starts the line for a run of experiments that take about `estimates`
/// each (`None`: not known).
pub fn start(estimates: Vec<Option<Duration>>) {
    let experiments = estimates.len() as u64;
    *schedule() = Some(Schedule::new(estimates));
    let line = if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
        let line = ProgressBar::new(experiments).with_style(
            ProgressStyle::with_template(
                "{spinner} {prefix} ({pos} of {len}, {elapsed_precise} gone, {left}): \
                 {wide_msg}",
            )
            .expect("the template is valid")
            .with_key("left", left),
        );
        line.enable_steady_tick(Duration::from_millis(120));
        line
    } else {
        ProgressBar::hidden()
    };
    // A second start (there is none) would keep the first line.
    let _ = LINE.set(line);
}

/// The schedule, whatever a panic elsewhere left it as (a figure of the line
/// only).
fn schedule() -> std::sync::MutexGuard<'static, Option<Schedule>> {
    SCHEDULE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The line's `{left}`: about how long the run has left, by the estimates.
fn left(_: &ProgressState, out: &mut dyn fmt::Write) {
    let left = schedule().as_ref().and_then(|s| s.left(Instant::now()));
    // Writing to the line's buffer cannot fail.
    let _ = match left {
        Some(left) => write!(out, "about {} left", minutes(left)),
        None => write!(out, "time left not known"),
    };
}

/// Says that the experiment called `name`, the `k`-th of the run (from 1),
/// begins.
pub fn experiment(k: usize, name: &str) {
    if let Some(schedule) = schedule().as_mut() {
        schedule.begin(k - 1, Instant::now());
    }
    if let Some(line) = LINE.get() {
        line.set_position(k as u64);
        line.set_prefix(name.to_string());
        line.set_message("starting");
    }
}

/// Says what the running experiment is doing now, e.g. `e1 resume: go (run 2/3)`.
pub fn step(what: &str) {
    if let Some(line) = LINE.get() {
        line.set_message(what.to_string());
    }
}

/// Prints `text` on stdout, with the line taken down meanwhile.
pub fn print(text: &str) {
    let print = || {
        let mut out = std::io::stdout().lock();
        // A closed stdout (`fibra-bench | head`) still lets the run finish and
        // write its files.
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    };
    match LINE.get() {
        Some(line) => line.suspend(print),
        None => print(),
    }
}

/// Takes the line down for good, at the end of the run.
pub fn finish() {
    if let Some(line) = LINE.get() {
        line.finish_and_clear();
    }
}

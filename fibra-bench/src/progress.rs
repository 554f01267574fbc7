//! The progress line while the bench runs: which experiment of how many, and what
//! it is measuring now (a runtime, a run). A run takes minutes and prints nothing
//! until each experiment ends, so the line says where it is.
//!
//! indicatif draws it on stderr and takes it down while a table is printed, so
//! that tables stay whole. It is drawn only when stdout and stderr are both
//! terminals: output piped to a file or to `tee` gets no spinner in it.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::time::Duration;

/// The line of this run; none before [`start`] (in tests, in a child program),
/// when every call here but [`print()`]'s printing does nothing.
static LINE: OnceLock<ProgressBar> = OnceLock::new();

/// Starts the line for a run of `experiments` experiments.
pub fn start(experiments: usize) {
    let line = if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
        let line = ProgressBar::new(experiments as u64).with_style(
            ProgressStyle::with_template(
                "{spinner} {prefix} ({pos} of {len}, {elapsed}): {wide_msg}",
            )
            .expect("the template is valid"),
        );
        line.enable_steady_tick(Duration::from_millis(120));
        line
    } else {
        ProgressBar::hidden()
    };
    // A second start (there is none) would keep the first line.
    let _ = LINE.set(line);
}

/// Says that the experiment called `name`, the `k`-th of the run (from 1),
/// begins.
pub fn experiment(k: usize, name: &str) {
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

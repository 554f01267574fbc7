//! E3 — IO-bound vs CPU-bound work under threads (EXPERIMENTS.md). Each kind of
//! work is a variant with a module and table of its own: [`io`], three sleeps
//! run one after another and then in three threads on one OS thread; [`cpu`],
//! 16 deflates run one after another and then in 16 Ractors on every core.

mod cpu;
mod deflate;
mod fibra;
mod io;
mod tokio;

use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::Ctx;
use crate::measure::{Best, Outcome, Runs, figure_of, measured};
use crate::report::{Row, spread, times, unmeasured_rows};
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "e3",
    description: "IO-bound vs CPU-bound work: three sleeps, then 16 deflates, in turn and at once",
    default: true,
    runtimes: || {
        let mut names = io::runtime_names();
        for name in cpu::runtime_names() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    },
    charts: &[
        Chart {
            variant: "io",
            metrics: &["sequential_time", "threaded_time"],
        },
        Chart {
            variant: "cpu",
            metrics: &["sequential_time", "parallel_time"],
        },
        Chart {
            variant: "cpu",
            metrics: &["speed_up"],
        },
    ],
    run,
    child: None,
};

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    io::run(ctx, &mut section);
    cpu::run(ctx, &mut section);
    section
}

/// One run's figures: the work one job after another, and in a thread (or
/// Ractor, or goroutine) each, all joined.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Times {
    pub sequential: Duration,
    pub threaded: Duration,
}

impl Best for Times {
    /// The better of two runs, figure by figure (noise only ever adds time).
    fn best(self, other: Times) -> Times {
        Times {
            sequential: self.sequential.min(other.sequential),
            threaded: self.threaded.min(other.threaded),
        }
    }

    /// The worse of two runs, figure by figure.
    fn worst(self, other: Times) -> Times {
        Times {
            sequential: self.sequential.max(other.sequential),
            threaded: self.threaded.max(other.threaded),
        }
    }
}

/// The rows of an E3 table: measured runtimes fastest threaded first, each with
/// its best times (written by `time`) and their ratios to fibra's, then `last`
/// of its figures and the spread of its threaded times; then the others, with
/// why.
fn rows(
    results: &[(&str, Outcome<Runs<Times>>)],
    time: fn(Duration) -> String,
    last: impl Fn(Times) -> String,
) -> Vec<Row> {
    let fibra = figure_of(results, "fibra").map(|r| r.best);
    let mut measured: Vec<(&str, Runs<Times>)> = measured(results).map(|(n, r)| (n, *r)).collect();
    measured.sort_by_key(|(_, r)| r.best.threaded);
    let ratio = |mine: Duration, theirs: Option<Duration>| {
        theirs.map_or("-".into(), |f| {
            times(mine.as_secs_f64() / f.as_secs_f64().max(1e-9))
        })
    };
    let mut rows: Vec<Row> = measured
        .into_iter()
        .map(|(name, runs)| {
            let t = runs.best;
            Row::Cells(vec![
                name.into(),
                time(t.sequential),
                ratio(t.sequential, fibra.map(|f| f.sequential)),
                time(t.threaded),
                ratio(t.threaded, fibra.map(|f| f.threaded)),
                last(t),
                spread(runs.spread(|t| t.threaded.as_secs_f64())),
            ])
        })
        .collect();
    rows.extend(unmeasured_rows(results));
    rows
}

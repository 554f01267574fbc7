//! What the experiments that measure every runtime at one fixed size share: the
//! loop that measures each runtime (`spawn`, `echo`, E3, `ractor-pingpong`), and
//! the rows and verdict of tables of rates.

use super::Section;
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Best, Outcome, Timed, best_of_fixed, figure_of, measured};
use crate::peers::Launcher;
use crate::peers::process::{self, RunError};
use crate::record::{self, Record};
use crate::report::{Row, progress, times, unmeasured_rows};
use crate::worker::Worker;

/// How a runtime is measured.
pub enum Runner<A, T = Timed> {
    /// In this process (on a [`Worker`] thread), given the experiment's size.
    InProcess(fn(A) -> Result<T, String>),
    /// A peer program, given the experiment's size as command-line arguments.
    External(Launcher),
    /// A peer program that does the work in more than one way: given the size,
    /// then the way, e.g. `threads` or `ractors`.
    Mode(Launcher, &'static str),
}

pub struct Runtime<A, T = Timed> {
    pub name: &'static str,
    /// How the runtime does the work, for the table's notes.
    pub how: &'static str,
    pub runner: Runner<A, T>,
}

/// One experiment's runs: its name (for progress lines), the size handed to
/// in-process runners, the same as peers' arguments, the parser of the peers'
/// line, and whether an uncounted warm-up run comes first.
pub struct Plan<'a, A, T = Timed> {
    pub experiment: &'static str,
    pub size: A,
    pub peer_args: &'a [String],
    pub parse: &'a dyn Fn(&str) -> Result<T, String>,
    pub warm_up: bool,
}

/// Measures each runtime: a warm-up run if the plan asks for one, and [`RUNS`]
/// counted ones, the best kept. Missing peers go to `section`; returns each
/// other runtime's outcome and a note saying how it does the work.
pub fn measure_all<A: Copy + Send + 'static, T: Best + Send + 'static>(
    ctx: &Ctx,
    plan: &Plan<A, T>,
    runtimes: Vec<Runtime<A, T>>,
    section: &mut Section,
) -> (Vec<(&'static str, Outcome<T>)>, Vec<String>) {
    let mut results = Vec::new();
    let mut notes = Vec::new();
    for runtime in runtimes {
        let name = runtime.name;
        let what = plan.experiment;
        progress(Some(&format!("{what}: preparing {name}")));
        let mode = match runtime.runner {
            Runner::Mode(_, mode) => Some(mode),
            _ => None,
        };
        let mut once: Box<dyn FnMut() -> Result<T, String> + '_> = match runtime.runner {
            Runner::InProcess(f) => {
                let mut worker = Worker::new(name);
                let size = plan.size;
                Box::new(move || worker.run(ctx.timeout, move || f(size)).and_then(|r| r))
            }
            Runner::External(launcher) | Runner::Mode(launcher, _) => match launcher.prepare(ctx) {
                Ok(peer) => Box::new(move || {
                    let mut cmd = peer.command();
                    cmd.args(plan.peer_args).args(mode);
                    let stdout =
                        process::run(&mut cmd, ctx.timeout).map_err(|e: RunError| e.to_string())?;
                    (plan.parse)(&stdout)
                }),
                Err(why) => {
                    if let Some(why) = section.unavailable(name, why) {
                        results.push((name, Outcome::Failed(why)));
                    }
                    continue;
                }
            },
        };
        let mut run = usize::from(!plan.warm_up);
        let outcome = best_of_fixed(RUNS, plan.warm_up, || {
            let which = match run {
                0 => "warm-up run".to_string(),
                _ => format!("run {run}/{RUNS}"),
            };
            progress(Some(&format!("{what}: {name} ({which})")));
            run += 1;
            Outcome::from_result(once())
        });
        notes.push(format!("{name}: {}", runtime.how));
        results.push((name, outcome));
    }
    (results, notes)
}

/// fibra's rate, if it was measured.
pub fn fibra_rate(results: &[(&str, Outcome<Timed>)]) -> Option<f64> {
    figure_of(results, "fibra").map(|t| t.per_sec())
}

/// The rows of a table of rates: measured runtimes fastest first, each its name,
/// `cells` and its rate's ratio to fibra's; then the others, with why.
pub fn rows(results: &[(&str, Outcome<Timed>)], cells: impl Fn(Timed) -> Vec<String>) -> Vec<Row> {
    let fibra = fibra_rate(results);
    let mut measured: Vec<(&str, Timed)> = measured(results).map(|(n, t)| (n, *t)).collect();
    measured.sort_by(|a, b| b.1.per_sec().total_cmp(&a.1.per_sec()));
    let mut rows: Vec<Row> = measured
        .into_iter()
        .map(|(name, t)| {
            let mut row = vec![name.to_string()];
            row.extend(cells(t));
            row.push(fibra.map_or("-".into(), |f| times(t.per_sec() / f)));
            Row::Cells(row)
        })
        .collect();
    rows.extend(unmeasured_rows(results));
    rows
}

/// The records of a table of rates: per measured runtime, its events per
/// second (metric `per_s`) and nanoseconds per event (metric `ns_each`).
pub fn records(
    experiment: &'static str,
    variant: &str,
    results: &[(&str, Outcome<Timed>)],
    (per_s, ns_each): (&'static str, &'static str),
) -> Vec<Record> {
    record::of_measured(experiment, variant, results, |t| {
        vec![(per_s, t.per_sec(), "1/s"), (ns_each, t.ns_each(), "ns")]
    })
}

/// Whether fibra's rate is at least each of `peers`': e.g. `target: fibra ≥ go,
/// tokio: met (1.31× go, 1.05× tokio)`.
pub fn verdict(results: &[(&str, Outcome<Timed>)], peers: &[&str]) -> String {
    let head = format!("target: fibra ≥ {}", peers.join(", "));
    let Some(fibra) = fibra_rate(results) else {
        return format!("{head}: no fibra figure");
    };
    let mut met = true;
    let mut ratios = Vec::new();
    for peer in peers {
        match results.iter().find(|(name, _)| name == peer) {
            Some((_, Outcome::Measured(t))) => {
                let ratio = fibra / t.per_sec();
                met &= ratio >= 1.0;
                ratios.push(format!("fibra = {} {peer}", times(ratio)));
            }
            _ => ratios.push(format!("no {peer} figure")),
        }
    }
    let all = ratios.len() == peers.len() && !ratios.iter().any(|r| r.starts_with("no "));
    let word = match (met, all) {
        (false, _) => "MISSED",
        (true, true) => "met",
        (true, false) => "met where measured",
    };
    format!("{head}: {word} ({})", ratios.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_sec: u64) -> Outcome<Timed> {
        Outcome::Measured(Timed {
            count: per_sec,
            ns: 1_000_000_000,
        })
    }

    #[test]
    fn rows_fastest_first_with_ratio_to_fibra() {
        let results = [
            ("fibra", rate(100)),
            ("go", rate(200)),
            ("tokio", Outcome::Failed("timed out after 60 s".into())),
        ];
        let rows = rows(&results, |t| vec![t.count.to_string()]);
        let text: Vec<String> = rows
            .iter()
            .map(|r| match r {
                Row::Cells(c) => c.join(" "),
                Row::Span(n, why) => format!("{n}: {why}"),
            })
            .collect();
        assert_eq!(
            text,
            [
                "go 200 2.00×",
                "fibra 100 1.00×",
                "tokio: timed out after 60 s"
            ]
        );
    }

    #[test]
    fn verdicts() {
        let results = [
            ("fibra", rate(300)),
            ("go", rate(200)),
            ("tokio", rate(100)),
        ];
        assert_eq!(
            verdict(&results, &["go", "tokio"]),
            "target: fibra ≥ go, tokio: met (fibra = 1.50× go, fibra = 3.00× tokio)"
        );
        let results = [("fibra", rate(150)), ("go", rate(200))];
        assert_eq!(
            verdict(&results, &["go", "tokio"]),
            "target: fibra ≥ go, tokio: MISSED (fibra = 0.75× go, no tokio figure)"
        );
        let results = [("fibra", rate(300)), ("go", rate(200))];
        assert!(verdict(&results, &["go", "tokio"]).contains(": met where measured ("));
        assert_eq!(
            verdict(&[("go", rate(1))], &["go"]),
            "target: fibra ≥ go: no fibra figure"
        );
    }
}

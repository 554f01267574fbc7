//! E3 IO: three functions sleep 3, 2 and 5 s. One after another they take the
//! sum; in three threads on one OS thread, ideally the longest. The default run
//! scales the sleeps down by a constant factor (the figure of interest, the
//! threads' overhead over the longest sleep, does not grow with them).

use super::{EXPERIMENT, fibra, tokio};
use crate::ctx::{Ctx, RUNS};
use crate::experiments::Section;
use crate::measure::Outcome;
use crate::peers::process::{self, RunError};
use crate::peers::protocol::parse_line;
use crate::peers::{Launcher, Missing, Prepared, Unavailable};
use crate::record::Record;
use crate::report::{Row, Table, progress, times};
use crate::worker::Worker;
use std::time::Duration;

/// The seed's sleeps, in milliseconds.
const SEED_MS: [u64; 3] = [3000, 2000, 5000];

/// What the seed reported for its sleeps, in seconds: one after another, and in
/// three threads.
const REPORTED: (f64, f64) = (11.7, 6.5);

/// The most the threads may add to the longest sleep (the target).
const OVERHEAD_TARGET: Duration = Duration::from_millis(5);

/// The variant's name, for records and peers' command lines.
const VARIANT: &str = "io";

/// How many times shorter than the seed's this run's sleeps are.
fn divisor(ctx: &Ctx) -> u64 {
    ctx.size(100, 10)
}

/// This run's sleeps, in milliseconds.
fn sleeps_ms(ctx: &Ctx) -> [u64; 3] {
    SEED_MS.map(|ms| ms / divisor(ctx))
}

/// One run's figures: the sleeps one after another, and in a thread each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Times {
    pub sequential: Duration,
    pub threaded: Duration,
}

impl Times {
    /// The better of two runs, figure by figure (noise only ever adds time).
    fn best(self, other: Times) -> Times {
        Times {
            sequential: self.sequential.min(other.sequential),
            threaded: self.threaded.min(other.threaded),
        }
    }
}

/// How a runtime is measured.
enum Runner {
    /// In this process, given the sleeps.
    InProcess(fn(&[Duration]) -> Times),
    /// A peer program speaking the E3 IO protocol: `io <ms> <ms> <ms>` in,
    /// `sequential_ns=<int> threaded_ns=<int>` out.
    External(Launcher),
}

struct Runtime {
    name: &'static str,
    /// What its threads are, for the table's notes.
    threads: &'static str,
    runner: Runner,
}

fn runtimes() -> [Runtime; 4] {
    use Runner::{External, InProcess};
    [
        Runtime {
            name: "fibra",
            threads: "green threads (fibra::spawn, fibra::time::sleep)",
            runner: InProcess(fibra::io),
        },
        Runtime {
            name: "tokio",
            threads: "tasks on a current-thread runtime (tokio::time::sleep)",
            runner: InProcess(tokio::io),
        },
        Runtime {
            name: "ruby",
            threads: "Thread.new { sleep s }",
            runner: External(Launcher::Script {
                interpreter: "ruby",
                package: "ruby",
                script: "ruby/e3.rb",
            }),
        },
        Runtime {
            name: "go",
            threads: "goroutines with GOMAXPROCS=1 (time.Sleep)",
            runner: External(Launcher::Go { module: "go/e3" }),
        },
    ]
}

/// Measures every runtime and adds the IO table to `section`.
pub fn run(ctx: &Ctx, section: &mut Section) {
    let sleeps_ms = sleeps_ms(ctx);
    let sleeps = sleeps_ms.map(Duration::from_millis);
    let mut results: Vec<(&str, Outcome<Times>)> = Vec::new();
    let mut notes = Vec::new();
    for runtime in runtimes() {
        let name = runtime.name;
        progress(Some(&format!("e3 io: preparing {name}")));
        let mut once: Box<dyn FnMut() -> Result<Times, String> + '_> = match runtime.runner {
            Runner::InProcess(f) => {
                let mut worker = Worker::new(name);
                Box::new(move || worker.run(ctx.timeout, move || f(&sleeps)))
            }
            Runner::External(launcher) => match launcher.prepare(ctx) {
                Ok(peer) => Box::new(move || run_peer(ctx, &peer, &sleeps_ms)),
                Err(Unavailable::Missing(hint)) => {
                    section.missing.push(Missing {
                        name: name.into(),
                        hint,
                    });
                    continue;
                }
                Err(Unavailable::Broken(why)) => {
                    results.push((name, Outcome::Failed(why)));
                    continue;
                }
            },
        };
        let mut best: Option<Times> = None;
        let mut outcome = None;
        for run in 1..=RUNS {
            progress(Some(&format!("e3 io: {name} (run {run}/{RUNS})")));
            match once() {
                Ok(t) => best = Some(best.map_or(t, |b| b.best(t))),
                Err(why) => {
                    outcome = Some(Outcome::Failed(why));
                    break;
                }
            }
        }
        let outcome = outcome
            .unwrap_or_else(|| best.map_or(Outcome::Failed("no runs".into()), Outcome::Measured));
        notes.push(format!("{name}: {}", runtime.threads));
        results.push((name, outcome));
    }
    section.tables.push(table(ctx, &results, notes));
    section.records.extend(records(&sleeps_ms, &results));
}

/// Runs an external peer once.
fn run_peer(ctx: &Ctx, peer: &Prepared, sleeps_ms: &[u64]) -> Result<Times, String> {
    let mut cmd = peer.command();
    cmd.arg(VARIANT)
        .args(sleeps_ms.iter().map(|ms| ms.to_string()));
    let stdout = process::run(&mut cmd, ctx.timeout).map_err(|e: RunError| e.to_string())?;
    parse(&stdout)
}

/// Parses a peer's `sequential_ns=<int> threaded_ns=<int>`.
fn parse(stdout: &str) -> Result<Times, String> {
    let fields =
        parse_line(stdout, &["sequential_ns", "threaded_ns"]).map_err(|e| e.to_string())?;
    Ok(Times {
        sequential: Duration::from_nanos(fields[0]),
        threaded: Duration::from_nanos(fields[1]),
    })
}

/// Milliseconds, to a tenth.
fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// What the threads took beyond the longest sleep: signed, to a hundredth of a
/// millisecond.
fn overhead(t: Times, longest: Duration) -> f64 {
    (t.threaded.as_secs_f64() - longest.as_secs_f64()) * 1e3
}

fn table(ctx: &Ctx, results: &[(&str, Outcome<Times>)], mut notes: Vec<String>) -> Table {
    let sleeps = sleeps_ms(ctx);
    let longest = Duration::from_millis(sleeps.into_iter().max().unwrap_or(0));
    let fibra = results.iter().find_map(|(name, o)| match o {
        Outcome::Measured(t) if *name == "fibra" => Some(*t),
        _ => None,
    });
    let mut measured: Vec<(&str, Times)> = results
        .iter()
        .filter_map(|(name, o)| match o {
            Outcome::Measured(t) => Some((*name, *t)),
            _ => None,
        })
        .collect();
    measured.sort_by_key(|(_, t)| t.threaded);
    let ratio = |mine: Duration, theirs: Option<Duration>| {
        theirs.map_or("-".into(), |f| {
            times(mine.as_secs_f64() / f.as_secs_f64().max(1e-9))
        })
    };
    let mut rows: Vec<Row> = measured
        .into_iter()
        .map(|(name, t)| {
            Row::Cells(vec![
                name.into(),
                ms(t.sequential),
                ratio(t.sequential, fibra.map(|f| f.sequential)),
                ms(t.threaded),
                ratio(t.threaded, fibra.map(|f| f.threaded)),
                format!("{:+.2} ms", overhead(t, longest)),
            ])
        })
        .collect();
    rows.extend(results.iter().filter_map(|(name, o)| match o {
        Outcome::Measured(_) => None,
        Outcome::NotApplicable => Some(Row::Span(name.to_string(), "n/a".into())),
        Outcome::Failed(why) => Some(Row::Span(name.to_string(), why.clone())),
    }));
    let d = divisor(ctx);
    notes.push(format!(
        "overhead = threaded − the longest sleep ({}); vs fibra = the runtime's time ÷ fibra's",
        ms(longest)
    ));
    notes.push(format!(
        "reported (seed, sleeps of 3, 2, 5 s): sequential {} s, threaded {} s \
         (÷ {d}: {:.0} ms, {:.0} ms)",
        REPORTED.0,
        REPORTED.1,
        REPORTED.0 * 1e3 / d as f64,
        REPORTED.1 * 1e3 / d as f64,
    ));
    notes.push(match fibra {
        Some(t) => {
            let over = overhead(t, longest);
            let met = t.threaded <= longest + OVERHEAD_TARGET;
            format!(
                "target: fibra threaded ≤ longest sleep + {} ms: {} ({over:+.2} ms)",
                OVERHEAD_TARGET.as_millis(),
                if met { "met" } else { "MISSED" },
            )
        }
        None => "target: fibra threaded ≤ longest sleep + 5 ms: no fibra figure".into(),
    });
    let secs: Vec<String> = sleeps
        .iter()
        .map(|&ms| format!("{}", ms as f64 / 1e3))
        .collect();
    Table {
        title: format!(
            "e3 io: sleeps of {} s in turn, then in 3 threads on one OS thread \
             (the seed's 3, 2, 5 s ÷ {d}); best of {RUNS} runs",
            secs.join(", ")
        ),
        columns: vec![
            "runtime",
            "sequential",
            "vs fibra",
            "threaded",
            "vs fibra",
            "overhead",
        ],
        rows,
        notes,
    }
}

/// Records of the measured runtimes; their variant names the sleeps, e.g.
/// `io sleeps_ms=300,200,500`.
fn records(sleeps_ms: &[u64], results: &[(&str, Outcome<Times>)]) -> Vec<Record> {
    let sleeps: Vec<String> = sleeps_ms.iter().map(u64::to_string).collect();
    let variant = format!("{VARIANT} sleeps_ms={}", sleeps.join(","));
    let record = |runtime: &str, metric, value: Duration| Record {
        experiment: EXPERIMENT.name,
        variant: variant.clone(),
        runtime: runtime.into(),
        metric,
        value: value.as_secs_f64(),
        unit: "s",
    };
    results
        .iter()
        .filter_map(|(name, o)| match o {
            Outcome::Measured(t) => Some([
                record(name, "sequential_time", t.sequential),
                record(name, "threaded_time", t.threaded),
            ]),
            _ => None,
        })
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_peer_line() {
        assert_eq!(
            parse("sequential_ns=1000300000 threaded_ns=500100000\n"),
            Ok(Times {
                sequential: Duration::from_nanos(1_000_300_000),
                threaded: Duration::from_nanos(500_100_000),
            })
        );
        assert!(parse("threaded_ns=1 sequential_ns=2").is_err());
        assert!(parse("sequential_ns=1").is_err());
    }

    #[test]
    fn keeps_the_best_of_each_figure() {
        let t = |s, t| Times {
            sequential: Duration::from_millis(s),
            threaded: Duration::from_millis(t),
        };
        assert_eq!(t(1001, 502).best(t(1003, 500)), t(1001, 500));
    }

    #[test]
    fn scales_the_seed_sleeps() {
        let mut ctx = Ctx::new(false);
        assert_eq!(sleeps_ms(&ctx), [300, 200, 500]);
        ctx.quick = true;
        assert_eq!(sleeps_ms(&ctx), [30, 20, 50]);
    }
}

//! E3 IO: three functions sleep 3, 2 and 5 s. One after another they take the
//! sum; in three threads on one OS thread, ideally the longest. The default run
//! scales the sleeps down by a constant factor (the figure of interest, the
//! threads' overhead over the longest sleep, does not grow with them).

use super::{EXPERIMENT, Times, fibra, tokio};
use crate::ctx::{Ctx, RUNS};
use crate::experiments::Section;
use crate::experiments::rates::{self, Plan, Runner, Runtime};
use crate::measure::{Outcome, Runs, figure_of};
use crate::peers::protocol::parse_line;
use crate::peers::{Launcher, java};
use crate::record::{self, Record};
use crate::report::{SPREAD_NOTE, Table};
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
    ctx.size(100, 20, 1)
}

/// This run's sleeps, in milliseconds.
fn sleeps_ms(ctx: &Ctx) -> [u64; 3] {
    SEED_MS.map(|ms| ms / divisor(ctx))
}

/// The names of the runtimes measured.
pub fn runtime_names() -> Vec<&'static str> {
    rates::names(&runtimes())
}

fn runtimes() -> Vec<Runtime<[Duration; 3], Times>> {
    vec![
        Runtime {
            name: "fibra",
            how: "green threads (fibra::spawn, fibra::time::sleep)",
            runner: Runner::InProcess(|sleeps| Ok(fibra::io(&sleeps))),
        },
        Runtime {
            name: "tokio",
            how: "tasks on a current-thread runtime (tokio::time::sleep)",
            runner: Runner::InProcess(|sleeps| Ok(tokio::io(&sleeps))),
        },
        Runtime {
            name: "ruby",
            how: "Thread.new { sleep s }",
            runner: Runner::External(Launcher::Script {
                interpreter: "ruby",
                package: "ruby",
                script: "ruby/e3.rb",
            }),
        },
        Runtime {
            name: "go",
            how: "goroutines with GOMAXPROCS=1 (time.Sleep)",
            runner: Runner::External(Launcher::Go { module: "go/e3" }),
        },
        Runtime {
            name: "java",
            how: "virtual threads on one carrier thread (Thread.sleep), joined",
            runner: Runner::External(Launcher::Java {
                source: "java/E3.java",
                flags: java::ONE_CARRIER,
            }),
        },
    ]
}

/// Measures every runtime (no warm-up: a sleep needs none) and adds the IO
/// table to `section`.
pub fn run(ctx: &Ctx, section: &mut Section) {
    let sleeps_ms = sleeps_ms(ctx);
    let peer_args: Vec<String> = std::iter::once(VARIANT.to_string())
        .chain(sleeps_ms.iter().map(u64::to_string))
        .collect();
    let plan = Plan {
        experiment: "e3 io",
        size: sleeps_ms.map(Duration::from_millis),
        peer_args: &peer_args,
        parse: &parse,
        warm_up: false,
    };
    let (results, notes) = rates::measure_all(ctx, &plan, runtimes(), section);
    section.tables.push(table(ctx, &results, notes));
    section.records.extend(records(&sleeps_ms, &results));
}

/// Parses a peer's `sequential_ns=<int> threaded_ns=<int>` (E3 IO and CPU).
pub(super) fn parse(stdout: &str) -> Result<Times, String> {
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

fn table(ctx: &Ctx, results: &[(&str, Outcome<Runs<Times>>)], mut notes: Vec<String>) -> Table {
    let sleeps = sleeps_ms(ctx);
    let longest = Duration::from_millis(sleeps.into_iter().max().unwrap_or(0));
    let fibra = figure_of(results, "fibra").map(|r| r.best);
    let rows = super::rows(results, ms, |t| format!("{:+.2} ms", overhead(t, longest)));
    let d = divisor(ctx);
    notes.push(format!(
        "overhead = threaded − the longest sleep ({}); vs fibra = the runtime's time ÷ fibra's",
        ms(longest)
    ));
    notes.push(format!("{SPREAD_NOTE}, of the threaded time"));
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
            "spread",
        ],
        rows,
        notes,
    }
}

/// Records of the measured runtimes; their variant names the sleeps, e.g.
/// `io sleeps_ms=300,200,500`.
fn records(sleeps_ms: &[u64], results: &[(&str, Outcome<Runs<Times>>)]) -> Vec<Record> {
    let sleeps: Vec<String> = sleeps_ms.iter().map(u64::to_string).collect();
    let variant = format!("{VARIANT} sleeps_ms={}", sleeps.join(","));
    record::of_measured(EXPERIMENT.name, &variant, results, |t| {
        vec![
            ("sequential_time", t.sequential.as_secs_f64(), "s"),
            ("threaded_time", t.threaded.as_secs_f64(), "s"),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::Level;

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
        use crate::measure::Best;
        let t = |s, t| Times {
            sequential: Duration::from_millis(s),
            threaded: Duration::from_millis(t),
        };
        assert_eq!(t(1001, 502).best(t(1003, 500)), t(1001, 500));
    }

    #[test]
    fn scales_the_seed_sleeps() {
        let mut ctx = Ctx::new(Level::Quick);
        assert_eq!(sleeps_ms(&ctx), [30, 20, 50]);
        ctx.level = Level::Default;
        assert_eq!(sleeps_ms(&ctx), [150, 100, 250]);
        ctx.level = Level::Full;
        assert_eq!(sleeps_ms(&ctx), SEED_MS);
    }
}

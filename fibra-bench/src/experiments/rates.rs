//! What the experiments that measure every runtime at one fixed size share: the
//! loop that measures each runtime (`spawn`, `echo`, E3, `ractor-pingpong`,
//! `ractor-fanin`), and the rows and verdict of tables of rates.

use super::Section;
use crate::ctx::{Ctx, RUNS};
use crate::load::Load;
use crate::measure::{Best, Outcome, Rated, Runs, Timed, best_of_fixed, figure_of, measured};
use crate::peers::Launcher;
use crate::peers::process::{self, RunError};
use crate::progress;
use crate::record::{self, Record};
use crate::report::{Row, spread, times, unmeasured_rows};
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

/// Each measured runtime's name and outcome, in the order measured.
pub type Results<T> = Vec<(&'static str, Outcome<Runs<T>>)>;

/// The names of `runtimes`, for [`super::Experiment::runtimes`].
pub fn names<A, T>(runtimes: &[Runtime<A, T>]) -> Vec<&'static str> {
    runtimes.iter().map(|r| r.name).collect()
}

/// Measures each runtime that `ctx` wants: a warm-up run if the plan asks for
/// one, and [`RUNS`] counted ones. Missing peers go to `section`; returns each
/// other runtime's outcome and a note saying how it does the work.
pub fn measure_all<A: Copy + Send + 'static, T: Best + Send + 'static>(
    ctx: &Ctx,
    plan: &Plan<A, T>,
    runtimes: Vec<Runtime<A, T>>,
    section: &mut Section,
) -> (Results<T>, Vec<String>) {
    measure_under(ctx, plan, runtimes, section, Load::Quiet)
}

/// [`measure_all`] with `load` beside each runtime's runs: started after the
/// runtime is prepared (a peer built), stopped after its last run.
pub fn measure_under<A: Copy + Send + 'static, T: Best + Send + 'static>(
    ctx: &Ctx,
    plan: &Plan<A, T>,
    runtimes: Vec<Runtime<A, T>>,
    section: &mut Section,
    load: Load,
) -> (Results<T>, Vec<String>) {
    let mut results = Vec::new();
    let mut notes = Vec::new();
    for runtime in runtimes.into_iter().filter(|r| ctx.wants(r.name)) {
        let name = runtime.name;
        let what = plan.experiment;
        progress::step(&format!("{what}: preparing {name}"));
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
        let busy = match load.start() {
            Ok(busy) => busy,
            Err(why) => {
                results.push((name, Outcome::Failed(why)));
                continue;
            }
        };
        let mut run = usize::from(!plan.warm_up);
        let outcome = best_of_fixed(RUNS, plan.warm_up, || {
            let which = match run {
                0 => "warm-up run".to_string(),
                _ => format!("run {run}/{RUNS}"),
            };
            progress::step(&format!("{what}: {name} ({which})"));
            run += 1;
            Outcome::from_result(once())
        });
        drop(busy);
        notes.push(format!("{name}: {}", runtime.how));
        results.push((name, outcome));
    }
    (results, notes)
}

/// fibra's rate, if it was measured.
pub fn fibra_rate<T: Rated>(results: &[(&str, Outcome<Runs<T>>)]) -> Option<f64> {
    figure_of(results, "fibra").map(|r| r.best.timed().per_sec())
}

/// The rows of a table of rates: measured runtimes fastest first, each its name,
/// `cells` of its best run, its rate's ratio to fibra's and the spread of its
/// runs' rates; then the others, with why.
pub fn rows<T: Rated>(
    results: &[(&str, Outcome<Runs<T>>)],
    cells: impl Fn(T) -> Vec<String>,
) -> Vec<Row> {
    let fibra = fibra_rate(results);
    let rate = |t: &T| t.timed().per_sec();
    let mut measured: Vec<(&str, Runs<T>)> = measured(results).map(|(n, r)| (n, *r)).collect();
    measured.sort_by(|a, b| rate(&b.1.best).total_cmp(&rate(&a.1.best)));
    let mut rows: Vec<Row> = measured
        .into_iter()
        .map(|(name, runs)| {
            let t = runs.best;
            let mut row = vec![name.to_string()];
            row.extend(cells(t));
            row.push(fibra.map_or("-".into(), |f| times(rate(&t) / f)));
            row.push(spread(runs.spread(rate)));
            Row::Cells(row)
        })
        .collect();
    rows.extend(unmeasured_rows(results));
    rows
}

/// The records of a table of rates: per measured runtime, its events per
/// second (metric `per_s`) and nanoseconds per event (metric `ns_each`).
pub fn records<T: Rated>(
    experiment: &'static str,
    variant: &str,
    results: &[(&str, Outcome<Runs<T>>)],
    (per_s, ns_each): (&'static str, &'static str),
) -> Vec<Record> {
    record::of_measured(experiment, variant, results, |t| {
        let t = t.timed();
        vec![(per_s, t.per_sec(), "1/s"), (ns_each, t.ns_each(), "ns")]
    })
}

/// Whether fibra's rate is at least each of `peers`': e.g. `target: fibra ≥ go,
/// tokio: met (1.31× go, 1.05× tokio)`.
pub fn verdict<T: Rated>(results: &[(&str, Outcome<Runs<T>>)], peers: &[&str]) -> String {
    verdict_of(results, "fibra", peers)
}

/// [`verdict`] for the runtime called `subject` (e.g. one of fibra's
/// variants).
pub fn verdict_of<T: Rated>(
    results: &[(&str, Outcome<Runs<T>>)],
    subject: &str,
    peers: &[&str],
) -> String {
    let head = format!("target: {subject} ≥ {}", peers.join(", "));
    let rate = figure_of(results, subject).map(|r| r.best.timed().per_sec());
    let Some(fibra) = rate else {
        return format!("{head}: no {subject} figure");
    };
    let mut met = true;
    let mut ratios = Vec::new();
    for peer in peers {
        match results.iter().find(|(name, _)| name == peer) {
            Some((_, Outcome::Measured(r))) => {
                let ratio = fibra / r.best.timed().per_sec();
                met &= ratio >= 1.0;
                ratios.push(format!("{subject} = {} {peer}", times(ratio)));
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

/// For tests: runs each external peer of `runtimes` once with `args` and
/// hands its stdout to `check`; a peer missing from this machine is skipped,
/// with a line saying so, and fibra-bench's own child programs are left out
/// (a test binary is not fibra-bench).
#[cfg(test)]
pub fn smoke_peers<A, T>(runtimes: Vec<Runtime<A, T>>, args: &[&str], check: impl Fn(&str, &str)) {
    let ctx = Ctx::new(crate::ctx::Level::Quick);
    for runtime in runtimes {
        let launcher = match runtime.runner {
            Runner::External(launcher) | Runner::Mode(launcher, _) => launcher,
            Runner::InProcess(_) => continue,
        };
        if let Launcher::Child(_) = launcher {
            continue;
        }
        match launcher.prepare(&ctx) {
            Ok(peer) => {
                let stdout = process::run(peer.command().args(args), ctx.timeout)
                    .unwrap_or_else(|e| panic!("{}: {e}", runtime.name));
                check(runtime.name, &stdout);
            }
            Err(crate::peers::Unavailable::Missing(hint)) => {
                eprintln!("skipped {}: missing ({hint})", runtime.name);
            }
            Err(crate::peers::Unavailable::Broken(why)) => panic!("{}: {why}", runtime.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_sec: u64) -> Outcome<Runs<Timed>> {
        let at = |per_sec| Timed {
            count: per_sec,
            ns: 1_000_000_000,
        };
        Outcome::Measured(Runs::one(at(per_sec)).and(at(per_sec * 4 / 5)))
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
                "go 200 2.00× 20.0 %",
                "fibra 100 1.00× 20.0 %",
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

    /// A directory of fake peer scripts, run by `sh`: each named for what it
    /// does.
    fn fake_peers() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("fibra-bench-fakes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, script) in [
            ("good.sh", "echo n=10 ns=1000"),
            ("crash.sh", "kill -SEGV $$"),
            ("fail.sh", "echo 'cannot start' >&2; exit 1"),
            ("hang.sh", "sleep 30"),
            ("garbage.sh", "echo 'Segmentation fault'"),
        ] {
            std::fs::write(dir.join(name), script).unwrap();
        }
        dir
    }

    fn fake(name: &'static str, interpreter: &'static str, script: &'static str) -> Runtime<u64> {
        Runtime {
            name,
            how: "a fake",
            runner: Runner::External(Launcher::Script {
                interpreter,
                package: "fibra-bench-nothing",
                script,
            }),
        }
    }

    #[test]
    fn reports_missing_crashing_hanging_and_garbled_peers_and_goes_on() {
        let mut ctx = Ctx::new(crate::ctx::Level::Quick);
        ctx.peers_dir = fake_peers();
        ctx.timeout = std::time::Duration::from_millis(300);
        let parse = |stdout: &str| {
            let f = crate::peers::protocol::parse_line(stdout, &["n", "ns"])
                .map_err(|e| e.to_string())?;
            Ok(Timed {
                count: f[0],
                ns: f[1],
            })
        };
        let plan = Plan {
            experiment: "fake",
            size: 10,
            peer_args: &[],
            parse: &parse,
            warm_up: false,
        };
        let runtimes = vec![
            Runtime {
                name: "fibra",
                how: "in process",
                runner: Runner::InProcess(|n| Ok(Timed { count: n, ns: 500 })),
            },
            fake("missing", "no-such-interpreter-fibra", "good.sh"),
            fake("crashing", "sh", "crash.sh"),
            fake("failing", "sh", "fail.sh"),
            fake("hanging", "sh", "hang.sh"),
            fake("garbled", "sh", "garbage.sh"),
            fake("good", "sh", "good.sh"),
        ];
        let mut section = Section::default();
        let started = std::time::Instant::now();
        let (results, _) = measure_all(&ctx, &plan, runtimes, &mut section);
        let _ = std::fs::remove_dir_all(&ctx.peers_dir);
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert_eq!(
            section.missing,
            [crate::peers::Missing {
                name: "missing".into(),
                hint: "apt-get install fibra-bench-nothing".into(),
            }]
        );
        let text: Vec<String> = rows(&results, |t| vec![t.count.to_string()])
            .iter()
            .map(|r| match r {
                Row::Cells(c) => c.join(" "),
                Row::Span(n, why) => format!("{n}: {why}"),
            })
            .collect();
        assert_eq!(
            text,
            [
                "fibra 10 1.00× 0.0 %",
                "good 10 0.50× 0.0 %",
                "crashing: crashed (signal 11)",
                "failing: failed (exit 1): cannot start",
                "hanging: timed out after 0.3 s",
                r#"garbled: unparseable output: "Segmentation fault""#,
            ]
        );
    }

    #[test]
    fn measures_only_the_runtimes_wanted() {
        let mut ctx = Ctx::new(crate::ctx::Level::Quick);
        ctx.runtimes = vec!["tokio".into()];
        let in_process = |name| Runtime {
            name,
            how: "in process",
            runner: Runner::InProcess(|n| Ok(Timed { count: n, ns: 1 })),
        };
        let plan = Plan {
            experiment: "fake",
            size: 1,
            peer_args: &[],
            parse: &|_: &str| Err("no peers here".to_string()),
            warm_up: true,
        };
        let runtimes = vec![in_process("fibra"), in_process("go"), in_process("tokio")];
        let (results, notes) = measure_all(&ctx, &plan, runtimes, &mut Section::default());
        let names: Vec<&str> = results.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["fibra", "tokio"]);
        assert_eq!(notes.len(), 2);
    }
}

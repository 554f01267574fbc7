//! Ractor scale (EXPERIMENTS.md, "Scale"; the issue "Ractors"): create N
//! Ractors that each wait for one message, send each one message, collect all
//! replies. Each runtime runs in a process of its own (fibra as fibra-bench's
//! child), which reports the time and two figures of its resident memory
//! beyond what it held before the first Ractor (so that the bench's own
//! memory is not counted): *idle*, with all N alive and waiting once the
//! memory has settled (see [`settled_rss_kb`]), and the *peak* of the whole
//! run, which may lie elsewhere — while the Ractors are created faster than
//! a runtime that compacts them catches up, or while the replies are
//! collected. Erlang's processes, the actor runtime Ractors are most often
//! compared with, stand beside Go's goroutines. Ruby gives every Ractor an OS
//! thread and is expected to stop long before N: it reports how far it got,
//! and why. fibra runs twice: on the process-wide pool, and on a pool whose
//! runtimes compact each waiting Ractor's stack
//! (`Builder::compact_parked_after`), as park-scale's "fibra threads
//! (compacted)".
//!
//! The figure of a run, its protocol line and the loop that runs each
//! runtime's process are shared with park-scale ([`super::park`]).

mod child;

use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Best, Outcome, Runs, figure_of, measured};
use crate::peers::process::{self, RunError};
use crate::peers::protocol::{count, parse_line};
use crate::peers::{Launcher, Prepared};
use crate::progress;
use crate::record::{self, Record};
use crate::report::{Row, SPREAD_NOTE, Table, grouped, short, spread, times, unmeasured_rows};
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "ractor-scale",
    description: "100,000 Ractors that each wait for one message: time and memory each",
    default: true,
    runtimes: || runtimes().iter().map(|r| r.name).collect(),
    charts: &[
        Chart {
            variant: "",
            metrics: &["idle_rss_bytes_per_unit"],
        },
        Chart {
            variant: "",
            metrics: &["peak_rss_bytes_per_unit"],
        },
        Chart {
            variant: "",
            metrics: &["time"],
        },
    ],
    run,
    child: Some(child::main),
};

/// Ractors (goroutines) created in one run.
fn units(ctx: &Ctx) -> u64 {
    ctx.size(10_000, 100_000, 1_000_000)
}

/// How long a program may go on creating before it stops where it is (Ruby
/// slows down as its threads pile up); well inside the run's time limit.
pub const CREATE_LIMIT: Duration = Duration::from_secs(40);

/// ractor-scale's [`CREATE_LIMIT`]: shorter but with `--full`, for the default
/// run's ten minutes, of which Ruby's three runs of ~20 s each (to its thread
/// limit at ~32,000 Ractors) were the most of ractor-scale's.
fn create_limit(ctx: &Ctx) -> Duration {
    ctx.size(Duration::from_secs(5), Duration::from_secs(5), CREATE_LIMIT)
}

/// One run's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// Asked for, and created before an error or the time limit stopped it.
    pub n: u64,
    pub created: u64,
    /// ractor-scale: creating, messaging and collecting them all (not the
    /// settle before the idle figure); park-scale: creating them until every
    /// one is parked.
    pub ns: u64,
    /// Resident memory before the first one, and the figure the experiment
    /// measures: ractor-scale the process's peak, park-scale its resident
    /// memory with every unit parked.
    pub rss_before_kb: u64,
    pub rss_kb: u64,
    /// ractor-scale: resident memory with every unit alive and waiting, once
    /// it has settled (`idle_kb`); `None` for a line without it (park-scale's).
    pub idle_kb: Option<u64>,
}

impl Scale {
    /// Resident bytes per unit created, beyond the baseline.
    pub fn bytes_each(self) -> f64 {
        per_unit(self.rss_kb, self)
    }

    /// Resident bytes per idle unit, beyond the baseline, if measured.
    pub fn idle_bytes_each(self) -> Option<f64> {
        self.idle_kb.map(|kb| per_unit(kb, self))
    }

    /// The figure an idle unit is judged by: its settled memory where the
    /// program measured it, else the peak's.
    pub fn judged_bytes_each(self) -> f64 {
        self.idle_bytes_each().unwrap_or(self.bytes_each())
    }

    pub fn us_each(self) -> f64 {
        self.ns as f64 / 1e3 / self.created.max(1) as f64
    }

    pub fn complete(self) -> bool {
        self.created == self.n
    }
}

/// `kb` beyond `s`'s baseline, in bytes per unit `s` created.
fn per_unit(kb: u64, s: Scale) -> f64 {
    kb.saturating_sub(s.rss_before_kb) as f64 * 1024.0 / s.created.max(1) as f64
}

impl Best for Scale {
    /// Figure by figure: the least time and the least memory.
    fn best(self, other: Scale) -> Scale {
        self.pick(other, Ord::min)
    }

    /// Figure by figure: the most time and the most memory.
    fn worst(self, other: Scale) -> Scale {
        self.pick(other, Ord::max)
    }
}

impl Scale {
    /// This run with its time and its memory beyond the baseline (each
    /// figure of it) chosen by `choose` from this run's and `other`'s.
    fn pick(self, other: Scale, choose: fn(u64, u64) -> u64) -> Scale {
        let beyond = |kb: u64, s: Scale| kb.saturating_sub(s.rss_before_kb);
        Scale {
            ns: choose(self.ns, other.ns),
            rss_kb: self.rss_before_kb
                + choose(beyond(self.rss_kb, self), beyond(other.rss_kb, other)),
            idle_kb: match (self.idle_kb, other.idle_kb) {
                (Some(a), Some(b)) => {
                    Some(self.rss_before_kb + choose(beyond(a, self), beyond(b, other)))
                }
                _ => None,
            },
            ..self
        }
    }
}

struct Runtime {
    name: &'static str,
    how: &'static str,
    launcher: Launcher,
    /// The arguments after `<N> <LIMIT_S>`.
    extra: &'static [&'static str],
}

/// fibra's two rows: the process-wide pool, the reference for the ratios, and
/// a pool whose runtimes compact the waiting Ractors' stacks.
const FIBRA: [&str; 2] = ["fibra", "fibra (compacted)"];

fn runtimes() -> Vec<Runtime> {
    vec![
        Runtime {
            name: FIBRA[0],
            how: "Ractor::new on the process-wide pool (one worker per core); replies by join",
            launcher: Launcher::Child(EXPERIMENT.name),
            extra: &[],
        },
        Runtime {
            name: FIBRA[1],
            how: "as fibra, by Pool::spawn on a Pool::with_runtime of as many workers, its \
                  runtimes built with compact_parked_after(Some(ZERO)): each waiting Ractor's \
                  used stack copied to the heap, its pages given back",
            launcher: Launcher::Child(EXPERIMENT.name),
            extra: &[child::COMPACTED],
        },
        Runtime {
            name: "go",
            how: "a goroutine per unit, each blocked on a channel of its own; replies on one \
                  shared channel; GOMAXPROCS = all cores",
            launcher: Launcher::Go { module: "go/scale" },
            extra: &[],
        },
        Runtime {
            name: "erlang",
            how: "a process per unit (spawn), each blocked in receive; replies to the first \
                  process's mailbox; default schedulers (one per core), +P 2097152",
            launcher: Launcher::Erlang {
                source: "erlang/scale.erl",
                flags: &["+P", "2097152"],
            },
            extra: &[],
        },
        Runtime {
            name: "ruby",
            how: "Ractor.new { Ractor.receive + 1 }, replies by take (Ruby 3.1: an OS thread \
                  per Ractor)",
            launcher: Launcher::Script {
                interpreter: "ruby",
                package: "ruby",
                script: "ruby/scale.rb",
            },
            extra: &[],
        },
    ]
}

/// Measures each runtime [`RUNS`] times in a fresh process and keeps the best
/// figures; a runtime that stops short of N is run once, and why it stopped
/// goes to the notes.
fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    let n = units(ctx);
    let mut results: Vec<(&str, Outcome<Runs<Scale>>)> = Vec::new();
    let mut notes = Vec::new();
    for runtime in runtimes().into_iter().filter(|r| ctx.wants(r.name)) {
        let name = runtime.name;
        progress::step(&format!("{}: preparing {name}", EXPERIMENT.name));
        let peer = match runtime.launcher.prepare(ctx) {
            Ok(peer) => peer,
            Err(why) => {
                if let Some(why) = section.unavailable(name, why) {
                    results.push((name, Outcome::Failed(why)));
                }
                continue;
            }
        };
        notes.push(format!("{name}: {}", runtime.how));
        let label = format!("{}: {name}", EXPERIMENT.name);
        let limit = create_limit(ctx);
        let (outcome, stopped) = measure(ctx, &label, &peer, runtime.extra, n, "peak_kb", limit);
        if let (Outcome::Measured(runs), Some(why)) = (&outcome, stopped) {
            notes.push(format!(
                "{name} stopped at {} of {}, after {:.1} s: {why}",
                grouped(runs.best.created),
                grouped(n),
                runs.best.ns as f64 / 1e9,
            ));
        }
        results.push((name, outcome));
    }
    section.tables.push(table(n, &results, notes));
    section.records.extend(records(n, &results));
    section
}

/// Runs `peer` with `<N> <LIMIT_S>` (`limit`: how long it may go on creating)
/// and then `extra` (park-scale's child takes the runtime) [`RUNS`] times,
/// each in a fresh process, and keeps the best figures; `memory` is the key
/// of the line's last field. A run that stops short of `n` is the last one:
/// the second value is then the first line it printed on stderr, which says
/// why.
pub fn measure(
    ctx: &Ctx,
    label: &str,
    peer: &Prepared,
    extra: &[&str],
    n: u64,
    memory: &str,
    limit: Duration,
) -> (Outcome<Runs<Scale>>, Option<String>) {
    let mut kept: Option<Runs<Scale>> = None;
    for run in 1..=RUNS {
        progress::step(&format!("{label} (run {run}/{RUNS})"));
        let mut cmd = peer.command();
        cmd.arg(n.to_string())
            .arg(limit.as_secs().to_string())
            .args(extra);
        let ran = process::run_capturing(&mut cmd, ctx.timeout)
            .map_err(|e: RunError| e.to_string())
            .and_then(|(stdout, stderr)| Ok((parse(&stdout, n, memory)?, stderr)));
        let (s, stderr) = match ran {
            Ok(ran) => ran,
            Err(why) => return (Outcome::Failed(why), None),
        };
        let runs = kept.map_or(Runs::one(s), |k| k.and(s));
        if !s.complete() {
            let why = stderr.lines().map(str::trim).find(|l| !l.is_empty());
            let why = why.unwrap_or("it did not say why");
            return (Outcome::Measured(runs), Some(why.to_string()));
        }
        kept = Some(runs);
    }
    let outcome = kept.map_or(Outcome::Failed("no runs".into()), Outcome::Measured);
    (outcome, None)
}

/// Parses `n=<int> created=<int> ns=<int> rss_before_kb=<int>
/// [idle_kb=<int>] <memory>=<int>`, which must be for `n`: ractor-scale's
/// programs print `idle_kb`, park-scale's do not, and a line without it is
/// taken with no idle figure.
pub fn parse(stdout: &str, n: u64, memory: &str) -> Result<Scale, String> {
    let keys = ["n", "created", "ns", "rss_before_kb", IDLE_KB, memory];
    let (idle_kb, f) = match parse_line(stdout, &keys) {
        Ok(f) => (Some(f[4]), f),
        Err(with_idle) => {
            let without: Vec<&str> = keys.into_iter().filter(|&k| k != IDLE_KB).collect();
            let f = parse_line(stdout, &without).map_err(|_| with_idle.to_string())?;
            (None, f)
        }
    };
    let s = Scale {
        n: f[0],
        created: f[1],
        ns: f[2],
        rss_before_kb: f[3],
        rss_kb: f[f.len() - 1],
        idle_kb,
    };
    match s {
        Scale { n: asked, .. } if asked != n => Err(format!("ran N = {asked}, not {n}")),
        Scale { created: 0, .. } => Err("created none".into()),
        Scale { created, .. } if created > n => Err(format!("created {created} of {n}")),
        Scale {
            rss_before_kb,
            rss_kb,
            ..
        } if rss_kb < rss_before_kb => Err(format!(
            "{memory} {rss_kb} kB below the baseline {rss_before_kb} kB"
        )),
        Scale {
            rss_before_kb,
            idle_kb: Some(idle),
            ..
        } if idle < rss_before_kb => Err(format!(
            "{IDLE_KB} {idle} kB below the baseline {rss_before_kb} kB"
        )),
        s => Ok(s),
    }
}

/// The key of the settled figure in ractor-scale's line.
const IDLE_KB: &str = "idle_kb";

/// How often [`settled_rss_kb`] reads the resident memory, how many reads in
/// a row that find no new low end it, and the most it waits.
pub const SETTLE_EVERY: Duration = Duration::from_millis(10);
pub const SETTLE_STEADY: u32 = 10;
pub const SETTLE_MAX: Duration = Duration::from_secs(5);

/// This process's resident memory (`VmRSS`, kB) once it has stopped falling:
/// read every [`SETTLE_EVERY`] until [`SETTLE_STEADY`] reads in a row find no
/// new low (or [`SETTLE_MAX`] has passed), the last read. Every ractor-scale
/// program (Go's, Erlang's, Ruby's too: peers/README.md) settles the same way
/// before it reads its idle figure, so that memory a runtime gives back a
/// little after its units wait — compacted stacks, a collector's sweep —
/// counts as given back, for all of them alike.
pub fn settled_rss_kb() -> Result<u64, String> {
    let start = std::time::Instant::now();
    let mut last = status_kb("VmRSS")?;
    let (mut low, mut steady) = (last, 0);
    while steady < SETTLE_STEADY && start.elapsed() < SETTLE_MAX {
        std::thread::sleep(SETTLE_EVERY);
        last = status_kb("VmRSS")?;
        if last < low {
            (low, steady) = (last, 0);
        } else {
            steady += 1;
        }
    }
    Ok(last)
}

/// Bytes, in the unit that keeps them short.
pub fn bytes(b: f64) -> String {
    const KIB: f64 = 1024.0;
    match b {
        b if b < 1e4 => format!("{b:.0} B"),
        b if b < 1000.0 * KIB => format!("{} KiB", short(b / KIB)),
        b if b < 1000.0 * KIB * KIB => format!("{} MiB", short(b / (KIB * KIB))),
        b => format!("{} GiB", short(b / (KIB * KIB * KIB))),
    }
}

/// Whether each of fibra's rows' memory per idle Ractor (settled, see
/// [`Scale::judged_bytes_each`]), and its time, are at most Go's per
/// goroutine.
fn verdict(results: &[(&str, Outcome<Runs<Scale>>)]) -> String {
    let head = "target: fibra memory and time per idle Ractor ≤ go's per goroutine";
    let complete = |name| {
        figure_of(results, name)
            .map(|r| r.best)
            .filter(|s| s.complete())
    };
    let Some(g) = complete("go") else {
        return format!("{head}: no go figure");
    };
    let each: Vec<String> = FIBRA
        .iter()
        .map(|name| match complete(name) {
            Some(f) => {
                let memory = f.judged_bytes_each() / g.judged_bytes_each().max(1.0);
                let time = f.us_each() / g.us_each().max(f64::MIN_POSITIVE);
                let word = if memory <= 1.0 && time <= 1.0 {
                    "met"
                } else {
                    "MISSED"
                };
                format!(
                    "{name} {word} (memory: {} go; time: {} go)",
                    times(memory),
                    times(time)
                )
            }
            None => format!("no {name} figure"),
        })
        .collect();
    format!("{head}: {}", each.join("; "))
}

fn table(n: u64, results: &[(&str, Outcome<Runs<Scale>>)], mut notes: Vec<String>) -> Table {
    let fibra = figure_of(results, FIBRA[0]).map(|r| r.best);
    let mut measured: Vec<(&str, Runs<Scale>)> = measured(results).map(|(n, r)| (n, *r)).collect();
    measured.sort_by(|a, b| {
        let judged = |r: &Runs<Scale>| r.best.judged_bytes_each();
        judged(&a.1).total_cmp(&judged(&b.1))
    });
    let idle = |s: Scale| s.idle_bytes_each().map_or("-".into(), bytes);
    let mut rows: Vec<Row> = measured
        .into_iter()
        .map(|(name, runs)| {
            let s = runs.best;
            Row::Cells(vec![
                name.into(),
                if s.complete() {
                    grouped(s.created)
                } else {
                    format!("{} (stopped)", grouped(s.created))
                },
                format!("{:.3} s", s.ns as f64 / 1e9),
                short(s.us_each()),
                idle(s),
                bytes(s.bytes_each()),
                fibra.map_or("-".into(), |f| {
                    times(s.judged_bytes_each() / f.judged_bytes_each().max(1.0))
                }),
                spread(runs.spread(|s| s.judged_bytes_each())),
            ])
        })
        .collect();
    rows.extend(unmeasured_rows(results));
    notes.push(format!(
        "idle = VmRSS with all N alive and waiting, once settled (read every {} ms until {} reads \
         in a row find no new low, at most {} s; the same in every program), peak = the \
         process's VmHWM over the whole run, which may come while units are created or \
         replies collected rather than while all wait; each minus VmRSS before the first \
         unit, per unit; time = creating, messaging and collecting them all, without the \
         settle; memory vs fibra = idle per unit ÷ fibra's (uncompacted)",
        SETTLE_EVERY.as_millis(),
        SETTLE_STEADY,
        SETTLE_MAX.as_secs()
    ));
    notes.push(format!("{SPREAD_NOTE}, of the idle memory per unit"));
    notes.push(verdict(results));
    Table {
        title: format!(
            "ractor-scale: create {} Ractors (goroutines, processes) that each wait for a \
             message, send each one, collect every reply; a process per run, best of {RUNS}",
            grouped(n)
        ),
        columns: vec![
            "runtime",
            "created",
            "time",
            "µs each",
            "idle / unit",
            "peak / unit",
            "memory vs fibra",
            "spread",
        ],
        rows,
        notes,
    }
}

fn records(n: u64, results: &[(&str, Outcome<Runs<Scale>>)]) -> Vec<Record> {
    record::of_measured(EXPERIMENT.name, &format!("n={n}"), results, |s| {
        let mut metrics = vec![
            ("created", s.created as f64, "units"),
            ("time", s.ns as f64 / 1e9, "s"),
            ("peak_rss_bytes_per_unit", s.bytes_each(), "B"),
        ];
        if let Some(idle) = s.idle_bytes_each() {
            metrics.push(("idle_rss_bytes_per_unit", idle, "B"));
        }
        metrics
    })
}

/// The child's and peers' arguments: `<N> <LIMIT_S>`.
pub fn parse_args(args: &[String]) -> Option<(u64, Duration)> {
    let [n, limit] = args else { return None };
    let n = count(n).filter(|&n| n >= 1)?;
    Some((n, Duration::from_secs(count(limit)?)))
}

/// A `kB` figure of this process's /proc/self/status, e.g. `VmHWM`.
pub fn status_kb(key: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    status_field(&status, key).ok_or_else(|| format!("no {key} in /proc/self/status"))
}

fn status_field(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        rest.trim().strip_suffix("kB")?.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every peer program at a tiny size prints a line the parser takes; a
    /// peer missing here is skipped, fibra's child left out (a test binary
    /// is not fibra-bench).
    #[test]
    fn the_peers_speak_the_protocol() {
        let ctx = Ctx::new(crate::ctx::Level::Quick);
        for runtime in runtimes() {
            if let Launcher::Child(_) = runtime.launcher {
                continue;
            }
            let peer = match runtime.launcher.prepare(&ctx) {
                Ok(peer) => peer,
                Err(crate::peers::Unavailable::Missing(hint)) => {
                    eprintln!("skipped {}: missing ({hint})", runtime.name);
                    continue;
                }
                Err(why) => panic!("{}: {why:?}", runtime.name),
            };
            let stdout = process::run(peer.command().args(["100", "40"]), ctx.timeout)
                .unwrap_or_else(|e| panic!("{}: {e}", runtime.name));
            match parse(&stdout, 100, "peak_kb") {
                Ok(s) => {
                    assert!(s.complete(), "{}: {s:?}", runtime.name);
                    assert!(s.idle_kb.is_some(), "{}: no idle figure", runtime.name);
                }
                // The line was read whole; at 100 Ractors a runtime that
                // gives memory back (a GC, a scavenger) may settle below
                // its baseline, which at the experiment's sizes it cannot.
                Err(e) if e.contains("below the baseline") => {
                    eprintln!("{}: {e} (at N = 100)", runtime.name);
                }
                Err(e) => panic!("{}: {e}", runtime.name),
            }
        }
    }

    #[test]
    fn parses_the_peer_line() {
        let line = "n=100000 created=100000 ns=250000000 rss_before_kb=2000 peak_kb=302000\n";
        let s = parse(line, 100_000, "peak_kb").unwrap();
        assert!(s.complete());
        assert_eq!(s.bytes_each(), 3072.0);
        assert_eq!(s.us_each(), 2.5);
        let parse = |line, n| parse(line, n, "peak_kb");
        let short = parse("n=10 created=4 ns=1 rss_before_kb=1 peak_kb=2", 10).unwrap();
        assert!(!short.complete());
        assert_eq!(
            parse("n=10 created=4 ns=1 rss_before_kb=1 peak_kb=2", 9),
            Err("ran N = 10, not 9".into())
        );
        assert!(parse("n=10 created=11 ns=1 rss_before_kb=1 peak_kb=2", 10).is_err());
        assert!(parse("n=10 created=0 ns=1 rss_before_kb=1 peak_kb=2", 10).is_err());
        assert!(parse("n=10 created=1 ns=1 rss_before_kb=3 peak_kb=2", 10).is_err());
        assert!(parse("n=10 created=1 ns=1", 10).is_err());
        assert!(parse("n=10 created=1 ns=1 rss_before_kb=1 rss_kb=2", 10).is_err());
    }

    /// The settled figure beside the peak; a line without it (an older
    /// program's, park-scale's) is taken with none.
    #[test]
    fn parses_the_idle_figure() {
        let line = "n=1000 created=1000 ns=5 rss_before_kb=2000 idle_kb=4000 peak_kb=6000\n";
        let s = parse(line, 1000, "peak_kb").unwrap();
        assert_eq!(s.idle_kb, Some(4000));
        assert_eq!(s.idle_bytes_each(), Some(2048.0));
        assert_eq!(s.bytes_each(), 4096.0);
        assert_eq!(s.judged_bytes_each(), 2048.0);
        let old = parse(
            "n=1000 created=1000 ns=5 rss_before_kb=2000 peak_kb=6000",
            1000,
            "peak_kb",
        );
        let old = old.unwrap();
        assert_eq!((old.idle_kb, old.judged_bytes_each()), (None, 4096.0));
        let park = parse("n=1 created=1 ns=5 rss_before_kb=1 rss_kb=2", 1, "rss_kb").unwrap();
        assert_eq!(park.idle_kb, None);
        for bad in [
            // Below the baseline.
            "n=1 created=1 ns=5 rss_before_kb=3 idle_kb=2 peak_kb=4",
            // Out of order, doubled, not a number.
            "n=1 created=1 ns=5 idle_kb=2 rss_before_kb=1 peak_kb=4",
            "n=1 created=1 ns=5 rss_before_kb=1 idle_kb=2 idle_kb=2 peak_kb=4",
            "n=1 created=1 ns=5 rss_before_kb=1 idle_kb=x peak_kb=4",
            "n=1 created=1 ns=5 rss_before_kb=1 idle_kb=2",
        ] {
            assert!(parse(bad, 1, "peak_kb").is_err(), "{bad:?} was accepted");
        }
    }

    /// The settle ends, and reads this process's memory.
    #[test]
    fn settles() {
        assert!(settled_rss_kb().unwrap() > 0);
    }

    #[test]
    fn reads_proc_status() {
        let status = "Name:\tfibra-bench\nVmHWM:\t   75944 kB\nVmRSS:\t    1234 kB\n";
        assert_eq!(status_field(status, "VmHWM"), Some(75_944));
        assert_eq!(status_field(status, "VmRSS"), Some(1234));
        assert_eq!(status_field(status, "VmSwap"), None);
        assert!(status_kb("VmRSS").unwrap() > 0);
    }

    #[test]
    fn parses_the_arguments() {
        let args = |a: &[&str]| parse_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(args(&["100", "40"]), Some((100, Duration::from_secs(40))));
        assert_eq!(args(&["0", "40"]), None);
        assert_eq!(args(&["+1", "40"]), None);
        assert_eq!(args(&["1"]), None);
    }

    #[test]
    fn keeps_the_least_time_and_memory() {
        let s = |ns, before, peak| Scale {
            n: 1,
            created: 1,
            ns,
            rss_before_kb: before,
            rss_kb: peak,
            idle_kb: Some(peak - 50),
        };
        let best = s(10, 100, 300).best(s(5, 200, 500));
        assert_eq!((best.ns, best.rss_kb - best.rss_before_kb), (5, 200));
        assert_eq!(best.idle_kb.map(|kb| kb - best.rss_before_kb), Some(150));
        let worst = s(10, 100, 300).worst(s(5, 200, 500));
        assert_eq!((worst.ns, worst.rss_kb - worst.rss_before_kb), (10, 300));
        assert_eq!(worst.idle_kb.map(|kb| kb - worst.rss_before_kb), Some(250));
        assert_eq!(
            s(5, 100, 250).best(s(10, 0, 200)).bytes_each(),
            150.0 * 1024.0
        );
    }

    #[test]
    fn verdicts() {
        // Judged by the idle figure where there is one: here a tenth of
        // the peak's.
        let s = |idle| {
            Outcome::Measured(Runs::one(Scale {
                n: 10,
                created: 10,
                ns: 1,
                rss_before_kb: 0,
                rss_kb: idle * 10,
                idle_kb: Some(idle),
            }))
        };
        assert_eq!(
            verdict(&[
                ("fibra", s(40)),
                ("fibra (compacted)", s(10)),
                ("go", s(20))
            ]),
            "target: fibra memory and time per idle Ractor ≤ go's per goroutine: fibra \
             MISSED (memory: 2.00× go; time: 1.00× go); fibra (compacted) met (memory: \
             0.50× go; time: 1.00× go)"
        );
        assert!(verdict(&[("fibra", s(20)), ("go", s(40))]).ends_with(
            "fibra met (memory: 0.50× go; time: 1.00× go); no fibra (compacted) figure"
        ));
        assert!(verdict(&[("fibra", s(20))]).ends_with("no go figure"));
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(20_480.0), "20.0 KiB");
        assert_eq!(bytes(3.0 * f64::from(1 << 20) * 10.0), "30.0 MiB");
        assert_eq!(bytes(2.7e6), "2.57 MiB");
        assert_eq!(bytes(9.0e8), "858 MiB");
        assert_eq!(bytes(4.0e9), "3.73 GiB");
    }
}

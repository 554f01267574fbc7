//! Spawn-and-join throughput (EXPERIMENTS.md, "Scale"): spawn N threads that
//! each return a number, then join them all, in order, and sum what they
//! returned; the rate is N / elapsed. All N are alive at once, so N is part of
//! what is measured and runs are not rescaled to a time.

mod fibra;
mod may;
mod tokio;

use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Outcome, Runs, Timed};
use crate::peers::protocol::parse_line;
use crate::peers::{Launcher, java};
use crate::record::Record;
use crate::report::{SPREAD_NOTE, Table, eng, grouped, short};
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "spawn",
    description: "spawn+join throughput: N threads that each return a number, all joined",
    default: true,
    runtimes: || rates::names(&runtimes()),
    charts: &[Chart {
        variant: "",
        metrics: &["spawn_joins_per_s"],
    }],
    run,
    // Spawn+join on may, in a process of its own.
    child: Some(may::main),
};

/// Threads spawned in one run.
fn threads(ctx: &Ctx) -> u64 {
    ctx.size(10_000, 100_000, 1_000_000)
}

fn runtimes() -> Vec<Runtime<u64>> {
    vec![
        Runtime {
            name: "fibra",
            how: "fibra::spawn, JoinHandle::join",
            runner: Runner::InProcess(|n| in_process(n, fibra::spawn_join(n))),
        },
        Runtime {
            name: "tokio",
            how: "tokio::spawn on a current-thread runtime, JoinHandle awaited",
            runner: Runner::InProcess(|n| in_process(n, tokio::spawn_join(n))),
        },
        Runtime {
            name: "go",
            how: "goroutines with GOMAXPROCS=1 (one OS thread, like fibra and tokio here), \
                  each writing its slot of a slice, joined with a sync.WaitGroup",
            runner: Runner::External(Launcher::Go { module: "go/spawn" }),
        },
        Runtime {
            name: "java",
            how: "virtual threads on one carrier thread, each writing its slot of an array, \
                  joined in order with Thread.join; like Go's, an untimed round first",
            runner: Runner::External(Launcher::Java {
                source: "java/Spawn.java",
                flags: java::ONE_CARRIER,
            }),
        },
        Runtime {
            name: "may",
            how: "may coroutines on one worker (set_workers(1)), spawned and joined (JoinHandle) \
                  by a coroutine on it; like Go's, an untimed round first",
            runner: Runner::External(Launcher::Child(EXPERIMENT.name)),
        },
    ]
}

/// An in-process run's figure: `n` spawns in `elapsed`.
fn in_process(n: u64, elapsed: Duration) -> Result<Timed, String> {
    Ok(Timed::new(n, elapsed))
}

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    let n = threads(ctx);
    let peer_args = [n.to_string()];
    let plan = Plan {
        experiment: EXPERIMENT.name,
        size: n,
        peer_args: &peer_args,
        parse: &|stdout| parse(stdout, n),
        warm_up: true,
    };
    let (results, mut notes) = rates::measure_all(ctx, &plan, runtimes(), &mut section);
    let rows = rates::rows(&results, |t| {
        vec![grouped(t.count), eng(t.per_sec()), short(t.ns_each())]
    });
    notes.push(SPREAD_NOTE.into());
    notes.push(rates::verdict(&results, &["go", "tokio"]));
    section.tables.push(Table {
        title: format!(
            "spawn: spawn {} threads that each return a number, join all, on one OS thread; \
             best of {RUNS} runs after a warm-up",
            grouped(n)
        ),
        columns: vec![
            "runtime",
            "threads",
            "spawn+join/s",
            "ns/thread",
            "vs fibra",
            "spread",
        ],
        rows,
        notes,
    });
    section.records.extend(records(n, &results));
    section
}

/// Parses a peer's `n=<int> ns=<int>`, which must have spawned `n` threads.
fn parse(stdout: &str, n: u64) -> Result<Timed, String> {
    let fields = parse_line(stdout, &["n", "ns"]).map_err(|e| e.to_string())?;
    match (fields[0], fields[1]) {
        (count, _) if count != n => Err(format!("spawned {count} threads, not {n}")),
        (count, ns) => Ok(Timed { count, ns }),
    }
}

/// Records of the measured runtimes, which all spawned `n` threads.
fn records(n: u64, results: &[(&str, Outcome<Runs<Timed>>)]) -> Vec<Record> {
    let metrics = ("spawn_joins_per_s", "ns_per_spawn_join");
    rates::records(EXPERIMENT.name, &format!("n={n}"), results, metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_peer_line() {
        assert_eq!(
            parse("n=100000 ns=25000000\n", 100_000),
            Ok(Timed {
                count: 100_000,
                ns: 25_000_000
            })
        );
        assert_eq!(
            parse("n=99 ns=25", 100),
            Err("spawned 99 threads, not 100".into())
        );
        assert!(parse("ns=25 n=100", 100).is_err());
    }

    #[test]
    fn fibra_and_tokio_sum_what_they_spawned() {
        assert!(fibra::spawn_join(1000) > Duration::ZERO);
        assert!(tokio::spawn_join(1000) > Duration::ZERO);
    }
}

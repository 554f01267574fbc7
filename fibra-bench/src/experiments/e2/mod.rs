//! E2 — system calls behind a context switch (EXPERIMENTS.md). Two coroutines
//! each push and pop one element of an array N times, switching to the other
//! after each; `strace -f -c` counts the system calls. A switch that sets the
//! signal mask (glibc `swapcontext`, as Ruby 1.8 did) makes one `rt_sigprocmask`
//! per switch; fibra's switch makes none, so its count must not grow with N.

mod child;

use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::Ctx;
use crate::peers::protocol::parse_line;
use crate::peers::{Compiler, Launcher, Missing, Prepared, find_program};
use crate::progress;
use crate::record::Record;
use crate::report::{Row, Table, grouped, short};
use crate::strace::count_syscalls;
use std::path::Path;
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "e2",
    description: "system calls behind a context switch, counted by strace",
    default: true,
    runtimes: || peers().iter().map(|(name, _)| *name).collect(),
    charts: &[Chart {
        variant: "",
        metrics: &["syscalls_per_switch"],
    }],
    run,
    child: Some(child::main),
};

/// The two sizes of N: a count that is constant in N shows as the same total at
/// both. The default ones are modest because a traced system call is slow: on
/// this project's VMs, from 6 to over 100 µs, so 100,000 swapcontext iterations
/// can take 20 s under strace, and the seed's 10 M (`--full`) half an hour.
fn sizes(ctx: &Ctx) -> [u64; 2] {
    [
        ctx.size(1_000, 10_000, 1_000_000),
        ctx.size(10_000, 100_000, 10_000_000),
    ]
}

/// The time limit of one traced run, longer than the usual one for the same
/// reason.
fn traced_timeout(ctx: &Ctx) -> Duration {
    ctx.size(
        Duration::from_secs(60),
        Duration::from_secs(300),
        Duration::from_secs(3600),
    )
}

/// The programs traced: fibra as this program's child, and the glibc
/// `swapcontext` peer.
fn peers() -> [(&'static str, Launcher); 2] {
    [
        ("fibra", Launcher::Child(EXPERIMENT.name)),
        (
            "swapcontext",
            Launcher::Native {
                compiler: Compiler::C,
                source: "c/e2_swapcontext.c",
                libs: &[],
                package: "libc6-dev",
            },
        ),
    ]
}

const REPORTED: &str = "reported (Ruby 1.8 --enable-pthread, 2 threads × 10 M push/pops): \
                        20,054,180 rt_sigprocmask calls; built without pthreads: 3";

/// The figures of one traced run.
struct Counts {
    n: u64,
    switches: u64,
    sigprocmask: u64,
    total: u64,
}

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    let Some(strace) = find_program("strace", &[]) else {
        section.missing.push(Missing {
            name: "strace".into(),
            hint: "apt-get install strace".into(),
        });
        return section;
    };
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (name, launcher) in peers().into_iter().filter(|(name, _)| ctx.wants(name)) {
        let peer = match launcher.prepare(ctx) {
            Ok(peer) => peer,
            Err(why) => {
                if let Some(why) = section.unavailable(name, why) {
                    rows.push(Row::Span(name.into(), why));
                }
                continue;
            }
        };
        let mut runs = Vec::new();
        for n in sizes(ctx) {
            progress::step(&format!("e2: {name} under strace, N = {}", grouped(n)));
            match trace(&strace, &peer, n, traced_timeout(ctx)) {
                Ok(counts) => {
                    rows.push(row(name, &counts));
                    section.records.extend(records(name, &counts));
                    runs.push(counts);
                }
                Err(why) => rows.push(Row::Span(name.into(), format!("N = {}: {why}", grouped(n)))),
            }
        }
        if let [small, large] = &runs[..] {
            let per_switch = marginal(small, large);
            notes.push(format!(
                "{name}: syscalls {} → {} as switches go {} → {}: {} per extra switch{}",
                grouped(small.total),
                grouped(large.total),
                grouped(small.switches),
                grouped(large.switches),
                short(per_switch),
                if large.total == small.total {
                    " (constant in N)"
                } else {
                    ""
                },
            ));
            section.records.push(Record {
                experiment: EXPERIMENT.name,
                variant: "marginal".into(),
                runtime: name.into(),
                metric: "syscalls_per_switch",
                value: per_switch,
                unit: "calls",
                best_of: 1,
                spread: None,
            });
        }
    }
    notes.push(REPORTED.into());
    section.tables.push(Table {
        title: "e2 syscalls behind a switch: strace -f -c, one run each (counts do not vary)"
            .into(),
        columns: vec![
            "runtime",
            "N",
            "switches",
            "rt_sigprocmask",
            "syscalls",
            "syscalls/switch",
        ],
        rows,
        notes,
    });
    section
}

/// Runs `peer` at size `n` under strace, for at most `timeout`.
fn trace(strace: &Path, peer: &Prepared, n: u64, timeout: Duration) -> Result<Counts, String> {
    let argv = peer.argv().chain([n.to_string().into()]);
    let (stdout, summary) = count_syscalls(strace, argv, timeout)?;
    let fields = parse_line(&stdout, &["switches"]).map_err(|e| e.to_string())?;
    Ok(Counts {
        n,
        switches: fields[0],
        sigprocmask: summary.calls_to("rt_sigprocmask"),
        total: summary.total,
    })
}

/// System calls per extra switch between two runs: the cost of a switch itself,
/// without the program's start-up and exit.
fn marginal(small: &Counts, large: &Counts) -> f64 {
    (large.total as f64 - small.total as f64) / (large.switches as f64 - small.switches as f64)
}

fn row(name: &str, c: &Counts) -> Row {
    Row::Cells(vec![
        name.into(),
        grouped(c.n),
        grouped(c.switches),
        grouped(c.sigprocmask),
        grouped(c.total),
        short(c.total as f64 / c.switches.max(1) as f64),
    ])
}

fn records(name: &str, c: &Counts) -> Vec<Record> {
    let record = |metric, value, unit| Record {
        experiment: EXPERIMENT.name,
        variant: format!("n={}", c.n),
        runtime: name.into(),
        metric,
        value,
        unit,
        best_of: 1,
        spread: None,
    };
    vec![
        record("switches", c.switches as f64, "switches"),
        record("rt_sigprocmask_calls", c.sigprocmask as f64, "calls"),
        record("syscalls_total", c.total as f64, "calls"),
        record(
            "syscalls_per_switch",
            c.total as f64 / c.switches.max(1) as f64,
            "calls",
        ),
    ]
}

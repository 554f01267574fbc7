//! E2 — system calls behind a context switch (EXPERIMENTS.md). Two coroutines
//! each push and pop one element of an array N times, switching to the other
//! after each; `strace -f -c` counts the system calls. A switch that sets the
//! signal mask (glibc `swapcontext`, as Ruby 1.8 did) makes one `rt_sigprocmask`
//! per switch; fibra's switch makes none, so its count must not grow with N.
//! Each runtime runs at two N, and what counts is the slope between them, the
//! system calls per extra switch: an interpreter's start-up makes thousands,
//! but the same thousands at both N.

mod child;
mod corosensei;
mod fibra;

use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::Ctx;
use crate::peers::protocol::parse_line;
use crate::peers::{Compiler, Launcher, Missing, Prepared, Unavailable, find_program};
use crate::progress;
use crate::record::Record;
use crate::report::{Row, Table, grouped, short};
use crate::strace::count_syscalls;
use child::Switcher;
use std::path::Path;
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "e2",
    description: "system calls behind a context switch, counted by strace",
    default: true,
    runtimes: || runtimes().iter().map(|r| r.name).collect(),
    // The slope alone: the totals at each N hold the start-up too.
    charts: &[Chart {
        variant: "marginal",
        metrics: &["syscalls_per_switch"],
    }],
    run,
    child: Some(child::main),
};

/// The two sizes of N: a count that is constant in N shows as the same total at
/// both, and one per switch shows as the difference. The default ones are
/// modest because a traced system call is slow: on this project's VMs, from 6
/// to over 100 µs, so that at 10,000 and 100,000 swapcontext's 220,000 traced
/// calls alone took from 9 s to 51 s of a default run, and the seed's 10 M
/// (`--full`) take half an hour.
fn sizes(ctx: &Ctx) -> [u64; 2] {
    [
        ctx.size(1_000, 2_000, 1_000_000),
        ctx.size(10_000, 20_000, 10_000_000),
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

/// How a runtime's program is started.
enum Program {
    /// fibra-bench's child, given the runtime's name before N.
    Child(Switcher),
    Peer(Launcher),
}

impl Program {
    fn prepare(&self, ctx: &Ctx) -> Result<Prepared, Unavailable> {
        match self {
            Program::Child(_) => Launcher::Child(EXPERIMENT.name).prepare(ctx),
            Program::Peer(launcher) => launcher.prepare(ctx),
        }
    }

    /// The argument that comes before `<N>`, if any.
    fn extra(&self) -> Option<&'static str> {
        match self {
            Program::Child(switcher) => Some(switcher.name()),
            Program::Peer(_) => None,
        }
    }
}

struct Runtime {
    name: &'static str,
    program: Program,
}

/// The programs traced: fibra, corosensei and the asm floors as this program's
/// child, then the peers: boost.context and glibc `swapcontext` compiled here,
/// and the interpreters whose switches are cheap to trace.
fn runtimes() -> Vec<Runtime> {
    let mut list: Vec<Runtime> = Switcher::all()
        .into_iter()
        .map(|switcher| Runtime {
            name: switcher.name(),
            program: Program::Child(switcher),
        })
        .collect();
    let peer = |name, launcher| Runtime {
        name,
        program: Program::Peer(launcher),
    };
    list.extend([
        peer(
            "boost-fcontext",
            Launcher::Native {
                compiler: Compiler::Cpp,
                source: "cpp/e2_boost_fcontext.cpp",
                libs: &["-lboost_context"],
                package: "libboost-context-dev",
            },
        ),
        peer(
            "swapcontext",
            Launcher::Native {
                compiler: Compiler::C,
                source: "c/e2_swapcontext.c",
                libs: &[],
                package: "libc6-dev",
            },
        ),
    ]);
    // Interpreters whose command and Debian package are both called `name`:
    // the three Lua VMs of the seed's E1 run the same script.
    list.extend(
        [
            ("ruby", "ruby/e2.rb"),
            ("lua5.1", "lua/e2.lua"),
            ("lua5.4", "lua/e2.lua"),
            ("luajit", "lua/e2.lua"),
        ]
        .map(|(name, script)| {
            let launcher = Launcher::Script {
                interpreter: name,
                package: name,
                script,
            };
            peer(name, launcher)
        }),
    );
    list.push(peer("go", Launcher::Go { module: "go/e2" }));
    list
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
    let mut fibra = None;
    for runtime in runtimes().into_iter().filter(|r| ctx.wants(r.name)) {
        let name = runtime.name;
        let peer = match runtime.program.prepare(ctx) {
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
            let extra = runtime.program.extra();
            match trace(&strace, &peer, extra, n, traced_timeout(ctx)) {
                Ok(counts) => {
                    rows.push(row(name, &counts));
                    section.records.extend(records(name, &counts));
                    runs.push(counts);
                }
                Err(why) => rows.push(Row::Span(name.into(), format!("N = {}: {why}", grouped(n)))),
            }
        }
        if let [small, large] = &runs[..] {
            let slope = Slope::between(small, large);
            notes.push(slope.note(name, small, large));
            section.records.extend(slope.records(name));
            if name == "fibra" {
                fibra = Some(slope);
            }
        }
    }
    notes.push(verdict(fibra.as_ref()));
    notes.push(REPORTED.into());
    section.tables.push(Table {
        title: "e2 syscalls behind a switch: strace -f -c, one run each (counts do not vary, \
                but for calls made as time passes, as Go's runtime threads make)"
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

/// Runs `peer` at size `n` under strace, with `extra` before `n`, for at most
/// `timeout`.
fn trace(
    strace: &Path,
    peer: &Prepared,
    extra: Option<&str>,
    n: u64,
    timeout: Duration,
) -> Result<Counts, String> {
    let argv = peer
        .argv()
        .chain(extra.map(Into::into))
        .chain([n.to_string().into()]);
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
#[derive(Clone, Copy, Debug, PartialEq)]
struct Slope {
    syscalls: f64,
    sigprocmask: f64,
    /// Whether both runs made the same number of system calls.
    constant: bool,
}

impl Slope {
    fn between(small: &Counts, large: &Counts) -> Slope {
        let extra = large.switches as f64 - small.switches as f64;
        let per_switch = |of: fn(&Counts) -> u64| (of(large) as f64 - of(small) as f64) / extra;
        Slope {
            syscalls: per_switch(|c| c.total),
            sigprocmask: per_switch(|c| c.sigprocmask),
            constant: large.total == small.total,
        }
    }

    /// E.g. `swapcontext: syscalls 2,039 → 20,039 as switches go 2,001 →
    /// 20,001: 1.00 per extra switch (1.00 of them rt_sigprocmask)`.
    fn note(&self, name: &str, small: &Counts, large: &Counts) -> String {
        format!(
            "{name}: syscalls {} → {} as switches go {} → {}: {} per extra switch{}",
            grouped(small.total),
            grouped(large.total),
            grouped(small.switches),
            grouped(large.switches),
            short(self.syscalls),
            if self.constant {
                " (constant in N)".to_string()
            } else {
                format!(" ({} of them rt_sigprocmask)", short(self.sigprocmask))
            },
        )
    }

    fn records(&self, name: &str) -> Vec<Record> {
        let record = |metric, value| Record {
            experiment: EXPERIMENT.name,
            variant: "marginal".into(),
            runtime: name.into(),
            metric,
            value,
            unit: "calls",
            best_of: 1,
            spread: None,
        };
        vec![
            record("syscalls_per_switch", self.syscalls),
            record("rt_sigprocmask_per_switch", self.sigprocmask),
        ]
    }
}

/// Whether fibra's count is constant in N: no system call behind a switch.
fn verdict(fibra: Option<&Slope>) -> String {
    let head = "target: fibra's syscalls constant in N (none per switch)";
    match fibra {
        Some(s) if s.constant => format!("{head}: met"),
        Some(s) => format!("{head}: MISSED ({} per extra switch)", short(s.syscalls)),
        None => format!("{head}: no fibra figure"),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(n: u64, switches: u64, sigprocmask: u64, total: u64) -> Counts {
        Counts {
            n,
            switches,
            sigprocmask,
            total,
        }
    }

    #[test]
    fn the_slope_leaves_out_the_start_up() {
        // An interpreter: thousands of calls at start-up, a few more with N.
        let (small, large) = (counts(1, 4_000, 9, 3_100), counts(10, 40_000, 9, 3_136));
        let slope = Slope::between(&small, &large);
        assert_eq!(slope.syscalls, 0.001);
        assert_eq!(slope.sigprocmask, 0.0);
        assert!(!slope.constant);
        assert_eq!(
            slope.note("ruby", &small, &large),
            "ruby: syscalls 3,100 → 3,136 as switches go 4,000 → 40,000: \
             1.00e-3 per extra switch (0 of them rt_sigprocmask)"
        );
        assert!(verdict(Some(&slope)).ends_with("MISSED (1.00e-3 per extra switch)"));
    }

    #[test]
    fn swapcontext_makes_one_rt_sigprocmask_per_switch() {
        let (small, large) = (
            counts(1, 2_001, 2_003, 2_039),
            counts(10, 20_001, 20_003, 20_039),
        );
        let slope = Slope::between(&small, &large);
        assert_eq!((slope.syscalls, slope.sigprocmask), (1.0, 1.0));
    }

    #[test]
    fn a_constant_count_meets_the_target() {
        let (small, large) = (counts(1, 2_002, 0, 120), counts(10, 20_002, 0, 120));
        let slope = Slope::between(&small, &large);
        assert!(slope.constant);
        assert!(
            slope
                .note("fibra", &small, &large)
                .ends_with(": 0 per extra switch (constant in N)")
        );
        assert!(verdict(Some(&slope)).ends_with(": met"));
        assert!(verdict(None).ends_with(": no fibra figure"));
    }
}

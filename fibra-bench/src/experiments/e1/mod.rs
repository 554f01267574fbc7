//! E1 — coroutine switch rate (EXPERIMENTS.md). Two coroutines that suspend at
//! once, resumed in turn by a main loop (4 switches per iteration); and two that
//! hand control straight to each other with `transfer` (1 switch per hand-over).

mod corosensei;
mod fibra;
mod instructions;
mod may;
mod tokio;

use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Outcome, Runs, Sizing, Timed, best_of, figure_of, measured};
use crate::peers::process::{self, RunError};
use crate::peers::protocol::parse_line;
use crate::peers::{Compiler, Launcher, Prepared, java};
use crate::progress;
use crate::record::Record;
use crate::report::{Row, SPREAD_NOTE, Table, eng, short, spread, times, unmeasured_rows};
use instructions::Instructions;
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "e1",
    description: "coroutine switch rate: resume/yield and symmetric transfer",
    default: true,
    runtimes: || runtimes().iter().map(|r| r.name).collect(),
    charts: &[Chart {
        variant: "",
        metrics: &["switches_per_s"],
    }],
    run,
    // E1 on may, and the loops counted under cachegrind, in processes of their own.
    child: Some(child),
};

/// `fibra-bench --child e1 count …` runs a loop to count its instructions; any
/// other arguments run E1 on may.
fn child(args: &[String]) -> Result<(), String> {
    match args {
        [mode, rest @ ..] if mode == instructions::CHILD_MODE => instructions::child(rest),
        _ => may::main(args),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Variant {
    /// Main resumes c1, then c2; each suspends back at once.
    Resume,
    /// c1 and c2 pass control (and a counter) straight to each other.
    Transfer,
}

impl Variant {
    const ALL: [Variant; 2] = [Variant::Resume, Variant::Transfer];

    /// The name peers take on their command line, and the `variant` of records.
    fn arg(self) -> &'static str {
        match self {
            Variant::Resume => "resume",
            Variant::Transfer => "transfer",
        }
    }

    /// How large its runs are: iterations for resume, switches for transfer.
    fn sizing(self, ctx: &Ctx) -> Sizing {
        let first = ctx.size(5_000, 25_000, 25_000);
        Sizing {
            first: match self {
                Variant::Resume => first,
                Variant::Transfer => 4 * first,
            },
            target: ctx.run_target,
        }
    }

    /// Switches in a run of size `n`. A transfer run counts main's switch into the
    /// first coroutine and the last one back to main among its `n`.
    fn switches(self, n: u64) -> u64 {
        match self {
            Variant::Resume => 4 * n,
            Variant::Transfer => n,
        }
    }

    fn title(self, ctx: &Ctx) -> String {
        let what = match self {
            Variant::Resume => "resume/yield (4 switches per iteration)",
            Variant::Transfer => "transfer (1 switch per hand-over)",
        };
        let target = ctx.run_target.as_secs_f64();
        format!("e1 {what}: best of {RUNS} runs, each sized to take ~{target} s by a first run")
    }

    /// The seed's published figures (EXPERIMENTS.md).
    fn reported(self) -> &'static str {
        match self {
            Variant::Resume => {
                "reported 2009 (Core 2 Duo P8600 2.4 GHz): Lua 5.1.4 6.10e6/s, LuaJIT 1.1.5 \
                 9.40e6/s, LuaJIT 2.0.0-beta2 2.49e7/s, Ruby 1.9.1 9.70e5/s"
            }
            Variant::Transfer => {
                "reported 2009 (Core 2 Duo P8600 2.4 GHz): Ruby 1.9.1 Fiber#transfer 8.30e5/s"
            }
        }
    }
}

/// How a runtime is measured.
enum Runner {
    /// In this process: runs a variant at size `n` and returns the time it took,
    /// or `None` when the runtime has no such variant.
    InProcess(fn(Variant, u64) -> Option<Duration>),
    /// A peer program speaking the E1 protocol: `<variant> <N>` in,
    /// `switches=<int> ns=<int>` out.
    External(Launcher),
}

struct Runtime {
    name: &'static str,
    runner: Runner,
}

const FLOORS_NOTE: &str = "floor-gpr: a called asm switch saving rbx, rbp, r12–r15 and rsp; \
                           floor-gpr+cw: also MXCSR and the x87 control word";

fn runtimes() -> Vec<Runtime> {
    use Runner::{External, InProcess};
    let mut list = vec![
        Runtime {
            name: "fibra",
            runner: InProcess(|v, n| {
                Some(match v {
                    Variant::Resume => fibra::resume_yield(n),
                    Variant::Transfer => fibra::transfer(n),
                })
            }),
        },
        Runtime {
            name: "corosensei",
            runner: InProcess(|v, n| (v == Variant::Resume).then(|| corosensei::resume_yield(n))),
        },
        Runtime {
            name: "tokio",
            runner: InProcess(|v, n| (v == Variant::Resume).then(|| tokio::resume_yield(n))),
        },
    ];
    #[cfg(target_arch = "x86_64")]
    {
        use crate::floor::Floor;
        fn floor(floor: Floor, v: Variant, n: u64) -> Option<Duration> {
            Some(match v {
                Variant::Resume => floor.resume_yield(n),
                Variant::Transfer => floor.transfer(n),
            })
        }
        list.extend([
            Runtime {
                name: "floor-gpr",
                runner: InProcess(|v, n| floor(Floor::Gpr, v, n)),
            },
            Runtime {
                name: "floor-gpr+cw",
                runner: InProcess(|v, n| floor(Floor::GprControl, v, n)),
            },
        ]);
    }
    list.extend([
        Runtime {
            name: "boost-fcontext",
            runner: External(Launcher::Native {
                compiler: Compiler::Cpp,
                source: "cpp/e1_boost_fcontext.cpp",
                libs: &["-lboost_context"],
                package: "libboost-context-dev",
            }),
        },
        Runtime {
            name: "swapcontext",
            runner: External(Launcher::Native {
                compiler: Compiler::C,
                source: "c/e1_swapcontext.c",
                libs: &[],
                package: "libc6-dev",
            }),
        },
    ]);
    // Interpreters whose command and Debian package are both called `name`.
    list.extend(
        [
            ("lua5.1", "lua/e1.lua"),
            ("lua5.4", "lua/e1.lua"),
            ("luajit", "lua/e1.lua"),
            ("ruby", "ruby/e1.rb"),
            ("jruby", "ruby/e1.rb"),
        ]
        .map(|(name, script)| Runtime {
            name,
            runner: External(Launcher::Script {
                interpreter: name,
                package: name,
                script,
            }),
        }),
    );
    list.extend([
        Runtime {
            name: "go",
            runner: External(Launcher::Go { module: "go/e1" }),
        },
        Runtime {
            name: "java",
            runner: External(Launcher::Java {
                source: "java/E1.java",
                flags: java::ONE_CARRIER,
            }),
        },
        Runtime {
            name: "may",
            runner: External(Launcher::Child(EXPERIMENT.name)),
        },
    ]);
    list
}

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    // Per runtime, one outcome per variant (in `Variant::ALL` order).
    let mut results: Vec<(&str, Vec<Outcome<Runs<Timed>>>)> = Vec::new();
    for runtime in runtimes().into_iter().filter(|r| ctx.wants(r.name)) {
        let name = runtime.name;
        progress::step(&format!("e1: preparing {name}"));
        let measure = |variant: Variant, once: &dyn Fn(u64) -> Outcome<Timed>| {
            let mut run = 0;
            best_of(RUNS, variant.sizing(ctx), |n| {
                let which = match run {
                    0 => "sizing run".to_string(),
                    _ => format!("run {run}/{RUNS}"),
                };
                progress::step(&format!("e1 {}: {name} ({which})", variant.arg()));
                run += 1;
                once(n)
            })
        };
        let outcomes = match &runtime.runner {
            Runner::InProcess(f) => Variant::ALL
                .map(|v| {
                    measure(v, &|n| match f(v, n) {
                        Some(elapsed) => Outcome::Measured(Timed::new(v.switches(n), elapsed)),
                        None => Outcome::NotApplicable,
                    })
                })
                .to_vec(),
            Runner::External(launcher) => match launcher.prepare(ctx) {
                Ok(peer) => Variant::ALL
                    .map(|v| measure(v, &|n| run_peer(ctx, &peer, v, n)))
                    .to_vec(),
                Err(why) => match section.unavailable(name, why) {
                    Some(why) => vec![Outcome::Failed(why); Variant::ALL.len()],
                    None => continue,
                },
            },
        };
        results.push((name, outcomes));
    }
    let instructions = instructions::count_all(ctx);
    for (i, variant) in Variant::ALL.into_iter().enumerate() {
        let column: Vec<(&str, Outcome<Runs<Timed>>)> = results
            .iter()
            .map(|(name, o)| (*name, o[i].clone()))
            .collect();
        // Instructions are counted for resume/yield only.
        let counted = (variant == Variant::Resume).then_some(&instructions);
        section.tables.push(table(ctx, variant, &column, counted));
        section.records.extend(records(variant, &column));
    }
    section.records.extend(instructions.records());
    section
}

/// Runs an external peer once.
fn run_peer(ctx: &Ctx, peer: &Prepared, variant: Variant, n: u64) -> Outcome<Timed> {
    let mut cmd = peer.command();
    cmd.arg(variant.arg()).arg(n.to_string());
    let stdout = match process::run(&mut cmd, ctx.timeout) {
        Ok(stdout) => stdout,
        Err(RunError::Unsupported) => return Outcome::NotApplicable,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    // The peer's own count is taken as it is: where a runtime has no exact
    // equivalent of a variant (Go's Gosched, Java's Thread.yield), the peer counts
    // the switches that really happened.
    Outcome::from_result(
        parse_line(&stdout, &["switches", "ns"])
            .map_err(|e| e.to_string())
            .and_then(|fields| match (fields[0], fields[1]) {
                (0, _) => Err("reported no switches".to_string()),
                (count, ns) => Ok(Timed { count, ns }),
            }),
    )
}

/// The table of one variant: measured runtimes fastest first, then the rest;
/// with a column of instructions per switch when they were `counted`.
fn table(
    ctx: &Ctx,
    variant: Variant,
    column: &[(&str, Outcome<Runs<Timed>>)],
    counted: Option<&Instructions>,
) -> Table {
    let fibra = figure_of(column, "fibra").map(|r| r.best.per_sec());
    let mut measured: Vec<(&str, Runs<Timed>)> = measured(column).map(|(n, r)| (n, *r)).collect();
    measured.sort_by(|a, b| b.1.best.per_sec().total_cmp(&a.1.best.per_sec()));
    let mut rows: Vec<Row> = measured
        .into_iter()
        .map(|(name, runs)| {
            let t = runs.best;
            let mut cells = vec![
                name.into(),
                eng(t.count as f64),
                eng(t.per_sec()),
                short(t.ns_each()),
            ];
            cells.extend(counted.map(|c| c.cell(name)));
            cells.extend([
                fibra.map_or("-".into(), |f| times(t.per_sec() / f)),
                spread(runs.spread(|t| t.per_sec())),
            ]);
            Row::Cells(cells)
        })
        .collect();
    rows.extend(unmeasured_rows(column));
    let mut columns = vec!["runtime", "run switches", "switches/s", "ns/switch"];
    columns.extend(counted.map(|_| "instr/switch"));
    columns.extend(["vs fibra", "spread"]);
    let mut notes = vec![FLOORS_NOTE.into(), SPREAD_NOTE.into()];
    notes.extend(counted.into_iter().flat_map(Instructions::notes));
    notes.push(variant.reported().into());
    Table {
        title: variant.title(ctx),
        columns,
        rows,
        notes,
    }
}

fn records(variant: Variant, column: &[(&str, Outcome<Runs<Timed>>)]) -> Vec<Record> {
    let metrics = ("switches_per_s", "ns_per_switch");
    super::rates::records(EXPERIMENT.name, variant.arg(), column, metrics)
}

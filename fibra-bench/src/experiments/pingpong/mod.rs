//! Message ping-pong between two Ractors, on different cores (`fibra`, the
//! issue "Ractors") and on one worker (`fibra-near`, placed with
//! `Pool::spawn_near`, issue 28): ping sends a number to pong, pong sends it back plus one, N
//! times; the rate is round trips per second, and the median and 99th
//! percentile of a round trip show its spread ([`crate::latency`]). Against
//! the same exchange between two OS threads over crossbeam-channel, between
//! two goroutines over unbuffered Go channels, between two Erlang processes
//! (`!` and `receive`), between two `may` coroutines over may's channels, and
//! between two Ruby Ractors (the issue's own runtime); and against the
//! hardware's floor, two OS threads bouncing a number through one atomic.
//!
//! `ractor-pingpong-loaded` runs the same beside a `nice -n 19` busy loop per
//! core (see [`crate::load`]), on request only: it is the case where a pair
//! on two cores loses a core at random moments, and a pair that shares one
//! OS thread (Go's, may's, fibra's with `Pool::spawn_near`) does not.

pub(super) mod crossbeam;
mod fibra;
mod floor;
mod may;

use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::latency::{Percentiles, SAMPLE_EVERY};
use crate::load::Load;
use crate::measure::{Outcome, Runs, Timed, figure_of};
use crate::peers::Launcher;
use crate::peers::protocol::parse_line;
use crate::record::{self, Record};
use crate::report::{SPREAD_NOTE, Table, eng, grouped, short, times};

pub const EXPERIMENT: Experiment = Experiment {
    name: "ractor-pingpong",
    description: "message round trips between two Ractors, on two workers and on one",
    default: true,
    runtimes: || rates::names(&runtimes()),
    charts: &[
        Chart {
            variant: "",
            metrics: &["round_trips_per_s"],
        },
        Chart {
            variant: "",
            metrics: &["p50_ns_per_round_trip", "p99_ns_per_round_trip"],
        },
    ],
    run,
    // Ping-pong on may, in a process of its own.
    child: Some(may::main),
};

/// The same beside a busy loop per core: its own name, so that its tables and
/// records stand apart from the quiet ones, and not in the default run (it
/// takes as long again).
pub const LOADED: Experiment = Experiment {
    name: "ractor-pingpong-loaded",
    description: "ractor-pingpong beside a `nice -n 19` busy loop per core",
    default: false,
    runtimes: EXPERIMENT.runtimes,
    charts: EXPERIMENT.charts,
    run: run_loaded,
    // may's ping-pong runs as ractor-pingpong's child.
    child: None,
};

/// Round trips in one run.
fn round_trips(ctx: &Ctx) -> u64 {
    ctx.size(20_000, 50_000, 1_000_000)
}

/// The floor's name in tables and records, and for `--runtime`.
const FLOOR: &str = "floor-atomic";

/// How many times the floor's round trip fibra's may take (the issue's
/// target).
const FLOOR_TARGET: f64 = 3.0;

/// One run's figures: the round trips and their time, and the percentiles of
/// the sampled ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundTrips {
    pub timed: Timed,
    pub latency: Percentiles,
}

crate::measure::rated_by_timed!(RoundTrips);

fn runtimes() -> Vec<Runtime<u64, RoundTrips>> {
    vec![
        Runtime {
            name: "fibra",
            how: "two Ractors on the two workers of a Pool::new(2); push both ways: ping \
                  sends, pong sends back to a handle on ping it got in its first message",
            runner: Runner::InProcess(fibra::push),
        },
        Runtime {
            name: "fibra-near",
            how: "the same, ping placed with Pool::spawn_near(&pong): both on one worker, \
                  so a round trip is two switches on one OS thread",
            runner: Runner::InProcess(fibra::push_near),
        },
        Runtime {
            name: FLOOR,
            how: "the hardware's floor: two OS threads bouncing a number through one atomic, \
                  each spinning until the other's write arrives (no queue, no sleep)",
            runner: Runner::InProcess(floor::pingpong),
        },
        Runtime {
            name: "crossbeam",
            how: "two OS threads, two unbounded crossbeam-channel channels (as a Ractor's mailbox)",
            runner: Runner::InProcess(crossbeam::pingpong),
        },
        Runtime {
            name: "go",
            how: "two goroutines, two unbuffered channels, GOMAXPROCS=2 (Go readies the \
                  receiver on the sender's own P, so the pair mostly runs on one OS thread)",
            runner: Runner::External(Launcher::Go {
                module: "go/pingpong",
            }),
        },
        Runtime {
            name: "erlang",
            how: "two Erlang processes, `!` both ways and `receive`; two schedulers (+S 2:2), \
                  as Go's GOMAXPROCS=2 (the VM may run both processes on one)",
            runner: Runner::External(Launcher::Erlang {
                source: "erlang/pingpong.erl",
                flags: &["+S", "2:2"],
            }),
        },
        Runtime {
            name: "ruby",
            how: "the main Ractor and one other, Ractor#send both ways and Ractor.receive \
                  (Ruby 3.1: an OS thread per Ractor)",
            runner: Runner::External(Launcher::Script {
                interpreter: "ruby",
                package: "ruby",
                script: "ruby/pingpong.rb",
            }),
        },
        Runtime {
            name: "may",
            how: "two may coroutines on two workers (set_workers(2)), two unbounded \
                  may::sync::mpsc channels; may places them (it may run both on one worker)",
            runner: Runner::External(Launcher::Child(EXPERIMENT.name)),
        },
    ]
}

fn run(ctx: &Ctx) -> Section {
    run_under(ctx, &EXPERIMENT, Load::Quiet)
}

fn run_loaded(ctx: &Ctx) -> Section {
    run_under(ctx, &LOADED, Load::BusyLoops)
}

fn run_under(ctx: &Ctx, experiment: &Experiment, load: Load) -> Section {
    let mut section = Section::default();
    let n = round_trips(ctx);
    let peer_args = [n.to_string()];
    let plan = Plan {
        experiment: experiment.name,
        size: n,
        peer_args: &peer_args,
        parse: &|stdout| parse(stdout, n),
        warm_up: true,
    };
    let (results, mut notes) = rates::measure_under(ctx, &plan, runtimes(), &mut section, load);
    let rows = rates::rows(&results, |r| {
        let t = r.timed;
        vec![
            grouped(t.count),
            eng(t.per_sec()),
            short(t.ns_each()),
            grouped(r.latency.p50_ns),
            grouped(r.latency.p99_ns),
        ]
    });
    notes.push(format!(
        "p50, p99: the median and 99th percentile of every {SAMPLE_EVERY}th round trip, timed \
         alone (each with one clock read, ~20 ns); ns/round trip is the mean of all"
    ));
    notes.push(
        "fibra's idle workers spin ~20 µs for a wake before they sleep, so other load on \
         the cores slows fibra most"
            .into(),
    );
    notes.push(SPREAD_NOTE.into());
    notes.push(rates::verdict(&results, &["crossbeam", "go"]));
    notes.push(rates::verdict_of(
        &results,
        "fibra-near",
        &["crossbeam", "go"],
    ));
    notes.push(floor_verdict(&results));
    section.tables.push(Table {
        title: format!(
            "{}: {} round trips of a number between two threads of execution; best of \
             {RUNS} runs after a warm-up{}",
            experiment.name,
            grouped(n),
            load.title()
        ),
        columns: vec![
            "runtime",
            "round trips",
            "round trips/s",
            "ns/round trip",
            "p50 ns",
            "p99 ns",
            "vs fibra",
            "spread",
        ],
        rows,
        notes,
    });
    section
        .records
        .extend(records(experiment.name, n, &results));
    section
}

/// Parses a peer's `round_trips=<int> ns=<int> p50_ns=<int> p99_ns=<int>`,
/// which must have made `n` round trips.
fn parse(stdout: &str, n: u64) -> Result<RoundTrips, String> {
    let keys = ["round_trips", "ns", "p50_ns", "p99_ns"];
    let f = parse_line(stdout, &keys).map_err(|e| e.to_string())?;
    match (f[0], f[2], f[3]) {
        (count, ..) if count != n => Err(format!("made {count} round trips, not {n}")),
        (_, p50, p99) if p50 > p99 => Err(format!("p50 {p50} ns above p99 {p99} ns")),
        (count, p50_ns, p99_ns) => Ok(RoundTrips {
            timed: Timed { count, ns: f[1] },
            latency: Percentiles { p50_ns, p99_ns },
        }),
    }
}

/// Whether fibra's round trip takes at most [`FLOOR_TARGET`] times the
/// floor's (the means).
fn floor_verdict(results: &[(&str, Outcome<Runs<RoundTrips>>)]) -> String {
    let head = format!("target: fibra's round trip ≤ {FLOOR_TARGET}× {FLOOR}'s");
    let mean = |name| figure_of(results, name).map(|r| r.best.timed.ns_each());
    match (mean("fibra"), mean(FLOOR)) {
        (Some(fibra), Some(floor)) => {
            let ratio = fibra / floor.max(f64::MIN_POSITIVE);
            let word = if ratio <= FLOOR_TARGET {
                "met"
            } else {
                "MISSED"
            };
            format!(
                "{head}: {word} (fibra {} ns = {} the floor's {} ns)",
                short(fibra),
                times(ratio),
                short(floor)
            )
        }
        (None, _) => format!("{head}: no fibra figure"),
        (_, None) => format!("{head}: no {FLOOR} figure"),
    }
}

fn records(
    experiment: &'static str,
    n: u64,
    results: &[(&str, Outcome<Runs<RoundTrips>>)],
) -> Vec<Record> {
    let metrics = ("round_trips_per_s", "ns_per_round_trip");
    let mut records = rates::records(experiment, &format!("n={n}"), results, metrics);
    records.extend(record::of_measured(
        experiment,
        &format!("n={n}"),
        results,
        |r| {
            vec![
                ("p50_ns_per_round_trip", r.latency.p50_ns as f64, "ns"),
                ("p99_ns_per_round_trip", r.latency.p99_ns as f64, "ns"),
            ]
        },
    ));
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Best;

    #[test]
    fn every_runtime_in_process_plays() {
        for f in [
            fibra::push,
            fibra::push_near,
            crossbeam::pingpong,
            floor::pingpong,
        ] {
            let r = f(1000).unwrap();
            assert_eq!(r.timed.count, 1000);
            assert!(r.latency.p50_ns <= r.latency.p99_ns, "{r:?}");
        }
    }

    /// Every peer program at a tiny size prints a line the parser takes.
    #[test]
    fn the_peers_speak_the_protocol() {
        rates::smoke_peers(runtimes(), &["100"], |name, stdout| {
            let r = parse(stdout, 100).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(r.latency.p50_ns > 0, "{name}: {r:?}");
        });
    }

    #[test]
    fn parses_the_peer_line() {
        assert_eq!(
            parse(
                "round_trips=200000 ns=150000000 p50_ns=601 p99_ns=1422\n",
                200_000
            ),
            Ok(RoundTrips {
                timed: Timed {
                    count: 200_000,
                    ns: 150_000_000
                },
                latency: Percentiles {
                    p50_ns: 601,
                    p99_ns: 1422
                },
            })
        );
        assert_eq!(
            parse("round_trips=5 ns=1 p50_ns=1 p99_ns=2", 6),
            Err("made 5 round trips, not 6".into())
        );
        assert_eq!(
            parse("round_trips=5 ns=1 p50_ns=3 p99_ns=2", 5),
            Err("p50 3 ns above p99 2 ns".into())
        );
        // The line of the first round, without percentiles, is no longer
        // enough.
        assert!(parse("round_trips=5 ns=1", 5).is_err());
    }

    fn run(ns_each: u64) -> Outcome<Runs<RoundTrips>> {
        let r = RoundTrips {
            timed: Timed {
                count: 10,
                ns: 10 * ns_each,
            },
            latency: Percentiles::default(),
        };
        Outcome::Measured(Runs::one(r))
    }

    #[test]
    fn floor_verdicts() {
        assert_eq!(
            floor_verdict(&[("fibra", run(200)), (FLOOR, run(100))]),
            "target: fibra's round trip ≤ 3× floor-atomic's: met \
             (fibra 200 ns = 2.00× the floor's 100 ns)"
        );
        assert!(floor_verdict(&[("fibra", run(700)), (FLOOR, run(100))]).contains("MISSED"));
        assert!(floor_verdict(&[("fibra", run(700))]).ends_with("no floor-atomic figure"));
    }

    #[test]
    fn keeps_the_percentiles_of_the_fastest_run() {
        let r = |ns, p50_ns| RoundTrips {
            timed: Timed { count: 1, ns },
            latency: Percentiles { p50_ns, p99_ns: 0 },
        };
        assert_eq!(r(10, 1).best(r(5, 2)), r(5, 2));
        assert_eq!(r(10, 1).worst(r(5, 2)), r(10, 1));
    }
}

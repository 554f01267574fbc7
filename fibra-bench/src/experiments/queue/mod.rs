//! `fibra::sync::Queue` across OS threads (the issue "The toolbox, part 1"):
//! ping-pong (one item each way per round trip, two queues) and fan-in (N
//! senders, one receiver, one queue) between two runtimes, each on its own
//! OS thread, and between a runtime and a plain OS thread; beside
//! crossbeam-channel doing the same between OS threads (the very runs of
//! `ractor-pingpong` and `ractor-fanin`). Not in the default set: the Ractor
//! experiments measure fibra's own cross-thread messaging; this one measures
//! the lock-based queue that any thread may use, on request
//! (`fibra-bench queue`).

mod fibra;

use super::fanin::{self, Size};
use super::pingpong::{self, RoundTrips};
use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::latency::SAMPLE_EVERY;
use crate::measure::{Outcome, Runs, Timed};
use crate::record::{self, Record};
use crate::report::{SPREAD_NOTE, Table, eng, grouped, short};

pub const EXPERIMENT: Experiment = Experiment {
    name: "queue",
    description: "sync::Queue between two runtimes and between a runtime and an OS thread: \
                  ping-pong and fan-in, beside crossbeam-channel between OS threads",
    default: false,
    runtimes: || {
        let mut names = rates::names(&pingpong_runtimes());
        names.extend(rates::names(&fanin_runtimes()));
        names.dedup();
        names
    },
    charts: &[
        Chart {
            variant: "pingpong",
            metrics: &["round_trips_per_s"],
        },
        Chart {
            variant: "fanin",
            metrics: &["messages_per_s"],
        },
    ],
    run,
    child: None,
};

/// Round trips in one ping-pong run.
fn round_trips(ctx: &Ctx) -> u64 {
    ctx.size(20_000, 200_000, 1_000_000)
}

/// Messages in one fan-in run, shared out among the senders.
fn messages(ctx: &Ctx) -> u64 {
    ctx.size(160_000, 2_000_000, 16_000_000)
}

/// The numbers of senders of the fan-in runs.
const SENDERS: [u64; 2] = [1, 16];

/// The second runtime's name: a runtime and a plain OS thread.
const WITH_OS_THREAD: &str = "fibra os-thread";

fn pingpong_runtimes() -> Vec<Runtime<u64, RoundTrips>> {
    vec![
        Runtime {
            name: "fibra",
            how: "two runtimes, each fibra::run on an OS thread of its own, a green thread \
                  in each; two Queues, one each way",
            runner: Runner::InProcess(fibra::pingpong_between_runtimes),
        },
        Runtime {
            name: WITH_OS_THREAD,
            how: "a green thread of a runtime and a plain OS thread (which blocks in pop); \
                  two Queues, one each way",
            runner: Runner::InProcess(fibra::pingpong_with_an_os_thread),
        },
        Runtime {
            name: "crossbeam",
            how: "two OS threads, two unbounded crossbeam-channel channels (ractor-pingpong's run)",
            runner: Runner::InProcess(pingpong::crossbeam::pingpong),
        },
    ]
}

fn fanin_runtimes() -> Vec<Runtime<Size>> {
    vec![
        Runtime {
            name: "fibra",
            how: "N green threads of one runtime push to one Queue that a green thread of \
                  another runtime (another OS thread) pops",
            runner: Runner::InProcess(fibra::fanin_between_runtimes),
        },
        Runtime {
            name: WITH_OS_THREAD,
            how: "N green threads of one runtime push to one Queue that a plain OS thread pops",
            runner: Runner::InProcess(fibra::fanin_to_an_os_thread),
        },
        Runtime {
            name: "crossbeam",
            how: "an OS thread per sender, one unbounded crossbeam-channel channel, received \
                  on another OS thread (ractor-fanin's run)",
            runner: Runner::InProcess(fanin::crossbeam::fanin),
        },
    ]
}

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    pingpong_table(ctx, &mut section);
    for senders in SENDERS {
        fanin_table(ctx, senders, &mut section);
    }
    section
}

fn pingpong_table(ctx: &Ctx, section: &mut Section) {
    let n = round_trips(ctx);
    let plan = Plan {
        experiment: "queue ping-pong",
        size: n,
        peer_args: &[],
        parse: &|_| Err("no peer program".into()),
        warm_up: true,
    };
    let (results, mut notes) = rates::measure_all(ctx, &plan, pingpong_runtimes(), section);
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
        "p50, p99: the median and 99th percentile of every {SAMPLE_EVERY}th round trip, timed alone"
    ));
    notes.push(SPREAD_NOTE.into());
    notes.push(rates::verdict(&results, &["crossbeam"]));
    section.tables.push(Table {
        title: format!(
            "queue ping-pong: {} round trips of a number between two threads on different \
             OS threads; best of {RUNS} runs after a warm-up",
            grouped(n)
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
    section.records.extend(pingpong_records(n, &results));
}

fn pingpong_records(n: u64, results: &[(&str, Outcome<Runs<RoundTrips>>)]) -> Vec<Record> {
    let variant = format!("pingpong n={n}");
    let metrics = ("round_trips_per_s", "ns_per_round_trip");
    let mut records = rates::records(EXPERIMENT.name, &variant, results, metrics);
    records.extend(record::of_measured(
        EXPERIMENT.name,
        &variant,
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

fn fanin_table(ctx: &Ctx, senders: u64, section: &mut Section) {
    let size = Size {
        senders,
        messages: messages(ctx),
    };
    let plan = Plan {
        experiment: "queue fan-in",
        size,
        peer_args: &[],
        parse: &|_| Err("no peer program".into()),
        warm_up: true,
    };
    let (results, hows) = rates::measure_all(ctx, &plan, fanin_runtimes(), section);
    let rows = rates::rows(&results, |t| {
        vec![grouped(t.count), eng(t.per_sec()), short(t.ns_each())]
    });
    let mut notes = match senders {
        1 => hows,
        _ => Vec::new(),
    };
    notes.push(SPREAD_NOTE.into());
    notes.push(rates::verdict(&results, &["crossbeam"]));
    section.tables.push(Table {
        title: format!(
            "queue fan-in: {senders} sender(s) sending {} messages in all to one receiver on \
             another OS thread; best of {RUNS} runs after a warm-up",
            grouped(size.total())
        ),
        columns: vec![
            "runtime",
            "messages",
            "messages/s",
            "ns/message",
            "vs fibra",
            "spread",
        ],
        rows,
        notes,
    });
    let variant = format!("fanin senders={senders} messages={}", size.total());
    let metrics = ("messages_per_s", "ns_per_message");
    section
        .records
        .extend(rates::records(EXPERIMENT.name, &variant, &results, metrics));
}

/// Timed figures of a fan-in run, for its runners.
fn fanin_timed(size: Size, sum: u64, elapsed: std::time::Duration) -> Result<Timed, String> {
    fanin::check_sum(size, sum)?;
    Ok(Timed::new(size.total(), elapsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_plays_ping_pong() {
        for r in pingpong_runtimes() {
            let Runner::InProcess(f) = r.runner else {
                unreachable!("in process")
            };
            let got = f(1000).unwrap_or_else(|e| panic!("{}: {e}", r.name));
            assert_eq!(got.timed.count, 1000, "{}", r.name);
        }
    }

    #[test]
    fn every_runtime_fans_in() {
        for senders in [1, 16] {
            let size = Size {
                senders,
                messages: 1600,
            };
            for r in fanin_runtimes() {
                let Runner::InProcess(f) = r.runner else {
                    unreachable!("in process")
                };
                let got = f(size).unwrap_or_else(|e| panic!("{}: {e}", r.name));
                assert_eq!(got.count, 1600, "{}", r.name);
            }
        }
    }
}

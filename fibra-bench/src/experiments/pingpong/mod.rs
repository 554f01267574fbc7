//! Message ping-pong between two Ractors on different cores (the issue
//! "Ractors"): ping sends a number to pong, pong sends it back plus one, N
//! times; the rate is round trips per second. Against the same exchange
//! between two OS threads over crossbeam-channel, between two goroutines
//! over unbuffered Go channels, between two `may` coroutines over may's
//! channels, and between two Ruby Ractors (the issue's own runtime).

mod crossbeam;
mod fibra;
mod may;

use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Outcome, Runs, Timed};
use crate::peers::Launcher;
use crate::record::Record;
use crate::report::{SPREAD_NOTE, Table, eng, grouped, short};

pub const EXPERIMENT: Experiment = Experiment {
    name: "ractor-pingpong",
    description: "message round trips between two Ractors on different cores",
    default: true,
    runtimes: || rates::names(&runtimes()),
    charts: &[Chart {
        variant: "",
        metrics: &["round_trips_per_s"],
    }],
    run,
    // Ping-pong on may, in a process of its own.
    child: Some(may::main),
};

/// Round trips in one run.
fn round_trips(ctx: &Ctx) -> u64 {
    ctx.size(20_000, 200_000, 1_000_000)
}

fn runtimes() -> Vec<Runtime<u64>> {
    vec![
        Runtime {
            name: "fibra",
            how: "two Ractors on the two workers of a Pool::new(2); push both ways: ping \
                  sends, pong sends back to a handle on ping it got in its first message",
            runner: Runner::InProcess(fibra::push),
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
    let mut section = Section::default();
    let n = round_trips(ctx);
    let peer_args = [n.to_string()];
    let plan = Plan {
        experiment: EXPERIMENT.name,
        size: n,
        peer_args: &peer_args,
        parse: &|stdout| super::echo::parse(stdout, n),
        warm_up: true,
    };
    let (results, mut notes) = rates::measure_all(ctx, &plan, runtimes(), &mut section);
    let rows = rates::rows(&results, |t| {
        vec![grouped(t.count), eng(t.per_sec()), short(t.ns_each())]
    });
    notes.push(
        "fibra's idle workers spin ~20 µs for a wake before they sleep, so other load on \
         the cores slows fibra most"
            .into(),
    );
    notes.push(SPREAD_NOTE.into());
    notes.push(rates::verdict(&results, &["go"]));
    section.tables.push(Table {
        title: format!(
            "ractor-pingpong: {} round trips of a number between two threads of execution \
             on different cores; best of {RUNS} runs after a warm-up",
            grouped(n)
        ),
        columns: vec![
            "runtime",
            "round trips",
            "round trips/s",
            "ns/round trip",
            "vs fibra",
            "spread",
        ],
        rows,
        notes,
    });
    section.records.extend(records(n, &results));
    section
}

fn records(n: u64, results: &[(&str, Outcome<Runs<Timed>>)]) -> Vec<Record> {
    let metrics = ("round_trips_per_s", "ns_per_round_trip");
    rates::records(EXPERIMENT.name, &format!("n={n}"), results, metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_in_process_plays() {
        for f in [fibra::push, crossbeam::pingpong] {
            assert_eq!(f(1000).unwrap().count, 1000);
        }
    }
}

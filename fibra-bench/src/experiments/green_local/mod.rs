//! green-local: what a `with` of a green-thread-local value costs
//! (`fibra::green_local!`), beside std's `thread_local!` on an OS thread and
//! tokio's `task_local!` inside a task: N calls in a hot loop, each reading
//! and writing a `Cell<u64>`. In-process only; not a default experiment (it
//! answers a question about fibra's own overhead, not one of the seeds').

mod fibra;
mod thread_local;
mod tokio;

use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section};
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Outcome, Runs, Timed};
use crate::record::Record;
use crate::report::{SPREAD_NOTE, Table, grouped, short};
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "green-local",
    description: "a with of a green-thread-local value, beside thread_local! and task_local!",
    default: false,
    runtimes: || rates::names(&runtimes()),
    charts: &[],
    run,
    child: None,
};

/// Calls of `with` in one run.
fn calls(ctx: &Ctx) -> u64 {
    ctx.size(1_000_000, 20_000_000, 200_000_000)
}

fn runtimes() -> Vec<Runtime<u64>> {
    vec![
        Runtime {
            name: "fibra",
            how: "fibra::green_local! Cell<u64>, with() on a green thread",
            runner: Runner::InProcess(|n| in_process(n, fibra::with_calls(n))),
        },
        Runtime {
            name: "std",
            how: "std's thread_local! const Cell<u64>, with() on an OS thread",
            runner: Runner::InProcess(|n| in_process(n, thread_local::with_calls(n))),
        },
        Runtime {
            name: "tokio",
            how: "tokio::task_local! Cell<u64>, with() inside a task on a current-thread runtime",
            runner: Runner::InProcess(|n| in_process(n, tokio::with_calls(n))),
        },
    ]
}

/// An in-process run's figure: `n` calls in `elapsed`.
fn in_process(n: u64, elapsed: Duration) -> Result<Timed, String> {
    Ok(Timed::new(n, elapsed))
}

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    let n = calls(ctx);
    let plan = Plan {
        experiment: EXPERIMENT.name,
        size: n,
        peer_args: &[],
        parse: &|_| Err("green-local runs in-process only".into()),
        warm_up: true,
    };
    let (results, mut notes) = rates::measure_all(ctx, &plan, runtimes(), &mut section);
    let rows = rates::rows(&results, |t| vec![grouped(t.count), short(t.ns_each())]);
    notes.push(
        "each with() is a call of a function that is not inlined, so that no lookup is \
         hoisted out of the loop"
            .into(),
    );
    notes.push(SPREAD_NOTE.into());
    section.tables.push(Table {
        title: format!(
            "green-local: {} calls of with() on a Cell<u64>, one OS thread; best of {RUNS} \
             runs after a warm-up",
            grouped(n)
        ),
        columns: vec!["runtime", "calls", "ns/with", "vs fibra", "spread"],
        rows,
        notes,
    });
    section.records.extend(records(n, &results));
    section
}

/// Records of the measured runtimes, which all made `n` calls.
fn records(n: u64, results: &[(&str, Outcome<Runs<Timed>>)]) -> Vec<Record> {
    let metrics = ("with_per_s", "ns_per_with");
    rates::records(EXPERIMENT.name, &format!("n={n}"), results, metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_counts_every_call() {
        assert!(fibra::with_calls(1000) > Duration::ZERO);
        assert!(thread_local::with_calls(1000) > Duration::ZERO);
        assert!(tokio::with_calls(1000) > Duration::ZERO);
    }
}

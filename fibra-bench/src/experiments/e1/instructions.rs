//! Instructions per switch: each in-process runtime's resume/yield loop run in a
//! child process under cachegrind, twice, at two sizes; the difference of the two
//! `Ir` totals divided by the difference of their switches cancels everything
//! the process does besides switching (start-up, making the coroutines, exit).
//! The count is deterministic, so unlike the rates it holds on a loaded machine.

use super::{EXPERIMENT, Runner, Variant, runtimes};
use crate::cachegrind::count_instructions;
use crate::ctx::Ctx;
use crate::peers::protocol::{count, parse_line};
use crate::peers::{Launcher, Unavailable, find_program};
use crate::progress;
use crate::record::Record;
use crate::report::grouped;
use std::ffi::OsString;

/// The resume/yield iterations of the two counted runs (4 switches each):
/// 400,000 switches apart, so that a few hundred instructions of difference in
/// start-up between the runs (their arguments differ in length) move the figure
/// by less than 0.001.
const ITERATIONS: [u64; 2] = [20_000, 120_000];

/// The runtimes counted: fibra, the crate it is measured against, and the
/// floors. Each count is two runs under valgrind (about 3 s each on a loaded
/// 2-core machine, most of it valgrind's start); tokio's would mostly count its
/// scheduler.
const COUNTED: [&str; 4] = ["fibra", "corosensei", "floor-gpr", "floor-gpr+cw"];

/// The metric of the records.
const METRIC: &str = "instructions_per_switch";

/// The first argument of the child program that runs a counted loop.
pub(super) const CHILD_MODE: &str = "count";

/// What the counts came to.
pub(super) enum Instructions {
    /// valgrind is not installed: nothing was counted.
    NoValgrind,
    /// valgrind cannot run this processor's programs here (an aarch64 build
    /// under qemu-user finds the host's x86_64 valgrind): what it said.
    OtherProcessor(String),
    /// Per in-process runtime counted, its instructions per switch, or why not.
    Counted(Vec<(&'static str, Result<f64, String>)>),
}

impl Instructions {
    /// The table cell of runtime `name`: its count, `no valgrind`, `failed`
    /// (the note says why) or `-` (a runtime that is not counted).
    pub(super) fn cell(&self, name: &str) -> String {
        match self {
            Instructions::NoValgrind => "no valgrind".into(),
            Instructions::OtherProcessor(_) => "not here".into(),
            Instructions::Counted(counts) => match counts.iter().find(|(n, _)| *n == name) {
                Some((_, Ok(per_switch))) => format!("{per_switch:.1}"),
                Some((_, Err(_))) => "failed".into(),
                None => "-".into(),
            },
        }
    }

    /// The note under the table: how the column was made, and each failure.
    pub(super) fn notes(&self) -> Vec<String> {
        let [small, large] = ITERATIONS.map(|n| grouped(Variant::Resume.switches(n)));
        let how = format!(
            "instr/switch: instructions per switch counted by valgrind's cachegrind (Ir), \
             (Ir of a run of {large} switches − Ir of one of {small}) ÷ the difference, in a \
             child process per runtime; deterministic, so valid on a loaded machine; \
             counted for fibra, corosensei and the floors"
        );
        let mut notes = vec![how];
        match self {
            Instructions::NoValgrind => notes.push(
                "instr/switch: valgrind is not installed (apt-get install valgrind), so \
                 nothing was counted"
                    .into(),
            ),
            Instructions::OtherProcessor(said) => notes.push(format!(
                "instr/switch: not counted: the valgrind found here cannot run programs of \
                 this processor ({}; under emulation, such as qemu-user, it is the host's \
                 valgrind); it said: {said}",
                std::env::consts::ARCH
            )),
            Instructions::Counted(counts) => {
                notes.extend(counts.iter().filter_map(|(name, result)| {
                    result
                        .as_ref()
                        .err()
                        .map(|why| format!("instr/switch of {name}: {why}"))
                }))
            }
        }
        notes
    }

    /// One record per runtime counted: a single deterministic figure.
    pub(super) fn records(&self) -> Vec<Record> {
        let Instructions::Counted(counts) = self else {
            return Vec::new();
        };
        counts
            .iter()
            .filter_map(|(name, result)| {
                let value = *result.as_ref().ok()?;
                Some(Record {
                    experiment: EXPERIMENT.name,
                    variant: Variant::Resume.arg().into(),
                    runtime: (*name).into(),
                    metric: METRIC,
                    value,
                    unit: "instructions",
                    best_of: 1,
                    spread: None,
                })
            })
            .collect()
    }
}

/// Counts the instructions per resume/yield switch of each in-process runtime
/// that `ctx` wants.
pub(super) fn count_all(ctx: &Ctx) -> Instructions {
    let Some(valgrind) = find_program("valgrind", &[]) else {
        return Instructions::NoValgrind;
    };
    let mut counted = Vec::new();
    for r in runtimes()
        .into_iter()
        .filter(|r| COUNTED.contains(&r.name) && ctx.wants(r.name))
    {
        progress::step(&format!(
            "e1: counting {}'s instructions under cachegrind",
            r.name
        ));
        match per_switch(ctx, &valgrind, r.name) {
            // valgrind's words when it has no tool for the program's
            // processor: no other runtime would fare better.
            Err(why) if why.contains(OTHER_PROCESSOR) => {
                return Instructions::OtherProcessor(why);
            }
            result => counted.push((r.name, result)),
        }
    }
    Instructions::Counted(counted)
}

/// What valgrind prints when it cannot run a program of another processor
/// ("valgrind: failed to start tool 'cachegrind' for platform 'arm64-linux'").
const OTHER_PROCESSOR: &str = "failed to start tool";

/// Instructions per switch of runtime `name`, from its two counted runs.
fn per_switch(ctx: &Ctx, valgrind: &std::path::Path, name: &str) -> Result<f64, String> {
    let child = Launcher::Child(EXPERIMENT.name)
        .prepare(ctx)
        .map_err(|(Unavailable::Missing(why) | Unavailable::Broken(why))| why)?;
    let mut runs = Vec::new();
    for n in ITERATIONS {
        let argv = child
            .argv()
            .chain([CHILD_MODE, Variant::Resume.arg(), name, &n.to_string()].map(OsString::from));
        let (stdout, ir) = count_instructions(valgrind, argv, ctx.timeout)?;
        let switches = parse_line(&stdout, &["switches"]).map_err(|e| e.to_string())?[0];
        runs.push((switches, ir));
    }
    let [(s1, ir1), (s2, ir2)] = runs[..] else {
        unreachable!("two sizes, two runs")
    };
    if ir2 < ir1 {
        return Err(format!(
            "the larger run counted fewer instructions ({ir2} < {ir1})"
        ));
    }
    Ok((ir2 - ir1) as f64 / (s2 - s1) as f64)
}

/// The child program: `fibra-bench --child e1 count resume <RUNTIME> <N>` runs
/// the in-process runtime's resume/yield loop for `N` iterations and prints
/// `switches=<4·N>`.
pub(super) fn child(args: &[String]) -> Result<(), String> {
    let usage = "usage: fibra-bench --child e1 count resume <RUNTIME> <N>   (N >= 1)";
    let [variant, name, n] = args else {
        return Err(usage.into());
    };
    let n = count(n).filter(|&n| n >= 1).ok_or(usage)?;
    if variant != Variant::Resume.arg() {
        return Err(usage.into());
    }
    let run = runtimes()
        .into_iter()
        .find_map(|r| match r.runner {
            Runner::InProcess(f) if r.name == name => Some(f),
            _ => None,
        })
        .ok_or_else(|| format!("no in-process runtime called {name:?}"))?;
    run(Variant::Resume, n).ok_or_else(|| format!("{name} has no resume/yield"))?;
    println!("switches={}", Variant::Resume.switches(n));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_notes_and_records_of_counts() {
        let counts = Instructions::Counted(vec![
            ("fibra", Ok(21.0)),
            ("corosensei", Err("the child crashed".into())),
        ]);
        let cells = ["fibra", "corosensei", "go"].map(|n| counts.cell(n));
        assert_eq!(cells, ["21.0", "failed", "-"]);
        let notes = counts.notes();
        assert!(
            notes[0].contains("480,000 switches − Ir of one of 80,000"),
            "{notes:?}"
        );
        assert_eq!(notes[1], "instr/switch of corosensei: the child crashed");
        let records = counts.records();
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!(
            (
                r.experiment,
                &r.variant[..],
                &r.runtime[..],
                r.metric,
                r.value
            ),
            ("e1", "resume", "fibra", METRIC, 21.0)
        );
        assert_eq!((r.best_of, r.spread), (1, None));
    }

    #[test]
    fn without_valgrind_the_column_says_so() {
        let none = Instructions::NoValgrind;
        assert_eq!(none.cell("fibra"), "no valgrind");
        assert!(none.notes()[1].contains("valgrind is not installed"));
        assert!(none.records().is_empty());
    }

    #[test]
    fn a_valgrind_for_another_processor_is_said_so() {
        let said = "valgrind: failed to start tool 'cachegrind' for platform 'arm64-linux'";
        let other = Instructions::OtherProcessor(said.into());
        assert_eq!(other.cell("fibra"), "not here");
        assert!(other.notes()[1].contains("cannot run programs of this processor"));
        assert!(other.notes()[1].contains(said));
        assert!(other.records().is_empty());
    }
}

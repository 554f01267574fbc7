//! `fibra-bench` re-runs the seed experiments of EXPERIMENTS.md on fibra and, side
//! by side in the same run, on every peer runtime found on this machine; it names
//! the peers it could not find.
//!
//! ```text
//! fibra-bench [EXPERIMENT...] [--quick] [--json PATH]
//! ```

mod ctx;
mod experiments;
#[cfg(target_arch = "x86_64")]
mod floor;
mod measure;
mod peers;
mod record;
mod report;
mod strace;
mod worker;

use clap::Parser;
use clap::builder::{PossibleValue, PossibleValuesParser};
use experiments::{EXPERIMENTS, Experiment};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// Experiments to run; without any, every default experiment runs.
    #[arg(value_name = "EXPERIMENT", value_parser = experiment_names())]
    experiments: Vec<String>,

    /// Small sizes: a smoke run that takes seconds, not minutes.
    #[arg(long)]
    quick: bool,

    /// Also write every figure to PATH, as a JSON array of records.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,

    /// Runs an experiment's child program (`--child e2 N`); for fibra-bench's own
    /// use, e.g. under strace.
    #[arg(long, hide = true, num_args = 1.., allow_hyphen_values = true)]
    child: Option<Vec<String>>,
}

/// The registry's names, with their descriptions for `--help`.
fn experiment_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        EXPERIMENTS
            .iter()
            .map(|e| PossibleValue::new(e.name).help(e.description)),
    )
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(args) = cli.child {
        return run_child(&args);
    }
    let chosen: Vec<&Experiment> = if cli.experiments.is_empty() {
        EXPERIMENTS.iter().filter(|e| e.default).collect()
    } else {
        let mut chosen: Vec<&Experiment> = Vec::new();
        for name in &cli.experiments {
            let e = experiments::find(name).expect("clap accepts only registered names");
            if !chosen.iter().any(|c| std::ptr::eq(*c, e)) {
                chosen.push(e);
            }
        }
        chosen
    };
    let ctx = ctx::Ctx::new(cli.quick);
    let sizes = if cli.quick { ", --quick sizes" } else { "" };
    println!("{}{sizes}", machine());
    let mut records = Vec::new();
    for e in chosen {
        let section = (e.run)(&ctx);
        report::progress(None);
        print!("\n# {}: {}\n\n{section}", e.name, e.description);
        records.extend(section.records);
    }
    if let Some(path) = cli.json
        && let Err(e) = record::write_json_file(&path, &records)
    {
        eprintln!("fibra-bench: cannot write {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// `--child <experiment> ARGS…`
fn run_child(args: &[String]) -> ExitCode {
    let Some((name, rest)) = args.split_first() else {
        eprintln!("fibra-bench: --child needs an experiment");
        return ExitCode::FAILURE;
    };
    let Some(child) = experiments::find(name).and_then(|e| e.child) else {
        eprintln!("fibra-bench: no child program for {name:?}");
        return ExitCode::FAILURE;
    };
    match child(rest) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fibra-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One line saying what the figures were measured on, for pasting with them.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, m)| m.trim())
        })
        .unwrap_or("unknown CPU");
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "fibra-bench {} on {model}, {cpus} CPUs",
        env!("CARGO_PKG_VERSION")
    )
}

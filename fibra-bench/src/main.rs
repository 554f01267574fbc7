//! `fibra-bench` re-runs the seed experiments of EXPERIMENTS.md on fibra and, side
//! by side in the same run, on every peer runtime found on this machine; it names
//! the peers it could not find.
//!
//! ```text
//! fibra-bench [EXPERIMENT...] [--only NAME,...] [--runtime NAME,...] [--quick | --full]
//!             [--list] [--json PATH] [--csv PATH] [--out DIR]
//! ```
//!
//! Tables go to stdout as each experiment ends; `report.html` and the SVG charts
//! go to `--out`.

mod cachegrind;
mod chart;
mod cli;
mod cpu;
mod ctx;
mod estimate;
mod experiments;
#[cfg(target_arch = "x86_64")]
mod floor;
mod html;
mod latency;
mod load;
mod machine;
mod measure;
mod peers;
mod progress;
mod record;
mod report;
mod strace;
mod worker;

use chart::Svg;
use clap::{CommandFactory, Parser};
use cli::Cli;
use ctx::{Ctx, Level};
use experiments::{Experiment, Section};
use machine::Machine;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(args) = &cli.child {
        return run_child(args);
    }
    if cli.list {
        print!("{}", cli::list());
        return ExitCode::SUCCESS;
    }
    if let Err(why) = cli.check_runtimes() {
        Cli::command()
            .error(clap::error::ErrorKind::InvalidValue, why)
            .exit();
    }
    let chosen = cli.chosen();
    let mut ctx = Ctx::new(cli.level());
    ctx.runtimes = cli.runtimes.clone();
    let machine = Machine::this();
    let settings = settings(&ctx);
    println!("{}\n{settings}", machine.line());
    let started = Instant::now();
    progress::start(
        chosen
            .iter()
            .map(|e| estimate::of(e.name, ctx.level))
            .collect(),
    );
    let mut sections = Vec::new();
    for (k, e) in chosen.iter().enumerate() {
        progress::experiment(k + 1, e.name);
        let began = Instant::now();
        let section = (e.run)(&ctx);
        progress::print(&format!(
            "\n# {}: {}\n\n{section}{}",
            e.name,
            e.description,
            took(began.elapsed(), estimate::of(e.name, ctx.level))
        ));
        sections.push(section);
    }
    progress::step("asking the runtimes for their versions");
    let versions = peers::versions::versions();
    progress::finish();
    println!(
        "\nthe run took {} (peers' builds included)",
        estimate::minutes(started.elapsed())
    );
    let run = html::Run {
        machine: &machine,
        versions: &versions,
        settings: &settings,
    };
    let out = cli
        .out
        .clone()
        .unwrap_or_else(|| ctx::target_dir().join("fibra-bench/report"));
    match write_all(&cli, &out, &run, &chosen, &sections) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("fibra-bench: {why}");
            ExitCode::FAILURE
        }
    }
}

/// The line after an experiment's tables: how long it took, and the estimate
/// it was given, if any.
fn took(elapsed: Duration, estimate: Option<Duration>) -> String {
    let estimate = estimate.map_or(String::new(), |e| {
        format!(" (estimated {})", estimate::minutes(e))
    });
    format!("\ntook {}{estimate}\n", estimate::minutes(elapsed))
}

/// What the run measured, in words: the sizes and the runtimes.
fn settings(ctx: &Ctx) -> String {
    let sizes = match ctx.level {
        Level::Quick => "--quick sizes (a smoke run)",
        Level::Default => "default sizes (--full for the seeds' own)",
        Level::Full => "--full sizes (the seeds' own)",
    };
    let others: Vec<&str> = ctx
        .runtimes
        .iter()
        .map(String::as_str)
        .filter(|name| *name != "fibra")
        .collect();
    let runtimes = match (ctx.runtimes.is_empty(), &others[..]) {
        (true, _) => "every runtime found".to_string(),
        (false, []) => "fibra alone".to_string(),
        (false, others) => format!("fibra and {}", others.join(", ")),
    };
    format!("{sizes}; {runtimes}")
}

/// Writes the records (`--json`, `--csv`), the charts and `report.html` (into
/// `out`). Every file is attempted even when one fails.
///
/// # Errors
///
/// Which files could not be written, and why.
fn write_all(
    cli: &Cli,
    out: &Path,
    run: &html::Run,
    chosen: &[&Experiment],
    sections: &[Section],
) -> Result<(), String> {
    let mut failed = Vec::new();
    let mut attempt = |path: &Path, result: std::io::Result<()>| {
        if let Err(e) = result {
            failed.push(format!("cannot write {}: {e}", path.display()));
        }
    };
    let records: Vec<record::Record> = sections
        .iter()
        .flat_map(|s| s.records.iter().cloned())
        .collect();
    if let Some(path) = &cli.json {
        attempt(path, record::write_file(path, &records, record::write_json));
    }
    if let Some(path) = &cli.csv {
        attempt(path, record::write_file(path, &records, record::write_csv));
    }
    let charts: Vec<Vec<Svg>> = chosen
        .iter()
        .zip(sections)
        .map(|(e, s)| chart::draw_all(e.name, e.charts, &s.records))
        .collect();
    attempt(out, std::fs::create_dir_all(out));
    for svg in charts.iter().flatten() {
        let path = out.join(&svg.file);
        attempt(&path, std::fs::write(&path, &svg.svg));
    }
    let parts: Vec<html::Part> = chosen
        .iter()
        .zip(sections)
        .zip(&charts)
        .map(|((experiment, section), charts)| html::Part {
            experiment,
            section,
            charts,
        })
        .collect();
    let report: PathBuf = out.join("report.html");
    attempt(&report, std::fs::write(&report, html::render(run, &parts)));
    match failed[..] {
        [] => {
            println!("\nreport: {}", report.display());
            Ok(())
        }
        _ => Err(failed.join("\n")),
    }
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

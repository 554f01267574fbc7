//! The command line: which experiments and runtimes, how large, and where the
//! figures go.

use crate::ctx::{self, Level};
use crate::experiments::{EXPERIMENTS, Experiment};
use clap::Parser;
use clap::builder::{PossibleValue, PossibleValuesParser};
use std::fmt::Write;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(version, about)]
pub struct Cli {
    /// Experiments to run, as with --only; without either, every default
    /// experiment runs.
    #[arg(value_name = "EXPERIMENT", value_parser = experiment_names())]
    pub experiments: Vec<String>,

    /// Experiments to run, comma-separated: `--only e1,e3` (the names of
    /// EXPERIMENT).
    #[arg(
        long,
        value_name = "NAME[,NAME]",
        value_delimiter = ',',
        value_parser = experiment_names(),
        hide_possible_values = true
    )]
    pub only: Vec<String>,

    /// Runtimes to measure besides fibra (always measured, as the reference),
    /// comma-separated: `--runtime go,ruby`; `ruby` also selects `ruby threads`
    /// and `ruby ractors`. `--list` names them.
    #[arg(long = "runtime", value_name = "NAME[,NAME]", value_delimiter = ',')]
    pub runtimes: Vec<String>,

    /// Smoke-run sizes: seconds per experiment.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,

    /// The seeds' own sizes: an hour or more (E2's 10 M switches under strace
    /// alone take half an hour); without --quick or --full, sizes that keep
    /// the default experiments within ten minutes.
    #[arg(long)]
    pub full: bool,

    /// Lists the experiments, whether each runs by default, and the runtimes
    /// each measures; runs nothing.
    #[arg(long)]
    pub list: bool,

    /// Also writes every figure to PATH, as a JSON array of records.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Also writes every figure to PATH, as CSV: a row per record.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,

    /// Where report.html and the SVG charts go [default: the cargo target
    /// directory's fibra-bench/report/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Runs an experiment's child program (`--child e2 N`); for fibra-bench's own
    /// use, e.g. under strace.
    #[arg(long, hide = true, num_args = 1.., allow_hyphen_values = true)]
    pub child: Option<Vec<String>>,
}

/// The registry's names, with their descriptions for `--help`.
fn experiment_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        EXPERIMENTS
            .iter()
            .map(|e| PossibleValue::new(e.name).help(e.description)),
    )
}

impl Cli {
    pub fn level(&self) -> Level {
        match (self.quick, self.full) {
            (true, _) => Level::Quick,
            (_, true) => Level::Full,
            _ => Level::Default,
        }
    }

    /// The experiments named (positionally, then with `--only`), each once, in
    /// the order named; every default experiment when none is.
    pub fn chosen(&self) -> Vec<&'static Experiment> {
        let named: Vec<&String> = self.experiments.iter().chain(&self.only).collect();
        if named.is_empty() {
            return EXPERIMENTS.iter().filter(|e| e.default).collect();
        }
        let mut chosen: Vec<&'static Experiment> = Vec::new();
        for name in named {
            let e = crate::experiments::find(name).expect("clap accepts only registered names");
            if !chosen.iter().any(|c| std::ptr::eq(*c, e)) {
                chosen.push(e);
            }
        }
        chosen
    }

    /// Checks that each `--runtime` selects a runtime of some experiment.
    ///
    /// # Errors
    ///
    /// The names that select none, for the error message.
    pub fn check_runtimes(&self) -> Result<(), String> {
        let known: Vec<&str> = EXPERIMENTS.iter().flat_map(|e| (e.runtimes)()).collect();
        let unknown: Vec<&str> = self
            .runtimes
            .iter()
            .filter(|wanted| !known.iter().any(|name| ctx::selects(wanted, name)))
            .map(String::as_str)
            .collect();
        match unknown[..] {
            [] => Ok(()),
            _ => Err(format!(
                "no runtime called {} (`fibra-bench --list` names them)",
                unknown.join(", ")
            )),
        }
    }
}

/// The text of `--list`: each experiment, whether it runs by default, what it
/// measures and on which runtimes.
pub fn list() -> String {
    let width = EXPERIMENTS.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for e in EXPERIMENTS {
        let default = if e.default { "default" } else { "       " };
        // Writing to a String cannot fail.
        let _ = writeln!(text, "{:<width$}  {default}  {}", e.name, e.description);
        let _ = writeln!(
            text,
            "{:<width$}  runtimes: {}",
            "",
            (e.runtimes)().join(", "),
            width = width + 9
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("fibra-bench").chain(args.iter().copied()))
    }

    fn names(cli: &Cli) -> Vec<&'static str> {
        cli.chosen().iter().map(|e| e.name).collect()
    }

    #[test]
    fn no_arguments_run_every_default_experiment_at_the_default_level() {
        let cli = parse(&[]).unwrap();
        let defaults: Vec<&str> = EXPERIMENTS
            .iter()
            .filter(|e| e.default)
            .map(|e| e.name)
            .collect();
        assert_eq!(names(&cli), defaults);
        assert_eq!(cli.level(), Level::Default);
        assert!(cli.runtimes.is_empty() && !cli.list);
    }

    #[test]
    fn only_and_positional_names_choose_experiments_once_each() {
        let cli = parse(&["e3", "--only", "e1,e3", "--only=e2"]).unwrap();
        assert_eq!(names(&cli), ["e3", "e1", "e2"]);
        let err = parse(&["--only", "e1,nope"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
        assert!(parse(&["nope"]).is_err());
    }

    #[test]
    fn runtimes_are_checked_against_the_experiments() {
        let cli = parse(&["--runtime", "go,ruby", "--runtime", "floor-gpr"]).unwrap();
        assert_eq!(cli.runtimes, ["go", "ruby", "floor-gpr"]);
        assert_eq!(cli.check_runtimes(), Ok(()));
        let cli = parse(&["--runtime=go,gol,rubyy"]).unwrap();
        assert_eq!(
            cli.check_runtimes(),
            Err("no runtime called gol, rubyy (`fibra-bench --list` names them)".into())
        );
    }

    #[test]
    fn levels() {
        assert_eq!(parse(&["--quick"]).unwrap().level(), Level::Quick);
        assert_eq!(parse(&["--full"]).unwrap().level(), Level::Full);
        assert!(parse(&["--quick", "--full"]).is_err());
    }

    #[test]
    fn outputs() {
        let cli = parse(&["--json", "a.json", "--csv", "b.csv", "--out", "dir"]).unwrap();
        assert_eq!(cli.json, Some("a.json".into()));
        assert_eq!(cli.csv, Some("b.csv".into()));
        assert_eq!(cli.out, Some("dir".into()));
    }

    #[test]
    fn lists_every_experiment_with_its_runtimes() {
        assert!(parse(&["--list"]).unwrap().list);
        let text = list();
        for e in EXPERIMENTS {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{} ", e.name)))
                .unwrap_or_else(|| panic!("{} not listed:\n{text}", e.name));
            assert_eq!(line.contains(" default "), e.default, "{line}");
            assert!(line.ends_with(e.description), "{line}");
        }
        assert!(text.contains("runtimes: fibra, corosensei, "), "{text}");
    }
}

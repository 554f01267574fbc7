//! The registry of experiments. Each experiment is one module that measures fibra
//! and its peers and hands back a [`Section`]: tables for the terminal, records
//! for `--json`, `--csv` and the charts, and the peers it could not find.

mod e1;
mod e2;
mod e3;
mod e4;
mod echo;
mod fanin;
mod fs;
mod green_local;
mod limits;
mod may_child;
#[cfg(target_os = "linux")]
mod monoio_runtime;
mod park;
mod pingpong;
mod queue;
mod rates;
mod scale;
mod servers;
mod spawn;
mod throughput;
mod wall;

use crate::chart::Chart;
use crate::ctx::Ctx;
use crate::peers::{Missing, Unavailable};
use crate::record::Record;
use crate::report::Table;
use std::fmt;

/// One experiment of EXPERIMENTS.md.
pub struct Experiment {
    /// The command-line name, e.g. `e1`.
    pub name: &'static str,
    pub description: &'static str,
    /// Whether it runs when no experiment is named.
    pub default: bool,
    /// The names of the runtimes it measures, fibra first (for `--list`; each
    /// is skipped unless [`Ctx::wants`] it).
    pub runtimes: fn() -> Vec<&'static str>,
    /// The charts of its records; empty for a chart of each metric.
    pub charts: &'static [Chart],
    pub run: fn(&Ctx) -> Section,
    /// A program the experiment runs in a process of its own (under `strace`, or
    /// to measure a whole process), started as `fibra-bench --child <name> ARGS…`.
    pub child: Option<Child>,
}

/// An experiment's child program: takes its arguments, prints its figures.
pub type Child = fn(&[String]) -> Result<(), String>;

/// Every experiment, in the order they run.
pub static EXPERIMENTS: &[Experiment] = &[
    e1::EXPERIMENT,
    e2::EXPERIMENT,
    e3::EXPERIMENT,
    e4::EXPERIMENT,
    spawn::EXPERIMENT,
    echo::EXPERIMENT,
    throughput::http::EXPERIMENT,
    throughput::https::EXPERIMENT,
    pingpong::EXPERIMENT,
    pingpong::LOADED,
    fanin::EXPERIMENT,
    fanin::LOADED,
    scale::EXPERIMENT,
    park::EXPERIMENT,
    green_local::EXPERIMENT,
    fs::EXPERIMENT,
    queue::EXPERIMENT,
];

/// The experiment called `name`.
pub fn find(name: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name)
}

/// A tokio runtime on the calling OS thread alone: the peer of fibra's runtime,
/// which runs its green threads on one OS thread.
pub fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime (an epoll instance and a timer)")
}

/// What one experiment reports.
#[derive(Default)]
pub struct Section {
    pub tables: Vec<Table>,
    pub records: Vec<Record>,
    pub missing: Vec<Missing>,
}

impl Section {
    /// Deals with a peer called `name` that cannot run: a missing one is listed
    /// in `missing` (`None`); a broken one gives the text for its table row.
    pub fn unavailable(&mut self, name: &str, why: Unavailable) -> Option<String> {
        match why {
            Unavailable::Missing(hint) => {
                self.missing.push(Missing {
                    name: name.into(),
                    hint,
                });
                None
            }
            Unavailable::Broken(why) => Some(why),
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, table) in self.tables.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{table}")?;
        }
        if !self.missing.is_empty() {
            let names: Vec<String> = self.missing.iter().map(Missing::to_string).collect();
            writeln!(f, "\nmissing: {}", names.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, e) in EXPERIMENTS.iter().enumerate() {
            assert!(
                EXPERIMENTS[i + 1..].iter().all(|o| o.name != e.name),
                "{}",
                e.name
            );
            assert!(std::ptr::eq(find(e.name).unwrap(), e));
        }
    }
}

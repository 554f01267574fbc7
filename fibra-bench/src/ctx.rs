//! What every experiment needs to know about this run: its sizes, its limits and
//! where the peer programs live.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How many times each figure is measured; tables report the best run, because
/// noise on a shared machine only ever makes a run slower.
pub const RUNS: usize = 3;

/// The run-wide settings handed to every experiment.
pub struct Ctx {
    /// Small sizes, for a smoke run that finishes in seconds.
    pub quick: bool,
    /// How long one timed run should take, where an experiment sizes its runs
    /// to the runtime's speed (see [`crate::measure::Sizing`]).
    pub run_target: Duration,
    /// A peer process still running after this long is killed and reported as
    /// timed out, so that one hung peer cannot stall the whole run.
    pub timeout: Duration,
    /// The repository's `peers/` directory (sources of the external peers).
    pub peers_dir: PathBuf,
    /// Where compiled peers are cached between runs.
    pub cache_dir: PathBuf,
}

impl Ctx {
    /// Settings for this process: `peers/` is found from the source checkout this
    /// binary was built from, the cache under the cargo target directory.
    pub fn new(quick: bool) -> Self {
        Ctx {
            quick,
            run_target: if quick {
                Duration::from_millis(50)
            } else {
                Duration::from_secs(1)
            },
            timeout: Duration::from_secs(60),
            peers_dir: Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap_or(Path::new(".."))
                .join("peers"),
            cache_dir: target_dir().join("fibra-bench/peers"),
        }
    }

    /// Picks an experiment size: `quick` under `--quick`, else `full`.
    pub fn size(&self, quick: u64, full: u64) -> u64 {
        if self.quick { quick } else { full }
    }
}

/// The cargo target directory: `CARGO_TARGET_DIR` when set, else the directory two
/// levels above this executable (`target/<profile>/fibra-bench`), else `./target`.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| PathBuf::from("target"))
}

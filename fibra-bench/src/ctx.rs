//! What every experiment needs to know about this run: its sizes, its limits,
//! the runtimes asked for and where the peer programs live.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How many times each figure is measured; tables report the best run, because
/// noise on a shared machine only ever makes a run slower.
pub const RUNS: usize = 3;

/// How large the experiments are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// `--quick`: a smoke run that takes seconds per experiment.
    Quick,
    /// No option: sizes that keep every default experiment together within ten
    /// minutes on two cores, large enough for the ratios between runtimes to hold.
    Default,
    /// `--full`: the seeds' own sizes, where a machine can run them at all.
    Full,
}

/// The run-wide settings handed to every experiment.
pub struct Ctx {
    pub level: Level,
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
    /// The runtimes asked for with `--runtime`; empty for every runtime.
    pub runtimes: Vec<String>,
}

impl Ctx {
    /// Settings for this process at `level`: `peers/` is found from the source
    /// checkout this binary was built from, the cache under the cargo target
    /// directory; every runtime is wanted.
    pub fn new(level: Level) -> Self {
        let mut ctx = Ctx {
            level,
            run_target: Duration::ZERO,
            timeout: Duration::from_secs(60),
            peers_dir: Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap_or(Path::new(".."))
                .join("peers"),
            cache_dir: target_dir().join("fibra-bench/peers"),
            runtimes: Vec::new(),
        };
        ctx.run_target = ctx.size(
            Duration::from_millis(50),
            Duration::from_millis(300),
            Duration::from_secs(1),
        );
        ctx
    }

    /// Picks an experiment's size (or time, or limit) for this run's level.
    pub fn size<T>(&self, quick: T, default: T, full: T) -> T {
        match self.level {
            Level::Quick => quick,
            Level::Default => default,
            Level::Full => full,
        }
    }

    /// Whether the runtime called `name` is to be measured: fibra always is,
    /// being what every other figure is compared with; another runtime is when
    /// no `--runtime` was given, or when its name or the first word of it
    /// (`ruby` of `ruby ractors`) was.
    pub fn wants(&self, name: &str) -> bool {
        selects("fibra", name)
            || self.runtimes.is_empty()
            || self.runtimes.iter().any(|wanted| selects(wanted, name))
    }
}

/// Whether `--runtime wanted` selects the runtime called `name`: `wanted` is its
/// name, or the first word of it.
pub fn selects(wanted: &str, name: &str) -> bool {
    wanted == name || name.split(' ').next() == Some(wanted)
}

/// The cargo target directory: `CARGO_TARGET_DIR` when set, else the nearest
/// directory above this executable that holds cargo's `CACHEDIR.TAG` (cargo
/// writes one at the top of every target directory), else `./target`.
///
/// Counting levels up from the executable is not enough: the program runs
/// from `target/<profile>/fibra-bench`, but its tests from
/// `target/<profile>/deps/fibra_bench-…`, two levels up from which is
/// `target/<profile>`, where `fibra-bench` is the program's file.
pub fn target_dir() -> PathBuf {
    let dir = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_exe()
            .ok()
            .and_then(|exe| target_dir_above(&exe))
            .unwrap_or_else(|| PathBuf::from("target")),
    };
    // Absolute: the peers' builds run in their own folders (`go -C DIR`), where
    // a relative path would name another place (a copied binary outside
    // `target/` fell back to `target` and every Go build failed).
    std::path::absolute(&dir).unwrap_or(dir)
}

/// The nearest directory above `exe` with a `CACHEDIR.TAG` file in it.
fn target_dir_above(exe: &Path) -> Option<PathBuf> {
    exe.ancestors()
        .skip(1)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_dir_is_found_from_a_test_binary_and_from_the_program() {
        let top = std::env::temp_dir().join(format!("fibra-bench-target-{}", std::process::id()));
        let deps = top.join("release/deps");
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::write(
            top.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();
        // The program's file beside the tests' directory, as after `cargo run --release`.
        std::fs::write(top.join("release/fibra-bench"), "").unwrap();
        assert_eq!(
            target_dir_above(&deps.join("fibra_bench-0123")),
            Some(top.clone())
        );
        assert_eq!(
            target_dir_above(&top.join("release/fibra-bench")),
            Some(top.clone())
        );
        // And this very test binary's own target directory holds the tag.
        assert!(target_dir().join("CACHEDIR.TAG").is_file());
        std::fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn sizes_follow_the_level() {
        let mut ctx = Ctx::new(Level::Quick);
        assert_eq!(ctx.size(1, 2, 3), 1);
        ctx.level = Level::Default;
        assert_eq!(ctx.size(1, 2, 3), 2);
        ctx.level = Level::Full;
        assert_eq!(ctx.size(1, 2, 3), 3);
        assert_eq!(Ctx::new(Level::Full).run_target, Duration::from_secs(1));
    }

    #[test]
    fn wants_fibra_and_the_runtimes_asked_for() {
        let mut ctx = Ctx::new(Level::Quick);
        assert!(ctx.wants("go") && ctx.wants("ruby ractors"));
        ctx.runtimes = vec!["ruby".into(), "floor-gpr".into()];
        assert!(ctx.wants("fibra") && ctx.wants("fibra ractors"));
        assert!(ctx.wants("ruby") && ctx.wants("ruby threads") && ctx.wants("floor-gpr"));
        assert!(!ctx.wants("jruby threads"));
        assert!(!ctx.wants("floor-gpr+cw"));
        assert!(!ctx.wants("go"));
    }
}

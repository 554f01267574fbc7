//! Builds the compiled peers at run time into a cache under the target directory,
//! again only when a source is newer than the binary: the peers are sources in
//! the repository, and the machine that runs the bench is the one that must
//! build them.

use super::launcher::Compiler;
use super::process::{self, RunError};
use super::{Unavailable, find_program};
use crate::ctx::Ctx;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// Builds have their own time limit: a first Go build can take a while.
const BUILD_TIMEOUT: Duration = Duration::from_secs(300);

/// Compiles the C or C++ file `source` (`rel` inside `peers/`) as peers/README.md
/// says.
pub fn native(
    ctx: &Ctx,
    compiler: Compiler,
    source: &Path,
    rel: &str,
    libs: &[&str],
    package: &str,
) -> Result<PathBuf, Unavailable> {
    let cc = find_program(compiler.program(), &[])
        .ok_or_else(|| Unavailable::Missing(format!("apt-get install {}", compiler.package())))?;
    let out = cached_path(ctx, rel);
    rebuild_if_stale(source, &out, |tmp| {
        let mut cmd = Command::new(&cc);
        cmd.args(["-O2", "-Wall", "-Wextra", "-o"])
            .arg(tmp)
            .arg(source)
            .args(libs);
        cmd
    })
    .map_err(|e| match e {
        BuildError::Failed(RunError::Exited { ref stderr, .. }) if lacks_dependency(stderr) => {
            Unavailable::Missing(format!("apt-get install {package}"))
        }
        e => Unavailable::Broken(e.to_string()),
    })?;
    Ok(out)
}

/// Builds the Go module in `dir` (`rel` inside `peers/`).
pub fn go(ctx: &Ctx, dir: &Path, rel: &str) -> Result<PathBuf, Unavailable> {
    let go = find_program("go", &["/usr/local/go/bin"])
        .ok_or_else(|| Unavailable::Missing("apt-get install golang-go".into()))?;
    let out = cached_path(ctx, rel);
    rebuild_if_stale(dir, &out, |tmp| {
        let mut cmd = Command::new(&go);
        // GOTOOLCHAIN=local: build with the Go found here, never download another.
        cmd.current_dir(dir)
            .env("GOTOOLCHAIN", "local")
            .arg("build")
            .arg("-o")
            .arg(tmp)
            .arg(".");
        cmd
    })
    .map_err(|e| Unavailable::Broken(e.to_string()))?;
    Ok(out)
}

/// Where the binary built from `rel` is cached: `rel` without its extension,
/// under the cache directory.
fn cached_path(ctx: &Ctx, rel: &str) -> PathBuf {
    ctx.cache_dir.join(rel).with_extension("")
}

/// Did the compiler fail for want of a header or a library?
fn lacks_dependency(stderr: &str) -> bool {
    stderr.lines().any(|l| {
        (l.contains("fatal error:") && l.contains("No such file or directory"))
            || l.contains("cannot find -l")
    })
}

#[derive(Debug)]
enum BuildError {
    Io(io::Error),
    Failed(RunError),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Io(e) => write!(f, "build failed: {e}"),
            BuildError::Failed(e) => write!(f, "build {e}"),
        }
    }
}

/// Runs the build command made by `command` (given the temporary output path)
/// unless `out` is newer than everything in `source`; the result is renamed into
/// place, so that an interrupted build never leaves a half-written binary.
fn rebuild_if_stale(
    source: &Path,
    out: &Path,
    command: impl FnOnce(&Path) -> Command,
) -> Result<(), BuildError> {
    let built = out.metadata().and_then(|m| m.modified()).ok();
    let newest = newest_mtime(source).map_err(BuildError::Io)?;
    if built.is_some_and(|built| built >= newest) {
        return Ok(());
    }
    let dir = out.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(BuildError::Io)?;
    let tmp = out.with_extension(format!("tmp{}", std::process::id()));
    process::run(&mut command(&tmp), BUILD_TIMEOUT).map_err(BuildError::Failed)?;
    fs::rename(&tmp, out).map_err(BuildError::Io)
}

/// The latest modification time of `path`, or of any file under it.
fn newest_mtime(path: &Path) -> io::Result<SystemTime> {
    let meta = path.metadata()?;
    let mut newest = meta.modified()?;
    if meta.is_dir() {
        for entry in fs::read_dir(path)? {
            newest = newest.max(newest_mtime(&entry?.path())?);
        }
    }
    Ok(newest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_a_missing_header_or_library() {
        assert!(lacks_dependency(
            "x.cpp:3:10: fatal error: boost/context/detail/fcontext.hpp: No such file or directory"
        ));
        assert!(lacks_dependency(
            "/usr/bin/ld: cannot find -lboost_context: No such file or directory"
        ));
        assert!(!lacks_dependency(
            "x.c:1:1: error: expected ';' before '}' token"
        ));
    }
}

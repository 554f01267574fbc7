//! Builds the compiled peers at run time into a cache under the target directory,
//! again only when a source is newer than the binary: the peers are sources in
//! the repository, and the machine that runs the bench is the one that must
//! build them. fibra's own programs (examples of this workspace) are built by
//! cargo, into its target directory.

use super::process::{self, RunError};
use super::protocol::shorten;
use super::{Unavailable, find_program};
use crate::ctx::Ctx;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// Builds have their own time limit: a first Go build can take a while.
const BUILD_TIMEOUT: Duration = Duration::from_secs(300);

/// A C or C++ compiler, and the Debian package that provides it.
#[derive(Clone, Copy)]
pub enum Compiler {
    C,
    Cpp,
}

impl Compiler {
    pub(super) fn program(self) -> &'static str {
        match self {
            Compiler::C => "cc",
            Compiler::Cpp => "c++",
        }
    }

    pub(super) fn package(self) -> &'static str {
        match self {
            Compiler::C => "gcc",
            Compiler::Cpp => "g++",
        }
    }
}

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

/// Compiles the Erlang module `source` (`rel` inside `peers/`) with `erlc`,
/// again only when the source is newer than the `.beam`; returns `erl`, the
/// directory that holds the `.beam` (for `-pa`) and the module's name.
pub fn erlang(
    ctx: &Ctx,
    source: &Path,
    rel: &str,
) -> Result<(PathBuf, PathBuf, String), Unavailable> {
    let missing = || Unavailable::Missing("apt-get install erlang-nox".into());
    let erl = find_program("erl", &[]).ok_or_else(missing)?;
    let erlc = find_program("erlc", &[]).ok_or_else(missing)?;
    let module = source
        .file_stem()
        .and_then(|m| m.to_str())
        .ok_or_else(|| Unavailable::Broken(format!("{rel} names no Erlang module")))?
        .to_string();
    let dir = cached_path(ctx, rel);
    let beam = dir.join(format!("{module}.beam"));
    let build = || -> Result<(), BuildError> {
        if is_fresh(source, &beam)? {
            return Ok(());
        }
        // erlc names its output after the module, in a directory given: it
        // compiles into a directory of this process's own, and the `.beam`
        // is renamed into place, so that an interrupted build leaves no
        // half-written one.
        let staging = dir.join(format!("tmp{}", std::process::id()));
        fs::create_dir_all(&staging).map_err(BuildError::Io)?;
        let mut cmd = Command::new(&erlc);
        cmd.arg("-o").arg(&staging).arg(source);
        let built = process::run(&mut cmd, BUILD_TIMEOUT)
            .map_err(BuildError::Failed)
            .and_then(|_| {
                fs::rename(staging.join(format!("{module}.beam")), &beam).map_err(BuildError::Io)
            });
        // Empty once the rename is done; what a failed build left is removed.
        let _ = fs::remove_dir_all(&staging);
        built
    };
    build().map_err(|e| Unavailable::Broken(e.to_string()))?;
    Ok((erl, dir, module))
}

/// Builds the example `example` of the package `package` with its cargo
/// `features`, with `cargo build --release` in the workspace that `peers/` belongs to; cargo knows itself
/// whether it is up to date. Every failure is `Broken`: the workspace is this
/// very checkout, so nothing is missing from the machine.
pub fn example(
    ctx: &Ctx,
    package: &str,
    example: &str,
    features: &[&str],
) -> Result<PathBuf, Unavailable> {
    // `cargo run` hands its own path down in CARGO.
    let cargo = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .or_else(|| find_program("cargo", &[]))
        .ok_or_else(|| Unavailable::Broken("no cargo to build it with".into()))?;
    let workspace = ctx.peers_dir.parent().unwrap_or(Path::new(".."));
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace).args([
        "build",
        "--release",
        "--message-format=json-render-diagnostics",
        "--package",
        package,
        "--example",
        example,
        "--features",
        &features.join(","),
    ]);
    let stdout =
        process::run(&mut cmd, BUILD_TIMEOUT).map_err(|e| Unavailable::Broken(cargo_error(e)))?;
    executable(&stdout, example)
        .ok_or_else(|| Unavailable::Broken(format!("cargo built no executable {example}")))
}

/// The path of the executable called `name` among cargo's JSON messages.
fn executable(messages: &str, name: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
}

/// Why cargo failed: its first `error` line (the lines before it are progress
/// and warnings), or else how it exited.
fn cargo_error(e: RunError) -> String {
    if let RunError::Exited { stderr, .. } = &e
        && let Some(line) = stderr.lines().find(|l| l.starts_with("error"))
    {
        return format!("cargo build: {}", shorten(line, 100));
    }
    format!("cargo build {e}")
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
    if is_fresh(source, out)? {
        return Ok(());
    }
    let dir = out.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(BuildError::Io)?;
    let tmp = out.with_extension(format!("tmp{}", std::process::id()));
    process::run(&mut command(&tmp), BUILD_TIMEOUT).map_err(BuildError::Failed)?;
    fs::rename(&tmp, out).map_err(BuildError::Io)
}

/// Whether `out` exists and is newer than everything in `source`.
fn is_fresh(source: &Path, out: &Path) -> Result<bool, BuildError> {
    let built = out.metadata().and_then(|m| m.modified()).ok();
    let newest = newest_mtime(source).map_err(BuildError::Io)?;
    Ok(built.is_some_and(|built| built >= newest))
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
    fn finds_the_example_among_cargo_messages() {
        let messages = concat!(
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"fibra"},"#,
            r#""executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"kind":["example"],"#,
            r#""name":"seed-server"},"executable":"/t/release/examples/seed-server"}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        assert_eq!(
            executable(messages, "seed-server"),
            Some(PathBuf::from("/t/release/examples/seed-server"))
        );
        assert_eq!(executable(messages, "fibra"), None);
    }

    #[test]
    fn says_why_cargo_failed() {
        let failed = |stderr: &str| RunError::Exited {
            status: std::os::unix::process::ExitStatusExt::from_raw(101 << 8),
            stderr: stderr.into(),
        };
        assert_eq!(
            cargo_error(failed(
                "   Compiling fibra v0.1.0\nwarning: unused\nerror[E0425]: cannot find value `x`\n"
            )),
            "cargo build: error[E0425]: cannot find value `x`"
        );
        assert_eq!(
            cargo_error(failed("killed\n")),
            "cargo build failed (exit 101): killed"
        );
    }

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

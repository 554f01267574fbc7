//! Counting the instructions a program executes with valgrind's cachegrind: its
//! `Ir` total (instructions read), which does not depend on the machine's load or
//! clock, so a figure taken on a busy machine holds on a quiet one.

use crate::peers::process;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// Runs `argv` under `valgrind --tool=cachegrind` (no cache simulation), with its
/// output file written to a file of its own so that the program's stdout and
/// stderr stay clean; returns the program's stdout and the instructions it
/// executed, every thread summed.
pub fn count_instructions(
    valgrind: &Path,
    argv: impl IntoIterator<Item = OsString>,
    timeout: Duration,
) -> Result<(String, u64), String> {
    let file =
        std::env::temp_dir().join(format!("fibra-bench-cachegrind-{}.out", std::process::id()));
    let mut out_file = OsString::from("--cachegrind-out-file=");
    out_file.push(&file);
    let mut cmd = std::process::Command::new(valgrind);
    cmd.args(["--tool=cachegrind", "--cache-sim=no", "--branch-sim=no"])
        .arg(out_file)
        .args(argv);
    let result = process::run(&mut cmd, timeout).map_err(|e| e.to_string());
    let summary = std::fs::read_to_string(&file);
    // The file is only scratch; a leftover in the temp directory is harmless.
    let _ = std::fs::remove_file(&file);
    let stdout = result?;
    let summary = summary.map_err(|e| format!("no cachegrind output: {e}"))?;
    Ok((stdout, parse_ir(&summary)?))
}

/// The `Ir` total of a cachegrind output file: its `summary:` line, whose first
/// number is `Ir` (the `events:` line names the columns; `Ir` comes first).
pub fn parse_ir(text: &str) -> Result<u64, String> {
    let events = text
        .lines()
        .find_map(|l| l.strip_prefix("events:"))
        .ok_or("no `events:` line in cachegrind's output")?;
    if events.split_whitespace().next() != Some("Ir") {
        return Err(format!("cachegrind counted {events:?}, not Ir first"));
    }
    let summary = text
        .lines()
        .find_map(|l| l.strip_prefix("summary:"))
        .ok_or("no `summary:` line in cachegrind's output")?;
    summary
        .split_whitespace()
        .next()
        .and_then(|ir| ir.parse().ok())
        .ok_or_else(|| format!("unparseable cachegrind summary {summary:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head and tail of the file that `valgrind --tool=cachegrind
    /// --cache-sim=no --branch-sim=no --cachegrind-out-file=FILE true` wrote on
    /// the project's Debian 12 machine (valgrind 3.19).
    const TRUE: &str = "\
desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         268435456 B, 64 B, direct-mapped
cmd: true
events: Ir
fl=./csu/../csu/libc-start.c
fn=__libc_start_main@@GLIBC_2.34
128 2
summary: 127769
";

    #[test]
    fn reads_the_ir_total() {
        assert_eq!(parse_ir(TRUE), Ok(127_769));
        let with_cache = TRUE
            .replace("events: Ir", "events: Ir I1mr ILmr")
            .replace("summary: 127769", "summary: 127769 1200 900");
        assert_eq!(parse_ir(&with_cache), Ok(127_769));
    }

    #[test]
    fn refuses_output_without_an_ir_total() {
        assert!(parse_ir("").is_err());
        assert!(parse_ir(&TRUE.replace("summary: 127769\n", "")).is_err());
        assert!(parse_ir(&TRUE.replace("events: Ir", "events: Dr")).is_err());
    }
}

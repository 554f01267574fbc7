//! Counting a program's system calls with `strace -f -c`, and reading the summary
//! table it writes.

use crate::peers::process;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// The calls per system call of one traced run, all threads and children summed.
#[derive(Debug, PartialEq)]
pub struct Summary {
    pub calls: BTreeMap<String, u64>,
    /// strace's `total` line.
    pub total: u64,
}

impl Summary {
    /// How many times `syscall` was made (0 when it does not appear).
    pub fn calls_to(&self, syscall: &str) -> u64 {
        self.calls.get(syscall).copied().unwrap_or(0)
    }
}

/// Parses the table `strace -c` writes:
///
/// ```text
/// % time     seconds  usecs/call     calls    errors syscall
/// ------ ----------- ----------- --------- --------- ----------------
///  99.82    2.412231           1   2000004           rt_sigprocmask
/// ...
/// ------ ----------- ----------- --------- --------- ----------------
/// 100.00    2.416586           1   2000170        19 total
/// ```
///
/// The `errors` column is blank for calls that never failed, so a row has five or
/// six fields; `calls` is always the fourth. Lines that are not rows (strace's
/// own messages, if any) are ignored.
pub fn parse_summary(text: &str) -> Result<Summary, String> {
    let mut calls = BTreeMap::new();
    let mut total = None;
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !(5..=6).contains(&fields.len()) || fields[0].parse::<f64>().is_err() {
            continue;
        }
        let Ok(count) = fields[3].parse::<u64>() else {
            continue;
        };
        match fields[fields.len() - 1] {
            "total" => total = Some(count),
            name => {
                calls.insert(name.to_string(), count);
            }
        }
    }
    let total = total.ok_or("no `total` line in strace's summary")?;
    Ok(Summary { calls, total })
}

/// Runs `argv` under `strace -f -c`, with the summary written to a file of its own
/// so that the program's stdout stays clean; returns that stdout and the summary.
pub fn count_syscalls(
    strace: &Path,
    argv: impl IntoIterator<Item = OsString>,
    timeout: Duration,
) -> Result<(String, Summary), String> {
    let file = std::env::temp_dir().join(format!("fibra-bench-strace-{}.txt", std::process::id()));
    let mut cmd = std::process::Command::new(strace);
    cmd.args(["-f", "-c", "-qq", "-o"]).arg(&file).args(argv);
    let result = process::run(&mut cmd, timeout).map_err(|e| e.to_string());
    let summary = std::fs::read_to_string(&file);
    // The file is only scratch; a leftover in the temp directory is harmless.
    let _ = std::fs::remove_file(&file);
    let stdout = result?;
    let summary = summary.map_err(|e| format!("no strace summary: {e}"))?;
    Ok((stdout, parse_summary(&summary)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `strace -f -c -qq -o FILE sh -c 'ls; true'`, captured on the project's
    /// Debian 12 machine (strace 6.1): blank and filled `errors` cells.
    const SH: &str = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 67.76    0.003850        1925         2         1 wait4
  9.49    0.000539          14        36        13 openat
  5.23    0.000297           8        37        10 newfstatat
  4.98    0.000283          11        25           close
  4.63    0.000263           6        38           mmap
  1.95    0.000111          13         8           mprotect
  1.28    0.000073           9         8           read
  0.00    0.000000           0         7           rt_sigaction
  0.00    0.000000           0         3           rt_sigprocmask
  0.00    0.000000           0         1           rt_sigreturn
  0.00    0.000000           0         2           execve
------ ----------- ----------- --------- --------- ----------------
100.00    0.005682          27       210        31 total
";

    /// The same for a swapcontext program making 200,002 switches: one
    /// `rt_sigprocmask` per switch, plus one per `getcontext` that set up the two
    /// contexts.
    const SWAPCONTEXT: &str = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 99.95    0.128406           0    200004           rt_sigprocmask
  0.03    0.000040          40         1           write
  0.01    0.000014           3         4           brk
  0.01    0.000010           3         3           newfstatat
  0.00    0.000000           0         1           read
  0.00    0.000000           0         2           close
  0.00    0.000000           0         8           mmap
  0.00    0.000000           0         3           mprotect
  0.00    0.000000           0         1           munmap
  0.00    0.000000           0         2           pread64
  0.00    0.000000           0         1         1 access
  0.00    0.000000           0         1           execve
  0.00    0.000000           0         1           arch_prctl
  0.00    0.000000           0         1           set_tid_address
  0.00    0.000000           0         2           openat
  0.00    0.000000           0         1           set_robust_list
  0.00    0.000000           0         1           prlimit64
  0.00    0.000000           0         1           getrandom
  0.00    0.000000           0         1           rseq
------ ----------- ----------- --------- --------- ----------------
100.00    0.128470           0    200039         1 total
";

    #[test]
    fn parses_a_real_summary() {
        let s = parse_summary(SH).unwrap();
        assert_eq!(s.total, 210);
        assert_eq!(s.calls_to("rt_sigprocmask"), 3);
        assert_eq!(s.calls_to("wait4"), 2);
        assert_eq!(s.calls_to("close"), 25);
        assert_eq!(s.calls_to("futex"), 0);
        assert_eq!(s.calls.len(), 11);
    }

    #[test]
    fn parses_a_summary_dominated_by_rt_sigprocmask() {
        let s = parse_summary(SWAPCONTEXT).unwrap();
        assert_eq!(s.calls_to("rt_sigprocmask"), 200_004);
        assert_eq!(s.total, 200_039);
        assert_eq!(s.calls_to("access"), 1);
    }

    #[test]
    fn a_summary_needs_its_total() {
        assert!(parse_summary("").is_err());
        let without_total: String = SH.lines().filter(|l| !l.ends_with("total")).collect();
        assert!(parse_summary(&without_total).is_err());
    }
}

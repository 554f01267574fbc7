//! Runs one peer process with a time limit and collects what it printed. A peer
//! that crashes, hangs or prints something unexpected is an error for its table
//! cell, never a reason for the bench to stop or wait.

use super::protocol::shorten;
use std::fmt;
use std::io::{self, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Why a peer process gave no usable output.
#[derive(Debug)]
pub enum RunError {
    Start(io::Error),
    TimedOut(Duration),
    /// Exited unsuccessfully, having printed `stderr` (the compiler's messages,
    /// for a build).
    Exited {
        status: ExitStatus,
        stderr: String,
    },
    /// Exit code 3 with `unsupported` on stderr: the peer has no such variant.
    Unsupported,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Start(e) => write!(f, "failed to start: {e}"),
            RunError::TimedOut(limit) => write!(f, "timed out after {}", secs(*limit)),
            RunError::Exited { status, stderr } => {
                match (status.code(), status.signal()) {
                    (_, Some(signal)) => write!(f, "crashed (signal {signal})")?,
                    (code, _) => write!(f, "failed (exit {})", code.unwrap_or(-1))?,
                }
                // The first line is where runtimes put the error itself; a
                // backtrace, if any, follows it.
                let first = stderr.lines().find(|l| !l.trim().is_empty());
                if let Some(first) = first {
                    write!(f, ": {}", shorten(first.trim(), 60))?;
                }
                Ok(())
            }
            RunError::Unsupported => write!(f, "n/a"),
        }
    }
}

/// A time limit as it is written in a table cell: `60 s`, `0.2 s`.
pub fn secs(limit: Duration) -> String {
    format!("{} s", limit.as_secs_f64())
}

/// The exit code with which a peer says it does not support a variant.
pub const EXIT_UNSUPPORTED: i32 = 3;

/// Runs `cmd` with stdin closed, killing it after `timeout`; returns its stdout
/// when it exits successfully.
pub fn run(cmd: &mut Command, timeout: Duration) -> Result<String, RunError> {
    run_capturing(cmd, timeout).map(|(stdout, _)| stdout)
}

/// [`run`], returning what the program printed on stderr too (a peer may say
/// there why it did less than it was asked).
pub fn run_capturing(cmd: &mut Command, timeout: Duration) -> Result<(String, String), RunError> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(RunError::Start)?;
    // Both pipes are drained while the child runs, so that it never blocks on a
    // full pipe.
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(RunError::Start)? {
            break status;
        }
        if Instant::now() >= deadline {
            kill_tree(child.id());
            // Killing can only fail if the child already exited; either way it is
            // gone once `wait` returns. The reader threads are left to finish
            // whenever the pipes close.
            let _ = child.kill();
            let _ = child.wait();
            return Err(RunError::TimedOut(timeout));
        }
        thread::sleep(POLL);
    };
    // A process the peer left behind may hold its pipes open: its output is
    // waited for only until the deadline.
    let collect = |reader: Option<thread::JoinHandle<String>>| {
        let Some(reader) = reader else {
            return Ok(String::new());
        };
        while !reader.is_finished() {
            if Instant::now() >= deadline {
                return Err(RunError::TimedOut(timeout));
            }
            thread::sleep(POLL);
        }
        Ok(reader.join().unwrap_or_default())
    };
    let (stdout, stderr) = (collect(stdout)?, collect(stderr)?);
    if status.success() {
        return Ok((stdout, stderr));
    }
    if status.code() == Some(EXIT_UNSUPPORTED) && stderr.contains("unsupported") {
        return Err(RunError::Unsupported);
    }
    Err(RunError::Exited { status, stderr })
}

/// How often a running peer is looked at.
const POLL: Duration = Duration::from_millis(10);

/// Kills every process descended from `pid` (the JVM that the `jruby` script
/// starts without `exec`, a server a peer forked), so that none of them goes on
/// loading the machine under the next runs. The tree is read from /proc while
/// `pid`, still running, holds it together.
pub(super) fn kill_tree(pid: u32) {
    let parents = parents();
    let mut tree = vec![pid];
    let mut i = 0;
    while let Some(&parent) = tree.get(i) {
        tree.extend(
            parents
                .iter()
                .filter(|&&(_, p)| p == parent)
                .map(|&(child, _)| child),
        );
        i += 1;
    }
    for &descendant in &tree[1..] {
        let Ok(descendant) = libc::pid_t::try_from(descendant) else {
            continue;
        };
        // SAFETY: kill(2) takes plain integers and touches no memory of ours;
        // a process that has already exited makes it fail harmlessly.
        unsafe { libc::kill(descendant, libc::SIGKILL) };
    }
}

/// Every process on the machine with its parent, from `/proc/<pid>/stat`
/// (`pid (comm) state ppid …`, where `comm` may hold spaces and parentheses).
fn parents() -> Vec<(u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let after_comm = &stat[stat.rfind(')')? + 1..];
            let ppid = after_comm.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// Reads `pipe` to its end on a thread of its own.
pub(super) fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        // A read error leaves what was read so far, which is all there is to show.
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    const LIMIT: Duration = Duration::from_secs(10);

    #[test]
    fn returns_stdout_on_success() {
        assert_eq!(
            run(&mut sh("echo switches=4"), LIMIT).unwrap(),
            "switches=4\n"
        );
    }

    #[test]
    fn captures_stderr_on_success() {
        let (out, err) = run_capturing(&mut sh("echo n=1; echo stopped >&2"), LIMIT).unwrap();
        assert_eq!((out.as_str(), err.as_str()), ("n=1\n", "stopped\n"));
    }

    #[test]
    fn recognises_an_unsupported_variant() {
        let err = run(&mut sh("echo unsupported >&2; exit 3"), LIMIT).unwrap_err();
        assert!(matches!(err, RunError::Unsupported), "{err}");
    }

    #[test]
    fn reports_exit_code_and_first_stderr_line() {
        let err = run(&mut sh("echo; echo one >&2; echo two >&2; exit 1"), LIMIT).unwrap_err();
        assert_eq!(err.to_string(), "failed (exit 1): one");
    }

    #[test]
    fn reports_a_crash() {
        let err = run(&mut sh("kill -SEGV $$"), LIMIT).unwrap_err();
        assert_eq!(err.to_string(), "crashed (signal 11)");
    }

    #[test]
    fn kills_a_peer_that_runs_too_long() {
        let err = run(&mut sh("exec sleep 5"), Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, RunError::TimedOut(_)), "{err}");
        assert_eq!(err.to_string(), "timed out after 0.1 s");
    }

    /// Whether the process `pid` is gone (or dead and waiting to be reaped).
    fn gone(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            let state = stat.rsplit(')').next().unwrap_or("");
            state.trim().starts_with('Z')
        })
    }

    #[test]
    fn kills_the_processes_a_hung_peer_started() {
        let dir = std::env::temp_dir().join(format!("fibra-bench-tree-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let err = run(&mut sh(&script), Duration::from_millis(300)).unwrap_err();
        assert!(matches!(err, RunError::TimedOut(_)), "{err}");
        let pid: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(pid) && Instant::now() < deadline {
            thread::sleep(POLL);
        }
        assert!(gone(pid), "the peer's child {pid} outlived it");
    }

    #[test]
    fn does_not_wait_for_a_process_left_holding_the_output() {
        let started = Instant::now();
        let err = run(
            &mut sh("sleep 5 & echo switches=1"),
            Duration::from_millis(300),
        );
        assert!(matches!(err, Err(RunError::TimedOut(_))), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(4));
    }
}

//! Runs one peer process with a time limit and collects what it printed.

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
            RunError::TimedOut(limit) => write!(f, "timed out after {} s", limit.as_secs()),
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

/// The exit code with which a peer says it does not support a variant.
const EXIT_UNSUPPORTED: i32 = 3;

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
            // Killing can only fail if the child already exited; either way it is
            // gone once `wait` returns. The reader threads are left to finish
            // whenever the pipes close.
            let _ = child.kill();
            let _ = child.wait();
            return Err(RunError::TimedOut(timeout));
        }
        thread::sleep(Duration::from_millis(10));
    };
    let collect = |h: Option<thread::JoinHandle<String>>| {
        h.map(|h| h.join().unwrap_or_default()).unwrap_or_default()
    };
    let (stdout, stderr) = (collect(stdout), collect(stderr));
    if status.success() {
        return Ok((stdout, stderr));
    }
    if status.code() == Some(EXIT_UNSUPPORTED) && stderr.contains("unsupported") {
        return Err(RunError::Unsupported);
    }
    Err(RunError::Exited { status, stderr })
}

/// Reads `pipe` to its end on a thread of its own.
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
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
    }
}

//! A job runner: every few seconds it runs each command of a jobs file as a
//! child process, all at once, and appends what each printed to a log file;
//! `SIGHUP` makes it read the jobs file again, `SIGTERM` or `SIGINT` makes it
//! stop after the round under way. Files ([`fibra::fs`]), children
//! ([`fibra::process`]) and signals ([`fibra::signal`]) on one runtime, each
//! wait parking only its own green thread.
//!
//! ```sh
//! printf 'date\nuptime\n' > jobs.txt
//! cargo run -p fibra --example job_runner -- jobs.txt log.txt  # until Ctrl-C
//! kill -HUP <pid>                                              # re-reads jobs.txt
//! cargo run -p fibra --example job_runner -- --demo            # two rounds, then exits
//! ```

use fibra::process::Command;
use fibra::signal::{self, Signal};
use fibra::sync::channel::{self, RecvTimeoutError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match &args[..] {
        [demo] if demo == "--demo" => {
            print!("{}", fibra::run(self::demo)?);
            Ok(())
        }
        [jobs, log] => {
            let (jobs, log) = (PathBuf::from(jobs), PathBuf::from(log));
            fibra::run(move || supervise(&jobs, &log, Duration::from_secs(5), |_| Ok(())))
        }
        _ => {
            eprintln!("usage: job_runner JOBS_FILE LOG_FILE, or job_runner --demo");
            std::process::exit(2)
        }
    }
}

/// Runs the jobs of `jobs` every `every`, logging to `log`, until `SIGTERM`
/// or `SIGINT`; `SIGHUP` re-reads `jobs`. `after_round` is called with the
/// number of each round once its lines are in the log.
fn supervise(
    jobs: &Path,
    log: &Path,
    every: Duration,
    mut after_round: impl FnMut(u32) -> io::Result<()>,
) -> io::Result<()> {
    let signals = signal::listen(&[Signal::Term, Signal::Int, Signal::Hup])?;
    // A green thread waits for signals and tells the loop, which waits for
    // them and for its next round at once.
    let (tell, told) = channel::unbounded();
    fibra::spawn(move || {
        for signal in &signals {
            if tell.send(signal).is_err() {
                break;
            }
        }
    });
    let mut commands = read_jobs(jobs)?;
    for round in 1.. {
        run_round(round, &commands, log)?;
        after_round(round)?;
        match told.recv_timeout(every) {
            Ok(Signal::Hup) => {
                commands = read_jobs(jobs)?;
                append(log, &format!("reloaded {} jobs\n", commands.len()))?;
            }
            Ok(signal) => {
                append(log, &format!("stopping on {signal}\n"))?;
                break;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(())
}

/// The commands of a jobs file: one per line, blank lines and `#` comments
/// left out.
fn read_jobs(path: &Path) -> io::Result<Vec<String>> {
    let text = fibra::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(String::from)
        .collect())
}

/// Runs every command at once, each on a green thread of its own that waits
/// for its child, and logs their outcomes in the jobs file's order.
fn run_round(round: u32, commands: &[String], log: &Path) -> io::Result<()> {
    let outcomes: Vec<io::Result<String>> = fibra::scope(|s| {
        let running: Vec<_> = commands
            .iter()
            .map(|command| s.spawn(move || run_job(command)))
            .collect();
        running.into_iter().map(|job| job.join().unwrap()).collect()
    });
    let mut lines = String::new();
    for (n, (command, outcome)) in commands.iter().zip(outcomes).enumerate() {
        let outcome = outcome.unwrap_or_else(|err| format!("did not run: {err}"));
        lines += &format!("round {round} job {} ({command}): {outcome}\n", n + 1);
    }
    append(log, &lines)
}

/// Runs one command with `sh -c` and says how it went.
fn run_job(command: &str) -> io::Result<String> {
    let output = Command::new("sh").arg("-c").arg(command).output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    Ok(format!(
        "{}, printed {:?}",
        output.status,
        stdout.trim_end()
    ))
}

fn append(log: &Path, text: &str) -> io::Result<()> {
    let mut file = fibra::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    file.write_all(text.as_bytes())
}

/// Two rounds in a directory of its own: after the first, the jobs file is
/// changed and the runner sent `SIGHUP` (by a child process, `sh`'s `kill`);
/// after the second, `SIGTERM`. Returns the log.
fn demo() -> io::Result<String> {
    let dir = std::env::temp_dir().join(format!("fibra-job-runner-{}", std::process::id()));
    fibra::fs::create_dir_all(&dir)?;
    let (jobs, log) = (dir.join("jobs.txt"), dir.join("log.txt"));
    fibra::fs::write(&jobs, "echo hello\n# a comment\nsleep 0.1; exit 3\n")?;
    let signal_me = |name: &str| -> io::Result<()> {
        let kill = format!("kill -{name} {}", std::process::id());
        let status = Command::new("sh").arg("-c").arg(kill).status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("{status}")))
        }
    };
    // Rounds come only from signals: the interval is longer than a demo.
    supervise(
        &jobs,
        &log,
        Duration::from_secs(3600),
        |round| match round {
            1 => {
                fibra::fs::write(&jobs, "echo reloaded\n")?;
                signal_me("HUP")
            }
            _ => signal_me("TERM"),
        },
    )?;
    let text = fibra::fs::read_to_string(&log)?;
    fibra::fs::remove_dir_all(&dir)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_rounds_a_reload_and_a_stop() {
        let log = fibra::run(super::demo).expect("the demo runs");
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(
            lines,
            [
                "round 1 job 1 (echo hello): exit status: 0, printed \"hello\"",
                "round 1 job 2 (sleep 0.1; exit 3): exit status: 3, printed \"\"",
                "reloaded 1 jobs",
                "round 2 job 1 (echo reloaded): exit status: 0, printed \"reloaded\"",
                "stopping on SIGTERM",
            ],
            "{log}"
        );
    }
}

//! A peer that serves instead of measuring: it listens on a port of its own
//! choosing, says which in one line on stdout (`listening on 127.0.0.1:PORT`),
//! and serves until it is killed, while a client (`ab`, `wrk`, fibra-bench's
//! own) measures it from outside.

use super::process::{self, RunError};
use super::protocol::Unparseable;
use super::protocol::shorten;
use std::io::{self, BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server that broke a client's request off is given to finish
/// exiting, so that its exit, not the broken connection, is what is reported.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// A running server; killed when dropped.
pub struct Serving {
    process: Process,
    addr: SocketAddr,
}

impl Serving {
    /// Starts `cmd` and waits at most `timeout` for its `listening on` line.
    ///
    /// # Errors
    ///
    /// The text for the table cell: it failed to start, exited (how, and the
    /// first line of its stderr), printed something else, or said nothing in
    /// time.
    pub fn start(cmd: &mut Command, timeout: Duration) -> Result<Serving, String> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| RunError::Start(e).to_string())?;
        let first_line = first_line(child.stdout.take().expect("stdout is piped"));
        let mut process = Process {
            stderr: child.stderr.take().map(process::drain),
            child,
            exit: None,
        };
        let line = match first_line.recv_timeout(timeout) {
            Ok(line) if !line.is_empty() => line,
            Ok(_) | Err(RecvTimeoutError::Disconnected) => {
                return Err(process
                    .exited(EXIT_GRACE)
                    .unwrap_or_else(|| "server closed its stdout without a word".into()));
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "server did not say where it listens within {}",
                    process::secs(timeout)
                ));
            }
        };
        let addr = parse_line(&line)
            .ok_or_else(|| format!("server {}", Unparseable(shorten(line.trim(), 60))))?;
        Ok(Serving { process, addr })
    }

    /// The server's process id: where its CPU time is read
    /// ([`crate::cpu::of_process`]).
    pub fn pid(&self) -> u32 {
        self.process.child.id()
    }

    /// Runs the client `f` against the server. When `f` fails because the
    /// server exited meanwhile, the error says how the server exited, not how
    /// its connection broke; once it has exited, every later call fails so at
    /// once.
    pub fn run<T>(&mut self, f: impl FnOnce(SocketAddr) -> Result<T, String>) -> Result<T, String> {
        if let Some(exit) = self.process.exited(Duration::ZERO) {
            return Err(exit);
        }
        f(self.addr).map_err(|why| self.process.exited(EXIT_GRACE).unwrap_or(why))
    }
}

/// `listening on 127.0.0.1:PORT` → the address.
fn parse_line(line: &str) -> Option<SocketAddr> {
    line.trim_end().strip_prefix("listening on ")?.parse().ok()
}

/// Reads `stdout` on a thread of its own: its first line (empty if there is
/// none) is sent on the channel returned, and the rest is read and dropped, so
/// that the server never blocks on a full pipe.
fn first_line(stdout: ChildStdout) -> mpsc::Receiver<String> {
    let (line_tx, line_rx) = mpsc::channel();
    thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        // A read error leaves the line as far as it got, which is all there is.
        let _ = reader.read_until(b'\n', &mut line);
        // The receiver is gone once the server was given up on.
        let _ = line_tx.send(String::from_utf8_lossy(&line).into_owned());
        let _ = io::copy(&mut reader, &mut io::sink());
    });
    line_rx
}

/// The server's process, killed when dropped.
struct Process {
    child: Child,
    /// Reads stderr to its end, for the first line of an error.
    stderr: Option<thread::JoinHandle<String>>,
    /// How it exited, once it has.
    exit: Option<String>,
}

impl Process {
    /// How the process exited, if it has or does within `grace`.
    fn exited(&mut self, grace: Duration) -> Option<String> {
        if self.exit.is_none() {
            let deadline = Instant::now() + grace;
            let status = loop {
                match self.child.try_wait() {
                    Ok(Some(status)) => break status,
                    Ok(None) if Instant::now() < deadline => {
                        thread::sleep(Duration::from_millis(10));
                    }
                    // Still running (or not to be waited for, which comes to
                    // the same for the caller).
                    _ => return None,
                }
            };
            let stderr = self
                .stderr
                .take()
                .map(|h| h.join().unwrap_or_default())
                .unwrap_or_default();
            self.exit = Some(format!("server {}", RunError::Exited { status, stderr }));
        }
        self.exit.clone()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // What it started goes first, while the server still holds its tree
        // together. Killing fails only if the server has exited already;
        // either way it is gone once `wait` returns.
        process::kill_tree(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
    fn parses_the_listening_line() {
        assert_eq!(
            parse_line("listening on 127.0.0.1:8080\n"),
            Some(SocketAddr::from(([127, 0, 0, 1], 8080)))
        );
        assert_eq!(parse_line("listening on port 8080"), None);
        assert_eq!(parse_line("Listening on 127.0.0.1:8080"), None);
    }

    #[test]
    fn reads_the_address_and_kills_the_server() {
        let mut server = Serving::start(
            &mut sh("echo listening on 127.0.0.1:9; exec sleep 30"),
            LIMIT,
        )
        .unwrap();
        assert_eq!(server.addr.port(), 9);
        assert_eq!(server.run(|addr| Ok(addr.port())), Ok(9));
        let pid = server.pid();
        assert!(crate::cpu::of_process(pid).is_ok());
        drop(server);
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "the server is gone"
        );
    }

    /// Whether the process `pid` has ended (a zombie counts: its parent, killed
    /// too, can no longer reap it, init will).
    fn ended(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z'),
            Err(_) => true,
        }
    }

    #[test]
    fn kills_what_the_server_started() {
        let pid_file =
            std::env::temp_dir().join(format!("fibra-bench-serving-{}", std::process::id()));
        let script = format!(
            "sleep 30 & echo $! > {}; echo listening on 127.0.0.1:9; wait",
            pid_file.display()
        );
        let server = Serving::start(&mut sh(&script), LIMIT).unwrap();
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let _ = std::fs::remove_file(&pid_file);
        assert!(!ended(pid.trim()));
        drop(server);
        let deadline = Instant::now() + LIMIT;
        while !ended(pid.trim()) {
            assert!(Instant::now() < deadline, "the server's child lives on");
            thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn reports_a_server_that_exits_before_listening() {
        let err = Serving::start(&mut sh("echo bind: in use >&2; exit 1"), LIMIT)
            .err()
            .unwrap();
        assert_eq!(err, "server failed (exit 1): bind: in use");
    }

    #[test]
    fn reports_a_server_that_says_something_else() {
        let err = Serving::start(&mut sh("echo ready; exec sleep 30"), LIMIT)
            .err()
            .unwrap();
        assert_eq!(err, r#"server unparseable output: "ready""#);
    }

    #[test]
    fn gives_up_on_a_server_that_says_nothing() {
        let err = Serving::start(&mut sh("exec sleep 30"), Duration::from_millis(100))
            .err()
            .unwrap();
        assert_eq!(err, "server did not say where it listens within 0.1 s");
    }

    #[test]
    fn a_server_that_dies_is_the_error_of_every_later_run() {
        let mut server = Serving::start(
            &mut sh("echo listening on 127.0.0.1:9; sleep 0.2; kill -KILL $$"),
            LIMIT,
        )
        .unwrap();
        thread::sleep(Duration::from_millis(400));
        let first: Result<(), String> = server.run(|_| Err("connection reset".into()));
        assert_eq!(first, Err("server crashed (signal 9)".into()));
        assert_eq!(
            server.run(|_| Ok(())),
            Err("server crashed (signal 9)".into())
        );
    }
}

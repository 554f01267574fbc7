//! Child processes for green threads, shaped like [`std::process`]: a
//! [`Command`] builder, and a [`Child`] whose [`wait`](Child::wait) and piped
//! stdin, stdout and stderr park only the calling green thread.
//!
//! ```
//! use fibra::process::{Command, Stdio};
//! use std::io::{Read, Write};
//!
//! fibra::run(|| {
//!     // Run a program to its end and collect what it printed.
//!     let output = Command::new("sh").args(["-c", "echo hi; exit 3"]).output().unwrap();
//!     assert_eq!(output.stdout, b"hi\n");
//!     assert_eq!(output.status.code(), Some(3));
//!
//!     // Talk to it through pipes while it runs.
//!     let mut child = Command::new("cat")
//!         .stdin(Stdio::piped())
//!         .stdout(Stdio::piped())
//!         .spawn()
//!         .unwrap();
//!     let mut stdin = child.stdin.take().unwrap();
//!     let writer = fibra::spawn(move || stdin.write_all(b"echo").unwrap()); // then closes it
//!     let mut echoed = String::new();
//!     child.stdout.take().unwrap().read_to_string(&mut echoed).unwrap();
//!     writer.join().unwrap();
//!     assert_eq!(echoed, "echo");
//!     assert!(child.wait().unwrap().success());
//! });
//! ```
//!
//! A pipe of one child becomes another's stdio with `Stdio::try_from`
//! (blocking again, as the other program expects): `a | b` is
//! `Command::new("b").stdin(Stdio::try_from(a.stdout.take().unwrap())?)`.
//!
//! [`ExitStatus`], [`Output`] and [`Stdio`] are `std`'s own, re-exported: a
//! status says its code with [`ExitStatus::code`], and the signal that killed
//! the child with `std`'s `ExitStatusExt::signal`.
//!
//! **The doors.** Starting a program (`fork`/`exec`, through `std`) happens
//! on the calling OS thread, which waits until the kernel has started the
//! program (`std` learns of a failed `exec` that way); the child then runs
//! on its own. Waiting for it parks only the calling green thread: on Linux
//! a *pidfd* (`pidfd_open`, Linux 5.3) is registered with the runtime's
//! reactor, which reports the child's exit like a socket's readiness — no
//! thread, no signal handler. Where the kernel has none (macOS, older Linux, a sandbox that
//! refuses the call) a thread of the [`blocking`](crate::blocking()) pool
//! waits for the exit (`waitid` with `WNOWAIT`), one per child waited for,
//! and the green thread reaps the child when woken; fibra installs no
//! SIGCHLD handler, so the program's own keeps working. The pipes are
//! registered with the reactor, as sockets are.
//!
//! **Killing and dropping a child** behave as `std`'s do: [`Child::kill`]
//! sends SIGKILL (and is `Ok` if the child has already been reaped), and
//! dropping a [`Child`] neither kills it nor waits for it. A child that has
//! exited stays a *zombie* — an entry in the kernel's process table, holding
//! its exit status — until it is waited for: a program that starts many
//! children should [`wait`](Child::wait) for each (or [`try_wait`](Child::try_wait)
//! now and then), as with `std`. Dropping a `ChildStdin` closes the pipe,
//! which the child reads as the end of its input.
//!
//! A `Child` and its pipes belong to the runtime of the OS thread that
//! spawned it (they are neither `Send` nor `Sync`).

mod pipe;
mod sys;

pub use pipe::{ChildStderr, ChildStdin, ChildStdout};
pub use std::process::{ExitStatus, Output, Stdio};

use crate::runtime::JoinError;
use crate::runtime::scheduler;
use std::ffi::OsStr;
use std::io::{self, Read};
use std::panic;
use std::path::Path;

/// A process builder (as [`std::process::Command`]): program, arguments,
/// environment, working directory and stdio, then [`spawn`](Command::spawn),
/// [`output`](Command::output) or [`status`](Command::status), which park
/// only the calling green thread while they wait.
///
/// By default, as with `std`: `spawn` and `status` let the child inherit
/// stdin, stdout and stderr; `output` gives it an empty stdin and captures
/// its stdout and stderr, for the streams not set with
/// [`stdin`](Command::stdin), [`stdout`](Command::stdout) or
/// [`stderr`](Command::stderr).
pub struct Command {
    std: std::process::Command,
    /// Whether stdin, stdout and stderr were set: `output` gives the others
    /// its own defaults.
    set: [bool; 3],
}

impl Command {
    /// A command that runs `program` (looked up on `PATH` if it is not a
    /// path), with no arguments, this process's environment and working
    /// directory.
    pub fn new(program: impl AsRef<OsStr>) -> Command {
        Command {
            std: std::process::Command::new(program),
            set: [false; 3],
        }
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Command {
        self.std.env(key, value);
        self
    }

    /// Sets environment variables for the child.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Removes an environment variable from the child's environment.
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Gives the child an empty environment (then [`env`](Command::env) adds
    /// to it).
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// Sets the child's working directory.
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// Sets the child's stdin: [`Stdio::piped`] for a [`ChildStdin`] to
    /// write to, [`Stdio::null`], [`Stdio::inherit`], or a file.
    pub fn stdin(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stdin(cfg);
        self.set[0] = true;
        self
    }

    /// Sets the child's stdout: [`Stdio::piped`] for a [`ChildStdout`] to
    /// read from, [`Stdio::null`], [`Stdio::inherit`], or a file.
    pub fn stdout(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stdout(cfg);
        self.set[1] = true;
        self
    }

    /// Sets the child's stderr, as [`stdout`](Command::stdout).
    pub fn stderr(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stderr(cfg);
        self.set[2] = true;
        self
    }

    /// The `std` command inside, to read back what was set
    /// ([`get_program`](std::process::Command::get_program),
    /// [`get_args`](std::process::Command::get_args), …).
    pub fn as_std(&self) -> &std::process::Command {
        &self.std
    }

    /// The `std` command inside, for what this type does not wrap: the Unix
    /// options of `std::os::unix::process::CommandExt` (`process_group`,
    /// `uid`, `pre_exec`, …). Set stdin, stdout and stderr through this
    /// `Command`, not there: [`output`](Command::output) would replace them
    /// with its defaults.
    pub fn as_std_mut(&mut self) -> &mut std::process::Command {
        &mut self.std
    }

    /// Starts the program and returns its [`Child`], with the pipes asked
    /// for.
    ///
    /// # Errors
    ///
    /// The program could not be started (not found, not executable).
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    #[track_caller]
    pub fn spawn(&mut self) -> io::Result<Child> {
        // A child belongs to a runtime, as a socket does: said before it
        // starts, piped or not, rather than at its first wait.
        scheduler::current_for("fibra::process::Command::spawn");
        Child::from_std(self.std.spawn()?)
    }

    /// Runs the program to its end and returns its exit status with what it
    /// wrote to stdout and stderr (captured unless set otherwise), parking
    /// only the calling green thread. The two pipes are read at the same
    /// time, so a child that fills one while fibra reads the other does not
    /// deadlock.
    ///
    /// # Errors
    ///
    /// The program could not be started, or reading its output failed.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    #[track_caller]
    pub fn output(&mut self) -> io::Result<Output> {
        let [stdin, stdout, stderr] = self.set.map(|set| !set);
        if stdin {
            self.std.stdin(Stdio::null());
        }
        if stdout {
            self.std.stdout(Stdio::piped());
        }
        if stderr {
            self.std.stderr(Stdio::piped());
        }
        let child = self.spawn();
        // Back to what `spawn` and `status` do with a stream not set.
        if stdin {
            self.std.stdin(Stdio::inherit());
        }
        if stdout {
            self.std.stdout(Stdio::inherit());
        }
        if stderr {
            self.std.stderr(Stdio::inherit());
        }
        child?.wait_with_output()
    }

    /// Runs the program to its end (stdio inherited unless set) and returns
    /// its exit status, parking only the calling green thread.
    ///
    /// # Errors
    ///
    /// The program could not be started.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    #[track_caller]
    pub fn status(&mut self) -> io::Result<ExitStatus> {
        self.spawn()?.wait()
    }
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.std.fmt(f)
    }
}

/// A running (or exited, not yet waited for) child process (as
/// [`std::process::Child`]), with the pipes its [`Command`] asked for.
///
/// Dropping it neither kills the child nor waits for it: see the [module
/// docs](self) about zombies.
#[derive(Debug)]
pub struct Child {
    /// The child's stdin, if it was [piped](Stdio::piped).
    pub stdin: Option<ChildStdin>,
    /// The child's stdout, if it was [piped](Stdio::piped).
    pub stdout: Option<ChildStdout>,
    /// The child's stderr, if it was [piped](Stdio::piped).
    pub stderr: Option<ChildStderr>,
    std: std::process::Child,
}

impl Child {
    /// Takes over a child spawned by `std`, registering its pipes with the
    /// calling thread's runtime.
    fn from_std(mut child: std::process::Child) -> io::Result<Child> {
        Ok(Child {
            stdin: child.stdin.take().map(ChildStdin::new).transpose()?,
            stdout: child.stdout.take().map(ChildStdout::new).transpose()?,
            stderr: child.stderr.take().map(ChildStderr::new).transpose()?,
            std: child,
        })
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.std.id()
    }

    /// Kills the child (SIGKILL), as [`std::process::Child::kill`]; `Ok` if
    /// it has already exited and been waited for. It does not wait: call
    /// [`wait`](Child::wait) for the status, and to reap it.
    ///
    /// ```
    /// use fibra::process::Command;
    /// use std::os::unix::process::ExitStatusExt;
    ///
    /// fibra::run(|| {
    ///     let mut child = Command::new("sleep").arg("60").spawn().unwrap();
    ///     child.kill().unwrap();
    ///     let status = child.wait().unwrap();
    ///     assert_eq!(status.signal(), Some(9)); // SIGKILL
    /// });
    /// ```
    ///
    /// # Errors
    ///
    /// The kernel's error sending the signal.
    pub fn kill(&mut self) -> io::Result<()> {
        self.std.kill()
    }

    /// The child's exit status if it has exited (reaping it), `None` if it
    /// still runs; never waits.
    ///
    /// # Errors
    ///
    /// The kernel's error (the child was reaped by someone else, say).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.std.try_wait()
    }

    /// Parks the calling green thread until the child exits, and returns its
    /// status (the same one again on later calls). Closes the child's stdin
    /// first, if it is piped, so that a child that reads to the end of its
    /// input can end, as `std` does.
    ///
    /// # Errors
    ///
    /// The kernel's error (the child was reaped by someone else, say).
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        sys::wait(&mut self.std)
    }

    /// Closes stdin, reads stdout and stderr to their ends (at the same
    /// time, so that neither pipe can fill up while the other is read), waits
    /// for the child to exit, and returns all three, as `std`'s does. Pipes
    /// already taken out of the `Child` give empty output.
    ///
    /// # Errors
    ///
    /// Reading a pipe or waiting failed.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    pub fn wait_with_output(mut self) -> io::Result<Output> {
        drop(self.stdin.take());
        let (stdout, stderr) = match (self.stdout.take(), self.stderr.take()) {
            (None, None) => (Vec::new(), Vec::new()),
            (Some(out), None) => (read_all(out)?, Vec::new()),
            (None, Some(err)) => (Vec::new(), read_all(err)?),
            (Some(out), Some(err)) => {
                // The other pipe is read by a green thread of its own.
                let stderr = crate::spawn(move || read_all(err));
                let stdout = read_all(out)?;
                let stderr = stderr.join().unwrap_or_else(|err| match err {
                    JoinError::Panicked(payload) => panic::resume_unwind(payload),
                    JoinError::Cancelled => Err(io::Error::other(
                        "the green thread reading the child's stderr was cancelled",
                    )),
                })?;
                (stdout, stderr)
            }
        };
        let status = self.wait()?;
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }
}

/// Everything left in a pipe, up to its end.
fn read_all(mut pipe: impl Read) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    pipe.read_to_end(&mut bytes)?;
    Ok(bytes)
}

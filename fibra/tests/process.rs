//! Child processes from green threads: waiting for a child, and reading and
//! writing its pipes, park only the green thread that does it.

#[path = "support/without_hanging.rs"]
mod hang;
#[path = "support/ticking.rs"]
mod ticking;

use fibra::process::{Command, Stdio};
use fibra::time::{sleep, timeout};
use hang::without_hanging;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;
use ticking::Ticker;

#[test]
fn output_of_a_child_that_sleeps_parks_only_its_green_thread() {
    fibra::run(|| {
        let ticker = Ticker::start();
        let before = ticker.count();
        let output = Command::new("sh")
            .args(["-c", "sleep 0.3; echo hi"])
            .output()
            .unwrap();
        let during = ticker.count() - before;
        ticker.stop();
        assert!(output.status.success());
        assert_eq!(output.stdout, b"hi\n");
        assert!(output.stderr.is_empty());
        // Had `output` held the OS thread, the ticker could not have run.
        assert!(during > 0, "the ticker did not tick while the child ran");
        println!("the ticker ticked {during} times while the child slept");
    });
}

/// The child ends only once another green thread has written to it, so
/// the waiting green thread must have let the writer run: a stalled runtime
/// hangs here (and the guard fails the test) instead of counting too few.
#[test]
fn a_child_that_waits_for_another_green_thread_ends() {
    without_hanging("a child fed by another green thread", || {
        fibra::run(|| {
            let mut child = Command::new("sh")
                .args(["-c", "read line; echo \"got $line\""])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let feeder = fibra::spawn(move || {
                for _ in 0..3 {
                    sleep(Duration::from_millis(1));
                }
                stdin.write_all(b"go\n").unwrap();
            });
            let output = child.wait_with_output().unwrap();
            feeder.join().unwrap();
            assert!(output.status.success());
            assert_eq!(output.stdout, b"got go\n");
        });
    });
}

#[test]
fn status_of_a_child_that_sleeps_parks_only_its_green_thread() {
    fibra::run(|| {
        let ticker = Ticker::start();
        let before = ticker.count();
        let status = Command::new("sleep").arg("0.3").status().unwrap();
        let during = ticker.count() - before;
        ticker.stop();
        assert!(status.success());
        assert!(during > 0, "the ticker did not tick while the child ran");
    });
}

/// As above, for `wait` alone (no pipe to read meanwhile): the child exits
/// only once another green thread has written to it.
#[test]
fn a_wait_for_a_child_fed_by_another_green_thread_ends() {
    without_hanging("a wait for a child fed by another green thread", || {
        fibra::run(|| {
            let mut child = Command::new("sh")
                .args(["-c", "read code; exit $code"])
                .stdin(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let feeder = fibra::spawn(move || {
                for _ in 0..3 {
                    sleep(Duration::from_millis(1));
                }
                stdin.write_all(b"5\n").unwrap();
            });
            assert_eq!(child.wait().unwrap().code(), Some(5));
            feeder.join().unwrap();
        });
    });
}

#[test]
fn exit_codes_and_signals_are_in_the_exit_status() {
    fibra::run(|| {
        let status = Command::new("true").status().unwrap();
        assert!(status.success());
        assert_eq!(status.code(), Some(0));

        let status = Command::new("sh").args(["-c", "exit 7"]).status().unwrap();
        assert!(!status.success());
        assert_eq!(status.code(), Some(7));
        assert_eq!(status.signal(), None);

        let status = Command::new("sh")
            .args(["-c", "kill -TERM $$"])
            .status()
            .unwrap();
        assert_eq!(status.code(), None);
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    });
}

#[test]
fn a_large_payload_goes_through_cat_without_deadlock() {
    const LEN: usize = 8 << 20;
    without_hanging("8 MiB through cat", || {
        fibra::run(|| {
            let payload: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
            let mut child = Command::new("cat")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            // One green thread writes while another reads: either alone
            // would fill a pipe (64 KiB) and wait for the other for good.
            let mut stdin = child.stdin.take().unwrap();
            let writer = {
                let payload = payload.clone();
                fibra::spawn(move || stdin.write_all(&payload).unwrap())
            };
            let mut echoed = Vec::with_capacity(LEN);
            child
                .stdout
                .take()
                .unwrap()
                .read_to_end(&mut echoed)
                .unwrap();
            writer.join().unwrap();
            assert!(echoed == payload, "cat gave back what it was given");
            assert!(child.wait().unwrap().success());
        });
    });
}

#[test]
fn output_reads_stdout_and_stderr_at_once() {
    without_hanging("1 MiB on stderr before stdout", || {
        fibra::run(|| {
            // Whoever read stdout to its end first would wait for good: the
            // child blocks on a full stderr before it writes to stdout.
            let output = Command::new("sh")
                .args([
                    "-c",
                    "head -c 1048576 /dev/zero >&2; head -c 1048576 /dev/zero",
                ])
                .output()
                .unwrap();
            assert!(output.status.success());
            assert_eq!(output.stderr.len(), 1 << 20);
            assert_eq!(output.stdout.len(), 1 << 20);
        });
    });
}

#[test]
fn kill_then_wait_reports_the_signal() {
    fibra::run(|| {
        let mut child = Command::new("sleep").arg("60").spawn().unwrap();
        assert!(child.id() > 0);
        assert!(child.try_wait().unwrap().is_none(), "it sleeps");
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // As std's: a later wait gives the same status, and killing a child
        // that has been waited for is not an error.
        assert_eq!(child.wait().unwrap(), status);
        assert_eq!(child.try_wait().unwrap(), Some(status));
        child.kill().unwrap();
    });
}

#[test]
fn a_wait_cut_short_by_a_timeout_can_be_waited_again() {
    fibra::run(|| {
        let mut child = Command::new("sleep").arg("60").spawn().unwrap();
        let waited = timeout(Duration::from_millis(20), || child.wait());
        assert!(waited.is_err(), "the child sleeps for a minute");
        child.kill().unwrap();
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    });
}

#[test]
fn dropping_a_child_neither_kills_it_nor_waits() {
    fibra::run(|| {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 0.1; echo alive"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        drop(child);
        let mut said = String::new();
        stdout.read_to_string(&mut said).unwrap();
        assert_eq!(said, "alive\n");
    });
}

#[test]
fn arguments_environment_and_directory_reach_the_child() {
    fibra::run(|| {
        let output = Command::new("sh")
            .arg("-c")
            .arg("echo \"$1 $FIBRA_TEST_VAR $(pwd) ${HOME-unset}\"")
            .arg("sh")
            .arg("first")
            .env("FIBRA_TEST_VAR", "value")
            .env_remove("HOME")
            .current_dir("/")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            "first value / unset\n"
        );
    });
}

#[test]
fn output_captures_only_what_was_not_set() {
    fibra::run(|| {
        let mut command = Command::new("sh");
        command
            .args(["-c", "echo out; echo err >&2"])
            .stdout(Stdio::null());
        let output = command.output().unwrap();
        assert!(output.stdout.is_empty(), "stdout was set to null");
        assert_eq!(output.stderr, b"err\n");
        // Its stdin is empty, not this process's.
        let output = Command::new("cat").output().unwrap();
        assert!(output.stdout.is_empty());
        assert!(output.status.success());
    });
}

#[test]
fn a_pipe_of_one_child_is_the_stdin_of_another() {
    fibra::run(|| {
        // The writer starts late, so that a reader left non-blocking would
        // find the pipe empty and fail (EAGAIN) instead of waiting.
        let mut first = Command::new("sh")
            .args(["-c", "sleep 0.1; echo hello"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let between = Stdio::try_from(first.stdout.take().unwrap()).unwrap();
        let output = Command::new("tr")
            .args(["a-z", "A-Z"])
            .stdin(between)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        assert_eq!(output.stdout, b"HELLO\n");
        assert!(first.wait().unwrap().success());
    });
}

#[test]
fn a_missing_program_is_an_error() {
    fibra::run(|| {
        match Command::new("fibra-no-such-program").spawn() {
            Err(err) => assert_eq!(err.kind(), ErrorKind::NotFound),
            // Under qemu-user (tests/support/mod.rs) and under valgrind the
            // exec is theirs: it starts, and its child exits 127 as a
            // shell's would.
            Ok(mut child) => assert_eq!(child.wait().unwrap().code(), Some(127)),
        }
    });
}

/// (Through a pidfd: where the kernel gives none, the dump says the pool.)
#[test]
#[cfg(target_os = "linux")]
fn a_dump_names_the_child_a_green_thread_waits_for() {
    fibra::run(|| {
        let mut child = Command::new("sleep").arg("60").spawn().unwrap();
        let pid = child.id();
        let waiter = fibra::runtime::ThreadBuilder::new()
            .name("waiter")
            .spawn(move || child.wait().unwrap())
            .unwrap();
        fibra::runtime::yield_now(); // the waiter parks
        let dump = fibra::runtime::dump().to_string();
        // Valgrind has no pidfd_open (ENOSYS): there the fallback waits.
        assert!(
            dump.contains(&format!(
                "'waiter' (#2): parked on child process {pid} to exit"
            )) || dump.contains("'waiter' (#2): parked on the blocking pool"),
            "{dump}"
        );
        // SAFETY: kill with a valid signal number on the child's pid, which
        // is not reaped (the waiter has not returned).
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) }, 0);
        assert_eq!(waiter.join().unwrap().signal(), Some(libc::SIGKILL));
    });
}

//! What fibra says when something goes wrong: a call outside a runtime points
//! at the caller's line, a deadlock lists where each green thread waits, and a
//! green thread that panics is not reported as a stall. Each case runs in a
//! child process (this test binary again, with an environment variable) whose
//! stderr the parent reads.

mod support;

use fibra::runtime::ThreadBuilder;
use fibra::sync::channel;
use std::io::{BufRead, BufReader};
use std::process::{Output, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

const CHILD: &str = "FIBRA_DIAGNOSTICS_CHILD";

/// Runs the test `child_process` of this binary with `CHILD=which` and `env`.
fn child(which: &str, env: &[(&str, &str)]) -> Output {
    support::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, which)
        .env_remove("FIBRA_STALL_MS")
        .env_remove("RUST_BACKTRACE")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// The line of this file where the child calls `fibra::spawn` outside a
/// runtime (the parent checks the panic points at it).
const SPAWN_LINE: u32 = line!() + 3;

fn spawn_outside_a_runtime() {
    let _ = fibra::spawn(|| ());
}

/// The line where the child waits on a channel outside a runtime.
const RECV_LINE: u32 = line!() + 4;

fn recv_outside_a_runtime() {
    let (_tx, rx) = channel::unbounded::<u32>();
    let _ = rx.recv();
}

/// The line where the child waits for a write lock outside a runtime.
const WRITE_LINE: u32 = line!() + 5;

fn write_lock_outside_a_runtime() {
    let lock = fibra::sync::RwLock::new(0);
    let _reading = lock.read();
    let _ = lock.write();
}

#[inline(never)]
fn waits_for_a_message_nobody_sends(rx: &channel::Receiver<u32>) -> u32 {
    rx.recv().unwrap_or(0)
}

/// Runs the child `which`, which misuses an operation outside a runtime, and
/// checks that its panic names the operation (`message`) and points at the
/// test's own `line`, not at fibra's code.
fn misuse_points_at_the_caller(which: &str, line: u32, message: &str) {
    let out = child(which, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("tests/diagnostics.rs:{line}")),
        "{stderr}"
    );
    assert!(stderr.contains(message), "{stderr}");
}

#[test]
fn spawn_outside_a_runtime_points_at_the_caller() {
    misuse_points_at_the_caller(
        "spawn_outside",
        SPAWN_LINE,
        "fibra::spawn called outside a fibra runtime",
    );
}

#[test]
fn a_channel_receive_outside_a_runtime_points_at_the_caller() {
    misuse_points_at_the_caller(
        "recv_outside",
        RECV_LINE,
        "fibra::sync::channel::Receiver::recv called outside a fibra runtime",
    );
}

#[test]
fn a_lock_wait_outside_a_runtime_points_at_the_caller() {
    misuse_points_at_the_caller(
        "write_outside",
        WRITE_LINE,
        "fibra::sync::RwLock::write called outside a fibra runtime",
    );
}

#[test]
fn a_nested_run_points_at_the_caller() {
    let out = child("nested_run", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("tests/diagnostics.rs:"), "{stderr}");
    assert!(
        stderr.contains("fibra::run called inside a fibra runtime"),
        "{stderr}"
    );
}

#[test]
fn a_deadlock_panic_lists_where_each_thread_waits() {
    let out = child("deadlock", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("fibra: deadlock"), "{stderr}");
    assert!(stderr.contains("green thread 'clerk'"), "{stderr}");
    assert!(stderr.contains("parked on channel receive"), "{stderr}");
    assert!(
        stderr.contains("waits_for_a_message_nobody_sends"),
        "{stderr}"
    );
}

/// Runs the child `which` with no stall setting (the default threshold
/// applies) and returns its stderr up to the first line that contains every
/// one of `wanted`, then kills it; or, if it ends or a minute passes first,
/// all it wrote by then.
// Its callers name Linux system calls, so only Linux builds use it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn child_until(which: &str, wanted: &[&str]) -> String {
    let mut child = support::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, which)
        .env_remove("FIBRA_STALL_MS")
        .env_remove("FIBRA_STDERR")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, seen) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut all = String::new();
    let until = Instant::now() + Duration::from_secs(60);
    while let Ok(line) = seen.recv_timeout(until.saturating_duration_since(Instant::now())) {
        all.push_str(&line);
        all.push('\n');
        if wanted.iter().all(|w| line.contains(w)) {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    all
}

/// Under qemu-user (`FIBRA_TEST_RUNNER`, tests/support/mod.rs) the kernel's
/// `/proc/self/task/TID/syscall` gives the host's system call numbers, which
/// mean other calls on the emulated CPU: the line can only give the number.
#[cfg(target_os = "linux")]
fn under_emulation(line: &str) -> bool {
    std::env::var_os("FIBRA_TEST_RUNNER").is_some_and(|r| !r.is_empty())
        && line.contains("blocked in system call number")
}

/// Runs the child `which` with no stall setting and checks its stall line
/// names green thread `thread` and says its OS thread is in `doing` (or, under
/// emulation, a system call by number).
#[cfg(target_os = "linux")]
fn stall_line_names(which: &str, thread: &str, doing: &str) {
    let stderr = child_until(which, &["without parking or yielding"]);
    let line = stderr
        .lines()
        .find(|l| l.contains("without parking or yielding"))
        .unwrap_or_else(|| panic!("no stall line: {stderr}"));
    assert!(line.contains(&format!("green thread '{thread}'")), "{line}");
    assert!(line.contains(doing) || under_emulation(line), "{line}");
}

#[test]
#[cfg(target_os = "linux")]
fn a_stall_in_std_thread_sleep_is_named_with_no_setting() {
    stall_line_names("std_sleep", "sleeper", "nanosleep (std::thread::sleep?)");
}

#[test]
#[cfg(target_os = "linux")]
fn a_std_mutex_held_across_a_park_is_named_as_a_futex_wait() {
    stall_line_names(
        "std_mutex",
        "second",
        "blocked in futex (a std lock, condvar or channel?)",
    );
}

#[test]
fn a_panicking_thread_printing_its_backtrace_is_not_a_stall() {
    let out = child("panic_with_backtrace", &[("RUST_BACKTRACE", "1")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("stack backtrace"), "{stderr}");
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains("'handler'") && l.contains("without parking or yielding")),
        "{stderr}"
    );
}

/// The child's side of the tests above; does nothing when run as a test.
#[test]
fn child_process() {
    match std::env::var(CHILD).as_deref() {
        Ok("spawn_outside") => spawn_outside_a_runtime(),
        Ok("recv_outside") => recv_outside_a_runtime(),
        Ok("write_outside") => write_lock_outside_a_runtime(),
        Ok("nested_run") => fibra::run(|| fibra::run(|| ())),
        Ok("deadlock") => fibra::run(|| {
            let (tx, rx) = channel::unbounded::<u32>();
            let clerk = ThreadBuilder::new()
                .name("clerk")
                .spawn(move || waits_for_a_message_nobody_sends(&rx))
                .unwrap();
            let _keep = tx;
            let _ = clerk.join();
        }),
        Ok("panic_with_backtrace") => {
            // A threshold well below the time a debug build takes to print
            // a backtrace (hundreds of milliseconds, to symbolize it), as a
            // server's handler panicking would see it.
            fibra::runtime::Builder::new()
                .stall_threshold(Some(std::time::Duration::from_millis(50)))
                .run(|| {
                    let handler = ThreadBuilder::new()
                        .name("handler")
                        .spawn(|| panic!("the handler failed"))
                        .unwrap();
                    assert!(handler.join().is_err());
                })
        }
        Ok("std_sleep") => fibra::run(|| {
            let sleeper = ThreadBuilder::new()
                .name("sleeper")
                .spawn(|| {
                    loop {
                        // Blocks the OS thread: the parent kills this child.
                        std::thread::sleep(Duration::from_secs(1));
                    }
                })
                .unwrap();
            let _ = sleeper.join();
        }),
        Ok("std_mutex") => fibra::run(|| {
            let lock = Arc::new(std::sync::Mutex::new(()));
            let held = lock.clone();
            let first = fibra::spawn(move || {
                let _guard = held.lock().unwrap();
                // Parks holding a std lock: the next thread blocks the OS
                // thread on it, so this one never runs again.
                fibra::time::sleep(Duration::from_millis(10));
            });
            let second = ThreadBuilder::new()
                .name("second")
                .spawn(move || drop(lock.lock().unwrap()))
                .unwrap();
            let _ = (first.join(), second.join());
        }),
        _ => {}
    }
}

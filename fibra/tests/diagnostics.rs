//! What fibra says when something goes wrong: a call outside a runtime points
//! at the caller's line, a deadlock lists where each green thread waits, and a
//! green thread that panics is not reported as a stall. Each case runs in a
//! child process (this test binary again, with an environment variable) whose
//! stderr the parent reads.

mod support;

use fibra::runtime::ThreadBuilder;
use fibra::sync::channel;
use std::process::Output;

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

#[inline(never)]
fn waits_for_a_message_nobody_sends(rx: &channel::Receiver<u32>) -> u32 {
    rx.recv().unwrap_or(0)
}

#[test]
fn spawn_outside_a_runtime_points_at_the_caller() {
    let out = child("spawn_outside", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("tests/diagnostics.rs:{SPAWN_LINE}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("fibra::spawn called outside a fibra runtime"),
        "{stderr}"
    );
}

#[test]
fn a_channel_receive_outside_a_runtime_points_at_the_caller() {
    let out = child("recv_outside", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("tests/diagnostics.rs:{RECV_LINE}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("fibra::sync::channel::Receiver::recv called outside a fibra runtime"),
        "{stderr}"
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
        _ => {}
    }
}

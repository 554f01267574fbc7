//! A stack overflow inside a fiber is reported and aborts the process. The
//! overflowing code runs in a child process (this test binary run again with an
//! environment variable), and the parent checks how the child ended.

mod support;

use fibra::fiber::Builder;
use fibra::{Fiber, Step};
use std::os::unix::process::ExitStatusExt;

const CHILD: &str = "FIBRA_OVERFLOW_CHILD";

#[inline(never)]
fn recurse(n: u64) -> u64 {
    let pad = std::hint::black_box([n; 64]);
    if n == u64::MAX {
        0
    } else {
        1 + recurse(n + 1) + pad[63] - n
    }
}

/// Run as the child: overflow a fiber's stack (or, for the control case, the
/// thread's own stack).
fn child(which: &str) {
    match which {
        "fiber" => {
            let fiber: Fiber<(), (), u64> = Builder::new()
                .stack_size(64 * 1024)
                .build(|_, ()| recurse(0))
                .unwrap();
            let _ = fiber.resume(());
        }
        "fiber-after-switches" => {
            let fiber: Fiber<u64, (), u64> = Fiber::new(|y, mut n: u64| {
                for _ in 0..1000 {
                    n = y.suspend(());
                }
                recurse(n)
            });
            for _ in 0..=1000 {
                let _ = fiber.resume(0);
            }
        }
        "fiber-in-a-later-guard-batch" => {
            // Guards are installed for many slots at once: overflow a stack far
            // past the first batch (chunks of 16, 32, ..., 512 slots: the 801st
            // stack is slot 304 of the 512-slot chunk, in its second batch).
            let builder = Builder::new().stack_size(64 * 1024);
            let keep: Vec<Fiber<(), (), u64>> = (0..800)
                .map(|_| builder.clone().build(|_, ()| 0).unwrap())
                .collect();
            let last: Fiber<(), (), u64> = builder.build(|_, ()| recurse(0)).unwrap();
            let _ = last.resume(());
            drop(keep);
        }
        "green-thread" => fibra::run(|| {
            let deep = fibra::runtime::ThreadBuilder::new()
                .name("deep-handler")
                .stack_size(64 * 1024)
                .spawn(|| recurse(0))
                .unwrap();
            let _ = deep.join();
        }),
        "unnamed-green-thread" => fibra::runtime::Builder::new()
            .stack_size(64 * 1024)
            .run(|| {
                let _ = fibra::spawn(|| recurse(0)).join();
            }),
        "fiber-in-a-green-thread" => fibra::run(|| {
            let fiber: Fiber<(), (), u64> = Builder::new()
                .stack_size(64 * 1024)
                .build(|_, ()| recurse(0))
                .unwrap();
            let _ = fiber.resume(());
        }),
        "thread" => {
            // Rust's own report for a thread stack still works with fibra's
            // handler installed (fibra hands faults outside its guards on).
            let warm: Fiber<(), (), ()> = Fiber::new(|_, ()| ());
            assert_eq!(warm.resume(()).unwrap(), Step::Return(()));
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(|| recurse(0))
                .unwrap()
                .join()
                .ok();
        }
        other => panic!("unknown child {other}"),
    }
    unreachable!("the overflow did not end the process");
}

fn run_child(which: &str) -> (Option<i32>, String) {
    let out = support::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "overflow_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, which)
        .output()
        .unwrap();
    (
        out.status.signal(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn overflow_child() {
    if let Ok(which) = std::env::var(CHILD) {
        child(&which);
    }
}

#[test]
fn a_fiber_stack_overflow_is_reported_and_aborts() {
    let (signal, stderr) = run_child("fiber");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(stderr.contains("fiber stack overflow"), "stderr: {stderr}");
    assert!(stderr.contains("64 KiB stack"), "stderr: {stderr}");
}

#[test]
fn a_green_thread_stack_overflow_names_the_thread_and_its_setting() {
    let (signal, stderr) = run_child("green-thread");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(
        stderr.contains(
            "fiber stack overflow: green thread 'deep-handler' (#2) used all of its 64 KiB stack"
        ),
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("fibra::runtime::ThreadBuilder::stack_size"),
        "stderr: {stderr}"
    );
    assert!(!stderr.contains("fiber::Builder"), "stderr: {stderr}");
}

#[test]
fn an_unnamed_green_thread_is_named_by_its_id() {
    let (signal, stderr) = run_child("unnamed-green-thread");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(
        stderr.contains("fiber stack overflow: green thread #2 used all of its 64 KiB stack"),
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("fibra::runtime::Builder::stack_size"),
        "stderr: {stderr}"
    );
}

#[test]
fn a_fiber_overflow_inside_a_green_thread_names_the_fibers_setting() {
    let (signal, stderr) = run_child("fiber-in-a-green-thread");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(
        stderr.contains("fiber stack overflow: a fiber used all of its 64 KiB stack"),
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("fibra::fiber::Builder::stack_size"),
        "stderr: {stderr}"
    );
}

#[test]
fn an_overflow_after_many_switches_is_reported_too() {
    let (signal, stderr) = run_child("fiber-after-switches");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(stderr.contains("fiber stack overflow"), "stderr: {stderr}");
}

#[test]
fn an_overflow_is_caught_in_every_slot_of_a_chunk() {
    let (signal, stderr) = run_child("fiber-in-a-later-guard-batch");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(stderr.contains("fiber stack overflow"), "stderr: {stderr}");
}

#[test]
fn a_thread_stack_overflow_is_still_rusts_to_report() {
    let (signal, stderr) = run_child("thread");
    assert!(
        matches!(signal, Some(libc::SIGABRT) | Some(libc::SIGSEGV)),
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("has overflowed its stack"),
        "stderr: {stderr}"
    );
    assert!(!stderr.contains("fiber stack overflow"), "stderr: {stderr}");
}

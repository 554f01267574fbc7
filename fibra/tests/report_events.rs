//! With the cargo feature `tracing`, a runtime's reports are `tracing` events
//! (target `fibra`), and `Builder::report_to_stderr(false)` keeps them off
//! stderr. The child (this binary again) sends its events to stdout; the
//! parent reads both streams.

mod support;

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const CHILD: &str = "FIBRA_REPORT_EVENTS_CHILD";

/// Set once the child's subscriber has written a stall event.
static STALL_SEEN: AtomicBool = AtomicBool::new(false);

/// Where the child's subscriber writes: stdout, and a look for the stall.
struct Events;

impl Write for Events {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        static OUT: Mutex<()> = Mutex::new(());
        let _one_at_a_time = OUT.lock().unwrap();
        if String::from_utf8_lossy(bytes).contains("without parking or yielding") {
            STALL_SEEN.store(true, Ordering::Release);
        }
        std::io::stdout().write_all(bytes)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush()
    }
}

#[test]
fn a_stall_is_a_tracing_event_and_can_stay_off_stderr() {
    let out = support::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "stall")
        .env_remove("FIBRA_STALL_MS")
        .env_remove("FIBRA_STDERR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let stall = stdout
        .lines()
        .find(|l| l.contains("without parking or yielding"))
        .unwrap_or_else(|| panic!("no stall event: {stdout}"));
    assert!(stall.contains("WARN"), "{stall}");
    assert!(stall.contains("fibra:"), "{stall}");
    assert!(stall.contains("kind=\"stall\""), "{stall}");
    assert!(stall.contains("green thread 'blocker'"), "{stall}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("INFO") && l.contains("parked or yielded after")),
        "{stdout}"
    );
    assert!(!stderr.contains("without parking or yielding"), "{stderr}");
}

/// The child's side; does nothing when run as a test.
#[test]
fn child_process() {
    if std::env::var(CHILD).as_deref() != Ok("stall") {
        return;
    }
    tracing_subscriber::fmt()
        .with_writer(|| Events)
        .with_ansi(false)
        .init();
    fibra::runtime::Builder::new()
        .stall_threshold(Some(Duration::from_millis(20)))
        .report_to_stderr(false)
        .run(|| {
            let blocker = fibra::runtime::ThreadBuilder::new()
                .name("blocker")
                .spawn(|| {
                    // Holds the OS thread until the watchdog has reported it
                    // (a minute at most: then the parent's asserts fail).
                    let until = Instant::now() + Duration::from_secs(60);
                    while !STALL_SEEN.load(Ordering::Acquire) && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                })
                .unwrap();
            blocker.join().unwrap();
        });
}

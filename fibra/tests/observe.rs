//! Seeing what green threads do: their names, the line fibra writes when one
//! holds its OS thread too long, and the dump of every runtime.

mod support;

use fibra::runtime::{self, ThreadBuilder};
use std::io;
use std::process::Output;
use std::time::Duration;

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
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

const CHILD: &str = "FIBRA_OBSERVE_CHILD";

/// The lines of a child's stderr that fibra wrote.
fn fibra_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("fibra: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_named_thread_knows_its_name_and_an_unnamed_one_has_none() {
    fibra::run(|| {
        let named = ThreadBuilder::new()
            .name("worker-7")
            .spawn(|| runtime::current().name().map(str::to_owned))
            .unwrap();
        let plain = fibra::spawn(|| runtime::current().name().map(str::to_owned));
        assert_eq!(named.join().unwrap().as_deref(), Some("worker-7"));
        assert_eq!(plain.join().unwrap(), None);
        assert!(format!("{:?}", runtime::current()).contains("name: None"));
    });
}

#[test]
fn a_thread_builder_sets_the_stack_size() {
    fibra::run(|| {
        // A recursion that needs more than the minimum stack.
        fn depth(n: u32) -> u32 {
            let pad = std::hint::black_box([0u8; 512]);
            if n == 0 {
                pad[0] as u32
            } else {
                depth(n - 1) + 1
            }
        }
        let deep = ThreadBuilder::new()
            .stack_size(4 * 1024 * 1024)
            .spawn(|| depth(2000))
            .unwrap();
        assert_eq!(deep.join().unwrap(), 2000);
    });
}

#[test]
fn a_thread_builder_refuses_what_it_cannot_do() {
    let err = ThreadBuilder::new().spawn(|| ()).unwrap_err();
    assert!(err.to_string().contains("inside a fibra runtime"), "{err}");
    fibra::run(|| {
        let err = ThreadBuilder::new()
            .stack_size(usize::MAX)
            .spawn(|| ())
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    });
}

#[test]
fn a_named_thread_that_panics_is_named_on_stderr() {
    let out = child("named_panic", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("boom"), "{stderr}");
    assert!(
        fibra_lines(&out).contains(&"fibra: the panic above was in green thread 'bomber'".into()),
        "{stderr}"
    );
}

#[test]
fn a_thread_that_holds_its_os_thread_is_named_once_when_it_stalls_and_once_when_it_ends() {
    let out = child("stall", &[("FIBRA_STALL_MS", "50")]);
    assert!(out.status.success(), "{out:?}");
    let lines = fibra_lines(&out);
    let started: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("without parking or yielding"))
        .collect();
    let ended: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("parked or yielded after"))
        .collect();
    assert_eq!((started.len(), ended.len()), (1, 1), "{lines:#?}");
    for line in [started[0], ended[0]] {
        assert!(line.contains("green thread 'sleeper' (#"), "{line}");
        assert!(line.contains("on OS thread 'stall-child'"), "{line}");
    }
}

#[test]
fn the_builder_sets_the_stall_threshold_and_overrides_the_environment() {
    let out = child("stall_builder", &[("FIBRA_STALL_MS", "0")]);
    assert!(out.status.success(), "{out:?}");
    let lines = fibra_lines(&out);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].contains("green thread #"), "{lines:#?}");
}

#[test]
fn fibra_stall_ms_0_silences_the_stall_detector() {
    let out = child("stall", &[("FIBRA_STALL_MS", "0")]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fibra_lines(&out), Vec::<String>::new());
}

#[test]
fn a_runtime_whose_threads_park_says_nothing() {
    let out = child("well_behaved", &[("FIBRA_STALL_MS", "50")]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fibra_lines(&out), Vec::<String>::new());
}

#[test]
fn a_bad_fibra_stall_ms_is_reported_not_ignored_silently() {
    let out = child("well_behaved", &[("FIBRA_STALL_MS", "soon")]);
    assert!(out.status.success(), "{out:?}");
    let lines = fibra_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains("FIBRA_STALL_MS=soon is not a whole number"),
        "{lines:#?}"
    );
}

/// Runs `f` on an OS thread of that name, as a runtime's first green thread
/// would be named in the stall line.
fn on_os_thread(name: &str, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// The child's side of the tests above; does nothing when run as a test.
#[test]
fn child_process() {
    match std::env::var(CHILD).as_deref() {
        Ok("named_panic") => fibra::run(|| {
            let h = ThreadBuilder::new()
                .name("bomber")
                .spawn(|| panic!("boom"))
                .unwrap();
            assert!(h.join().is_err());
        }),
        Ok("stall") => on_os_thread("stall-child", || {
            fibra::run(|| {
                let ticker = fibra::spawn(|| {
                    for _ in 0..3 {
                        fibra::time::sleep(Duration::from_millis(5));
                    }
                });
                let sleeper = ThreadBuilder::new()
                    .name("sleeper")
                    .spawn(|| std::thread::sleep(Duration::from_millis(300)))
                    .unwrap();
                sleeper.join().unwrap();
                ticker.join().unwrap();
            })
        }),
        Ok("stall_builder") => runtime::Builder::new()
            .stall_threshold(Some(Duration::from_millis(50)))
            .run(|| std::thread::sleep(Duration::from_millis(300))),
        Ok("well_behaved") => fibra::run(|| {
            let ticks: Vec<_> = (0..4)
                .map(|_| {
                    fibra::spawn(|| {
                        for _ in 0..20 {
                            fibra::time::sleep(Duration::from_millis(10));
                        }
                    })
                })
                .collect();
            ticks.into_iter().for_each(|t| t.join().unwrap());
        }),
        _ => {}
    }
}

//! Seeing what green threads do: their names, the line fibra writes when one
//! holds its OS thread too long, and the dump of every runtime.

mod support;

use fibra::runtime::{self, ThreadBuilder};
use std::io;
use std::process::Output;

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
        _ => {}
    }
}

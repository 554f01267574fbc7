//! What several behaviour tests share.

use std::ffi::OsStr;
use std::process::Command;

/// A command that runs `program`, a binary built for the target under test
/// (usually this test binary again, to watch a child abort).
///
/// Under qemu-user (`cargo test --target aarch64-unknown-linux-gnu` on x86_64,
/// `.cargo/config.toml`), the machine cannot run such a binary by itself: the
/// runner passes its own command line in `FIBRA_TEST_RUNNER`, and the child is
/// started through it too. Natively the variable is unset.
pub fn target_command(program: impl AsRef<OsStr>) -> Command {
    match std::env::var("FIBRA_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => {
            let mut words = runner.split_whitespace();
            let mut command = Command::new(words.next().expect("a runner"));
            command.args(words).arg(program);
            command
        }
        _ => Command::new(program),
    }
}

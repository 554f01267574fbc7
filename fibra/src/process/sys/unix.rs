//! Every Unix: a child's exit awaited on the blocking pool, in `waitid`
//! without reaping (see the parent module for why). Linux uses it where the
//! kernel gives no pidfd; other systems always.

use std::io;
use std::process::{Child, ExitStatus};

/// Parks the calling green thread until `child` has exited, and reaps it.
pub(crate) fn wait(child: &mut Child) -> io::Result<ExitStatus> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        let pid: libc::id_t = child.id();
        crate::blocking(move || exited(pid))?;
    }
}

/// Blocks until child `pid` has exited, leaving it unreaped (`WNOWAIT`), so
/// that only `std`'s `Child` reaps it.
fn exited(pid: libc::id_t) -> io::Result<()> {
    loop {
        // SAFETY: `siginfo_t` is a C struct of integers (and unions of
        // them), for which all zeroes is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `waitid` writes only into `info`, a valid `siginfo_t` that
        // outlives the call.
        let rc =
            unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Command;
    use std::rc::Rc;

    /// The fallback, called directly (on Linux the pidfd path is taken
    /// otherwise): exit codes and signals come back, and only the waiting
    /// green thread waits — a ticker that yields runs while it does.
    #[test]
    #[cfg_attr(miri, ignore = "spawns processes and runs green threads")]
    fn the_pool_fallback_reports_exit_codes_and_signals() {
        crate::run(|| {
            let ticks = Rc::new(Cell::new(0u64));
            let waiting = Rc::new(Cell::new(true));
            let ticker = crate::spawn({
                let (ticks, waiting) = (ticks.clone(), waiting.clone());
                move || {
                    while waiting.get() {
                        ticks.set(ticks.get() + 1);
                        crate::runtime::yield_now();
                    }
                }
            });
            let mut child = Command::new("sh")
                .args(["-c", "sleep 0.1; exit 3"])
                .spawn()
                .unwrap();
            let before = ticks.get();
            let status = super::wait(&mut child).unwrap();
            assert_eq!(status.code(), Some(3));
            assert!(ticks.get() > before, "the ticker ran while the child ran");
            // Waiting again gives the status `std` kept.
            assert_eq!(super::wait(&mut child).unwrap().code(), Some(3));

            let mut child = Command::new("sleep").arg("30").spawn().unwrap();
            child.kill().unwrap();
            let status = super::wait(&mut child).unwrap();
            assert_eq!(status.signal(), Some(libc::SIGKILL));
            waiting.set(false);
            ticker.join().unwrap();
        });
    }
}

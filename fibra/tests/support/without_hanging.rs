//! A guard for tests whose failure mode is a hang (a lost wake, an executor
//! thread blocked): the test runs on an OS thread of its own and fails, instead
//! of hanging, if it has not finished after a minute. The limit is a guard, not
//! a measurement: no test asserts a time.

use std::sync::mpsc;
use std::time::Duration;

/// Runs `test` on another OS thread and returns its value, re-raises its panic,
/// or panics naming `what` if it is still running after a minute.
pub fn without_hanging<T: Send + 'static>(
    what: &str,
    test: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, result) = mpsc::channel();
    let thread = std::thread::spawn(move || done.send(test()).unwrap());
    match result.recv_timeout(Duration::from_secs(60)) {
        Ok(value) => {
            thread.join().unwrap();
            value
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(thread.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still not done after a minute"),
    }
}

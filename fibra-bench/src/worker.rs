//! An OS thread that runs in-process measurements with a time limit, as
//! [`crate::peers::process`] does for peer processes: a runtime that hangs (a
//! lost wake-up, a deadlocked echo) or panics is reported as failed instead of
//! stalling or ending the whole run.
//!
//! One worker serves all the runs of one runtime, so that what a runtime keeps
//! per thread (fibra's stack pool, the allocator's caches) is as warm in the
//! counted runs as it would be in a program that spawns all day.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

pub struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<thread::JoinHandle<()>>,
    /// Set when a job overran its limit: the thread is still busy with it, so
    /// it takes no more jobs and is left behind (it ends with the process).
    hung: bool,
}

impl Worker {
    /// Starts a worker thread called `name`.
    pub fn new(name: &str) -> Worker {
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = thread::Builder::new()
            .name(name.into())
            .spawn(move || queue.into_iter().for_each(|job| job()))
            .expect("an OS thread for in-process measurements");
        Worker {
            jobs: Some(jobs),
            thread: Some(thread),
            hung: false,
        }
    }

    /// Runs `f` on the worker and waits at most `timeout` for it.
    ///
    /// # Errors
    ///
    /// The text for the table cell, if `f` panicked or overran `timeout`, or an
    /// earlier job did.
    pub fn run<T: Send + 'static>(
        &mut self,
        timeout: Duration,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        if self.hung {
            return Err("an earlier run hung".into());
        }
        let (done, outcome) = mpsc::channel();
        let job: Job = Box::new(move || {
            // The receiver is gone only if the job overran; nobody wants it then.
            let _ = done.send(panic::catch_unwind(AssertUnwindSafe(f)));
        });
        let jobs = self.jobs.as_ref().expect("dropped only with the worker");
        if jobs.send(job).is_err() {
            return Err("the worker thread is gone".into());
        }
        match outcome.recv_timeout(timeout) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(payload)) => Err(format!("panicked: {}", panic_message(&*payload))),
            Err(RecvTimeoutError::Timeout) => {
                self.hung = true;
                Err(format!(
                    "timed out after {}",
                    crate::peers::process::secs(timeout)
                ))
            }
            Err(RecvTimeoutError::Disconnected) => Err("the worker thread died".into()),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take()
            && !self.hung
        {
            // Every job catches its own panics, so the thread ends cleanly.
            let _ = thread.join();
        }
    }
}

/// The message a panic was raised with, when it is a string.
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_secs(10);

    #[test]
    fn runs_jobs_on_one_thread() {
        let mut worker = Worker::new("test-worker");
        let first = worker.run(LIMIT, || thread::current().id()).unwrap();
        let second = worker.run(LIMIT, || thread::current().id()).unwrap();
        assert_eq!(first, second);
        assert_ne!(first, thread::current().id());
    }

    #[test]
    fn reports_a_panic_and_goes_on() {
        let mut worker = Worker::new("test-worker");
        let err = worker
            .run(LIMIT, || -> u32 { panic!("cannot spawn") })
            .unwrap_err();
        assert_eq!(err, "panicked: cannot spawn");
        assert_eq!(worker.run(LIMIT, || 7), Ok(7));
    }

    #[test]
    fn gives_up_on_a_hung_job() {
        let mut worker = Worker::new("test-worker");
        let err = worker
            .run(Duration::from_millis(10), || {
                thread::sleep(Duration::from_millis(500))
            })
            .unwrap_err();
        assert_eq!(err, "timed out after 0.01 s");
        assert_eq!(
            worker.run(LIMIT, || 7),
            Err("an earlier run hung".to_string())
        );
    }
}

//! E3 on tokio: tasks on a current-thread runtime (one OS thread, as fibra).

use super::Times;
use std::time::{Duration, Instant};
use tokio::time::sleep;

/// Sleeps for each of `sleeps` in turn, then in a task each, all joined.
pub fn io(sleeps: &[Duration]) -> Times {
    let sleeps = sleeps.to_vec();
    crate::experiments::tokio_runtime().block_on(async move {
        let start = Instant::now();
        for &d in &sleeps {
            sleep(d).await;
        }
        let sequential = start.elapsed();
        let start = Instant::now();
        let tasks: Vec<_> = sleeps.iter().map(|&d| tokio::spawn(sleep(d))).collect();
        for task in tasks {
            task.await.expect("a sleeping task does not fail");
        }
        Times {
            sequential,
            threaded: start.elapsed(),
        }
    })
}

//! Spawn+join on tokio: tasks on a current-thread runtime.

use std::time::{Duration, Instant};

/// Spawns `n` tasks that each return their number, awaits them in order, and
/// checks the sum.
pub fn spawn_join(n: u64) -> Duration {
    crate::experiments::tokio_runtime().block_on(async move {
        let start = Instant::now();
        let tasks: Vec<_> = (0..n).map(|i| tokio::spawn(async move { i })).collect();
        let mut sum = 0;
        for task in tasks {
            sum += task.await.expect("a task that returns a number");
        }
        let elapsed = start.elapsed();
        assert_eq!(sum, n * n.saturating_sub(1) / 2, "every task was joined");
        elapsed
    })
}

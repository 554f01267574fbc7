//! Spawn+join on fibra: green threads on one OS thread.

use std::time::{Duration, Instant};

/// Spawns `n` green threads that each return their number, joins them in
/// order, and checks the sum.
pub fn spawn_join(n: u64) -> Duration {
    fibra::run(move || {
        let start = Instant::now();
        let threads: Vec<_> = (0..n).map(|i| fibra::spawn(move || i)).collect();
        let sum: u64 = threads
            .into_iter()
            .map(|t| t.join().expect("a green thread that returns a number"))
            .sum();
        let elapsed = start.elapsed();
        assert_eq!(sum, n * n.saturating_sub(1) / 2, "every thread was joined");
        elapsed
    })
}

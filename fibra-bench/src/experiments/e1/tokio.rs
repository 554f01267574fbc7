//! E1 on tokio: stackless tasks, so no stack is switched at all; a yield
//! returns to the scheduler, which polls the next task. Two tasks that each
//! call `yield_now` N times on a current-thread runtime make the scheduler
//! play E1's main loop, as may's does: each yield counts as two switches
//! (into the scheduler, out to a task), 4·N in all. It has no symmetric
//! transfer.

use std::time::{Duration, Instant};

/// Two tasks that each yield `n` times; the time from the first spawn to the
/// second join.
pub fn resume_yield(n: u64) -> Duration {
    let runtime = crate::experiments::tokio_runtime();
    runtime.block_on(async {
        let task = || {
            tokio::spawn(async move {
                for _ in 0..n {
                    tokio::task::yield_now().await;
                }
            })
        };
        let start = Instant::now();
        let pair = [task(), task()];
        for task in pair {
            task.await.expect("a yielding task does not panic");
        }
        start.elapsed()
    })
}

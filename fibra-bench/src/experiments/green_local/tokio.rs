//! tokio's `task_local!`: a value read and written inside a task.

use std::cell::Cell;
use std::time::{Duration, Instant};

tokio::task_local! {
    static COUNTER: Cell<u64>;
}

/// One `with` of the task's value, not inlined into the loop (as fibra's is
/// not).
#[inline(never)]
fn bump() {
    COUNTER.with(|c| c.set(c.get() + 1));
}

/// Makes `n` calls of `with` inside a task on a current-thread runtime, in
/// the scope of the task's value, and checks that each counted.
pub fn with_calls(n: u64) -> Duration {
    let runtime = crate::experiments::tokio_runtime();
    runtime.block_on(async move {
        let task = tokio::spawn(COUNTER.scope(Cell::new(0), async move {
            let start = Instant::now();
            (0..n).for_each(|_| bump());
            let elapsed = start.elapsed();
            assert_eq!(COUNTER.with(Cell::get), n, "every with counted");
            elapsed
        }));
        task.await.expect("a task that counts")
    })
}

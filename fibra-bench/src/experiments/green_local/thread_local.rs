//! std's `thread_local!` on a plain OS thread: the floor a green-local value
//! is compared with.

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static COUNTER: Cell<u64> = const { Cell::new(0) };
}

/// One `with` of the OS thread's value, not inlined into the loop (as
/// fibra's is not).
#[inline(never)]
fn bump() {
    COUNTER.with(|c| c.set(c.get() + 1));
}

/// Makes `n` calls of `with` on this OS thread, and checks that each counted.
pub fn with_calls(n: u64) -> Duration {
    COUNTER.set(0);
    let start = Instant::now();
    (0..n).for_each(|_| bump());
    let elapsed = start.elapsed();
    assert_eq!(COUNTER.get(), n, "every with counted");
    elapsed
}

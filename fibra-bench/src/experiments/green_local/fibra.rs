//! `green_local!` on fibra: a key's value read and written on a green thread.

use std::cell::Cell;
use std::time::{Duration, Instant};

fibra::green_local! {
    static COUNTER: Cell<u64> = Cell::new(0);
}

/// One `with` of the green thread's value, not inlined into the loop, so
/// that the compiler cannot hoist the lookup out of it.
#[inline(never)]
fn bump() {
    COUNTER.with(|c| c.set(c.get() + 1));
}

/// Makes `n` calls of `with` on a green thread whose value already exists,
/// and checks that each counted.
pub fn with_calls(n: u64) -> Duration {
    fibra::run(move || {
        COUNTER.set(0);
        let start = Instant::now();
        (0..n).for_each(|_| bump());
        let elapsed = start.elapsed();
        assert_eq!(COUNTER.get(), n, "every with counted");
        elapsed
    })
}

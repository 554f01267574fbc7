//! Spawn+join on the `may` crate, in a process of its own
//! ([`crate::experiments::may_child`] says why): `fibra-bench --child spawn
//! <N>`, printing the spawn line of peers/README.md. Coroutines on one worker
//! thread, spawned and joined by a coroutine on it, so that all of it runs on
//! one OS thread as fibra's and tokio's do. Like the Go peer, it runs one
//! untimed round first.

use crate::experiments::may_child;
use crate::peers::protocol::count;
use std::time::{Duration, Instant};

pub fn main(args: &[String]) -> Result<(), String> {
    let usage = "usage: fibra-bench --child spawn <N>   (N >= 1)";
    let [n] = args else {
        return Err(usage.into());
    };
    let n = count(n).filter(|&n| n >= 1).ok_or(usage)?;
    may_child::start(1);
    let timed = may_child::spawn(move || {
        spawn_join(n);
        spawn_join(n)
    });
    let elapsed = timed
        .join()
        .map_err(|_| "the spawning coroutine panicked")?;
    println!("n={n} ns={}", elapsed.as_nanos());
    Ok(())
}

/// Spawns `n` coroutines that each return their number, joins them in order,
/// and checks the sum; in a coroutine.
fn spawn_join(n: u64) -> Duration {
    let start = Instant::now();
    let coroutines: Vec<_> = (0..n).map(|i| may_child::spawn(move || i)).collect();
    let sum: u64 = coroutines
        .into_iter()
        .map(|c| c.join().expect("a coroutine that returns a number"))
        .sum();
    let elapsed = start.elapsed();
    assert_eq!(sum, n * (n - 1) / 2, "every coroutine was joined");
    elapsed
}

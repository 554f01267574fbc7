//! E1 on the `may` crate, in a process of its own ([`crate::experiments::may_child`]
//! says why): `fibra-bench --child e1 <resume|transfer> <N>`, printing the E1
//! line of peers/README.md.
//!
//! may has no resume of one coroutine by another: `yield_now` puts the caller
//! back in the scheduler's queue, and the scheduler resumes the next one. With
//! one worker thread and two coroutines that each yield N times, the scheduler
//! plays E1's main loop: each `yield_now` is two switches (into the scheduler,
//! out to a coroutine), 4·N in all. It has no symmetric transfer.

use crate::experiments::may_child;
use crate::peers::process::EXIT_UNSUPPORTED;
use crate::peers::protocol::count;
use std::time::{Duration, Instant};

pub fn main(args: &[String]) -> Result<(), String> {
    let usage = "usage: fibra-bench --child e1 <resume|transfer> <N>   (N >= 1)";
    let [variant, n] = args else {
        return Err(usage.into());
    };
    let n = count(n).filter(|&n| n >= 1).ok_or(usage)?;
    match variant.as_str() {
        "resume" => {}
        "transfer" => {
            // The peer protocol's answer, which the bench reports as n/a.
            eprintln!("unsupported: may has no symmetric transfer");
            std::process::exit(EXIT_UNSUPPORTED);
        }
        _ => return Err(usage.into()),
    }
    may_child::start(1);
    let elapsed = resume_yield(n)?;
    println!("switches={} ns={}", 4 * n, elapsed.as_nanos());
    Ok(())
}

/// Two coroutines that each call `yield_now` `n` times, on may's one worker;
/// the time from the first spawn to the second join.
fn resume_yield(n: u64) -> Result<Duration, String> {
    let spawn = || {
        may_child::spawn(move || {
            for _ in 0..n {
                may::coroutine::yield_now();
            }
        })
    };
    let start = Instant::now();
    let pair = [spawn(), spawn()];
    for coroutine in pair {
        coroutine
            .join()
            .map_err(|_| "a yielding coroutine panicked")?;
    }
    Ok(start.elapsed())
}

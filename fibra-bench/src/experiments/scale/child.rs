//! The ractor-scale program on fibra, run as `fibra-bench --child ractor-scale
//! <N> <LIMIT_S>` so that its memory is fibra's alone: creates N Ractors on the
//! process-wide pool that each wait for one message, waits until every one is
//! waiting, sends each its number, and joins them all (each returns its number
//! plus one). Prints the protocol line of peers/README.md.

use super::{parse_args, status_kb};
use fibra::ractor::{Context, Ractor, make_shareable};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub fn main(args: &[String]) -> Result<(), String> {
    let (n, limit) = parse_args(args)
        .ok_or("usage: fibra-bench --child ractor-scale <N> <LIMIT_S>   (N >= 1)")?;
    // Start the pool's workers (and their runtimes) before the baseline.
    Ractor::new(|_: &Context<()>| {})
        .join()
        .map_err(|e| e.to_string())?;
    let before = status_kb("VmRSS")?;
    let start = Instant::now();
    let waiting = make_shareable(AtomicUsize::new(0));
    let mut ractors = Vec::with_capacity(n as usize);
    for i in 0..n {
        if i % 1024 == 0 && start.elapsed() > limit {
            eprintln!("the time limit of {} s", limit.as_secs());
            break;
        }
        let waiting = waiting.clone();
        ractors.push(Ractor::new(move |ctx: &Context<u64>| {
            waiting.fetch_add(1, Ordering::Release);
            ctx.receive().map_or(0, |i| i + 1)
        }));
    }
    let created = ractors.len();
    // Every Ractor alive and waiting: the memory that is measured.
    while waiting.load(Ordering::Acquire) < created {
        std::thread::sleep(Duration::from_micros(50));
    }
    for (i, ractor) in (0u64..).zip(&ractors) {
        ractor
            .send(i)
            .map_err(|_| format!("Ractor {i} stopped waiting"))?;
    }
    let mut sum = 0;
    for ractor in ractors {
        sum += ractor.join().map_err(|e| e.to_string())?;
    }
    let elapsed = start.elapsed();
    let created = created as u64;
    if sum != created * (created + 1) / 2 {
        return Err(format!("the replies add up to {sum}"));
    }
    println!(
        "n={n} created={created} ns={} rss_before_kb={before} peak_kb={}",
        elapsed.as_nanos(),
        status_kb("VmHWM")?
    );
    Ok(())
}

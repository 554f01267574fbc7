//! The ractor-scale program on fibra, run as `fibra-bench --child ractor-scale
//! <N> <LIMIT_S> [compacted]` so that its memory is fibra's alone: creates N
//! Ractors that each wait for one message, waits until every one is waiting
//! and the memory has settled ([`settled_rss_kb`]: the idle figure), sends
//! each its number, and joins them all (each returns its number plus one).
//! Prints the protocol line of peers/README.md. The Ractors run on the
//! process-wide pool, or with `compacted` on a pool of as many workers whose
//! runtimes compact every parked green thread.

use super::{parse_args, settled_rss_kb, status_kb};
use fibra::ractor::{Context, Pool, Ractor, make_shareable};
use fibra::runtime::Builder;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The `[compacted]` argument.
pub const COMPACTED: &str = "compacted";

/// The pool the Ractors run on.
enum Pools {
    /// The process-wide pool, by `Ractor::new`.
    Global,
    /// A pool of its own, by `Pool::spawn`.
    Own(Pool),
}

impl Pools {
    /// A pool of as many workers as the process-wide one (one per core),
    /// whose runtimes compact each parked green thread at the end of the
    /// round in which it parked.
    fn compacted() -> Pools {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        // The Ractors' green threads only wait in `receive`, and all they
        // share with other OS threads (the counter, the mailboxes, the
        // replies) is on the heap.
        // SAFETY: so none lends its stack to another OS thread (no scoped
        // threads, no pointer to a local handed out).
        let builder = unsafe { Builder::new().compact_parked_after(Some(Duration::ZERO)) };
        Pools::Own(Pool::with_runtime(workers, builder))
    }

    fn spawn<In, Out, R, F>(&self, body: F) -> Ractor<In, Out, R>
    where
        F: FnOnce(&Context<In, Out>) -> R + Send + 'static,
        In: Send + 'static,
        Out: Send + 'static,
        R: Send + 'static,
    {
        match self {
            Pools::Global => Ractor::new(body),
            Pools::Own(pool) => pool.spawn(body),
        }
    }
}

pub fn main(args: &[String]) -> Result<(), String> {
    let usage = "usage: fibra-bench --child ractor-scale <N> <LIMIT_S> [compacted]   (N >= 1)";
    let (counts, compacted) = match args {
        [counts @ .., last] if last == COMPACTED => (counts, true),
        counts => (counts, false),
    };
    let (n, limit) = parse_args(counts).ok_or(usage)?;
    let pools = if compacted {
        Pools::compacted()
    } else {
        Pools::Global
    };
    // Start the pool's workers (and their runtimes) before the baseline.
    pools
        .spawn(|_: &Context<()>| {})
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
        ractors.push(pools.spawn(move |ctx: &Context<u64>| {
            waiting.fetch_add(1, Ordering::Release);
            ctx.receive().map_or(0, |i| i + 1)
        }));
    }
    let created = ractors.len();
    while waiting.load(Ordering::Acquire) < created {
        std::thread::sleep(Duration::from_micros(50));
    }
    // Every Ractor alive and waiting: the idle figure, off the clock.
    let creating = start.elapsed();
    let idle = settled_rss_kb()?;
    let messaging = Instant::now();
    for (i, ractor) in (0u64..).zip(&ractors) {
        ractor
            .send(i)
            .map_err(|_| format!("Ractor {i} stopped waiting"))?;
    }
    let mut sum = 0;
    for ractor in ractors {
        sum += ractor.join().map_err(|e| e.to_string())?;
    }
    let elapsed = creating + messaging.elapsed();
    let created = created as u64;
    if sum != created * (created + 1) / 2 {
        return Err(format!("the replies add up to {sum}"));
    }
    println!(
        "n={n} created={created} ns={} rss_before_kb={before} idle_kb={idle} peak_kb={}",
        elapsed.as_nanos(),
        status_kb("VmHWM")?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// Both pools run every Ractor to its reply (`main` checks their sum).
    #[test]
    fn runs_on_both_pools() {
        main(&args(&["1000", "40"])).unwrap();
        main(&args(&["1000", "40", COMPACTED])).unwrap();
    }

    #[test]
    fn refuses_bad_arguments() {
        for bad in [&[COMPACTED][..], &["0", "40", COMPACTED], &["1", "40", "x"]] {
            assert!(
                main(&args(bad)).unwrap_err().starts_with("usage:"),
                "{bad:?}"
            );
        }
    }
}

//! The spread of single operations' times (a message round trip), as the
//! median and the 99th percentile, alongside the mean that a rate gives.
//!
//! Reading the clock costs ~20 ns on these machines, a quarter of the
//! hardware's round trip (two threads bouncing a cache line), so not every
//! operation is timed: one in [`SAMPLE_EVERY`] is, alone, and the loop's rate
//! still comes from one clock read at each end. In a steady loop every
//! operation is alike, so the sample is the whole population in miniature;
//! each sampled time includes one clock read. The peer programs sample the
//! same way (peers/README.md).

use std::time::Instant;

/// One operation in this many is timed alone.
pub const SAMPLE_EVERY: u64 = 16;

/// The median and the 99th percentile of an operation's time, in ns
/// (nearest rank).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Percentiles {
    pub p50_ns: u64,
    pub p99_ns: u64,
}

/// Times every [`SAMPLE_EVERY`]th operation run through it, the first
/// included.
pub struct Sampler {
    samples: Vec<u64>,
    /// Operations until the next sampled one.
    countdown: u64,
}

impl Sampler {
    /// A sampler for a loop of `n` operations: room for all its samples is
    /// taken now, so that no sample pays for a reallocation.
    pub fn new(n: u64) -> Sampler {
        Sampler {
            samples: Vec::with_capacity((n / SAMPLE_EVERY + 1) as usize),
            countdown: 0,
        }
    }

    /// Runs `op`, timing it if it is one of the sampled.
    #[inline(always)]
    pub fn time<T>(&mut self, op: impl FnOnce() -> T) -> T {
        if self.countdown > 0 {
            self.countdown -= 1;
            return op();
        }
        self.countdown = SAMPLE_EVERY - 1;
        let start = Instant::now();
        let value = op();
        // u64 nanoseconds last 584 years.
        self.samples.push(start.elapsed().as_nanos() as u64);
        value
    }

    /// The percentiles of the times sampled.
    pub fn percentiles(mut self) -> Percentiles {
        self.samples.sort_unstable();
        Percentiles {
            p50_ns: percentile(&self.samples, 50),
            p99_ns: percentile(&self.samples, 99),
        }
    }
}

/// The nearest-rank `p`th percentile of `sorted`: the smallest value with at
/// least `p` % of the values at or below it; 0 when there are none.
pub fn percentile(sorted: &[u64], p: usize) -> u64 {
    match sorted.len() {
        0 => 0,
        len => sorted[(p * len).div_ceil(100).clamp(1, len) - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&hundred, 50), 50);
        assert_eq!(percentile(&hundred, 99), 99);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[1, 2, 3], 50), 2);
        assert_eq!(percentile(&[1, 2, 3], 99), 3);
        assert_eq!(percentile(&[1, 2, 3], 0), 1);
        assert_eq!(percentile(&[], 50), 0);
    }

    #[test]
    fn samples_one_operation_in_every_sample_every() {
        let mut sampler = Sampler::new(40);
        let mut ran = 0;
        for _ in 0..40 {
            sampler.time(|| ran += 1);
        }
        assert_eq!(ran, 40);
        assert_eq!(sampler.samples.len() as u64, 40_u64.div_ceil(SAMPLE_EVERY));
        let p = sampler.percentiles();
        assert!(p.p50_ns <= p.p99_ns);
    }
}

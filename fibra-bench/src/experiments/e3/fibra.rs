//! E3 on fibra: green threads on one OS thread.

use super::io::Times;
use fibra::time::sleep;
use std::time::{Duration, Instant};

/// Sleeps for each of `sleeps` in turn, then in a green thread each, all joined.
pub fn io(sleeps: &[Duration]) -> Times {
    let sleeps = sleeps.to_vec();
    fibra::run(move || {
        let start = Instant::now();
        sleeps.iter().for_each(|&d| sleep(d));
        let sequential = start.elapsed();
        let start = Instant::now();
        let threads: Vec<_> = sleeps
            .iter()
            .map(|&d| fibra::spawn(move || sleep(d)))
            .collect();
        for thread in threads {
            thread
                .join()
                .expect("a sleeping green thread does not fail");
        }
        Times {
            sequential,
            threaded: start.elapsed(),
        }
    })
}

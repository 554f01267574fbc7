//! E3 on fibra: green threads on one OS thread for the sleeps, Ractors on every
//! core for the deflates.

use super::Times;
use super::deflate::deflated_len;
use fibra::ractor::{Context, Ractor, make_shareable};
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

/// Deflates `jobs` copies of the hex text `input` one after another, then in a
/// Ractor each on the process-wide pool (one worker per core), all reading the
/// one input shared with `make_shareable`; checks that every deflate made the
/// same output length.
pub fn cpu(input: Vec<u8>, jobs: u64) -> Result<Times, String> {
    let input = make_shareable(input);
    // Start the pool's workers before the clock does.
    Ractor::new(|_: &Context<()>| {})
        .join()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let sequential_lengths: Vec<usize> = (0..jobs).map(|_| deflated_len(&input)).collect();
    let sequential = start.elapsed();
    let start = Instant::now();
    let ractors: Vec<Ractor<(), (), usize>> = (0..jobs)
        .map(|_| {
            let input = input.clone();
            Ractor::new(move |_: &Context<()>| deflated_len(&input))
        })
        .collect();
    let parallel_lengths = ractors
        .into_iter()
        .map(|r| r.join().map_err(|e| e.to_string()))
        .collect::<Result<Vec<usize>, String>>()?;
    let threaded = start.elapsed();
    let first = sequential_lengths.first().copied();
    if sequential_lengths
        .iter()
        .chain(&parallel_lengths)
        .any(|&len| Some(len) != first)
    {
        return Err("deflates of the same input differ in length".into());
    }
    Ok(Times {
        sequential,
        threaded,
    })
}

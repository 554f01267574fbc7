//! Generators chained as iterators: a prime sieve in which every prime found
//! adds a stage to the pipeline (the sieve of Eratosthenes as McIlroy wrote it
//! with coroutines, and Go with goroutines). Each stage is a [`Generator`] —
//! a fiber seen as an [`Iterator`] — written as a plain loop over the stage
//! before it; nothing runs until the end of the chain asks for an item, and
//! ordinary iterator adapters (`take`, `map`, `sum`) work on any stage.
//!
//! ```sh
//! cargo run -p fibra --example generator_pipeline
//! ```

use fibra::Generator;

/// 2, 3, 4, … for ever.
fn counting_from(first: u64) -> Generator<u64> {
    Generator::new(move |out| {
        for n in first.. {
            out.suspend(n);
        }
    })
}

/// What `upstream` yields, less the multiples of `prime`.
fn without_multiples_of(prime: u64, upstream: Generator<u64>) -> Generator<u64> {
    Generator::new(move |out| {
        for n in upstream.filter(|n| n % prime != 0) {
            out.suspend(n);
        }
    })
}

/// The primes: the head of the pipeline is always the next prime, and it
/// becomes the filter of a new stage behind it.
fn primes() -> Generator<u64> {
    Generator::new(|out| {
        let mut candidates = counting_from(2);
        while let Some(prime) = candidates.next() {
            out.suspend(prime);
            candidates = without_multiples_of(prime, candidates);
        }
    })
}

fn main() {
    let first: Vec<u64> = primes().take(20).collect();
    println!("the first 20 primes: {first:?}");
    assert_eq!(first[..5], [2, 3, 5, 7, 11]);

    // 200 primes: a pipeline 200 fibers long.
    let sum: u64 = primes().take(200).sum();
    println!("the sum of the first 200 primes: {sum}");
    assert_eq!(sum, 111_587);
}

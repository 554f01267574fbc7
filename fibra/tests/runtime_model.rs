//! The runtime against its reference model (`runtime_model/`): seeded random
//! programs of green threads — channels of the three kinds, `Select`, a
//! `Mutex` and `Condvar`, sleeps, receive timeouts and `time::timeout`, joins,
//! cancels, panics with destructors that wait, several threads accepting on
//! one listener and reading one stream — every step's outcome compared with
//! the model, and how `run` ends (returned, or a deadlock reported).
//!
//! `FIBRA_MODEL_CASES` (default 2,000) and `FIBRA_MODEL_SEED` (the first seed,
//! to rerun a failing one alone) as in `fiber_model.rs`; `FIBRA_MODEL_TRACE=1`
//! prints each step as it runs (for a hang). `FIBRA_MODEL_FEATURES` chooses
//! the operations (see `runtime_model::features`).

#[path = "runtime_model/mod.rs"]
mod runtime_model;

use runtime_model::{Choices, DEFAULT, Features, check, check_from_bytes, features};

/// Operations per program (all threads together), before it winds down.
const STEPS: u32 = 40;

fn seeds() -> std::ops::Range<u64> {
    let var = |name: &str, default: u64| {
        std::env::var(name).map_or(default, |n| {
            n.parse().unwrap_or_else(|_| panic!("{name}: a number"))
        })
    };
    let first = var("FIBRA_MODEL_SEED", 0);
    first..first + var("FIBRA_MODEL_CASES", 2_000)
}

#[test]
fn random_programs_agree_with_the_model() {
    random_programs_with(|f| *f = features());
}

/// The seeds with one feature more than [`DEFAULT`]: one that a known defect
/// keeps off (`cargo test -- --ignored` once it is fixed).
fn random_programs_with(feature: fn(&mut Features)) {
    let mut features = DEFAULT;
    feature(&mut features);
    for seed in seeds() {
        check(
            Choices::seeded(seed, STEPS),
            features,
            format!("seed {seed} (FIBRA_MODEL_SEED={seed} FIBRA_MODEL_CASES=1)"),
        );
    }
}

#[test]
#[ignore = "issue 22, item 4: threads waiting on one listener lose wake-ups"]
fn random_programs_with_a_shared_listener() {
    random_programs_with(|f| f.socket = true);
}

#[test]
#[ignore = "issue 22, item 3: cancelling a thread that unwinds from its panic aborts"]
fn random_programs_that_cancel_panicking_threads() {
    random_programs_with(|f| f.cancel_while_panicking = true);
}

#[test]
#[ignore = "issue 22, items 8 and 15: timeout keeps its timer, returns before the work unwound"]
fn random_programs_with_timeouts() {
    random_programs_with(|f| f.timeout = true);
}

#[test]
#[ignore = "issue 22, item 8: a receive timeout that ends early keeps its timer"]
fn random_programs_with_receive_timeouts() {
    random_programs_with(|f| f.recv_timeout = true);
}

/// The fuzz target's decoding, on its corpus when there is one (a regression
/// test of what the fuzzer found) and on a few fixed inputs.
#[test]
fn fuzz_inputs_agree_with_the_model() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/runtime_model");
    let mut inputs: Vec<Vec<u8>> = vec![vec![], (0..=255).collect(), (0..=255).rev().collect()];
    if let Ok(entries) = std::fs::read_dir(corpus) {
        inputs.extend(entries.map(|entry| std::fs::read(entry.unwrap().path()).unwrap()));
    }
    for input in inputs {
        check_from_bytes(&input);
    }
}

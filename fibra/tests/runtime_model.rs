//! The runtime against its reference model (`runtime_model/`): seeded random
//! programs of green threads — channels of the three kinds, `Select`, a
//! `Mutex` and `Condvar`, sleeps, send and receive timeouts, `time::timeout`
//! (of a limit and of zero), joins, cancels, panics with destructors that
//! wait, several threads accepting on one listener and reading one stream —
//! every step's outcome compared with the model, and how `run` ends (returned,
//! or a deadlock reported). Every operation is on by default.
//!
//! `FIBRA_MODEL_CASES` (default 2,000) and `FIBRA_MODEL_SEED` (the first seed,
//! to rerun a failing one alone) as in `fiber_model.rs`; `FIBRA_MODEL_TRACE=1`
//! prints each step as it runs (for a hang). `FIBRA_MODEL_FEATURES` chooses
//! the operations (see `runtime_model::features`).

#[path = "support/model_runs.rs"]
mod model_runs;
#[path = "runtime_model/mod.rs"]
mod runtime_model;

use runtime_model::{Choices, check, check_from_bytes, features};

/// Operations per program (all threads together), before it winds down.
const STEPS: u32 = 40;

#[test]
fn random_programs_agree_with_the_model() {
    let features = features();
    for seed in model_runs::seeds(2_000) {
        check(
            Choices::seeded(seed, STEPS),
            features,
            format!("seed {seed} (FIBRA_MODEL_SEED={seed} FIBRA_MODEL_CASES=1)"),
        );
    }
}

/// The fuzz target's decoding, on its corpus when there is one (a regression
/// test of what the fuzzer found) and on a few fixed inputs.
#[test]
fn fuzz_inputs_agree_with_the_model() {
    for input in model_runs::fuzz_inputs("runtime_model") {
        check_from_bytes(&input);
    }
}

//! The runtime against its reference model (`runtime_model/`): seeded random
//! programs of green threads — channels of the three kinds, `Select`, a
//! `Mutex` and `Condvar`, sleeps and receive timeouts, joins, cancels, panics
//! with destructors that wait, several threads accepting on one listener —
//! every step's outcome compared with the model, and how `run` ends
//! (returned, or a deadlock reported).
//!
//! `FIBRA_MODEL_CASES` (default 2,000) and `FIBRA_MODEL_SEED` (the first seed,
//! to rerun a failing one alone) as in `fiber_model.rs`; `FIBRA_MODEL_TRACE=1`
//! prints each step as it runs (for a hang). `FIBRA_MODEL_FEATURES` chooses
//! the operations: `all`, or a comma-separated list of [`Features`] names;
//! without it, [`DEFAULT`].

#[path = "runtime_model/mod.rs"]
mod runtime_model;

use runtime_model::{Choices, Features, check, check_from_bytes};

/// Operations per program (all threads together), before it winds down.
const STEPS: u32 = 40;

/// Every feature whose programs pass on this branch. Off, and why:
/// - `socket`: several green threads accepting on one listener lose wake-ups
///   (issue 22, item 4);
/// - `cancel_while_panicking`: cancelling a thread that unwinds from its own
///   panic, whose destructor waits, aborts the process (issue 22, item 3).
pub const DEFAULT: Features = Features {
    channels: true,
    select: true,
    mutex: true,
    condvar: true,
    sleep: true,
    join: true,
    cancel: true,
    panic: true,
    socket: false,
    cancel_while_panicking: false,
};

const ALL: Features = Features {
    channels: true,
    select: true,
    mutex: true,
    condvar: true,
    sleep: true,
    join: true,
    cancel: true,
    panic: true,
    socket: true,
    cancel_while_panicking: true,
};

/// [`DEFAULT`], or what `FIBRA_MODEL_FEATURES` names.
fn features() -> Features {
    let Ok(names) = std::env::var("FIBRA_MODEL_FEATURES") else {
        return DEFAULT;
    };
    if names.trim() == "all" {
        return ALL;
    }
    let mut on = Features::default();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let switch = match name {
            "channels" => &mut on.channels,
            "select" => &mut on.select,
            "mutex" => &mut on.mutex,
            "condvar" => &mut on.condvar,
            "sleep" => &mut on.sleep,
            "join" => &mut on.join,
            "cancel" => &mut on.cancel,
            "panic" => &mut on.panic,
            "socket" => &mut on.socket,
            "cancel_while_panicking" => &mut on.cancel_while_panicking,
            _ => panic!("FIBRA_MODEL_FEATURES: no feature {name:?}"),
        };
        *switch = true;
    }
    on
}

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
    let features = features();
    for seed in seeds() {
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
    let corpus =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/runtime_model");
    let mut inputs: Vec<Vec<u8>> = vec![vec![], (0..=255).collect(), (0..=255).rev().collect()];
    if let Ok(entries) = std::fs::read_dir(corpus) {
        inputs.extend(entries.map(|entry| std::fs::read(entry.unwrap().path()).unwrap()));
    }
    for input in inputs {
        check_from_bytes(&input, features());
    }
}

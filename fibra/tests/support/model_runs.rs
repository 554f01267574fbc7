//! What the model-based tests (`tests/fiber_model.rs`, `tests/runtime_model.rs`)
//! run their models on: a range of seeds, and the inputs of their fuzz
//! target's corpus.

/// The seeds to run: from `FIBRA_MODEL_SEED` (0), `FIBRA_MODEL_CASES` of them
/// (`default_cases`), so that a failing seed reruns alone.
pub fn seeds(default_cases: u64) -> std::ops::Range<u64> {
    let var = |name: &str, default: u64| {
        std::env::var(name).map_or(default, |n| {
            n.parse().unwrap_or_else(|_| panic!("{name}: a number"))
        })
    };
    let first = var("FIBRA_MODEL_SEED", 0);
    first..first + var("FIBRA_MODEL_CASES", default_cases)
}

/// The fuzz target `target`'s corpus (a regression test of what the fuzzer
/// found), after a few fixed inputs: none, every byte up, every byte down.
pub fn fuzz_inputs(target: &str) -> Vec<Vec<u8>> {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut inputs: Vec<Vec<u8>> = vec![vec![], (0..=255).collect(), (0..=255).rev().collect()];
    if let Ok(entries) = std::fs::read_dir(corpus) {
        inputs.extend(entries.map(|entry| std::fs::read(entry.unwrap().path()).unwrap()));
    }
    inputs
}

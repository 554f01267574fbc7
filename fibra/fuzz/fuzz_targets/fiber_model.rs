//! Turns arbitrary bytes into a sequence of fiber (or generator) operations
//! and checks each step against the reference model of `tests/model/mod.rs`,
//! the same code `cargo test -p fibra --test fiber_model` runs: one copy.
//! A difference aborts, printing the sequence, which libFuzzer reports as a crash.

#![no_main]

use libfuzzer_sys::fuzz_target;

// The tests use the seeded and scripted parts of the model; this target only
// the byte-driven entry.
#[allow(dead_code)]
#[path = "../../tests/model/mod.rs"]
mod model;

fuzz_target!(|input: &[u8]| model::check_from_bytes(input));

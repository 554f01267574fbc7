//! Turns arbitrary bytes into a program of green threads and checks each step
//! against the reference model of `tests/runtime_model/`, the same code
//! `cargo test -p fibra --test runtime_model` runs: one copy. A difference
//! (or a hang, after the model's watchdog time) aborts, printing the program,
//! which libFuzzer reports as a crash.

#![no_main]

use libfuzzer_sys::fuzz_target;

// The tests use the seeded part of the harness; this target only the
// byte-driven entry.
#[allow(dead_code)]
#[path = "../../tests/runtime_model/mod.rs"]
mod runtime_model;

fuzz_target!(|input: &[u8]| runtime_model::check_from_bytes(input));

#!/usr/bin/env bash
# The model checker over fibra's cross-thread wake paths: the runtime's remote
# ring and queue, the sleeping handshake with the poller, the last Unparker's
# drop, a wake racing the end of a runtime, and block_on's waker — the real
# code, built with loom's atomics, lock and cell in place of std's
# (`--cfg fibra_loom`, see fibra/src/sync_prims.rs). loom runs each model test
# once per interleaving that the C11 memory model allows (bounded only where
# a test says so) and fails on a lost wake (a deadlock), a broken assertion,
# or two overlapping accesses to a cell; each test prints how many
# interleavings it explored.
#
#   scripts/model-check.sh            (from the project's root; a few minutes on 2 cores)
#
# Its own target directory, so that the cfg does not rebuild the usual one.
set -euo pipefail
cd "$(dirname "$0")/.."
RUSTFLAGS="${RUSTFLAGS:-} --cfg fibra_loom" \
    cargo test -p fibra --release --lib --target-dir target/model-check \
    model_check -- --nocapture --test-threads=2

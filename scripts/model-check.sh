#!/usr/bin/env bash
# The model checker over fibra's cross-thread wake paths: the runtime's remote
# ring and queue, the sleeping handshake with the poller, the last Unparker's
# drop, a wake racing the end of a runtime, block_on's waker, a Ractor
# mailbox's wake, and the wakes of sync::Queue/SizedQueue (push, pop, close),
# sync::oneshot and sync::watch — the real
# code, built with loom's atomics, lock and cell in place of std's
# (`--cfg fibra_loom`, see fibra/src/sync_prims.rs). loom runs each model test
# once per interleaving that the C11 memory model allows with at most 2
# preemptions per interleaving (LOOM_MAX_PREEMPTIONS=N for another bound; the
# bound is what keeps the three-thread models to minutes), and fails on a lost
# wake (a deadlock: a thread parked that nothing will unpark), a broken
# assertion, or two overlapping accesses to a cell; each test prints how many
# interleavings it explored.
#
#   scripts/model-check.sh            (from the project's root; about 2 minutes on 2 cores, 80 s of it the tests)
#
# Its own target directory, so that the cfg does not rebuild the usual one.
set -euo pipefail
cd "$(dirname "$0")/.."
RUSTFLAGS="${RUSTFLAGS:-} --cfg fibra_loom" \
    cargo test -p fibra --release --lib --target-dir target/model-check \
    model_check -- --nocapture --test-threads=2

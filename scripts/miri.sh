#!/usr/bin/env bash
# Runs fibra's unit tests under Miri, which checks them for undefined behaviour:
# the messages that cross a switch (fiber/message.rs: uninitialised bytes,
# pointer provenance), the stack-size arithmetic and the stack pool's
# bookkeeping, the timers (a lane and a lazy heap) and the wait lists.
#
# What Miri cannot reach: the context switch and the stack bootstrap are inline
# and naked assembly (arch/), which Miri does not run, and with them every test
# that runs a fiber, a green thread or a Ractor. Those are covered instead by
# the model-based fiber test (tests/fiber_model.rs), the regression tests of
# tests/soundness.rs, valgrind memcheck (scripts/memcheck.sh) and
# ThreadSanitizer (scripts/tsan.sh). Under Miri, fibra installs no signal
# handler and gives the kernel no madvise advice (Miri runs neither); the pool's
# bookkeeping is the same.
#
# Needs the nightly toolchain's miri and rust-src components; they are added
# if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  echo "miri: adding the nightly toolchain's miri and rust-src components"
  rustup component add --toolchain nightly miri rust-src ||
    rustup toolchain install nightly --profile minimal --component miri,rust-src
fi
cargo +nightly miri test -p fibra --lib

#!/usr/bin/env bash
# The project's tests, exactly as the README and CI run them: every crate's unit,
# behaviour and doc tests; fibra-http's HTTPS tests (feature tls); fibra's defined
# outcomes under panic = "abort"; fibra's unit tests under Miri; then fibra's and
# fibra-http's tests again under valgrind memcheck.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo test -p fibra-http --features tls --test tls
cargo run -q -p fibra-check-panic-abort --profile abort
scripts/miri.sh
scripts/memcheck.sh

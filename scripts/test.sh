#!/usr/bin/env bash
# The project's tests, exactly as the README and CI run them: every crate's unit,
# behaviour and doc tests, then fibra's and fibra-http's tests again under valgrind memcheck.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
scripts/memcheck.sh

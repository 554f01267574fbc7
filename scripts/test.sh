#!/usr/bin/env bash
# The project's tests, exactly as the README and CI run them: every crate's unit,
# behaviour and doc tests (the user's guide's examples among them, as the
# fibra-guide crate's doc tests); fibra-http's HTTPS tests (feature tls) and its JSON
# API's tests and doc examples (feature serde); its middleware's tests and
# access log's doc example (feature log), and the access log as tracing
# events (feature tracing); fibra's tokio
# bridge (feature tokio, its tests and doc examples); green threads' tracing
# spans (feature tracing); fibra's and fibra-http's socket tests with
# streams received through io_uring; fibra's defined
# outcomes under panic = "abort"; fibra's unit tests under Miri; the model
# checker (loom) over the cross-thread wake paths; the compaction, handle and
# cross-thread tests under ThreadSanitizer; then fibra's and fibra-http's tests
# again under valgrind memcheck.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo test -p fibra-http --features tls --test tls
cargo test -p fibra-http --features tls --test upgrade
cargo test -p fibra-http --features serde,tracing --test json_api
cargo test -p fibra-http --features serde --doc
cargo test -p fibra-http --features log --test middleware
cargo test -p fibra-http --features log --doc middleware
cargo test -p fibra-http --features tracing --test access_log_tracing
cargo test -p fibra --features tokio --test tokio_bridge
cargo test -p fibra --features tokio --doc tokio
cargo test -p fibra --features tracing --test tracing_spans --test report_events
# TCP streams' receives through io_uring (fibra's runtime::Builder::io_uring):
# fibra's socket tests and fibra-http's tests again, on the ring.
FIBRA_IO_URING=1 cargo test -p fibra --test net --test timeout --test io_async --test blocking_redis
FIBRA_IO_URING=1 cargo test -p fibra-http --tests
# The stall line's release default (1 s), with its system call named.
cargo test --release -p fibra --test diagnostics
cargo run -q -p fibra-check-panic-abort --profile abort
scripts/miri.sh
scripts/model-check.sh
scripts/tsan.sh --test compaction --test cross_thread --test handle
scripts/memcheck.sh

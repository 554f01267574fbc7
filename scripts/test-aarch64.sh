#!/usr/bin/env bash
# fibra's and fibra-http's tests on aarch64 Linux, cross-built on this machine
# and run under qemu-user: .cargo/config.toml names the linker and the runner, so
# this is `cargo test --target aarch64-unknown-linux-gnu`, with what a Debian
# machine lacks installed first (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross,
# qemu-user, the Rust target).
#
#   1. every unit, behaviour and doc test of fibra and fibra-http, debug build;
#   2. fibra's fiber tests again in a release build, where the switch is inlined
#      and values stay in callee-saved registers across it (the d8-d15 test
#      catches a missing clobber only there);
#   3. with --bench: fibra-bench's e1 (the switch) at --quick size, to show it
#      builds and runs on aarch64; its times measure qemu, not a CPU.
#
# Nothing is skipped: the child-process tests (stack overflow, aborts, the seed
# server) start their child through qemu too (FIBRA_TEST_RUNNER), and the scale
# tests (800,000 messages, 10,000 connections) finish under qemu in seconds to a
# minute. Two tests hold 20,000 parked stacks at once there instead of 100,000:
# qemu ignores MADV_GUARD_INSTALL, so each guard is an mprotect that costs map
# entries, and fibra refuses stacks past about 28,600 at the default
# vm.max_map_count (tests/support/crowd.rs); tests/map_count.rs reaches that wall.
# A machine with an aarch64 CPU runs `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu

need=()
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/libc.so.6 ] || need+=(libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test-aarch64: installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "test-aarch64: missing ${need[*]} (apt-get install ${need[*]})" >&2
    exit 2
  fi
fi
rustup target list --installed | grep -qx "$target" || rustup target add "$target"

cargo test -p fibra -p fibra-http --target "$target"
cargo test --release -p fibra --target "$target" --test fiber
if [ "${1:-}" = --bench ]; then
  cargo run --release -p fibra-bench --target "$target" -- --quick e1 \
    --out target/fibra-bench/aarch64
fi

#!/usr/bin/env bash
# Runs fibra's and fibra-http's tests (unit and behaviour tests, not doc tests) under valgrind
# memcheck: any invalid access, use of uninitialised memory or definite leak fails
# the run. Fiber stacks are registered with valgrind (fibra/src/stack/valgrind.rs),
# so it sees each context switch as a stack switch. Valgrind does not know
# process_madvise ("unhandled amd64-linux syscall: 440"): fibra then falls back
# to one madvise per stack, as on kernels older than 6.13, so that path is the
# one checked here.
#
#   scripts/memcheck.sh            # debug build
#   scripts/memcheck.sh --release  # optimised build
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "memcheck: installing valgrind"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
  else
    echo "memcheck: valgrind is missing (apt-get install valgrind)" >&2
    exit 2
  fi
fi

binaries=$(cargo test -p fibra -p fibra-http --tests --no-run --message-format=json "$@" 2>/dev/null |
  grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
[ -n "$binaries" ] || { echo "memcheck: no test binaries were built" >&2; exit 2; }

# Scale tests (100,000 Ractors, 800,000 messages, 10,000 connections, a dump of
# 100,000 threads) take too long under valgrind; the same code paths run in the
# smaller tests. The redis test's 1,000 blocking calls grow the blocking pool to
# 512 OS threads, past valgrind's default --max-threads (500);
# tests/cross_thread.rs runs the same pool with fewer. fibra-http's streaming
# tests that move 32 MiB and 10 MiB do the same as its smaller streaming tests.
skip=(--skip a_hundred_thousand_ractors_complete --skip eight_senders_times_a_hundred_thousand
  --skip ten_thousand_keep_alive_connections_at_once --skip a_dump_of_100_000_parked_threads
  --skip a_thousand_green_threads_use_a_sync_redis_client_through_blocking
  --skip a_client_that_does_not_read_parks_the_writer --skip an_upload_reaches_a_streaming_handler_as_it_arrives)

# The fiber model's random sequences: 1,000 of each kind (not 10,000) keep its
# run under valgrind to seconds; the fuzz target runs them without limit. The
# runtime model's programs are dearer (OS threads, sockets, a watchdog): 100
# of them, and not its fuzz corpus (hundreds of programs, replayed natively by
# cargo test).
model_cases() {
  case "$(basename "$1")" in
    runtime_model-*) echo 100 ;;
    *) echo 1000 ;;
  esac
}
model_skip() {
  case "$(basename "$1")" in
    runtime_model-*) echo --skip fuzz_inputs_agree_with_the_model ;;
  esac
}

# Valgrind runs one thread at a time, handing its lock from thread to thread.
# With its default unfair lock, a thread that spins on another's progress (the
# waker of tests/compaction.rs unparks in a loop, yielding every 64 unparks)
# can take the lock back again and again and starve the thread it waits for:
# that binary took 2 s for the test alone, 147 s, 411 s or over 600 s in whole
# runs. --fair-sched=yes (a ticket lock) hands the lock round in turn: 10-15 s.
status=0
for bin in $binaries; do
  echo "memcheck: $(basename "$bin")"
  # A run that hangs (seen under valgrind before --fair-sched, never natively)
  # is retried once and reported, rather than stalling CI.
  for attempt in 1 2; do
    rc=0
    # shellcheck disable=SC2046 # model_skip prints whole words or nothing
    FIBRA_MODEL_CASES=$(model_cases "$bin") timeout 600 valgrind --quiet --fair-sched=yes --error-exitcode=99 --leak-check=full \
      --suppressions=scripts/valgrind.supp \
      --show-leak-kinds=definite --errors-for-leak-kinds=definite \
      "$bin" --test-threads=1 -q "${skip[@]}" $(model_skip "$bin") || rc=$?
    [ "$rc" = 124 ] && [ "$attempt" = 1 ] && { echo "memcheck: $(basename "$bin") timed out under valgrind; retrying once" >&2; continue; }
    break
  done
  [ "$rc" = 0 ] || status=1
done
[ "$status" = 0 ] && echo "memcheck: no errors" || echo "memcheck: errors found" >&2
exit "$status"

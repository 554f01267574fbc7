#!/usr/bin/env bash
# Instructions and system calls a round trip of `fibra-bench echo` costs
# (1,000 connections on one OS thread, client and server in one process,
# 64-byte messages), counted by callgrind and strace: figures that stay the
# same from run to run (within a few instructions), where the echo's round
# trips a second move by 10 % and more on a shared machine.
#
#   scripts/echo-instructions.sh                      # builds fibra-bench (release) here
#   scripts/echo-instructions.sh --bin PATH           # a fibra-bench built elsewhere (another commit)
#   scripts/echo-instructions.sh --runtime fibra      # one runtime (default: fibra,tokio)
#   scripts/echo-instructions.sh --reps 3             # each figure three times
#
# For each runtime it runs the echo's own child program, `fibra-bench
# --child echo 1000 R 64 RUNTIME`, twice under callgrind, for R = 20 and
# R = 100 round trips per connection, and prints (Ir at 100 - Ir at 20) /
# 80,000 of the OS thread that runs the echo (callgrind's thread 1; a
# watchdog thread, which wakes by the clock, is left out): start-up, the
# connections' setup and the shutdown cancel out, the runtime (parks, wakes,
# epoll, timers, metrics) and the sockets' code remain. Then the same two
# runs under `strace -c -f` give the system calls a round trip, by name, the
# same way. The callgrind files stay in the output folder (`--out DIR`, else
# a temporary one) for `callgrind_annotate`. Needs valgrind and strace.
set -euo pipefail

bin="" reps=1 out="" runtimes="fibra,tokio"
while [ $# -gt 0 ]; do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --runtime) runtimes=$2; shift 2 ;;
        *) echo "usage: $0 [--bin PATH] [--runtime NAME,...] [--reps N] [--out DIR]" >&2; exit 2 ;;
    esac
done
for tool in valgrind strace; do
    command -v $tool >/dev/null || { echo "$0: $tool is needed" >&2; exit 1; }
done
cd "$(dirname "$0")/.."
if [ -z "$bin" ]; then
    cargo build --release -q -p fibra-bench
    bin=target/release/fibra-bench
fi
out=${out:-$(mktemp -d)}
mkdir -p "$out"
connections=1000 small=20 large=100
trips=$((connections * (large - small)))

# Runs the echo on RUNTIME, R round trips per connection, under callgrind;
# prints the instructions its first thread spent.
instructions() {
    local runtime=$1 r=$2 file=$3
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$file" \
        "$bin" --child echo $connections "$r" 64 "$runtime" >"$file.stdout" 2>"$file.log" ||
        { echo "$0: $runtime failed under callgrind (see $file.log)" >&2; exit 1; }
    # Thread 1's file ends with its total ("totals: N").
    sed -n 's/^totals: \([0-9]*\)$/\1/p' "$file-01"
}

# Runs the echo on RUNTIME, R round trips per connection, under strace -c -f;
# prints "CALL COUNT" for each system call it made.
syscalls() {
    local runtime=$1 r=$2 file=$3
    strace -c -f -o "$file" "$bin" --child echo $connections "$r" 64 "$runtime" >/dev/null ||
        { echo "$0: $runtime failed under strace (see $file)" >&2; exit 1; }
    # The table's rows: "% time seconds usecs/call calls [errors] syscall".
    awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { print $NF, $4 }' "$file"
}

echo "a round trip of fibra-bench echo, $connections connections, 64 bytes: $bin"
printf '%-8s %s\n' runtime "Ir/round trip"
for runtime in ${runtimes//,/ }; do
    for rep in $(seq "$reps"); do
        a=$(instructions "$runtime" $small "$out/$runtime.$small.$rep.callgrind")
        b=$(instructions "$runtime" $large "$out/$runtime.$large.$rep.callgrind")
        awk -v r="$runtime" -v a="$a" -v b="$b" -v n=$trips \
            'BEGIN { printf "%-8s %.1f\n", r, (b - a) / n }'
    done
done
echo
echo "system calls a round trip (strace -c -f, the same difference):"
for runtime in ${runtimes//,/ }; do
    syscalls "$runtime" $small "$out/$runtime.$small.strace" >"$out/$runtime.$small.calls"
    syscalls "$runtime" $large "$out/$runtime.$large.strace" >"$out/$runtime.$large.calls"
    awk -v r="$runtime" -v n=$trips '
        FNR == NR { small[$1] = $2; next }
        { large[$1] = $2 }
        END {
            for (call in large) {
                d = (large[call] - small[call]) / n
                if (d >= 0.001) printf "  %-8s %-16s %.3f\n", r, call, d
            }
        }' "$out/$runtime.$small.calls" "$out/$runtime.$large.calls" | sort -k3,3nr
done
echo "callgrind files: $out"

#!/usr/bin/env bash
# Instructions a request that fibra-http's seed-server spends on GET /hello
# over real sockets, server only, counted by callgrind: a figure that stays
# the same from run to run (within a few instructions), where a wrk run's
# requests a second move by several per cent.
#
#   scripts/http-instructions.sh                  # builds seed-server (release, tls) here
#   scripts/http-instructions.sh --bin PATH       # a seed-server built elsewhere (another commit)
#   scripts/http-instructions.sh --reps 3         # each figure three times
#
# For each mode (threads, ractors) and each way of sending (keep-alive: one
# request in flight on each of 10 connections; pipelined: 20 at a time on
# each), it runs the server under callgrind twice, for 10,000 and for 50,000
# requests from a client outside valgrind (python3), ends it with SIGTERM and
# prints (Ir at 50,000 - Ir at 10,000) / 40,000: start-up and shutdown cancel
# out, the runtime (parks, wakes, epoll, timers, metrics) and fibra-http
# remain. The callgrind files stay in the output folder (`--out DIR`, else a
# temporary one) for `callgrind_annotate`. Needs valgrind and python3.
set -euo pipefail

bin="" reps=1 out=""
while [ $# -gt 0 ]; do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "usage: $0 [--bin PATH] [--reps N] [--out DIR]" >&2; exit 2 ;;
    esac
done
for tool in valgrind python3; do
    command -v $tool >/dev/null || { echo "$0: $tool is needed" >&2; exit 1; }
done
cd "$(dirname "$0")/.."
if [ -z "$bin" ]; then
    cargo build --release -q -p fibra-http --example seed-server --features tls
    bin=target/release/examples/seed-server
fi
out=${out:-$(mktemp -d)}
mkdir -p "$out"

# The client: CONNS connections, each sending its share of REQUESTS, DEPTH
# at a time, and checking every answer.
client=$(cat <<'EOF'
import socket, sys, threading
port, conns, total, depth = (int(a) for a in sys.argv[1:5])
request = b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
errors = []
def run():
    try:
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        for _ in range(total // conns // depth):
            s.sendall(request * depth)
            got = 0
            while got < depth:
                end = buf.find(b"\r\n\r\n")
                if end >= 0:
                    head = buf[:end].lower()
                    assert head.startswith(b"http/1.1 200"), head
                    length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
                    if len(buf) >= end + 4 + length:
                        assert buf[end + 4:end + 4 + length] == b"Hello, world!\n"
                        buf, got = buf[end + 4 + length:], got + 1
                        continue
                chunk = s.recv(65536)
                if not chunk:
                    raise EOFError("the server closed the connection")
                buf += chunk
        s.close()
    except Exception as err:
        errors.append(err)
threads = [threading.Thread(target=run) for _ in range(conns)]
for t in threads: t.start()
for t in threads: t.join()
sys.exit(f"client: {errors[0]!r}" if errors else 0)
EOF
)

# Runs the server in MODE under callgrind for REQUESTS, DEPTH deep; prints
# the instructions it spent.
measure() {
    local mode=$1 depth=$2 requests=$3 file=$4
    valgrind --tool=callgrind --callgrind-out-file="$file" "$bin" --mode "$mode" --port 0 \
        >"$file.stdout" 2>"$file.log" &
    local vg=$! port=""
    for _ in $(seq 600); do
        port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$file.stdout")
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { kill $vg; echo "$0: the server did not start (see $file.log)" >&2; exit 1; }
    python3 -c "$client" "$port" 10 "$requests" "$depth" || { kill $vg; exit 1; }
    kill -TERM $vg
    # A graceful shutdown with no connection left ends at once; a second
    # signal ends a server that did not.
    for _ in $(seq 300); do kill -0 $vg 2>/dev/null || break; sleep 0.1; done
    if kill -0 $vg 2>/dev/null; then
        echo "$0: $mode server still running 30 s after SIGTERM; sent another" >&2
        kill -TERM $vg
    fi
    wait $vg || true
    sed -n 's/.*Collected : \([0-9]*\)$/\1/p' "$file.log"
}

echo "instructions a request, GET /hello, 10 connections: $bin"
printf '%-8s %-11s %s\n' mode sending "Ir/request"
for mode in threads ractors; do
    for depth in 1 20; do
        sending=$([ $depth = 1 ] && echo keep-alive || echo "pipelined")
        for rep in $(seq "$reps"); do
            a=$(measure $mode $depth 10000 "$out/$mode.$depth.10000.$rep")
            b=$(measure $mode $depth 50000 "$out/$mode.$depth.50000.$rep")
            awk -v m=$mode -v s="$sending" -v a="$a" -v b="$b" \
                'BEGIN { printf "%-8s %-11s %.1f\n", m, s, (b - a) / 40000 }'
        done
    done
done
echo "callgrind files: $out"

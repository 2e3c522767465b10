#!/usr/bin/env bash
# 100,000 connections in a row against the thread, fork and prefork engines:
# nothing may be left behind (issue 3), and how fast each engine churns.
#
# For each engine this starts `servelab serve --status` in its own process,
# drives it with `servelab load --session 1` (one request per connection,
# `Connection: close` by the server after it), then compares the server's
# descriptors, threads, child processes and zombies before and after, checks
# the server's own counters (/-/status) against the client's, and records
# connections/s and the server's CPU per connection (the whole process tree:
# the master, its live workers, and reaped children via cutime/cstime).
#
# Usage: bench/conn-churn.sh [connections (100000)] [users (4)] [engines...]
# Env:   SERVELAB=path/to/binary (default: a release build), PORT (18131),
#        WORKERS (2, for prefork), OUT (bench/results/<date>).
# Writes $OUT/conn-churn.csv (one row per engine) and $OUT/conn-churn.md.
# Exits non-zero if any engine leaves something behind or miscounts.
set -euo pipefail

N=${1:-100000}
USERS=${2:-4}
shift $(( $# > 2 ? 2 : $# ))
ENGINES=("$@")
[ ${#ENGINES[@]} -gt 0 ] || ENGINES=(thread fork prefork)
PORT=${PORT:-18131}
WORKERS=${WORKERS:-2}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$HERE/bench/results/$(date -u +%Y-%m-%d)}
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

SERVELAB=${SERVELAB:-}
if [ -z "$SERVELAB" ]; then
    (cd "$HERE" && cargo build --release -q -p servelab)
    SERVELAB="${CARGO_TARGET_DIR:-$HERE/target}/release/servelab"
fi
mkdir -p "$WORK/www" "$OUT"
printf 'hello, world\n' > "$WORK/www/hello.txt"
CLK=$(getconf CLK_TCK)

# Descriptors, threads, live children, zombie children of a process.
probe() {
    local pid=$1 kids
    kids=$(ps --ppid "$pid" -o stat= 2>/dev/null || true)
    printf '%s %s %s %s\n' \
        "$(ls "/proc/$pid/fd" | wc -l)" \
        "$(ls "/proc/$pid/task" | wc -l)" \
        "$(printf '%s\n' "$kids" | grep -c '^[^Z]' || true)" \
        "$(printf '%s\n' "$kids" | grep -c '^Z' || true)"
}

# CPU ticks of a process and its children, live (utime+stime) and reaped (cutime+cstime).
tree_ticks() {
    local pid=$1 total=0 p
    for p in "$pid" $(ps --ppid "$pid" -o pid= 2>/dev/null || true); do
        # Fields after the command name: utime is 14, stime 15, cutime 16, cstime 17.
        total=$(( total + $(sed 's/.*) //' "/proc/$p/stat" | awk '{print $12+$13+$14+$15}') ))
    done
    echo "$total"
}

wait_port() {
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "server did not start" >&2
    return 1
}

status_counts() { # "accepted open" from /-/status
    python3 - "$PORT" <<'EOF'
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /-/status HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
j = json.loads(data.split(b"\r\n\r\n", 1)[1])
print(j["connections"]["accepted"], j["connections"]["open"])
EOF
}

CSV="$OUT/conn-churn.csv"
echo "engine,connections,users,seconds,conn_per_s,server_cpu_us_per_conn,errors,fds_before,fds_after,threads_before,threads_after,children_before,children_after,zombies_after,server_accepted,server_open_after" > "$CSV"
FAIL=0
for engine in "${ENGINES[@]}"; do
    "$SERVELAB" serve --engine "$engine" --workers "$WORKERS" --root "$WORK/www" \
        --port "$PORT" --log off --status 2> "$WORK/$engine.err" &
    SERVER_PID=$!
    wait_port
    read -r fd0 th0 ch0 _ < <(probe "$SERVER_PID")
    t0=$(tree_ticks "$SERVER_PID")
    "$SERVELAB" load -q --no-progress -c "$USERS" --session 1 -n "$N" -t 1 --max-error-rate 100% \
        --json "$WORK/$engine.json" "http://127.0.0.1:$PORT/hello.txt"
    t1=$(tree_ticks "$SERVER_PID")
    sleep 1 # let the last children be reaped and threads joined
    read -r fd1 th1 ch1 z1 < <(probe "$SERVER_PID")
    read -r accepted open < <(status_counts)
    read -r secs cps errors < <(python3 - "$WORK/$engine.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
errors = r["counts"]["errors"]
print(f'{r["duration_s"]:.3f} {r["counts"]["ok"] / r["duration_s"]:.0f} {errors}')
EOF
)
    cpu_us=$(python3 -c "print(f'{($t1 - $t0) / $CLK * 1e6 / $N:.1f}')")
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" || { echo "$engine: server exited with an error" >&2; FAIL=1; }
    SERVER_PID=""
    echo "$engine,$N,$USERS,$secs,$cps,$cpu_us,$errors,$fd0,$fd1,$th0,$th1,$ch0,$ch1,$z1,$accepted,$open" >> "$CSV"
    echo "$engine: $N connections in ${secs}s ($cps/s, ${cpu_us} us server CPU each), errors $errors; fds $fd0->$fd1, threads $th0->$th1, children $ch0->$ch1, zombies $z1; server accepted $accepted, open $open"
    # Nothing left behind. The server also saw wait_port's probe and the status
    # request itself (which is still open while it is answered): N + 2.
    if [ "$fd0" != "$fd1" ] || [ "$th0" != "$th1" ] || [ "$ch0" != "$ch1" ] || [ "$z1" != 0 ] \
        || [ "$errors" != 0 ] || [ "$accepted" != $((N + 2)) ] || [ "$open" != 1 ]; then
        echo "$engine: LEFT SOMETHING BEHIND OR MISCOUNTED" >&2
        FAIL=1
    fi
done

{
    echo "# Connection churn: $N connections in a row, $USERS users, one request each"
    echo
    echo "Machine: $(nproc) CPUs, $(uname -sr); command: bench/conn-churn.sh $N $USERS ${ENGINES[*]}"
    echo
    echo "| engine | conn/s | server CPU us/conn | errors | fds before→after | threads before→after | children before→after | zombies | accepted (N + probe + status) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    tail -n +2 "$CSV" | while IFS=, read -r e n u s c cpu err f0 f1 t0 t1 c0 c1 z acc op; do
        echo "| $e | $c | $cpu | $err | $f0→$f1 | $t0→$t1 | $c0→$c1 | $z | $acc |"
    done
} > "$OUT/conn-churn.md"
cat "$OUT/conn-churn.md"
exit $FAIL

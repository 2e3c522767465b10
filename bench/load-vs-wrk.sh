#!/usr/bin/env bash
# servelab load vs wrk: client CPU per request and requests/s, side by side.
#
# Issue 4's speed target: on this machine wrk spends about 9 us of client CPU per
# keep-alive 1 KiB request; `servelab load` must spend at most 0.9x wrk's CPU per
# request and reach at least 0.95x wrk's requests/s with the same connection count.
#
# Setup (as the issue asks): the server pinned to CPU 0 (nginx when installed,
# else `servelab serve`), the client pinned to CPU 1, one client thread each,
# keep-alive, a 1 KiB file. Client CPU is the user+system time of the client
# process measured by /usr/bin/time (the whole process, for both tools).
# The runs alternate (wrk, servelab, wrk, ...) so that drift hits both alike.
#
# Usage: bench/load-vs-wrk.sh [seconds per run (5)] [repeats (3)] [connections ("10 50 200")]
# Env:   SERVER=nginx|servelab (default: nginx if installed), SERVELAB=path/to/binary,
#        BASELINE=path/to/an older servelab binary: also runs its `load` in each
#        repeat (wrk, servelab, baseline, ...), to compare two versions of the
#        generator interleaved, against the same server, under the same drift;
#        ENGINE=<servelab engine> (default: the server's default), WORKERS (default: the
#        largest connection count), PORT (default 18090);
#        TLS=1: over HTTPS (nginx only): an ECDSA P-256 certificate made with
#        openssl in the temp dir, TLS 1.3 only, one suite (TLS_AES_128_GCM_SHA256),
#        keep-alive; neither client verifies the certificate (wrk never does;
#        servelab gets --insecure), so both do the same work per request.
# Output: a table on stdout, raw CSV in bench/results/<date>/load-vs-wrk-<server>.csv.
# Installs wrk with apt-get when it is missing (needs root).
set -euo pipefail

DUR=${1:-5}
REPEATS=${2:-3}
CONNS=${3:-"10 50 200"}
PORT=${PORT:-18090}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT="$HERE/bench/results/$(date -u +%Y-%m-%d)"
mkdir -p "$OUT"
WORK=$(mktemp -d)
chmod 755 "$WORK" # nginx workers run as an unprivileged user
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    if [ -n "${KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk; then
    echo "wrk not found: installing it with apt-get" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
need taskset || { echo "taskset (util-linux) is required" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is required (apt-get install time)" >&2; exit 1; }

SERVELAB=${SERVELAB:-}
if [ -z "$SERVELAB" ]; then
    (cd "$HERE" && cargo build --release -q -p servelab)
    SERVELAB="${CARGO_TARGET_DIR:-$HERE/target}/release/servelab"
fi

# The 1 KiB file.
mkdir -p "$WORK/www"
head -c 1024 /dev/zero | tr '\0' 'x' > "$WORK/www/1k.txt"
URL="http://127.0.0.1:$PORT/1k.txt"

SERVER=${SERVER:-$(need nginx && echo nginx || echo servelab)}
CSV="$OUT/load-vs-wrk-$SERVER.csv"
LOAD_TLS=()
LISTEN="listen 127.0.0.1:$PORT backlog=4096;"
if [ -n "${TLS:-}" ]; then
    [ "$SERVER" = nginx ] || { echo "TLS=1 needs SERVER=nginx" >&2; exit 1; }
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
    LISTEN="listen 127.0.0.1:$PORT ssl backlog=4096;
        ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
        ssl_protocols TLSv1.3; ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;"
    URL="https://127.0.0.1:$PORT/1k.txt"
    LOAD_TLS=(--insecure)
    CSV="$OUT/load-vs-wrk-$SERVER-tls.csv"
fi
case "$SERVER" in
nginx)
    mkdir -p "$WORK/nginx/logs"
    cat > "$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log crit;
events { worker_connections 20000; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    client_body_temp_path $WORK/nginx/tmp;
    server { $LISTEN root $WORK/www; }
}
EOF
    taskset -c 0 nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" &
    SERVER_PID=$!
    ;;
servelab)
    # The pool engine serves one connection per worker: give it one per client
    # connection (all on CPU 0), unless WORKERS says otherwise.
    maxc=$(printf '%s\n' $CONNS | sort -n | tail -1)
    taskset -c 0 "$SERVELAB" serve --root "$WORK/www" --addr "127.0.0.1:$PORT" --log off \
        ${ENGINE:+--engine "$ENGINE"} -w "${WORKERS:-$maxc}" --max-conns "$((maxc + 16))" &
    SERVER_PID=$!
    ;;
*) echo "SERVER must be nginx or servelab" >&2; exit 1 ;;
esac
for _ in $(seq 50); do
    if curl -sfk -o /dev/null "$URL" 2>/dev/null || (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    sleep 0.1
done

# The process whose CPU is the server's: nginx's single worker, or servelab itself.
if [ "$SERVER" = nginx ]; then
    SPID=$(pgrep -P "$SERVER_PID" | head -1)
else
    SPID=$SERVER_PID
fi
server_ticks() { awk '{ print $14 + $15 }' "/proc/$SPID/stat"; }
TCK=$(getconf CLK_TCK)

echo "tool,connections,repeat,requests,seconds,requests_per_s,cpu_s,cpu_us_per_request,server_cpu_us_per_request" > "$CSV"

# Runs "$@" pinned to CPU 1; prints "user+sys seconds".
cpu_of() {
    /usr/bin/time -f "%U %S" -o "$WORK/time" taskset -c 1 "$@" > "$WORK/out" 2>"$WORK/err" || {
        cat "$WORK/err" >&2; return 1; }
    awk '{ printf "%.3f", $1 + $2 }' "$WORK/time"
}

for c in $CONNS; do
    for r in $(seq "$REPEATS"); do
        # wrk: one thread, c connections.
        t0=$(server_ticks)
        cpu=$(cpu_of wrk -t1 -c"$c" -d"${DUR}s" "$URL")
        if grep -q "Non-2xx\|Socket errors" "$WORK/out"; then
            echo "wrk saw errors; the comparison would be meaningless:" >&2; cat "$WORK/out" >&2; exit 1
        fi
        reqs=$(awk '/requests in/ { print $1 }' "$WORK/out")
        rps=$(awk '/Requests\/sec/ { print $2 }' "$WORK/out")
        secs=$(awk -v n="$reqs" -v r="$rps" 'BEGIN { printf "%.3f", n / r }')
        t1=$(server_ticks)
        awk -v t=wrk -v c="$c" -v r="$r" -v n="$reqs" -v s="$secs" -v q="$rps" -v u="$cpu" \
            -v st=$((t1 - t0)) -v hz="$TCK" \
            'BEGIN { printf "%s,%d,%d,%d,%s,%s,%s,%.3f,%.3f\n", t, c, r, n, s, q, u, u * 1e6 / n, st / hz * 1e6 / n }' >> "$CSV"
        # servelab load: one thread, c users (one keep-alive connection each).
        t0=$(server_ticks)
        cpu=$(cpu_of "$SERVELAB" load -t 1 -c "$c" -d "${DUR}s" -q ${LOAD_TLS[@]+"${LOAD_TLS[@]}"} --json "$WORK/load.json" "$URL")
        read -r reqs secs rps < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
if r["counts"]["errors"]:
    sys.exit(f"servelab load saw errors: {r['errors']} {r['status']}")
print(r["counts"]["ok"], r["duration_s"], r["throughput"]["ok_per_s"])' "$WORK/load.json")
        t1=$(server_ticks)
        awk -v t=servelab -v c="$c" -v r="$r" -v n="$reqs" -v s="$secs" -v q="$rps" -v u="$cpu" \
            -v st=$((t1 - t0)) -v hz="$TCK" \
            'BEGIN { printf "%s,%d,%d,%d,%s,%s,%s,%.3f,%.3f\n", t, c, r, n, s, q, u, u * 1e6 / n, st / hz * 1e6 / n }' >> "$CSV"
        [ -n "${BASELINE:-}" ] || continue
        # The baseline binary, same flags (its JSON has the same fields read here).
        t0=$(server_ticks)
        cpu=$(cpu_of "$BASELINE" load -t 1 -c "$c" -d "${DUR}s" -q ${LOAD_TLS[@]+"${LOAD_TLS[@]}"} --json "$WORK/load.json" "$URL")
        read -r reqs secs rps < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
if r["counts"]["errors"]:
    sys.exit(f"baseline load saw errors: {r['errors']} {r['status']}")
print(r["counts"]["ok"], r["duration_s"], r["throughput"]["ok_per_s"])' "$WORK/load.json")
        t1=$(server_ticks)
        awk -v t=baseline -v c="$c" -v r="$r" -v n="$reqs" -v s="$secs" -v q="$rps" -v u="$cpu" \
            -v st=$((t1 - t0)) -v hz="$TCK" \
            'BEGIN { printf "%s,%d,%d,%d,%s,%s,%s,%.3f,%.3f\n", t, c, r, n, s, q, u, u * 1e6 / n, st / hz * 1e6 / n }' >> "$CSV"
    done
done

echo "server: $SERVER${TLS:+ (TLS 1.3)} pinned to CPU 0; clients pinned to CPU 1; ${DUR}s x $REPEATS per point"
python3 - "$CSV" <<'EOF'
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1])))
conns = sorted({int(r["connections"]) for r in rows})
print("medians; us/req = client CPU per request; srv = server CPU per request (wrk/load)")
print(f"{'conns':>6} {'wrk req/s':>11} {'load req/s':>11} {'ratio':>6}   {'wrk us/req':>10} {'load us/req':>11} {'ratio':>6}   {'srv us/req':>13}")
for c in conns:
    def med(tool, key):
        return st.median(float(r[key]) for r in rows if r["tool"] == tool and int(r["connections"]) == c)
    wq, lq = med("wrk", "requests_per_s"), med("servelab", "requests_per_s")
    wc, lc = med("wrk", "cpu_us_per_request"), med("servelab", "cpu_us_per_request")
    ws, ls = med("wrk", "server_cpu_us_per_request"), med("servelab", "server_cpu_us_per_request")
    print(f"{c:>6} {wq:>11.0f} {lq:>11.0f} {lq/wq:>6.2f}   {wc:>10.2f} {lc:>11.2f} {lc/wc:>6.2f}   {ws:>6.2f}/{ls:<6.2f}")
print("target: req/s ratio >= 0.95, CPU ratio <= 0.90")
# Means with 95% Student-t half-widths over the repeats, and Welch's t on the
# client CPU per request (a difference is called only when |t| says so).
T95 = [0, 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13]
def mean_hw(xs):
    m = st.mean(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, T95[min(len(xs) - 1, len(T95) - 1)] * st.stdev(xs) / len(xs) ** 0.5
print()
print("client CPU per request, us: mean +- 95% half-width (n repeats); Welch t of load vs wrk")
for c in conns:
    xs = {t: [float(r["cpu_us_per_request"]) for r in rows if r["tool"] == t and int(r["connections"]) == c]
          for t in ("wrk", "servelab")}
    (wm, wh), (lm, lh) = mean_hw(xs["wrk"]), mean_hw(xs["servelab"])
    n = len(xs["wrk"])
    se = (st.variance(xs["wrk"]) / n + st.variance(xs["servelab"]) / len(xs["servelab"])) ** 0.5 if n > 1 else float("nan")
    t = (lm - wm) / se if se and se == se else float("nan")
    print(f"{c:>6}  wrk {wm:.2f} +- {wh:.2f}  load {lm:.2f} +- {lh:.2f}  (n={n})  ratio {lm/wm:.3f}  t={t:.1f}")
if any(r["tool"] == "baseline" for r in rows):
    print()
    print("baseline = BASELINE binary, interleaved; medians, and the CPU ratio to wrk of each")
    print(f"{'conns':>6} {'base us/req':>11} {'load us/req':>11} {'load/base':>9}   {'base/wrk':>8} {'load/wrk':>8}")
    for c in conns:
        def med(tool, key):
            return st.median(float(r[key]) for r in rows if r["tool"] == tool and int(r["connections"]) == c)
        wc, lc, bc = (med(t, "cpu_us_per_request") for t in ("wrk", "servelab", "baseline"))
        print(f"{c:>6} {bc:>11.2f} {lc:>11.2f} {lc/bc:>9.3f}   {bc/wc:>8.2f} {lc/wc:>8.2f}")
EOF
echo "raw: $CSV"

#!/usr/bin/env bash
# servelab load --h2 vs h2load: requests/s and client CPU per request, side by side,
# against nginx over HTTP/2.
#
# Issue 29's targets: at the same connections and streams, `servelab load --h2`
# and h2load agree on requests/s within 5%, and load's client CPU per request is
# at most 1.0x h2load's.
#
# Setup (as shared/METHOD.md asks): nginx (one worker, its own config in a temp
# dir, never a system instance, stopped by pid) pinned to CPU 0 and serving a 1 KiB
# file over HTTP/2 (h2c prior knowledge by default; TLS=1: TLS 1.3 with ALPN h2
# and a self-signed ECDSA P-256 certificate); each client pinned to CPU 1 with one
# thread; the two clients run alternately (h2load, load, h2load, ...) so that drift
# hits both alike. Client CPU is the user+system time of the client process
# (/usr/bin/time, the whole process, for both tools); server CPU per request from
# the nginx worker's /proc/PID/stat ticks over each run.
#
# Usage: bench/h2-load-vs-h2load.sh [seconds per run (5)] [repeats (3)] ["CxM ..." ("10x10 50x10")]
#        C connections, M streams per connection (h2load -c C -m M; load -c C --streams M).
# Env:   SERVELAB=path/to/binary (default: a release build of this tree),
#        TLS=1 (see above), PORT (default 18095), KEEP=1 keeps the temp dir.
# Output: a table on stdout, raw CSV in bench/results/<date>/h2-load-vs-h2load[-tls].csv.
# Installs nginx and nghttp2-client (h2load) with apt-get when missing (needs root).
set -euo pipefail

DUR=${1:-5}
REPEATS=${2:-3}
POINTS=${3:-"10x10 50x10"}
PORT=${PORT:-18095}
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

export PATH="$PATH:/usr/sbin:/sbin"
need() { command -v "$1" >/dev/null 2>&1; }
install() {
    echo "$1 not found: installing $2 with apt-get" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
need nginx || install nginx nginx
need h2load || install h2load nghttp2-client
need taskset || { echo "taskset (util-linux) is required" >&2; exit 1; }
[ -x /usr/bin/time ] || install /usr/bin/time time

SERVELAB=${SERVELAB:-}
if [ -z "$SERVELAB" ]; then
    (cd "$HERE" && cargo build --release -q -p servelab)
    SERVELAB="${CARGO_TARGET_DIR:-$HERE/target}/release/servelab"
fi

mkdir -p "$WORK/www" "$WORK/nginx/logs"
head -c 1024 /dev/zero | tr '\0' 'x' > "$WORK/www/1k.txt"
SCHEME=http
MODE="h2c, prior knowledge"
LISTEN="listen 127.0.0.1:$PORT http2 backlog=4096;"
LOAD_TLS=()
CSV="$OUT/h2-load-vs-h2load.csv"
if [ -n "${TLS:-}" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
    LISTEN="listen 127.0.0.1:$PORT ssl http2 backlog=4096;
        ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
        ssl_protocols TLSv1.3;"
    SCHEME=https
    MODE="TLS 1.3, ALPN h2"
    LOAD_TLS=(--insecure)
    CSV="$OUT/h2-load-vs-h2load-tls.csv"
fi
URL="$SCHEME://127.0.0.1:$PORT/1k.txt"
# nginx's own limit is 128 streams per connection by default; the points ask
# for at most that. keepalive_requests also bounds HTTP/2 requests per
# connection (nginx 1.19.7 on): large, so no connection is closed mid-run.
cat > "$WORK/nginx/nginx.conf" <<CONF
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
CONF
taskset -c 0 nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" &
SERVER_PID=$!
for _ in $(seq 50); do
    if curl -sfk --http2-prior-knowledge -o /dev/null "$URL" 2>/dev/null \
        || curl -sfk --http2 -o /dev/null "$URL" 2>/dev/null; then break; fi
    sleep 0.1
done
SPID=$(pgrep -P "$SERVER_PID" | head -1)
server_ticks() { awk '{ print $14 + $15 }' "/proc/$SPID/stat"; }
TCK=$(getconf CLK_TCK)

echo "tool,connections,streams,repeat,requests,seconds,requests_per_s,cpu_s,cpu_us_per_request,server_cpu_us_per_request" > "$CSV"

# Runs "$@" pinned to CPU 1; prints "user+sys seconds".
cpu_of() {
    /usr/bin/time -f "%U %S" -o "$WORK/time" taskset -c 1 "$@" > "$WORK/out" 2>"$WORK/err" || {
        cat "$WORK/err" "$WORK/out" >&2; return 1; }
    awk '{ printf "%.3f", $1 + $2 }' "$WORK/time"
}
row() { # tool c m repeat requests seconds cpu ticks
    awk -v t="$1" -v c="$2" -v m="$3" -v r="$4" -v n="$5" -v s="$6" -v u="$7" -v st="$8" -v hz="$TCK" \
        'BEGIN { printf "%s,%d,%d,%d,%d,%.3f,%.1f,%s,%.3f,%.3f\n", t, c, m, r, n, s, n / s, u, u * 1e6 / n, st / hz * 1e6 / n }' >> "$CSV"
}

for point in $POINTS; do
    c=${point%x*}; m=${point#*x}
    for r in $(seq "$REPEATS"); do
        # h2load: one thread, c clients, m streams each, a timed run.
        t0=$(server_ticks)
        cpu=$(cpu_of h2load -t1 -c"$c" -m"$m" -D "$DUR" "$URL")
        t1=$(server_ticks)
        if ! grep -q " 0 failed, 0 errored, 0 timeout" "$WORK/out"; then
            echo "h2load saw errors; the comparison would be meaningless:" >&2; cat "$WORK/out" >&2; exit 1
        fi
        read -r reqs secs < <(awk '/^finished in/ { gsub("s,", "", $3); s = $3 } /^requests:/ { n = $8 } END { print n, s }' "$WORK/out")
        row h2load "$c" "$m" "$r" "$reqs" "$secs" "$cpu" $((t1 - t0))
        # servelab load --h2: one thread, c connections x m streams.
        t0=$(server_ticks)
        cpu=$(cpu_of "$SERVELAB" load --h2 -t 1 -c "$c" --streams "$m" -d "${DUR}s" -q \
            ${LOAD_TLS[@]+"${LOAD_TLS[@]}"} --json "$WORK/load.json" "$URL")
        t1=$(server_ticks)
        read -r reqs secs < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
if r["counts"]["errors"]:
    sys.exit(f"servelab load saw errors: {r['errors']} {r['status']}")
print(r["counts"]["ok"], r["duration_s"])' "$WORK/load.json")
        row load "$c" "$m" "$r" "$reqs" "$secs" "$cpu" $((t1 - t0))
    done
done

echo "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') over HTTP/2 ($MODE) pinned to CPU 0; clients pinned to CPU 1, one thread; ${DUR}s x $REPEATS per point, interleaved; load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$CSV" <<'PY'
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1])))
T95 = [0, 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13]
def mhw(xs):
    m = st.mean(xs)
    hw = T95[min(len(xs) - 1, len(T95) - 1)] * st.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else float("nan")
    return m, hw
print("mean ± 95% half-width over the repeats; ratio = load/h2load per repeat (paired)")
print(f"{'CxM':>7} {'h2load req/s':>17} {'load req/s':>17} {'ratio':>13}   {'h2load us/req':>14} {'load us/req':>14} {'ratio':>13}   {'srv us/req h2load/load':>22}")
points = sorted({(int(r["connections"]), int(r["streams"])) for r in rows})
for c, m in points:
    def col(tool, key):
        return [float(r[key]) for r in rows if r["tool"] == tool and int(r["connections"]) == c and int(r["streams"]) == m]
    hq, lq = col("h2load", "requests_per_s"), col("load", "requests_per_s")
    hc, lc = col("h2load", "cpu_us_per_request"), col("load", "cpu_us_per_request")
    hs, ls = col("h2load", "server_cpu_us_per_request"), col("load", "server_cpu_us_per_request")
    rq = [b / a for a, b in zip(hq, lq)]
    rc = [b / a for a, b in zip(hc, lc)]
    f = lambda xs, d: "{:.{d}f} ± {:.{d}f}".format(*mhw(xs), d=d)
    print(f"{c}x{m:<4} {f(hq, 0):>17} {f(lq, 0):>17} {f(rq, 3):>13}   {f(hc, 2):>14} {f(lc, 2):>14} {f(rc, 3):>13}   {st.mean(hs):>9.2f}/{st.mean(ls):<9.2f}")
print("targets: req/s ratio within 0.95..1.05; client CPU ratio <= 1.0")
PY
echo "raw: $CSV"

#!/usr/bin/env bash
# servelab load --h2 vs h2load against nginx over HTTP/2: requests/s, client CPU
# per request and server CPU per request, in paired, interleaved rounds.
#
# Issue 29's targets: at the same connections and streams, `servelab load --h2`
# and h2load agree on requests/s within 5%, and load's client CPU per request is
# at most 1.0x h2load's. One command gives every figure they need: for each mode
# (TLS, cleartext) and each point C x M, both clients' requests/s, the paired
# ratio load/h2load with its 95% interval over the rounds, and the same for
# client CPU per request.
#
# Setup (as shared/METHOD.md asks): nginx (one worker, its own config in a temp
# dir, never a system instance, stopped by pid) pinned to CPU 0, serving a 1 KiB
# file over HTTP/2: `tls` is TLS 1.3 with ALPN h2, a self-signed ECDSA P-256
# certificate and one suite, TLS_AES_128_GCM_SHA256 (h2load prefers it, rustls
# prefers AES-256: with one suite both clients make the server do the same
# work); `h2c` is cleartext with prior knowledge. Each client is pinned to CPU 1
# with one thread. In each round both clients run once, in alternating order
# (h2load first in odd rounds, load first in even ones), so that drift hits
# both alike; the ratio of a round is taken within its pair.
#
# What each figure is:
# - requests/s: requests answered within a window, over the window's length.
#   h2load: its "succeeded" count over -D seconds (h2load counts the streams that
#   close in its main duration, which starts as the clients start connecting,
#   and prints req_success / D as its req/s; its "finished in" also counts the
#   thread start and the stop, so it is not the window). load: `counts.ok` over
#   `duration_s` (its window, from the start, connects included, to the end of
#   its last loop turn).
# - client CPU per request: the client process's user+system time (rusage, from
#   /usr/bin/time) over its answered requests.
# - server CPU per request: the nginx worker's run time over the run, from
#   /proc/PID/schedstat (nanoseconds), over the client's answered requests.
# - client wake-ups per request: the client's voluntary context switches (it
#   blocked in epoll_wait and was woken) over its answered requests, and the
#   IPIs CPU 1 received per request (/proc/interrupts, RES + CAL: a wake-up of a
#   thread on another CPU is sent as one). On loopback the server's send
#   delivers the segment and wakes the client in the server's own context, so
#   a client that sleeps more often costs the server more per request: at
#   50x10 over TLS load blocked 0.35-0.44 times per request and h2load
#   0.11-0.12, and nginx spent 17.9-19.1 us per request under load against
#   16.1-16.5 under h2load (bench/results/2026-12-04/h2-wakeups/README.md).
# - with PERF=1, also system calls per request of the server and of the client
#   (perf stat, raw_syscalls:sys_enter), to see how each client's pattern of
#   writes makes the server batch.
# - TCP segments per request (the kernel's Tcp OutSegs over the run: on loopback
#   the server's and the client's together) and delayed ACKs per request
#   (TcpExt DelayedACKs): whether a client's traffic takes more packets. In the
#   CSV only (bench/results/2026-12-04/h2-default/s1: over h2c, 3.4-3.7 under
#   h2load and 3.5-3.9 under load, no delayed ACKs).
#
# Usage: bench/h2-load-vs-h2load.sh [seconds per run (5)] [rounds (5)]
#                                   ["CxM ..." ("50x10 10x10 10x100")] ["modes" ("tls h2c")]
#        C connections, M streams per connection (h2load -c C -m M; load -c C --streams M).
# Env:   SERVELAB=path/to/binary (default: a release build of this tree);
#        BASELINE=path/to/another servelab: its `load --h2` runs in each round too
#        (a third client, "base", in the rotation), to compare two versions of load;
#        PERF=1 (see above); PORT (default 18095); KEEP=1 keeps the temp dir.
# The paired ratio is printed twice: the arithmetic mean of the rounds' ratios
# ± its 95% t half-width, and their geometric mean with its 95% interval (from
# the ratios' logarithms; symmetric, and not pulled up when the server's cost
# per request varies a lot from run to run: bench/results/2026-12-04/h2-default).
# Output: a table per mode on stdout; raw CSV in bench/results/<date>/h2-load-vs-h2load.csv
#         (h2-load-vs-h2load-2.csv, -3, ... when that file is already there: none is overwritten).
# Installs nginx, nghttp2-client (h2load) and time with apt-get when missing (needs root).
set -euo pipefail

DUR=${1:-5}
ROUNDS=${2:-5}
POINTS=${3:-"50x10 10x10 10x100"}
MODES=${4:-"tls h2c"}
PORT=${PORT:-18095}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT="$HERE/bench/results/$(date -u +%Y-%m-%d)"
mkdir -p "$OUT"
WORK=$(mktemp -d)
chmod 755 "$WORK" # nginx workers run as an unprivileged user
SERVER_PID=""
stop_server() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    SERVER_PID=""
}
cleanup() {
    stop_server
    if [ -n "${KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

for m in $MODES; do
    case $m in tls|h2c) ;; *) echo "mode $m: give tls or h2c" >&2; exit 2 ;; esac
done
for p in $POINTS; do
    [[ $p =~ ^[0-9]+x[0-9]+$ ]] || { echo "point $p: give CxM, e.g. 50x10" >&2; exit 2; }
done

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
if [ -n "${PERF:-}" ]; then need perf || { echo "PERF=1 needs perf" >&2; exit 1; }; fi

SERVELAB=${SERVELAB:-}
if [ -z "$SERVELAB" ]; then
    (cd "$HERE" && cargo build --release -q -p servelab)
    SERVELAB="${CARGO_TARGET_DIR:-$HERE/target}/release/servelab"
fi
CLIENTS="h2load load"
if [ -n "${BASELINE:-}" ]; then CLIENTS="h2load load base"; fi

mkdir -p "$WORK/www" "$WORK/nginx/logs"
head -c 1024 /dev/zero | tr '\0' 'x' > "$WORK/www/1k.txt"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null

# Starts nginx for mode $1; sets SERVER_PID, SPID (the worker) and URL.
start_server() {
    local listen
    if [ "$1" = tls ]; then
        listen="listen 127.0.0.1:$PORT ssl http2 backlog=4096;
        ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
        ssl_protocols TLSv1.3; ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;"
        URL="https://127.0.0.1:$PORT/1k.txt"
    else
        listen="listen 127.0.0.1:$PORT http2 backlog=4096;"
        URL="http://127.0.0.1:$PORT/1k.txt"
    fi
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
    server { $listen root $WORK/www; }
}
CONF
    taskset -c 0 nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" &
    SERVER_PID=$!
    local up=""
    for _ in $(seq 50); do
        if curl -sfk --http2-prior-knowledge -o /dev/null "$URL" 2>/dev/null \
            || curl -sfk --http2 -o /dev/null "$URL" 2>/dev/null; then up=1; break; fi
        sleep 0.1
    done
    [ -n "$up" ] || { echo "nginx did not come up on $URL" >&2; exit 1; }
    SPID=$(pgrep -P "$SERVER_PID" | head -1)
}
server_ns() { awk '{ print $1 }' "/proc/$SPID/schedstat"; }
# A counter of the kernel's TCP statistics, by name: $1 the file (/proc/net/snmp
# or /proc/net/netstat), $2 the line's prefix (Tcp: or TcpExt:), $3 the field.
# Loopback counts both ends, so the deltas over a run are the segments of the
# server and of the client together (the machine runs nothing else meanwhile).
tcp_counter() {
    awk -v p="$2" -v f="$3" '$1 == p { if (!h) { for (i = 2; i <= NF; i++) if ($i == f) k = i; h = 1 } else print $k }' "$1"
}
tcp_segs() { echo $(( $(tcp_counter /proc/net/snmp Tcp: OutSegs) )); }
delayed_acks() { echo $(( $(tcp_counter /proc/net/netstat TcpExt: DelayedACKs) )); }
# Rescheduling and function-call IPIs CPU 1 (the client's) has received.
cpu1_ipis() { awk '$1 == "RES:" || $1 == "CAL:" { n += $3 } END { print n + 0 }' /proc/interrupts; }

# A new file per invocation: an earlier run's CSV of the same day is never overwritten.
CSV="$OUT/h2-load-vs-h2load.csv"
csv_n=1
while [ -e "$CSV" ]; do
    csv_n=$((csv_n + 1))
    CSV="$OUT/h2-load-vs-h2load-$csv_n.csv"
done
echo "mode,tool,connections,streams,round,order,requests,seconds,requests_per_s,cpu_s,cpu_us_per_request,server_cpu_us_per_request,server_syscalls_per_request,client_syscalls_per_request,client_wakeups_per_request,cpu1_ipis_per_request,tcp_segments_per_request,delayed_acks_per_request" > "$CSV"

# Runs "$@" pinned to CPU 1 (under perf stat with PERF=1, the server's worker
# counted alongside); sets CPU (user+sys seconds), SYS_SERVER and SYS_CLIENT
# (system calls, or "" without PERF).
run_client() {
    SYS_SERVER=""
    SYS_CLIENT=""
    local sp=""
    if [ -n "${PERF:-}" ]; then
        perf stat -x, -e raw_syscalls:sys_enter -p "$SPID" -o "$WORK/perf-server" &
        sp=$!
        sleep 0.1
        set -- perf stat -x, -e raw_syscalls:sys_enter -o "$WORK/perf-client" -- "$@"
    fi
    if ! /usr/bin/time -f "%U %S %w" -o "$WORK/time" taskset -c 1 "$@" > "$WORK/out" 2>"$WORK/err"; then
        cat "$WORK/err" "$WORK/out" >&2
        exit 1
    fi
    CPU=$(awk '{ printf "%.3f", $1 + $2 }' "$WORK/time")
    WAKES=$(awk '{ print $3 }' "$WORK/time")
    if [ -n "$sp" ]; then
        kill -INT "$sp"; wait "$sp" || true
        SYS_SERVER=$(awk -F, '/raw_syscalls/ { print $1 }' "$WORK/perf-server")
        SYS_CLIENT=$(awk -F, '/raw_syscalls/ { print $1 }' "$WORK/perf-client")
    fi
}

# One run of client $1 at $2 connections x $3 streams; appends a CSV row.
measure() {
    local tool=$1 c=$2 m=$3 round=$4 order=$5 reqs secs s0 s1
    s0=$(server_ns)
    local i0 g0 d0
    i0=$(cpu1_ipis)
    g0=$(tcp_segs)
    d0=$(delayed_acks)
    case $tool in
        h2load)
            run_client h2load -t1 -c"$c" -m"$m" -D "$DUR" "$URL"
            if ! grep -q " 0 failed, 0 errored, 0 timeout" "$WORK/out"; then
                echo "h2load saw errors; the comparison would be meaningless:" >&2; cat "$WORK/out" >&2; exit 1
            fi
            reqs=$(awk '/^requests:/ { print $8 }' "$WORK/out")
            secs=$DUR
            ;;
        load|base)
            local bin=$SERVELAB
            [ "$tool" = base ] && bin=$BASELINE
            rm -f "$WORK/load.json"
            run_client "$bin" load --h2 -t 1 -c "$c" --streams "$m" -d "${DUR}s" -q --insecure \
                --json "$WORK/load.json" "$URL"
            read -r reqs secs < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
if r["counts"]["errors"]:
    sys.exit(f"servelab load saw errors: {r['"'"'errors'"'"']} {r['"'"'status'"'"']}")
print(r["counts"]["ok"], r["duration_s"])' "$WORK/load.json")
            ;;
    esac
    s1=$(server_ns)
    local i1 g1 d1
    i1=$(cpu1_ipis)
    g1=$(tcp_segs)
    d1=$(delayed_acks)
    awk -v mode="$MODE" -v t="$tool" -v c="$c" -v m="$m" -v r="$round" -v o="$order" -v n="$reqs" \
        -v s="$secs" -v u="$CPU" -v sn=$((s1 - s0)) -v ss="$SYS_SERVER" -v sc="$SYS_CLIENT" \
        -v w="$WAKES" -v ip=$((i1 - i0)) -v g=$((g1 - g0)) -v d=$((d1 - d0)) \
        'BEGIN { printf "%s,%s,%d,%d,%d,%d,%d,%.4f,%.1f,%s,%.3f,%.3f,%s,%s,%.4f,%.4f,%.4f,%.4f\n", mode, t, c, m, r, o, n, s,
                 n / s, u, u * 1e6 / n, sn / 1e3 / n, ss == "" ? "" : sprintf("%.3f", ss / n),
                 sc == "" ? "" : sprintf("%.3f", sc / n), w / n, ip / n, g / n, d / n }' >> "$CSV"
}

for MODE in $MODES; do
    start_server "$MODE"
    for point in $POINTS; do
        c=${point%x*}; m=${point#*x}
        for r in $(seq "$ROUNDS"); do
            order=$CLIENTS
            # Odd rounds in the listed order, even rounds reversed.
            if [ $((r % 2)) -eq 0 ]; then order=$(echo "$CLIENTS" | tr ' ' '\n' | tac | tr '\n' ' '); fi
            i=0
            for tool in $order; do
                i=$((i + 1))
                measure "$tool" "$c" "$m" "$r" "$i"
            done
        done
    done
    stop_server
done

echo "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') over HTTP/2 pinned to CPU 0 (tls: TLS 1.3, ALPN h2, TLS_AES_128_GCM_SHA256; h2c: prior knowledge); clients pinned to CPU 1, one thread; ${DUR}s runs, $ROUNDS rounds per point, order alternating; load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$CSV" <<'PY'
import csv, math, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1])))
# Student's t, two-sided 95%, by degrees of freedom (1-30; then 40, 60, 120).
T95 = [0, 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13,
       2.12, 2.11, 2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05, 2.05, 2.04]
def t95(df):
    if df < len(T95):
        return T95[df]
    return 2.04 if df <= 40 else 2.02 if df <= 60 else 2.00 if df <= 120 else 1.98
def mhw(xs):
    m = st.mean(xs)
    hw = t95(len(xs) - 1) * st.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else float("nan")
    return m, hw
f = lambda xs, d: "{:.{d}f} ± {:.{d}f}".format(*mhw(xs), d=d)
# The geometric mean of paired ratios, with its interval from their logarithms:
# symmetric (h2load/load reads as the reciprocal), where the arithmetic mean of
# ratios leans high when both rates vary (E[1/Y] > 1/E[Y]).
def geo(xs):
    if len(xs) < 2:
        return "n/a"
    m, hw = mhw([math.log(x) for x in xs])
    return f"{math.exp(m):.3f} ({math.exp(m - hw):.3f}..{math.exp(m + hw):.3f})"

tools = [t for t in ("load", "base") if any(r["tool"] == t for r in rows)]
print("mean ± 95% half-width over the rounds; ratios are tool/h2load within each round (paired)")
for mode in dict.fromkeys(r["mode"] for r in rows):
    print(f"\n{mode}:")
    head = f"{'CxM':>7} {'tool':>6} {'req/s':>17} {'req/s ratio':>15} {'geometric (95%)':>21} {'client us/req':>14} {'ratio':>15} {'server us/req':>14} {'wakes/req':>9} {'IPIs/req':>9}"
    perf = any(r["server_syscalls_per_request"] for r in rows if r["mode"] == mode)
    if perf:
        head += f" {'srv sys/req':>11} {'cli sys/req':>11}"
    print(head)
    points = sorted({(int(r["connections"]), int(r["streams"])) for r in rows if r["mode"] == mode},
                    key=lambda p: (-p[0], p[1]))
    for c, m in points:
        sel = [r for r in rows if r["mode"] == mode and int(r["connections"]) == c and int(r["streams"]) == m]
        by = lambda tool, key: {int(r["round"]): float(r[key]) for r in sel if r["tool"] == tool and r[key] != ""}
        for tool in ["h2load"] + tools:
            q, cu, su = by(tool, "requests_per_s"), by(tool, "cpu_us_per_request"), by(tool, "server_cpu_us_per_request")
            line = f"{c}x{m:<4} {tool:>6} {f(list(q.values()), 0):>17}"
            if tool == "h2load":
                line += f" {'':>15} {'':>21} {f(list(cu.values()), 2):>14} {'':>15}"
            else:
                hq, hc = by("h2load", "requests_per_s"), by("h2load", "cpu_us_per_request")
                rq = [q[k] / hq[k] for k in q if k in hq]
                rc = [cu[k] / hc[k] for k in cu if k in hc]
                line += f" {f(rq, 3):>15} {geo(rq):>21} {f(list(cu.values()), 2):>14} {f(rc, 3):>15}"
            line += f" {f(list(su.values()), 2):>14}"
            wk, ip = by(tool, "client_wakeups_per_request"), by(tool, "cpu1_ipis_per_request")
            line += f" {st.mean(wk.values()) if wk else float('nan'):>9.3f} {st.mean(ip.values()) if ip else float('nan'):>9.3f}"
            if perf:
                ss, sc = by(tool, "server_syscalls_per_request"), by(tool, "client_syscalls_per_request")
                line += f" {st.mean(ss.values()) if ss else float('nan'):>11.2f} {st.mean(sc.values()) if sc else float('nan'):>11.2f}"
            print(line)
print("\ntargets: load/h2load req/s within 0.95..1.05; client CPU per request ratio <= 1.0")
PY
echo "raw: $CSV"

#!/usr/bin/env bash
# `serve --compress` against nginx's `gzip on`: server CPU per request and bytes
# per response, for one realistic text page.
#
# Servers (each one process, one worker, pinned to CPU 0; never a system nginx:
# each has its own configuration, pid and logs in a temporary directory):
#   servelab-plain   servelab serve --engine epoll (no --compress)
#   servelab-gzip    servelab serve --engine epoll --compress, asked for gzip
#   servelab-br      the same server, asked for br
#   servelab-zstd    the same server, asked for zstd
#   nginx-plain      nginx, gzip off
#   nginx-gzip5      nginx, gzip on, gzip_comp_level 5 (servelab's gzip level)
#   nginx-gzip1      nginx, gzip on, gzip_comp_level 1 (nginx's default)
# Every request says `Accept-Encoding: <coding>` (gzip for the plain ones too,
# which they ignore). The client is `servelab load` (one thread, 10 users,
# keep-alive) pinned to CPU 1. Rounds are interleaved (every configuration once
# per round, in a rotated order); per round and configuration: a 2 s warm-up,
# then a 10 s window. Server CPU is read from /proc/<pid>/task/*/schedstat
# (nanoseconds) before and after the window, and divided by the requests the
# load completed in it. Bytes per response come from curl (head + body).
# The summary gives mean ± 95% Student-t half-width over the rounds.
#
# Before the rounds, the cost of a miss (compress-cold.csv): 20 distinct copies
# of the page, each fetched cold then warm; the difference in server CPU is the
# compression itself (nginx has no cache: its two passes cost the same).
#
# Usage: bench/compress.sh [ROUNDS]          (default 5; 0: the miss costs only)
# Env:   SERVELAB (default target/release/servelab: cargo build --release -p servelab)
#        OUT (default bench/results/<today>), SECS (10), WARM (2), USERS (10)
# Needs root for apt-get when nginx is missing; taskset; python3; curl.
set -euo pipefail

ROUNDS=${1:-5}
HERE=$(cd "$(dirname "$0")/.." && pwd)
SERVELAB=${SERVELAB:-$HERE/target/release/servelab}
OUT=${OUT:-$HERE/bench/results/$(date -u +%F)}
SECS=${SECS:-10}
WARM=${WARM:-2}
USERS=${USERS:-10}
WORK=$(mktemp -d)
chmod 755 "$WORK"
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ -n "${KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

[ -x "$SERVELAB" ] || { echo "no servelab binary at $SERVELAB (cargo build --release -p servelab)" >&2; exit 1; }
"$SERVELAB" serve --help | grep -q -- --compress || { echo "$SERVELAB has no --compress" >&2; exit 1; }
if ! command -v nginx >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >/dev/null && apt-get install -y nginx-light >/dev/null
fi
mkdir -p "$OUT/compress-raw"

# The page: the repository's own README and docs as HTML (English text and
# markup), cut to 64 KiB at a line end. Deterministic for a given commit; its
# sha256 goes into the results.
mkdir -p "$WORK/www"
python3 - "$HERE" "$WORK/www/page.html" <<'PY'
import glob, html, sys
here, dest = sys.argv[1], sys.argv[2]
parts = ["<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>servelab</title>"
         "<link rel=\"stylesheet\" href=\"/style.css\"></head>\n<body>\n"]
for path in [f"{here}/README.md"] + sorted(glob.glob(f"{here}/docs/*.md")):
    for para in open(path, encoding="utf-8").read().split("\n\n"):
        para = para.strip()
        if not para:
            continue
        if para.startswith("#"):
            level = min(len(para) - len(para.lstrip("#")), 6)
            parts.append(f"<h{level}>{html.escape(para.lstrip('#').strip())}</h{level}>\n")
        elif para.startswith("```"):
            parts.append(f"<pre><code>{html.escape(para.strip('`'))}</code></pre>\n")
        else:
            parts.append(f"<p>{html.escape(para)}</p>\n")
text = "".join(parts)
limit = 64 * 1024
text = text[: text.rfind("\n", 0, limit - 20) + 1] + "</body></html>\n"
open(dest, "w", encoding="utf-8").write(text)
PY
PAGE_BYTES=$(stat -c %s "$WORK/www/page.html")
PAGE_SHA=$(sha256sum "$WORK/www/page.html" | cut -d' ' -f1)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; return 1; }

declare -A PORT PID AE
start_servelab() { # name extra-flags...
    local name=$1; shift
    local port; port=$(free_port)
    taskset -c 0 "$SERVELAB" serve --root "$WORK/www" --port "$port" --engine epoll --log off "$@" \
        >"$WORK/$name.out" 2>&1 &
    PIDS+=($!); PID[$name]=$!; PORT[$name]=$port
    wait_up "$port"
}
start_nginx() { # name gzip-directives
    local name=$1 gzip=$2
    local port; port=$(free_port)
    local d="$WORK/$name"
    mkdir -p "$d/logs" "$d/tmp"
    cat >"$d/nginx.conf" <<CONF
worker_processes 1; daemon off; master_process off;
error_log $d/logs/error.log crit; pid $d/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off; sendfile on; tcp_nopush on; tcp_nodelay on;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=60s; open_file_cache_valid 60s;
    types { text/html html; text/css css; }
    client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
    uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
    $gzip
    server { listen 127.0.0.1:$port; root $WORK/www; }
}
CONF
    taskset -c 0 nginx -p "$d" -c "$d/nginx.conf" >"$d/out" 2>&1 &
    PIDS+=($!); PID[$name]=$!; PORT[$name]=$port
    wait_up "$port"
}

start_servelab servelab-plain
start_servelab servelab-gzip --compress
PORT[servelab-br]=${PORT[servelab-gzip]}; PID[servelab-br]=${PID[servelab-gzip]}
PORT[servelab-zstd]=${PORT[servelab-gzip]}; PID[servelab-zstd]=${PID[servelab-gzip]}
start_nginx nginx-plain "gzip off;"
start_nginx nginx-gzip5 "gzip on; gzip_comp_level 5; gzip_vary on; gzip_types text/css;"
start_nginx nginx-gzip1 "gzip on; gzip_comp_level 1; gzip_vary on; gzip_types text/css;"
for n in servelab-plain servelab-gzip nginx-plain nginx-gzip5 nginx-gzip1; do AE[$n]=gzip; done
AE[servelab-br]=br; AE[servelab-zstd]=zstd
CONFIGS=(servelab-plain servelab-gzip servelab-br servelab-zstd nginx-plain nginx-gzip5 nginx-gzip1)

schedstat_ns() { # total on-CPU ns of every thread of a process
    local sum=0 t
    for t in /proc/"$1"/task/*/schedstat; do sum=$((sum + $(cut -d' ' -f1 "$t"))); done
    echo "$sum"
}

CSV="$OUT/compress.csv"
echo "config,round,requests,errors,server_cpu_ns,cpu_us_per_request,rps,client_bytes_per_response,client_cpu_share,head_bytes,body_bytes,content_encoding" >"$CSV"
# Bytes per response, and the first (cold: compressed now) against a later (cached) request.
BYTES="$OUT/compress-bytes.txt"
: >"$BYTES"
for c in "${CONFIGS[@]}"; do
    url="http://127.0.0.1:${PORT[$c]}/page.html"
    for try in cold warm; do
        echo "$c $try $(curl -s -o /dev/null -H "Accept-Encoding: ${AE[$c]}" \
            -w '%{size_header} %{size_download} %{time_total}' "$url") \
            $(curl -s -D - -o /dev/null -H "Accept-Encoding: ${AE[$c]}" "$url" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-encoding"{print $2}')" >>"$BYTES"
    done
done

# The cost of a miss: 20 distinct copies of the page (a comment appended), each
# asked for once (compressed now) and once more (from the cache), one request
# at a time from curl on CPU 1; server CPU per request from schedstat. The
# difference is the compression; curl's own connection costs both the same.
COLD="$OUT/compress-cold.csv"
echo "config,coding,files,cold_cpu_us_per_request,warm_cpu_us_per_request,compress_cpu_us" >"$COLD"
for c in servelab-gzip servelab-br servelab-zstd nginx-gzip5 nginx-gzip1; do
    for i in $(seq 1 20); do
        { cat "$WORK/www/page.html"; echo "<!-- $c $i -->"; } >"$WORK/www/cold-$c-$i.html"
    done
    for pass in cold warm; do
        before=$(schedstat_ns "${PID[$c]}")
        for i in $(seq 1 20); do
            taskset -c 1 curl -s -o /dev/null -H "Accept-Encoding: ${AE[$c]}" \
                "http://127.0.0.1:${PORT[$c]}/cold-$c-$i.html"
        done
        after=$(schedstat_ns "${PID[$c]}")
        eval "${pass}_ns=$((after - before))"
    done
    # shellcheck disable=SC2154 # set by the eval above
    python3 -c "import sys; c, w = int(sys.argv[3]) / 20e3, int(sys.argv[4]) / 20e3; print(f'{sys.argv[1]},{sys.argv[2]},20,{c:.1f},{w:.1f},{c - w:.1f}')" \
        "$c" "${AE[$c]}" "$cold_ns" "$warm_ns" >>"$COLD"
done
cat "$COLD" >&2
[ "$ROUNDS" -gt 0 ] || exit 0

echo "page.html: $PAGE_BYTES bytes, sha256 $PAGE_SHA; $ROUNDS rounds of ${WARM}s + ${SECS}s, $USERS users" >&2
for round in $(seq 1 "$ROUNDS"); do
    # Rotate the order each round so no configuration always follows another.
    n=${#CONFIGS[@]}
    for i in $(seq 0 $((n - 1))); do
        c=${CONFIGS[$(((i + round - 1) % n))]}
        url="http://127.0.0.1:${PORT[$c]}/page.html"
        taskset -c 1 "$SERVELAB" load "$url" -t 1 -c "$USERS" -d "${WARM}s" -q --no-progress \
            -H "Accept-Encoding: ${AE[$c]}" >/dev/null
        before=$(schedstat_ns "${PID[$c]}")
        taskset -c 1 "$SERVELAB" load "$url" -t 1 -c "$USERS" -d "${SECS}s" -q --no-progress \
            -H "Accept-Encoding: ${AE[$c]}" --json "$OUT/compress-raw/$c-r$round.json" >/dev/null
        after=$(schedstat_ns "${PID[$c]}")
        python3 - "$OUT/compress-raw/$c-r$round.json" "$c" "$round" "$((after - before))" "$BYTES" >>"$CSV" <<'PY'
import json, sys
path, name, rnd, cpu, bytes_file = sys.argv[1:6]
rep = json.load(open(path))
# Kept: everything but the histograms' buckets (the summaries, p50..max, stay),
# so that 35 reports take 1 MB rather than 15.
for v in rep.values():
    if isinstance(v, dict):
        v.pop("buckets", None)
        v.pop("percentiles", None)
for sec in rep["series"]:
    sec.pop("latency_buckets", None)
json.dump(rep, open(path, "w"), indent=1)
done = rep["counts"]["completed"]
secs = rep["duration_s"]
errors = rep["counts"]["errors"] + rep["counts"]["failed"]
head = body = enc = ""
for line in open(bytes_file):
    f = line.split()
    if f[0] == name and f[1] == "warm":
        head, body = f[2], f[3]
        enc = f[5] if len(f) > 5 else "identity"
cpu = int(cpu)
client = rep["client_cpu_s"] / secs
print(f"{name},{rnd},{done},{errors},{cpu},{cpu / 1000 / done:.2f},{done / secs:.0f},"
      f"{rep['throughput']['bytes_per_s'] / max(rep['throughput']['requests_per_s'], 1):.0f},"
      f"{client:.2f},{head},{body},{enc}")
PY
        tail -1 "$CSV" >&2
    done
done

python3 - "$CSV" "$PAGE_BYTES" "$PAGE_SHA" "$ROUNDS" "$SECS" "$USERS" >"$OUT/compress-summary.md" <<'PY'
import csv, statistics, sys
path, page, sha, rounds, secs, users = sys.argv[1:7]
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
rows = list(csv.DictReader(open(path)))
by = {}
for r in rows:
    by.setdefault(r["config"], []).append(r)
def ci(xs):
    m = statistics.mean(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, T95.get(len(xs) - 1, 1.96) * statistics.stdev(xs) / len(xs) ** 0.5
print(f"# serve --compress against nginx gzip: page.html, {page} bytes (sha256 {sha[:16]}…)\n")
print(f"{rounds} interleaved rounds of {secs} s (after 2 s warm-up), {users} keep-alive users, "
      "server on CPU 0 (one worker), `servelab load -t 1` on CPU 1; mean ± 95% t half-width over rounds.\n")
print("| server | Content-Encoding | bytes/response (head+body, curl) | server CPU µs/request | requests/s | client CPU share | errors |")
print("|---|---|---:|---:|---:|---:|---:|")
for name, rs in by.items():
    cpu = ci([float(r["cpu_us_per_request"]) for r in rs])
    rps = ci([float(r["rps"]) for r in rs])
    client = max(float(r["client_cpu_share"]) for r in rs)
    errs = sum(int(r["errors"]) for r in rs)
    b = int(rs[0]["head_bytes"]) + int(rs[0]["body_bytes"])
    print(f"| {name} | {rs[0]['content_encoding']} | {b} ({rs[0]['head_bytes']}+{rs[0]['body_bytes']}) "
          f"| {cpu[0]:.2f} ± {cpu[1]:.2f} | {rps[0]:.0f} ± {rps[1]:.0f} | ≤ {client:.2f} | {errs} |")
print("\nclient CPU share: the load's CPU time over the window (1.00 = its one thread saturated: then "
      "requests/s measures the client, while server CPU µs/request still measures the server).")
PY
cat "$OUT/compress-summary.md"
echo "raw: $CSV, $BYTES, $OUT/compress-raw/" >&2

#!/usr/bin/env bash
# servelab load's stages and request bodies, checked against nginx's access log.
#
# `servelab load` reports what it sent; nginx logs what arrived. This script runs
# four loads against an nginx of its own (configuration, pid, logs and temp files
# in a temporary directory, loopback only, never a system instance) and compares,
# line by line, the generator's report with the access log:
#   1. an open rate on stages (--stages 2s:200,2s:200,2s:0 --rate 200, even beat,
#      one thread): the arrivals per second must follow the ramp, 50/150/200/200/
#      150/50, and add up to the stages' area, 800;
#   2. closed users on stages (--stages 2s:20,2s:20,2s:0, think 50 ms): the
#      connections active in each second must follow the users' level (a user
#      keeps its connection while it runs: the count lies between the level at
#      the start and at the end of the second, one more for a user that leaves);
#   3. POST with --body FILE (1234 bytes): every request logged with that
#      Content-Length, as many as the report's ok;
#   4. a --urls file giving two URLs their own bodies (100 and 200 bytes), PUT,
#      and PATCH with --body @- (standard input).
#
# Usage: bench/load-vs-nginx.sh
# Env:   SERVELAB=path/to/binary (default: target/debug/servelab; this checks
#        counts, not speed, so a debug build is enough), PORT (default 18191).
# Output: a report on stdout; exit 1 if any check fails. Installs nginx with
# apt-get when it is missing (needs root).
set -euo pipefail

PORT=${PORT:-18191}
HERE=$(cd "$(dirname "$0")/.." && pwd)
SERVELAB=${SERVELAB:-$HERE/target/debug/servelab}
WORK=$(mktemp -d)
chmod 755 "$WORK" # nginx workers run as an unprivileged user
NGINX_PID=""
cleanup() {
    if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    if [ -n "${KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

if ! command -v nginx >/dev/null; then
    apt-get install -y nginx-light >/dev/null
fi
[ -x "$SERVELAB" ] || { echo "no servelab binary at $SERVELAB (cargo build -p servelab)" >&2; exit 1; }

mkdir -p "$WORK/nginx/logs" "$WORK/nginx/tmp" "$WORK/www"
head -c 1024 /dev/zero | tr '\0' x > "$WORK/www/1k.txt"
cat > "$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log crit;
events { worker_connections 4096; }
http {
    log_format check '\$msec \$connection \$request_method \$uri \$status \$content_length \$request_length';
    access_log $WORK/nginx/logs/access.log check;
    keepalive_requests 100000;
    client_body_temp_path $WORK/nginx/tmp;
    proxy_temp_path $WORK/nginx/tmp;
    fastcgi_temp_path $WORK/nginx/tmp;
    uwsgi_temp_path $WORK/nginx/tmp;
    scgi_temp_path $WORK/nginx/tmp;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
        # Bodies are read and thrown away; the log keeps their length.
        location /sink/ { return 204; }
    }
}
EOF
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
LOG="$WORK/nginx/logs/access.log"
BASE="http://127.0.0.1:$PORT"
echo "nginx $(nginx -v 2>&1 | sed 's/.*\///'), servelab $("$SERVELAB" --version | cut -d' ' -f2), $SERVELAB"

# Runs one load; its JSON goes to $WORK/$1.json and the log lines it caused to
# $WORK/$1.log. The rest of the arguments are servelab load's.
run() {
    local name=$1; shift
    local before
    before=$(wc -l < "$LOG")
    "$SERVELAB" load "$@" --no-progress -q --json "$WORK/$name.json"
    sleep 0.2 # the last log lines
    tail -n +"$((before + 1))" "$LOG" > "$WORK/$name.log"
    echo "\$ servelab load $*"
}

run open_stages "$BASE/1k.txt" --stages 2s:200,2s:200,2s:0 --rate 200 --arrival uniform -t 1 --connections 20
run closed_stages "$BASE/1k.txt" --stages 2s:20,2s:20,2s:0 --think const:50ms -t 2
head -c 1234 /dev/urandom > "$WORK/body.bin"
run post_body "$BASE/sink/form" --method POST --body "$WORK/body.bin" -c 4 -n 1000 --expect-status 204
head -c 100 /dev/urandom > "$WORK/a.bin"
head -c 200 /dev/urandom > "$WORK/b.bin"
printf '%s\n' "$BASE/sink/a @a.bin" "$BASE/sink/b 3 @b.bin" > "$WORK/urls.txt"
run url_bodies --urls "$WORK/urls.txt" --method PUT -c 4 -n 800 --expect-status 204
head -c 4321 /dev/urandom | run stdin_body "$BASE/sink/stdin" --method PATCH --body @- -c 2 -n 100 --expect-status 204

python3 - "$WORK" <<'PY'
import json, math, sys
work = sys.argv[1]
failed = []

def check(ok, what):
    print(f"  {'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failed.append(what)

def load(name):
    report = json.load(open(f"{work}/{name}.json"))
    lines = [l.split() for l in open(f"{work}/{name}.log")]
    # msec connection method uri status content_length request_length
    return report, [(float(l[0]), int(l[1]), l[2], l[3], int(l[4]), l[5], int(l[6])) for l in lines]

print("\n1. open rate on stages 2s:200,2s:200,2s:0 (even beat): arrivals per second")
r, log = load("open_stages")
t0 = r["started_unix_ms"] / 1000.0
# The log stamps a request when it is answered; the report's series counts the
# completed ones per second from the same start.
per_log = {}
for l in log:
    per_log[int(l[0] - t0)] = per_log.get(int(l[0] - t0), 0) + 1
area = lambda t: (50.0 * t * t if t <= 2 else 200 + 200 * (t - 2) if t <= 4
                  else 600 + 200 * (t - 4) - 50 * (t - 4) ** 2)
print("  second  stage  expected  load-completed  nginx-logged")
for s in r["series"]:
    t = s["t"]
    if t >= 6:
        continue
    exp = math.floor(area(t + 1)) - math.floor(area(t))
    print(f"  {t:>6}  {s.get('stage', '-'):>5}  {exp:>8}  {s['completed']:>14}  {per_log.get(t, 0):>12}")
lat, unc = r["latency"], r["latency_uncorrected"]
print(f"  latency from the intended start p50 {lat['p50']} us, p99 {lat['p99']} us; from the "
      f"send p99 {unc['p99']} us (a gap between them is the client starting late)")
c = r["counts"]
check(c["scheduled"] == 800, f"scheduled {c['scheduled']} == 800, the stages' area")
check(len(log) == c["ok"], f"nginx logged {len(log)} == the report's ok {c['ok']}")
check(all(l[4] == 200 for l in log), "every logged status is 200")
check([s.get("stage") for s in r["series"][:6]] == [0, 0, 1, 1, 2, 2],
      f"series stages {[s.get('stage') for s in r['series'][:6]]}")

print("\n2. closed users on stages 2s:20,2s:20,2s:0, think 50 ms: connections active per second")
r, log = load("closed_stages")
t0 = r["started_unix_ms"] / 1000.0
conns = {}
for l in log:
    conns.setdefault(int(l[0] - t0), set()).add(l[1])
level = lambda t: 10 * t if t <= 2 else 20 if t <= 4 else 20 - 10 * (t - 4)
print("  second  stage  users-at-start  users-at-end  nginx-connections  load-completed")
for s in r["series"]:
    t = s["t"]
    if t >= 6:
        continue
    a, b = math.floor(level(t) + 1e-9), math.floor(level(t + 1) + 1e-9)
    print(f"  {t:>6}  {s.get('stage', '-'):>5}  {a:>14}  {b:>12}  {len(conns.get(t, ())):>17}  {s['completed']:>14}")
check(len({l[1] for l in log}) == r["counts"]["connections"] == 20,
      f"{len({l[1] for l in log})} connections logged, {r['counts']['connections']} reported, 20 users")
check(len(log) == r["counts"]["ok"], f"nginx logged {len(log)} == the report's ok {r['counts']['ok']}")
check(len(conns.get(2, ())) == 20 and len(conns.get(3, ())) == 20, "all 20 users active in the flat stage")

print("\n3. POST --body FILE (1234 bytes)")
r, log = load("post_body")
check(len(log) == r["counts"]["ok"] == 1000, f"{len(log)} logged, {r['counts']['ok']} ok, 1000 asked")
check(all(l[2] == "POST" and l[5] == "1234" for l in log), "every logged request: POST, Content-Length 1234")
# ($request_length would not do: nginx leaves out a body it discards.)
check(r["run"]["body_bytes"] == [1234], f"report body_bytes {r['run']['body_bytes']}")

print("\n4. --urls with a body per URL (PUT), and --body @- (PATCH)")
r, log = load("url_bodies")
sizes = {}
for l in log:
    sizes.setdefault(l[3], set()).add(l[5])
print(f"  per URI, the Content-Lengths logged: { {k: sorted(v) for k, v in sizes.items()} }")
check(sizes.get("/sink/a") == {"100"} and sizes.get("/sink/b") == {"200"}, "each URL carried its own body")
check(len(log) == r["counts"]["ok"] == 800 and all(l[2] == "PUT" for l in log), f"{len(log)} PUT logged of 800")
na, nb = sum(1 for l in log if l[3] == "/sink/a"), sum(1 for l in log if l[3] == "/sink/b")
print(f"  weights 1:3 -> /sink/a {na}, /sink/b {nb}")
r, log = load("stdin_body")
check(len(log) == 100 and all(l[2] == "PATCH" and l[5] == "4321" for l in log),
      f"{len(log)} PATCH logged with the 4321 bytes read from standard input")

print("\n" + ("all checks passed" if not failed else f"{len(failed)} check(s) FAILED"))
sys.exit(1 if failed else 0)
PY

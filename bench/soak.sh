#!/usr/bin/env bash
# Soak (issue 7): DURATION of mixed load on one engine, checking that nothing
# is lost and nothing leaks.
#
# Four `servelab load` streams run at once for DURATION (open arrivals, so the
# offered load does not bend to the server):
#   keepalive  200/s on up to 32 kept-alive connections: index, 1 KiB, 64 KiB,
#              4 MiB (rare), a directory, a 301, and 404s;
#   close      100/s, one connection per request (--session 1);
#   ranges      50/s, `Range: bytes=0-99,1000-1999,-500` (multipart 206);
#   conditional 50/s, `If-Modified-Since: <mtime>` (304).
# Every 10 s the server's RSS and open descriptors are read from /proc. At the
# end the server gets SIGTERM (it flushes its buffered access log) and the
# script checks:
#   - zero unexpected errors (connect, reset, closed, timeout, malformed, I/O)
#     and only the expected statuses;
#   - RSS flat: the mean of the last minute within 10% of the mean of the
#     first minute after the warm-up (WARMUP seconds, default 60); open fds
#     not grown by more than 10% (they follow the open connections, so a
#     drop is not a leak);
#   - the access log holds exactly one line per response the clients received.
# Prints a summary, appends one row to $OUT/soak.csv, keeps the samples in
# $OUT/soak-<engine>-samples.csv; exits non-zero when a check fails.
#
# Usage: bench/soak.sh ENGINE [DURATION seconds (600)]
# Env:   SERVELAB, OUT (results directory; default bench/results/<date>),
#        SERVE_ARGS (extra flags; default for pool: --workers 128), WARMUP.
set -euo pipefail
ENGINE=${1:?usage: bench/soak.sh ENGINE [seconds]}
DURATION=${2:-600}
source "$(dirname "$0")/hardening-lib.sh"
SERVELAB=$(servelab_bin)
WORK=$(mktemp -d)
LPIDS=()
trap 'for p in "${LPIDS[@]}"; do kill "$p" 2>/dev/null || true; done; stop_server; rm -rf "$WORK"' EXIT
make_site "$WORK/www"
OUT=${OUT:-$HERE/bench/results/$(date -u +%Y-%m-%d)}
mkdir -p "$OUT"
ulimit -n 20000 2>/dev/null || true

# The four streams hold up to 80 connections at once; an engine that gives
# each connection a worker thread for its whole life (pool) needs more workers
# than that, or kept-alive connections wait in its queue until the clients'
# timeout.
if [ -z "${SERVE_ARGS+x}" ] && [ "$ENGINE" = pool ]; then SERVE_ARGS="--workers 128"; fi
# shellcheck disable=SC2086
start_server "$WORK/err.log" --engine "$ENGINE" --root "$WORK/www" --log "$WORK/access.log" ${SERVE_ARGS:-}
B="http://127.0.0.1:$PORT"
cat > "$WORK/urls" <<URLS
$B/ 10
$B/index.html 10
$B/1k.txt 30
$B/64k.bin 10
$B/4m.bin 1
$B/sub/ 5
$B/sub 2
$B/missing.txt 5
URLS
MTIME=$(date -u -r "$WORK/www/64k.bin" '+%a, %d %b %Y %H:%M:%S GMT')
common=(--duration "${DURATION}s" --no-progress -q --timeout 10s)
"$SERVELAB" load --urls "$WORK/urls" --rate 200 --connections 32 "${common[@]}" --seed 1 --json "$WORK/keepalive.json" & LPIDS+=($!)
"$SERVELAB" load --urls "$WORK/urls" --rate 100 --connections 32 --session 1 "${common[@]}" --seed 2 --json "$WORK/close.json" & LPIDS+=($!)
"$SERVELAB" load "$B/64k.bin" --rate 50 --connections 8 -H "Range: bytes=0-99,1000-1999,-500" "${common[@]}" --seed 3 --json "$WORK/ranges.json" & LPIDS+=($!)
"$SERVELAB" load "$B/64k.bin" "$B/1k.txt" --rate 50 --connections 8 -H "If-Modified-Since: $MTIME" "${common[@]}" --seed 4 --json "$WORK/conditional.json" & LPIDS+=($!)

SAMPLES="$OUT/soak-$ENGINE-samples.csv"
echo "t_s,rss_kib,fds,cpu_ticks" > "$SAMPLES"
start=$(date +%s)
while :; do
    now=$(( $(date +%s) - start ))
    # Sum over the server and its child processes (prefork, fork).
    pids="$SPID $(cat /proc/"$SPID"/task/*/children 2>/dev/null || true)"
    rss=0; fds=0; cpu=0
    for p in $pids; do
        [ -d "/proc/$p" ] || continue
        rss=$((rss + $(rss_kib "$p" || echo 0))); fds=$((fds + $(fd_count "$p" || echo 0))); cpu=$((cpu + $(cpu_ticks "$p" || echo 0)))
    done
    echo "$now,$rss,$fds,$cpu" >> "$SAMPLES"
    [ "$now" -ge "$DURATION" ] && break
    sleep 10
done
for p in "${LPIDS[@]}"; do wait "$p" || true; done
LPIDS=()
for s in keepalive close ranges conditional; do cp "$WORK/$s.json" "$OUT/soak-$ENGINE-$s.json"; done
sleep 0.5
stop_server
python3 - "$WORK" "$SAMPLES" "$ENGINE" "$DURATION" "$OUT/soak.csv" <<'PY'
import csv, json, os, sys
work, samples, engine, duration, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
unexpected_kinds = ["connect_refused", "connect_other", "reset", "closed", "timeout", "malformed", "io_other"]
expected = {"keepalive": {"200", "301", "404"}, "close": {"200", "301", "404"},
            "ranges": {"206"}, "conditional": {"304"}}
completed = 0; unexpected = 0; bad_status = {}; statuses = {}; kinds = {}; in_flight = 0
for name in expected:
    d = json.load(open(os.path.join(work, name + ".json")))
    # "completed" in a load report also counts attempts that ended in an error;
    # the log is compared with the responses actually received.
    completed += sum(d["status"].values())
    # Requests still in flight when the load's duration ended are abandoned by
    # the client (not counted) but may have been served and logged.
    in_flight += d["counts"]["attempts"] - d["counts"]["retries"] - d["counts"]["completed"]
    unexpected += sum(d["errors"][k] for k in unexpected_kinds)
    for k in unexpected_kinds:
        if d["errors"][k]:
            kinds[f"{name}:{k}"] = d["errors"][k]
    for s, n in d["status"].items():
        statuses[s] = statuses.get(s, 0) + n
        if s not in expected[name]:
            bad_status[f"{name}:{s}"] = n
lines = sum(1 for _ in open(os.path.join(work, "access.log"), "rb"))
rows = [r for r in csv.DictReader(open(samples))]
warmup = int(os.environ.get("WARMUP", "60"))
post = [r for r in rows if int(r["t_s"]) >= warmup]
first = [r for r in post if int(r["t_s"]) < warmup + 60] or post[:6]
last = [r for r in post if int(r["t_s"]) > duration - 60] or post[-6:]
mean = lambda rs, k: sum(float(r[k]) for r in rs) / max(1, len(rs))
rss0, rss1 = mean(first, "rss_kib"), mean(last, "rss_kib")
fd0, fd1 = mean(first, "fds"), mean(last, "fds")
rss_drift = (rss1 - rss0) / rss0 * 100 if rss0 else 0.0
fd_drift = (fd1 - fd0) / fd0 * 100 if fd0 else 0.0
cpu_s = (int(rows[-1]["cpu_ticks"]) - int(rows[0]["cpu_ticks"])) / os.sysconf("SC_CLK_TCK")
checks = {
    "zero unexpected errors": unexpected == 0,
    "only expected statuses": not bad_status,
    "rss flat (10%)": abs(rss_drift) <= 10,
    # Open descriptors follow the number of open connections, which the open
    # arrivals make vary; a leak shows as growth, so only growth is checked.
    "fds flat (no growth over 10%)": fd_drift <= 10,
    "one log line per response": completed <= lines <= completed + in_flight,
}
print(f"soak {engine} {duration}s: {completed} responses ({statuses}), {unexpected} unexpected errors {kinds or ''}"
      + (f", unexpected statuses {bad_status}" if bad_status else ""))
print(f"  RSS {rss0:.0f} -> {rss1:.0f} KiB ({rss_drift:+.1f}%), max {max(int(r['rss_kib']) for r in rows)} KiB;"
      f" fds {fd0:.1f} -> {fd1:.1f} ({fd_drift:+.1f}%), max {max(int(r['fds']) for r in rows)};"
      f" server CPU {cpu_s:.1f} s")
print(f"  access log {lines} lines for {completed} responses (+ {in_flight} in flight when the clients stopped)")
for k, ok in checks.items():
    print(f"  {'ok  ' if ok else 'FAIL'} {k}")
new = not os.path.exists(out)
with open(out, "a") as f:
    if new:
        f.write("engine,duration_s,responses,unexpected_errors,bad_statuses,rss0_kib,rss1_kib,rss_drift_pct,fds0,fds1,fd_drift_pct,log_lines,server_cpu_s,verdict\n")
    f.write(f"{engine},{duration},{completed},{unexpected},{len(bad_status)},{rss0:.0f},{rss1:.0f},{rss_drift:.1f},{fd0:.1f},{fd1:.1f},{fd_drift:.1f},{lines},{cpu_s:.1f},{'pass' if all(checks.values()) else 'FAIL'}\n")
sys.exit(0 if all(checks.values()) else 1)
PY

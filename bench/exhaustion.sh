#!/usr/bin/env bash
# Descriptor exhaustion (EMFILE) on every engine (issue 7): the server runs with
# `ulimit -n 64` and receives 300 connections that never send a byte, held for
# HOLD seconds, while a normal client keeps trying. The server must stay up,
# must not spin on a listener that stays readable (its CPU time over the attack
# is sampled from /proc/<pid>/stat), and must serve normally once the
# connections close.
#
# Usage: bench/exhaustion.sh [hold seconds (10)] [connections (300)]
# Env:   SERVELAB, ENGINES, NOFILE (default 64), OUT (results directory).
set -euo pipefail
HOLD=${1:-10}
CONNS=${2:-300}
NOFILE=${NOFILE:-64}
source "$(dirname "$0")/hardening-lib.sh"
SERVELAB=$(servelab_bin)
WORK=$(mktemp -d)
trap 'stop_server; rm -rf "$WORK"' EXIT
make_site "$WORK/www"
OUT=${OUT:-$HERE/bench/results/$(date -u +%Y-%m-%d)}
mkdir -p "$OUT"
CSV="$OUT/exhaustion.csv"
[ -f "$CSV" ] || echo "engine,nofile,held_conns,hold_s,server_fds_1s_in,server_cpu_pct_during,probe_during_ok,probe_during_failed,alive,probe_after_ok,probe_after_failed" > "$CSV"
HOSTILE="$HERE/bench/hostile.py"
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))" "$1" "$2"; }
verdict=0

for engine in $(engines_list); do
    # The limit applies to the server alone: a child shell lowers it, then execs.
    rm -f "$WORK/err.log"
    bash -c "ulimit -n $NOFILE; exec \"$SERVELAB\" serve -p 0 --engine $engine --root \"$WORK/www\" --log off --workers 2" 2>"$WORK/err.log" &
    SPID=$!
    PORT=""
    for _ in $(seq 1 100); do
        PORT=$(sed -n 's|.*on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$WORK/err.log" 2>/dev/null | head -1)
        [ -n "$PORT" ] && break; sleep 0.05
    done
    [ -n "$PORT" ] || { echo "$engine: did not start: $(cat "$WORK/err.log")"; verdict=1; continue; }
    sleep 0.3
    t0=$(cpu_ticks "$SPID")
    python3 "$HOSTILE" hold "127.0.0.1:$PORT" --conns "$CONNS" --duration "$HOLD" > "$WORK/hold.json" &
    hpid=$!
    sleep 1
    fds=$(fd_count "$SPID")
    during=$(python3 "$HOSTILE" probe "127.0.0.1:$PORT" --path /1k.txt --duration $((HOLD - 2)) --pace 0.1 --timeout 5)
    wait "$hpid"
    alive=yes
    if kill -0 "$SPID" 2>/dev/null; then t1=$(cpu_ticks "$SPID"); else alive=no; t1=$t0; fi
    cpu=$(python3 -c "print(round(100.0 * ($t1 - $t0) / $HZ / $HOLD, 1))")
    sleep 1
    after=$(python3 "$HOSTILE" probe "127.0.0.1:$PORT" --path /1k.txt --duration 3 --timeout 5)
    kill -0 "$SPID" 2>/dev/null || alive=no
    stop_server
    echo "$engine: $(cat "$WORK/hold.json"); server had $fds of $NOFILE descriptors open 1 s in; CPU over the attack ${cpu}% of one core; alive $alive"
    echo "$engine:   normal client during: $during"
    echo "$engine:   normal client after:  $after"
    echo "$engine,$NOFILE,$CONNS,$HOLD,$fds,$cpu,$(field "$during" ok),$(field "$during" failed),$alive,$(field "$after" ok),$(field "$after" failed)" >> "$CSV"
    { grep -v "serving" "$WORK/err.log" || true; } | sort | uniq -c | head -5 | sed "s/^/$engine: stderr: /"
    if [ "$alive" != yes ] || [ "$(field "$after" failed)" != 0 ] || python3 -c "import sys; sys.exit(0 if $cpu > 20 else 1)"; then
        echo "$engine: FAILED (dead, not recovered, or spinning)"; verdict=1
    fi
done
echo "results appended to $CSV"
exit $verdict

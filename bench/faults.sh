#!/usr/bin/env bash
# Faults that need the real binary and process tree (issue 7); the in-process
# ones (client reset, file truncated or deleted mid-send, failing log writes)
# are tests in crates/server/tests/server/faults.rs.
#
# 1. A log disk that fails: `--log /dev/full` on every engine under a few
#    seconds of requests. Every request must be answered 200, and the write
#    error reported once per writing process on stderr (not once per line).
# 2. A prefork worker killed with SIGKILL while a client runs: the master
#    replaces it (a new pid; the worker count is restored), the other workers
#    go on; at most the killed worker's own connection fails.
#
# Usage: bench/faults.sh
# Env:   SERVELAB, ENGINES (for part 1), OUT (results directory).
set -euo pipefail
source "$(dirname "$0")/hardening-lib.sh"
SERVELAB=$(servelab_bin)
WORK=$(mktemp -d)
trap 'stop_server; rm -rf "$WORK"' EXIT
make_site "$WORK/www"
OUT=${OUT:-$HERE/bench/results/$(date -u +%Y-%m-%d)}
mkdir -p "$OUT"
CSV="$OUT/faults.csv"
[ -f "$CSV" ] || echo "fault,engine,requests,failed,detail,verdict" > "$CSV"
HOSTILE="$HERE/bench/hostile.py"
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))" "$1" "$2"; }
children() { cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -c . || true; }
verdict=0

for engine in $(engines_list); do
    for mode in sync buffered; do
        start_server "$WORK/err.log" --engine "$engine" --root "$WORK/www" --log /dev/full --log-mode "$mode" --workers 2
        p=$(python3 "$HOSTILE" probe "127.0.0.1:$PORT" --path /1k.txt --duration 2 --pace 0.005 --timeout 5)
        sleep 1.5   # the buffered writer flushes at least once a second
        procs=$((1 + $(children "$SPID")))
        stop_server
        reports=$(grep -c "access log" "$WORK/err.log" || true)
        ok=pass
        if [ "$(field "$p" failed)" != 0 ] || [ "$reports" -lt 1 ] || [ "$reports" -gt $((procs + 2)) ]; then ok=FAIL; verdict=1; fi
        echo "log-dev-full,$engine/$mode,$(field "$p" requests),$(field "$p" failed),$reports stderr reports from $procs processes,$ok" >> "$CSV"
        echo "/dev/full $engine/$mode: $(field "$p" requests) requests, $(field "$p" failed) failed; $reports stderr reports ($procs processes): $ok"
    done
done

if "$SERVELAB" engines | grep -q '^prefork'; then
    start_server "$WORK/err.log" --engine prefork --root "$WORK/www" --log off --workers 4
    sleep 0.5
    before=$(cat /proc/"$SPID"/task/*/children | tr ' ' '\n' | grep . | sort)
    python3 "$HOSTILE" probe "127.0.0.1:$PORT" --path /64k.bin --duration 6 --timeout 5 > "$WORK/probe.json" &
    ppid=$!
    sleep 2
    victim=$(echo "$before" | head -1)
    kill -KILL "$victim"
    replaced=no
    for _ in $(seq 1 60); do
        now=$(cat /proc/"$SPID"/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | sort)
        if [ "$(echo "$now" | grep -c .)" -eq 4 ] && ! echo "$now" | grep -qx "$victim"; then replaced=yes; break; fi
        sleep 0.1
    done
    wait "$ppid"
    p=$(cat "$WORK/probe.json")
    alive=yes; kill -0 "$SPID" 2>/dev/null || alive=no
    stop_server
    ok=pass
    if [ "$replaced" != yes ] || [ "$alive" != yes ] || [ "$(field "$p" failed)" -gt 1 ]; then ok=FAIL; verdict=1; fi
    echo "prefork-worker-killed,prefork,$(field "$p" requests),$(field "$p" failed),replaced=$replaced master_alive=$alive,$ok" >> "$CSV"
    echo "prefork worker $victim killed: replaced=$replaced, master alive=$alive; client: $p: $ok"
fi
echo "results appended to $CSV"
exit $verdict

#!/usr/bin/env bash
# Slowloris against every engine: normal clients' latency without and with an
# attack of 1,000 connections that each send one more header byte every second
# (issue 7). Default server settings (read timeout 3 s, --workers = CPUs), so
# the figures say what a user of `servelab serve` gets out of the box.
#
# Per engine: 10 s of a normal client alone (one request per connection, paced
# every 20 ms), then the attack for ATTACK seconds with the same client running
# from second 5 of the attack (when all attackers are connected). Reports
# requests, failures (no answer within 10 s, or not 200) and p50/p99/max.
#
# Usage: bench/slowloris.sh [attackers (1000)] [attack seconds (30)]
# Env:   SERVELAB, ENGINES (e.g. "pool reactor"), SERVE_ARGS (extra flags),
#        OUT (results directory; default bench/results/<date>).
set -euo pipefail
ATTACKERS=${1:-1000}
ATTACK=${2:-30}
source "$(dirname "$0")/hardening-lib.sh"
SERVELAB=$(servelab_bin)
WORK=$(mktemp -d)
trap 'stop_server; rm -rf "$WORK"' EXIT
make_site "$WORK/www"
OUT=${OUT:-$HERE/bench/results/$(date -u +%Y-%m-%d)}
mkdir -p "$OUT"
CSV="$OUT/slowloris.csv"
[ -f "$CSV" ] || echo "engine,serve_args,phase,attackers,requests,ok,failed,p50_ms,p99_ms,max_ms,attack_opened,attack_cut" > "$CSV"
ulimit -n 20000 2>/dev/null || true
HOSTILE="$HERE/bench/hostile.py"

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get(sys.argv[2]) if d.get(sys.argv[2]) is not None else '')" "$1" "$2"; }

for engine in $(engines_list); do
    start_server "$WORK/err.log" --engine "$engine" --root "$WORK/www" --log off ${SERVE_ARGS:-}
    base=$(python3 "$HOSTILE" probe "127.0.0.1:$PORT" --path /1k.txt --duration 10 --pace 0.02 --timeout 10)
    python3 "$HOSTILE" slowloris "127.0.0.1:$PORT" --conns "$ATTACKERS" --interval 1 --duration "$ATTACK" > "$WORK/attack.json" &
    apid=$!
    sleep 5
    under=$(python3 "$HOSTILE" probe "127.0.0.1:$PORT" --path /1k.txt --duration $((ATTACK - 5)) --pace 0.02 --timeout 10)
    wait "$apid"
    attack=$(cat "$WORK/attack.json")
    alive=yes; kill -0 "$SPID" 2>/dev/null || alive=no
    stop_server
    for phase in baseline attack; do
        j=$base; [ "$phase" = attack ] && j=$under
        row="$engine,${SERVE_ARGS:-},$phase,$([ "$phase" = attack ] && echo "$ATTACKERS" || echo 0)"
        for f in requests ok failed p50_ms p99_ms max_ms; do row="$row,$(field "$j" "$f")"; done
        if [ "$phase" = attack ]; then row="$row,$(field "$attack" opened),$(field "$attack" cut_by_server)"; else row="$row,,"; fi
        echo "$row" >> "$CSV"
    done
    echo "$engine ${SERVE_ARGS:-}: baseline $base"
    echo "$engine ${SERVE_ARGS:-}: under attack $under; attack $attack; server alive after: $alive"
done
echo "results appended to $CSV"

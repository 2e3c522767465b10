#!/usr/bin/env bash
# Every servelab engine side by side with nginx, lighttpd and h2o through
# bench/peers.py (each server pinned to CPU 0 with one worker, wrk on CPU 1,
# interleaved rounds), then 10,000 idle keep-alive connections against the
# event-loop engines.
#
# Writes to bench/results/<UTC date>/: engines-{keepalive,close,1m}.json (medians
# and every round), engines-rounds.csv, engines-idle10k.csv and engines-summary.md.
#
#   bench/engines.sh                   # 5 rounds of 3 s per scenario
#   ROUNDS=7 DURATION=5 bench/engines.sh
#   ENGINES="epoll reactor" bench/engines.sh
#   PEERS=none bench/engines.sh        # servelab's engines only
#
# CPU per request (cpu_us) is the steady figure on a shared machine; requests/s
# moves with the load on it (the summary gives each server's min..max).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-3}
PEERS=${PEERS:-nginx,lighttpd,h2o}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --release -p servelab -q
BIN="$CARGO_TARGET_DIR/release/servelab"
ALL_ENGINES=$("$BIN" engines | awk '{print $1}')
ENGINES=${ENGINES:-$ALL_ENGINES}
OUT="bench/results/$(date -u +%Y-%m-%d)"
mkdir -p "$OUT"

args=()
for e in $ENGINES; do
    args+=(--engine "$e")
done
python3 bench/peers.py --servelab "$BIN" "${args[@]}" --peers "$PEERS" \
    --scenario keepalive,close,1m --rounds "$ROUNDS" --duration "$DURATION" \
    --out "$OUT" --prefix engines

# Idle connections: RSS with 10,000 open keep-alive connections, each used once.
echo "engine,connections,rss_kib,rss_before_kib,new_request_ok" >"$OUT/engines-idle10k.csv"
for e in epoll reactor async; do
    case " $(echo $ENGINES) " in *" $e "*) ;; *) continue ;; esac
    python3 bench/idle_conns.py --bin "$BIN" --engine "$e" --conns 10000 >>"$OUT/engines-idle10k.csv"
done

{
    echo "## 10,000 idle keep-alive connections"
    echo
    echo '```'
    cat "$OUT/engines-idle10k.csv"
    echo '```'
    echo
    echo "Notes: \`serial\`, \`pool\` and \`prefork\` with one worker and 50 keep-alive connections"
    echo "serve one connection at a time; the others wait. A CPU figure marked ≥ misses processes"
    echo "that exited during a round without being reaped inside the server's process tree."
} >>"$OUT/engines-summary.md"
cat "$OUT/engines-summary.md"

#!/usr/bin/env bash
# What `servelab predict`'s architecture probes find on servelab's own engines
# (issue 27): whether connections hold workers, W, the keep-alive timeout and
# the requests per connection, against the configuration each server was given.
#
# Each engine runs `servelab serve --engine E --workers W --work WORK
# --keepalive-timeout KA` pinned to CPU 0; `servelab predict --no-validate`
# runs on CPU 1 with a short budget (the probes' keep-alive wait is half of
# it), REPEATS times per engine. The script stops only the servers it started,
# by their pid, and prints one line per run: the configuration and what
# results.json's `architecture` says, with the probes' time.
#
# Usage: bench/predict-probes.sh OUT_DIR [ENGINE...]   (default: pool prefork reactor)
# Env: SERVELAB  binary (default target/release/servelab, else target/debug/servelab)
#      WORKERS   --workers (default 4)        KA       --keepalive-timeout (default 2s)
#      WORK      --work (default exp:5ms)     BUDGET   predict --budget (default 20s)
#      REPEATS   runs per engine (default 3)
# Needs taskset and python3 (to read results.json).
set -euo pipefail

OUT=${1:?usage: bench/predict-probes.sh OUT_DIR [ENGINE...]}
shift
ENGINES=("$@")
[ ${#ENGINES[@]} -eq 0 ] && ENGINES=(pool prefork reactor)
HERE=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SERVELAB:-}" ]; then
    if [ -x "$HERE/target/release/servelab" ]; then SERVELAB=$HERE/target/release/servelab; else SERVELAB=$HERE/target/debug/servelab; fi
fi
[ -x "$SERVELAB" ] || { echo "servelab: error: no servelab binary at $SERVELAB" >&2; exit 1; }
[ -e "$OUT" ] && { echo "servelab: error: $OUT exists; predict never overwrites" >&2; exit 1; }
WORKERS=${WORKERS:-4}
KA=${KA:-2s}
WORK=${WORK:-exp:5ms}
BUDGET=${BUDGET:-20s}
REPEATS=${REPEATS:-3}
mkdir -p "$OUT/www"
echo ok > "$OUT/www/index.html"

SPID=""
cleanup() {
    if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
}
trap cleanup EXIT

for engine in "${ENGINES[@]}"; do
    for rep in $(seq 1 "$REPEATS"); do
        PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        taskset -c 0 "$SERVELAB" serve --port "$PORT" --engine "$engine" --workers "$WORKERS" \
            --work "$WORK" --keepalive-timeout "$KA" --log off "$OUT/www" 2> "$OUT/serve-$engine-$rep.err" &
        SPID=$!
        for _ in $(seq 1 50); do
            grep -q "serving" "$OUT/serve-$engine-$rep.err" 2>/dev/null && break
            sleep 0.1
        done
        RUN=$OUT/$engine-$rep
        taskset -c 1 "$SERVELAB" predict "http://127.0.0.1:$PORT/" --pid "$SPID" --budget "$BUDGET" \
            --no-validate --users 2 --no-progress --out "$RUN" > "$RUN.txt" 2>&1 || true
        kill "$SPID" 2>/dev/null || true
        wait "$SPID" 2>/dev/null || true
        SPID=""
        python3 - "$RUN/results.json" "$engine" "$WORKERS" "$KA" <<'EOF'
import json, sys
path, engine, workers, ka = sys.argv[1:]
try:
    a = json.load(open(path))["architecture"]
except Exception as e:
    print(f"{engine:8} workers={workers} keepalive={ka}: no results ({e})")
    sys.exit(0)
w, k, m = a["workers"], a["keepalive"], a.get("max_requests") or {}
found_w = w.get("workers", w.get("held", "")) if w["kind"] in ("held", "not_held") else w.get("why", "")
found_k = k.get("after_s", k.get("wait_s", ""))
print(f"{engine:8} workers={workers} keepalive={ka}: {w['kind']} {found_w}; keepalive {k['kind']} "
      f"{found_k if isinstance(found_k, str) else f'{found_k:.3f} s'}; max requests {m.get('kind', '-')} "
      f"{m.get('after', m.get('answered', ''))}; answer {a.get('answer_ms') or 0:.2f} ms, "
      f"deadline {a['answer_wait_ms']:.0f} ms; probes {a['probe_s']:.1f} s")
EOF
    done
done

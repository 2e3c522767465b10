#!/usr/bin/env bash
# Every servelab engine side by side with nginx, lighttpd and h2o, through
# ../shared/bench/peers.py (server pinned to CPU 0 with one worker, wrk on CPU 1),
# then 10,000 idle keep-alive connections against the event-loop engines.
#
# Writes bench/results/<date>/engines-{keepalive,close,1m}.{json,txt},
# engines-idle10k.csv and engines-summary.md.
#
#   bench/engines.sh                   # 3 rounds of 3 s per scenario
#   ROUNDS=5 DURATION=5 bench/engines.sh
#   ENGINES="epoll reactor" bench/engines.sh
#
# CPU per request (cpu_us) is the steady figure on a shared machine; rerun
# when rps min..max spreads widely.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3}
PEERS_PY=${PEERS_PY:-../shared/bench/peers.py}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --release -p servelab -q
BIN="$CARGO_TARGET_DIR/release/servelab"
ALL_ENGINES=$("$BIN" engines | awk '{print $1}')
ENGINES=${ENGINES:-$ALL_ENGINES}
OUT="bench/results/$(date -u +%Y-%m-%d)"
mkdir -p "$OUT"

args=()
for e in $ENGINES; do
    args+=(--cmd "$BIN serve --engine $e --workers 1 --log off --root {root} --port {port}" --name "$e")
done

run() { # name, extra peers.py flags...
    local name=$1
    shift
    echo "== $name" >&2
    python3 "$PEERS_PY" "${args[@]}" --rounds "$ROUNDS" --duration "$DURATION" \
        --json "$OUT/engines-$name.json" "$@" | tee "$OUT/engines-$name.txt"
}
run keepalive --file 1k.txt
run close --file 1k.txt --close
run 1m --file 1m.bin

# Idle connections: RSS with 10,000 open keep-alive connections, each used once.
echo "engine,connections,rss_kib,rss_before_kib,new_request_ok" >"$OUT/engines-idle10k.csv"
for e in epoll reactor async; do
    grep -qx "$e" <<<"$ALL_ENGINES" || continue
    python3 bench/idle_conns.py --bin "$BIN" --engine "$e" --conns 10000 >>"$OUT/engines-idle10k.csv"
done

python3 - "$OUT" <<'PY'
import json, sys, os, platform, subprocess
out = sys.argv[1]
cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip()
lines = [f"# servelab engines against peers ({os.path.basename(out)})", "",
         f"Machine: {cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}. Server on CPU 0 (one worker), wrk on CPU 1.",
         "Medians over rounds; cpu_us is server CPU (user+sys) per request; /best is the ratio to the best peer.", ""]
for name, title in [("keepalive", "keep-alive, 1k.txt"), ("close", "Connection: close, 1k.txt"), ("1m", "keep-alive, 1m.bin")]:
    p = os.path.join(out, f"engines-{name}.json")
    if not os.path.exists(p):
        continue
    med = json.load(open(p))
    peers = [n for n in med if n in ("nginx", "lighttpd", "h2o")]
    best_cpu = min((med[n]["cpu_us"] for n in peers), default=None)
    best_rps = max((med[n]["rps"] for n in peers), default=None)
    lines += [f"## {title}", "", "| server | rps | cpu_us/req | rps/best | cpu/best | errors |", "|---|---:|---:|---:|---:|---:|"]
    for n, m in med.items():
        rr = f"{m['rps'] / best_rps:.2f}" if best_rps else "-"
        rc = f"{m['cpu_us'] / best_cpu:.2f}" if best_cpu else "-"
        lines.append(f"| {n} | {m['rps']:.0f} | {m['cpu_us']:.2f} | {rr} | {rc} | {m['errors']} |")
    lines.append("")
idle = os.path.join(out, "engines-idle10k.csv")
if os.path.exists(idle):
    lines += ["## 10,000 idle keep-alive connections", "", "```", open(idle).read().strip(), "```", ""]
lines += ["Notes: `fork` CPU per request is not comparable: peers.py sums CPU over the live process",
          "tree, and a child that has exited is no longer in it. `serial`, `pool` and `prefork` with one",
          "worker and 50 keep-alive connections serve one connection at a time; the others wait.", ""]
open(os.path.join(out, "engines-summary.md"), "w").write("\n".join(lines))
print("\n".join(lines))
PY

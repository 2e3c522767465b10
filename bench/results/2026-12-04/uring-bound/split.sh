#!/bin/bash
# Where a keep-alive 1 KiB request's server CPU goes: user space against kernel, and in the
# kernel the io_uring machinery against the rest (TCP, loopback, scheduling), for several
# servers in interleaved rounds. Server pinned to CPU 0 with one worker, wrk -t1 -c50 on CPU 1.
# Per run: 1 s of warm-up, then a 5 s wrk window; the server's CPU time over that window from
# /proc/PID/schedstat (ns) over wrk's completed requests gives CPU per request; `perf record`
# (cpu-clock, 4 kHz, the middle 4 s) gives the shares. No hardware counters on this machine
# (perf stat reports cycles:u as not supported), hence sampling.
#
#   split.sh ROUNDS NAME='CMD with {root} {port}' ...     -> split.csv beside this script
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=$1; shift
out=$here/split.csv
[ -e "$out" ] && { echo "split.sh: $out exists; move it away first" >&2; exit 2; }
echo "round,server,requests_per_s,cpu_us_per_request,user_share,io_uring_share" > "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root"; head -c 1024 /dev/zero | tr '\0' x > "$work/root/1k.txt"
for r in $(seq "$rounds"); do
  for spec in "$@"; do
    name=${spec%%=*} cmd=${spec#*=}
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    run=${cmd//\{root\}/$work/root}; run=${run//\{port\}/$port}
    taskset -c 0 $run > "$work/server.log" 2>&1 & sp=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/1k.txt" && break; sleep 0.1; done
    taskset -c 1 wrk -t1 -c50 -d1s "http://127.0.0.1:$port/1k.txt" > /dev/null
    # The worker threads' run time: every task of the process.
    ns() { cat /proc/$sp/task/*/schedstat | awk '{s += $1} END {printf "%.0f\n", s}'; }
    a=$(ns)
    taskset -c 1 wrk -t1 -c50 -d5s "http://127.0.0.1:$port/1k.txt" > "$work/wrk.txt" & wp=$!
    sleep 0.5
    perf record -q -F 4000 -p $sp -o "$work/perf.data" -- sleep 4 2>/dev/null || true
    wait $wp
    b=$(ns)
    kill $sp; wait $sp 2>/dev/null || true
    reqs=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
    secs=$(awk '/requests in/ {sub("s,","",$4); print $4}' "$work/wrk.txt")
    perf report -i "$work/perf.data" --no-children --sort dso,sym -q -g none 2>/dev/null > "$work/flat.txt"
    python3 - "$work/flat.txt" "$r" "$name" "$reqs" "$secs" "$a" "$b" >> "$out" <<'PY'
import re, sys
flat, r, name, reqs, secs, a, b = sys.argv[1:]
user = ring = 0.0
for l in open(flat):
    m = re.match(r'\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(\S+)', l)
    if not m:
        continue
    p, dso, sym = float(m.group(1)), m.group(2), m.group(4)
    if dso != '[kernel.kallsyms]':
        user += p
    elif re.match(r'_*io_|io_uring', sym):
        ring += p

reqs = int(reqs)
print(f"{r},{name},{reqs/float(secs):.0f},{(int(b)-int(a))/1000/reqs:.3f},{user/100:.4f},{ring/100:.4f}")
PY
  done
done
cat "$out"

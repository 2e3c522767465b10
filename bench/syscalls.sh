#!/bin/bash
# Syscalls per request of one server under wrk, counted by the kernel's tracepoints
# (`perf stat -e 'syscalls:sys_enter_*'`, attached to the server's process for the
# measured window only), so the count costs the server almost nothing, unlike strace.
# What io_uring does inside one io_uring_enter (the receives, sends, accepts and
# closes of a turn) is not a syscall and is not counted: that is the point of it.
#
#   bench/syscalls.sh NAME 'COMMAND with {root} and {port}' [--close] [--conns N] [--seconds S]
#   bench/syscalls.sh floor 'bench/floor {port}'            # cc -O2 -o bench/floor bench/floor.c
#   bench/syscalls.sh uring 'target/release/servelab serve --engine uring --workers 1 --log off --root {root} --port {port}'
#
# Prints one line per syscall seen (count per completed request, at least 0.001)
# and the total. 1 KiB file, wrk -t1, 50 connections, 1 s warm-up, then 3 s counted.
set -euo pipefail

name=$1 cmd=$2; shift 2
close=0 conns=50 secs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --close) close=1; shift ;;
    --conns) conns=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    *) echo "syscalls.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v perf >/dev/null && command -v wrk >/dev/null || { echo "syscalls.sh: needs perf and wrk" >&2; exit 2; }

work=$(mktemp -d)
trap 'kill $sp 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/root"
head -c 1024 /dev/zero | tr '\0' x > "$work/root/1k.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run=${cmd//\{root\}/$work/root}
run=${run//\{port\}/$port}
$run > "$work/server.log" 2>&1 &
sp=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/1k.txt" && break
  sleep 0.1
done
H=()
[ $close = 1 ] && H=(-H "Connection: close")
wrk "${H[@]}" -t1 -c"$conns" -d1s "http://127.0.0.1:$port/1k.txt" > /dev/null
perf stat -x, -e 'syscalls:sys_enter_*' -p "$sp" -o "$work/perf.csv" -- sleep $((secs + 1)) &
pp=$!
sleep 0.5
wrk "${H[@]}" -t1 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/1k.txt" > "$work/wrk.txt"
wait $pp
n=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
mode=keep-alive; [ $close = 1 ] && mode=close
echo "$name, $mode, $conns connections: $n requests in ${secs} s"
awk -F, -v n="$n" '$1 ~ /^[0-9]+$/ && $1 > 0 {
    sub("syscalls:sys_enter_", "", $3); per = $1 / n; total += per
    if (per >= 0.001) printf "  %-16s %.3f per request\n", $3, per
  } END { printf "  %-16s %.3f per request\n", "total", total }' "$work/perf.csv"

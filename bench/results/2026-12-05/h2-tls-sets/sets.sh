#!/bin/sh
# Runs the ten sets RULE.txt declares, one after another, and files each set's CSV and log here
# as sNN.csv / sNN.log. Usage: SERVELAB=path/to/release/servelab sets.sh
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
: "${SERVELAB:?give SERVELAB, the release build RULE.txt names}"
for i in 01 02 03 04 05 06 07 08 09 10; do
    [ -e "$HERE/s$i.csv" ] && { echo "s$i.csv is already here: not overwritten" >&2; exit 1; }
    echo "set s$i from $(date -u +%H:%M:%S)" >&2
    "$ROOT/bench/h2-load-vs-h2load.sh" 5 8 "10x10 10x100" tls > "$HERE/s$i.log" 2>&1
    csv=$(ls -t "$ROOT/bench/results/$(date -u +%Y-%m-%d)"/h2-load-vs-h2load*.csv | head -1)
    mv "$csv" "$HERE/s$i.csv"
done

#!/bin/bash
# $1: tag; remaining: pairs "SERVELAB BASELINE" per invocation
cd /work/wt/spin
CSV=bench/results/2026-12-04/h2-load-vs-h2load.csv
tag=$1; shift; DUR=${DUR:-5}; ROUNDS=${ROUNDS:-5}
i=0
for pair in "$@"; do
  i=$((i+1))
  set -- $pair
  { echo "# $(date -u +%FT%TZ) SERVELAB=$1 BASELINE=$2 bench/h2-load-vs-h2load.sh $DUR $ROUNDS \"50x10\" \"tls h2c\"; load average before: $(cut -d' ' -f1-3 /proc/loadavg)";
    SERVELAB=$1 BASELINE=$2 bench/h2-load-vs-h2load.sh $DUR $ROUNDS "50x10" "tls h2c" 2>&1;
    echo "# ended $(date -u +%FT%TZ)"; } > /tmp/spin/res/$tag-$i.log
  cp $CSV /tmp/spin/res/$tag-$i.csv
done

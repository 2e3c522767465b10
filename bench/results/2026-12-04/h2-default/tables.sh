#!/bin/sh
# Regenerates the verdicts and tables of README.md from the raw CSVs here and in ../h2-poll.
cd "$(dirname "$0")"
P=../h2-poll
# The committed default (3 us), as RULE.txt says, judged per mode and point.
python3 agree.py tls 50x10 $P/r8-1.csv:load $P/r9-1.csv:load a1.csv:load a3.csv:load a4.csv:load > verdict-tls-50x10.txt
python3 agree.py h2c 50x10 $P/r8-1.csv:load a3.csv:load a6.csv:load > verdict-h2c-50x10.txt
for m in tls h2c; do for p in 10x10 10x100; do
    python3 agree.py $m $p a5.csv:load a7.csv:load > verdict-$m-$p.txt
done; done
# With the 3 us sets of the pre-commit build beside them (r6-1, r7-1: not in the rule).
{ python3 agree.py tls 50x10 $P/r6-1.csv:load $P/r7-1.csv:load $P/r8-1.csv:load $P/r9-1.csv:load a1.csv:load a3.csv:load a4.csv:load
  python3 agree.py h2c 50x10 $P/r6-1.csv:load $P/r7-1.csv:load $P/r8-1.csv:load a3.csv:load a6.csv:load; } > all-3us-sets.txt
# Budgets side by side in the same rounds: a2 (4 us as load, 5 us as base), a3 (3 us as load, 5 us as base).
MIN_U=0.97 python3 $P/paired.py p4=a2.csv:load p5=a2.csv:base > budgets-a2.txt
MIN_U=0.97 python3 $P/paired.py p3=a3.csv:load p5=a3.csv:base > budgets-a3.txt

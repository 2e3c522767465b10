#!/bin/sh
# Regenerates the verdicts and comparisons of README.md from the raw CSVs here (RULE.txt says which count).
cd "$(dirname "$0")"
A=../h2-default/agree.py
D=../h2-poll/direct.py
# 233ed3c (:path a literal, 3 us everywhere): h2c at every point, TLS at 50x10 (b3 + the capped b4).
python3 $A h2c 50x10 b1.csv:load > verdict-233ed3c-h2c-50x10.txt
for p in 10x10 10x100; do python3 $A h2c $p b2.csv:load > verdict-233ed3c-h2c-$p.txt; done
python3 $A tls 50x10 b3.csv:load b4.csv:load > verdict-233ed3c-tls-50x10.txt
# The old encoder (8ffd1b0) against the new in the same rounds: b1 (h2c), b5 (TLS).
MIN_U=0.97 python3 $D new/old=b1.csv:load/base > new-vs-old-h2c.txt
MIN_U=0.97 python3 $D new/old=b5.csv:load/base > new-vs-old-tls.txt
# c1: the calibration of the TLS budget (never judged for agreement).
{ python3 $A tls 50x10 c1.csv:load; python3 $A tls 50x10 c1.csv:base; } > calibration-c1.txt
# 8a67805 (4 us over TLS by default): the fresh TLS sets.
for p in 50x10; do python3 $A tls $p v1a.csv:load > verdict-8a67805-tls-$p.txt; done
for p in 10x10 10x100; do python3 $A tls $p v1b.csv:load > verdict-8a67805-tls-$p.txt; done

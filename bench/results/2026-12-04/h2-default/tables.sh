#!/bin/sh
# Regenerates the verdicts and tables of README.md from the raw CSVs here and in ../h2-poll.
cd "$(dirname "$0")"
P=../h2-poll
# The committed default (3 us), as RULE.txt says, judged per mode and point.
python3 agree.py tls 50x10 $P/r8-1.csv:load $P/r9-1.csv:load a1.csv:load a3.csv:load a4.csv:load > verdict-tls-50x10.txt
python3 agree.py h2c 50x10 $P/r8-1.csv:load a3.csv:load a6.csv:load a9.csv:load > verdict-h2c-50x10.txt
python3 agree.py tls 10x10 a5.csv:load a7.csv:load > verdict-tls-10x10.txt
python3 agree.py tls 10x100 a5.csv:load a7.csv:load a8.csv:load > verdict-tls-10x100.txt
for p in 10x10 10x100; do
    python3 agree.py h2c $p a5.csv:load a7.csv:load a10.csv:load > verdict-h2c-$p.txt
done
# With the 3 us sets of the pre-commit build beside them (r6-1, r7-1: not in the rule).
{ python3 agree.py tls 50x10 $P/r6-1.csv:load $P/r7-1.csv:load $P/r8-1.csv:load $P/r9-1.csv:load a1.csv:load a3.csv:load a4.csv:load
  python3 agree.py h2c 50x10 $P/r6-1.csv:load $P/r7-1.csv:load $P/r8-1.csv:load a3.csv:load a6.csv:load a9.csv:load; } > all-3us-sets.txt
# Budgets side by side in the same rounds: a2 (4 us as load, 5 us as base), a3 (3 us as load, 5 us as base).
MIN_U=0.97 python3 $P/paired.py p4=a2.csv:load p5=a2.csv:base > budgets-a2.txt
MIN_U=0.97 python3 $P/paired.py p3=a3.csv:load p5=a3.csv:base > budgets-a3.txt
# Over h2c at 50x10: does nginx's CPU per request move with the client's own CPU, wake-ups, TCP segments?
python3 - <<'PY' > correlations.txt
import csv, statistics as st
sets = {"r8-1, a3, a6, a9": ["../h2-poll/r8-1.csv", "a3.csv", "a6.csv", "a9.csv"], "s1": ["s1.csv"]}
print("h2c 50x10: Pearson correlation, across runs, of nginx's CPU per request with each column")
for name, files in sets.items():
    rows = [r for f in files for r in csv.DictReader(open(f))
            if r["mode"] == "h2c" and r["connections"] == "50" and r["tool"] in ("h2load", "load")]
    for t in ("h2load", "load"):
        R = [r for r in rows if r["tool"] == t]
        x = [float(r["server_cpu_us_per_request"]) for r in R]
        cols = ["cpu_us_per_request", "client_wakeups_per_request", "cpu1_ipis_per_request"]
        if "tcp_segments_per_request" in R[0]:
            cols.append("tcp_segments_per_request")
        out = []
        for k in cols:
            y = [float(r[k]) for r in R]
            out.append(f"{k} {st.correlation(x, y):+.2f} ({min(y):.2f}..{max(y):.2f})")
        print(f"{name:>13} {t:>6} n {len(R):>2}, nginx {min(x):.1f}..{max(x):.1f} us: " + "; ".join(out))
PY
MIN_U=0.97 python3 ../h2-poll/direct.py like/default=l1.csv:base/load > like-vs-default.txt

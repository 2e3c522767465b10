#!/bin/sh
# Regenerates the tables of README.md from the raw CSVs in this directory.
# Which client of which invocation had which budget: see README.md.
cd "$(dirname "$0")"
ARGS="main=r1-1.csv:base,r2-1.csv:base,r2-2.csv:base,r3-1.csv:base off=r4-1.csv:base,r7-1.csv:base
 p1=r5-1.csv:base p2=r5-1.csv:load p3=r6-1.csv:load,r7-1.csv:load p4=r6-1.csv:base
 p5=r1-1.csv:load,r2-2.csv:load,r3-1.csv:load p10=r4-1.csv:load p20=r1-2.csv:load,r2-1.csv:load p50=r1-2.csv:base"
DARGS="p5/main=r1-1.csv:load/base,r2-2.csv:load/base,r3-1.csv:load/base p20/main=r2-1.csv:load/base
 p10/off=r4-1.csv:load/base p3/off=r7-1.csv:load/base p2/p1=r5-1.csv:load/base p3/p4=r6-1.csv:load/base
 p50/p20=r1-2.csv:base/load"
MIN_U=0.97 python3 paired.py $ARGS > paired-saturated.txt
python3 paired.py $ARGS > paired-all-rounds.txt
MIN_U=0.97 python3 direct.py $DARGS > direct-saturated.txt
python3 direct.py $DARGS > direct-all-rounds.txt
# r8-1: the committed default (no flag: 3 us with --h2) against main, after the choice.
MIN_U=0.97 python3 paired.py default=r8-1.csv:load main=r8-1.csv:base > confirm-saturated.txt
python3 paired.py default=r8-1.csv:load main=r8-1.csv:base > confirm-all-rounds.txt
MIN_U=0.97 python3 direct.py default/main=r8-1.csv:load/base >> confirm-saturated.txt
python3 direct.py default/main=r8-1.csv:load/base >> confirm-all-rounds.txt
# r9-1: the lead's rerun of the default over TLS alone (merged main, 20 rounds, no base).
MIN_U=0.97 python3 paired.py default=r9-1.csv:load > confirm-tls-saturated.txt
python3 paired.py default=r9-1.csv:load > confirm-tls-all-rounds.txt
python3 - <<'PY' > saturation.txt
import csv, glob
print("nginx's utilisation U = X * D (rate x nginx CPU per request) per invocation and mode")
for f in sorted(glob.glob('r*.csv')):
    rows = list(csv.DictReader(open(f)))
    for mode in ('tls', 'h2c'):
        us = sorted(float(r['requests_per_s']) * float(r['server_cpu_us_per_request']) / 1e6 for r in rows if r['mode'] == mode)
        if not us:
            continue
        print(f"{f} {mode}: min {us[0]:.3f} median {us[len(us)//2]:.3f}; runs with U < 0.97: {sum(u < 0.97 for u in us)}/{len(us)}")
PY

import csv, sys, statistics as st
"""Paired ratio tool A / tool B within each round: LABEL=FILE:A/B[,FILE:A/B...]; mean ± 95% t half-width."""
from collections import defaultdict
import os
# MIN_U (default 0): keep only the rounds in which nginx was the bottleneck
# under every client of the round, by the utilisation law U = X * D (the
# client's rate times nginx's CPU per request, i.e. nginx's busy share of the
# window) >= MIN_U. A round where nginx idled measures what else held its CPU.
MIN_U = float(os.environ.get("MIN_U", "0"))
def saturated(d):
    return all(float(r["requests_per_s"]) * float(r["server_cpu_us_per_request"]) / 1e6 >= MIN_U
               for r in d.values())
T95 = [0, 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11, 2.10, 2.09, 2.09, 2.08,2.07,2.07,2.06,2.06,2.06,2.05,2.05,2.05,2.04]
def fm(xs, d=3):
    m = st.mean(xs); n=len(xs)
    hw = T95[min(n-1, len(T95)-1)] * st.stdev(xs) / n**0.5 if n > 1 else float('nan')
    return f"{m:.{d}f} ± {hw:.{d}f} (n={n})"
# args: label=fileA:toolA/toolB,...  (ratio toolA/toolB within each round)
for a in sys.argv[1:]:
    label, spec = a.split('=')
    for mode in ("tls", "h2c"):
        r = defaultdict(list)
        for part in spec.split(','):
            f, tt = part.split(':'); ta, tb = tt.split('/')
            by = defaultdict(dict)
            for row in csv.DictReader(open(f)):
                if row["mode"] == mode: by[row["round"]][row["tool"]] = row
            for d in by.values():
                if not saturated(d):
                    continue
                for k in ("requests_per_s", "cpu_us_per_request", "server_cpu_us_per_request"):
                    r[k].append(float(d[ta][k]) / float(d[tb][k]))
        if len(r["requests_per_s"]) < 2:
            print(f"{label:>10} {mode}: {len(r['requests_per_s'])} rounds: too few to report")
            continue
        print(f"{label:>10} {mode}: req/s {fm(r['requests_per_s'])}; client CPU/req {fm(r['cpu_us_per_request'])}; nginx us/req {fm(r['server_cpu_us_per_request'])}")

"""Paired ratios client/h2load per round, pooled over the given invocations.

Usage: paired.py LABEL=FILE:TOOL[,FILE:TOOL...] ...  (TOOL: load or base, the
script's two servelab columns). Prints, per mode, the mean ± 95% Student-t
half-width over the rounds of: requests/s ratio, client CPU per request ratio,
nginx CPU per request ratio; the absolute nginx and client us/request of the
client and of h2load in the same rounds; blocks (voluntary context switches)
per request; and the utilisation law U = X*D for nginx (rate x nginx CPU per
request: near 1 when nginx is the bottleneck) and for the client.
"""
import csv, sys, statistics as st
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
def mhw(xs):
    m = st.mean(xs); n=len(xs)
    return m, (T95[min(n-1, len(T95)-1)] * st.stdev(xs) / n**0.5 if n > 1 else float('nan'))
# args: label=file:tool,...   e.g. "main=r1-1.csv:base"
groups = defaultdict(list)  # label -> list of (file, tool)
for a in sys.argv[1:]:
    label, spec = a.split('=')
    for part in spec.split(','):
        f, t = part.split(':')
        groups[label].append((f, t))
rows = {}
def load(f):
    if f not in rows: rows[f] = list(csv.DictReader(open(f)))
    return rows[f]
keys = [("requests_per_s","req/s"),("cpu_us_per_request","client CPU/req"),("server_cpu_us_per_request","nginx us/req")]
for mode in ("tls","h2c"):
    print(f"\n{mode}: paired ratios tool/h2load (mean ± 95% t half-width over rounds, n rounds); absolute means")
    print(f"{'client':>10} {'n':>3} {'req/s ratio':>16} {'CPU/req ratio':>16} {'nginx us/req ratio':>18} {'nginx us/req':>14} {'h2load nginx':>13} {'client us/req':>14} {'h2load us/req':>14} {'blocks/req':>11} {'h2load blk':>11} {'U nginx':>7} {'U client':>8} {'h2load: U nginx':>15} {'U client':>8}")
    for label, parts in groups.items():
        ratios = defaultdict(list); absn = defaultdict(list)
        for f, t in parts:
            R = [r for r in load(f) if r["mode"] == mode]
            by = defaultdict(dict)
            for r in R: by[r["round"]][r["tool"]] = r
            for rd, d in by.items():
                if not saturated(d):
                    continue
                if t in d and "h2load" in d:
                    for k,_ in keys:
                        ratios[k].append(float(d[t][k]) / float(d["h2load"][k]))
                    absn["srv"].append(float(d[t]["server_cpu_us_per_request"])); absn["hsrv"].append(float(d["h2load"]["server_cpu_us_per_request"]))
                    absn["cli"].append(float(d[t]["cpu_us_per_request"])); absn["hcli"].append(float(d["h2load"]["cpu_us_per_request"]))
                    X = float(d[t]["requests_per_s"]); Xh = float(d["h2load"]["requests_per_s"])
                    absn["us"].append(X * float(d[t]["server_cpu_us_per_request"]) / 1e6)
                    absn["uc"].append(X * float(d[t]["cpu_us_per_request"]) / 1e6)
                    absn["hus"].append(Xh * float(d["h2load"]["server_cpu_us_per_request"]) / 1e6)
                    absn["huc"].append(Xh * float(d["h2load"]["cpu_us_per_request"]) / 1e6)
                    absn["w"].append(float(d[t]["client_wakeups_per_request"])); absn["hw"].append(float(d["h2load"]["client_wakeups_per_request"]))
        n = len(ratios["requests_per_s"])
        if n < 2:
            print(f"{label:>10} {n:>3} rounds: too few to report")
            continue
        fm = lambda xs, d=3: "{:.{d}f} ± {:.{d}f}".format(*mhw(xs), d=d)
        print(f"{label:>10} {n:>3} {fm(ratios['requests_per_s']):>16} {fm(ratios['cpu_us_per_request']):>16} {fm(ratios['server_cpu_us_per_request']):>18} {fm(absn['srv'],2):>14} {fm(absn['hsrv'],2):>13} {fm(absn['cli'],2):>14} {fm(absn['hcli'],2):>14} {fm(absn['w'],3):>11} {fm(absn['hw'],3):>11} {st.mean(absn['us']):>7.3f} {st.mean(absn['uc']):>8.3f} {st.mean(absn['hus']):>15.3f} {st.mean(absn['huc']):>8.3f}")

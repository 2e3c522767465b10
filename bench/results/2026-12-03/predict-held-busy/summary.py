#!/usr/bin/env python3
"""Prints each run's validation, point by point, from its results.json:
measured / predicted as measured (steady state), R over the answered
requests, unfinished requests at a window's end measured / predicted, and
the error table. Usage: summary.py [RUN...] (default: every run here)."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def est(e):
    return "-" if e is None else "%.1f" % e["value"]


def run(name):
    d = json.load(open(os.path.join(HERE, name, "results.json")))
    load = open(os.path.join(HERE, name, "loadavg.txt")).read().split("load average:")
    la = " -> ".join(x.split("\n")[0].strip() for x in load[1:])
    a = d["architecture"]
    print("## %s (load average %s)" % (name, la))
    print()
    print("architecture: workers %s, keep-alive %s" % (json.dumps(a["workers"]), json.dumps(a["keepalive"])))
    if d.get("past_workers"):
        print("past W: " + d["past_workers"]["summary"])
    v = d["validation"]
    print("window %.2f s" % v["window_s"])
    print()
    print("| users | X meas. | X pred. (steady) | R meas. ms | R pred. ms (steady) | unfinished meas. / pred. |")
    print("|---|---|---|---|---|---|")
    for p in v["points"]:
        pr, st = p["predicted"], p["steady"]
        print("| %d | %.1f | %.1f (%.1f) | %s | %s (%s) | %.1f / %.1f |" % (
            p["load"]["users"], p["goodput"]["value"], pr["goodput"]["value"], st["goodput"]["value"],
            est(p["mean_ms"]), est(pr["mean_ms"]), est(st["mean_ms"]),
            p["unfinished"]["value"], pr["users_waiting_at_end"]["value"]))
    print()
    for r in v["table"]:
        if r["max_abs_pct"] is None:
            continue
        met = {True: "met", False: "MISSED", None: ""}[r["met"]]
        print("- %s: largest |error| %.1f%%, mean %.1f%% %s" % (r["target"], r["max_abs_pct"], r["mean_abs_pct"], met))
    print()


for name in sys.argv[1:] or sorted(x for x in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, x))):
    run(name)

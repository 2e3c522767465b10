"""Per point and client, the means over the rounds of one CSV of bench/h2-load-vs-h2load.sh, and each
servelab column's paired ratios to h2load (mean ± 95% Student-t half-width). Usage: summary.py FILE.csv"""
import csv, math, statistics as st, sys

T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}


def mhw(xs):
    return st.mean(xs), T95.get(len(xs) - 1, 2.0) * st.stdev(xs) / math.sqrt(len(xs))


rows = list(csv.DictReader(open(sys.argv[1])))
cols = [("requests_per_s", "req/s", 0), ("cpu_us_per_request", "client us/req", 2),
        ("server_cpu_us_per_request", "nginx us/req", 2), ("client_wakeups_per_request", "wakes/req", 3),
        ("cpu1_ipis_per_request", "IPIs/req", 3), ("client_syscalls_per_request", "client sys/req", 2)]
points = sorted({(int(r["connections"]), int(r["streams"])) for r in rows})
for c, m in points:
    by = {}
    for r in rows:
        if (int(r["connections"]), int(r["streams"])) == (c, m):
            by.setdefault(r["round"], {})[r["tool"]] = r
    tools = sorted({t for d in by.values() for t in d}, key=lambda t: (t != "h2load", t))
    print(f"{r['mode']} {c}x{m}, {len(by)} rounds")
    for t in tools:
        parts = []
        for k, name, dp in cols:
            xs = [float(d[t][k]) for d in by.values() if t in d and d[t][k] != ""]
            if xs:
                parts.append(f"{name} {st.mean(xs):.{dp}f}")
        if t != "h2load":
            for k, name in (("requests_per_s", "rate"), ("server_cpu_us_per_request", "nginx"), ("cpu_us_per_request", "client")):
                m_, hw = mhw([float(d[t][k]) / float(d["h2load"][k]) for d in by.values() if t in d])
                parts.append(f"{name}/h2load {m_:.3f} ± {hw:.3f}")
        print(f"  {t:>6}: " + ", ".join(parts))

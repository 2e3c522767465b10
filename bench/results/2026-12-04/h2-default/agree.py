"""Is `load --h2` within 5% of h2load's requests/s? Paired ratios load/h2load per
round, judged over several invocations of bench/h2-load-vs-h2load.sh.

Usage: agree.py MODE POINT FILE:TOOL [FILE:TOOL ...]
  MODE tls or h2c; POINT CxM (e.g. 50x10); TOOL the servelab column (load or base).
       agree.py --check   runs the rule on made-up cases it must decide one way.

Keeps the rounds in which nginx was the bottleneck under both clients (the
utilisation law U = X*D >= MIN_U, default 0.97: the client's rate times nginx's
CPU per request is nginx's busy share of the window). Prints, per invocation and
pooled: n rounds, mean ratio, 95% Student-t half-width. Then the rule stated in
README.md before the last invocation ran: if a one-way analysis of variance finds
no difference between the invocations (p >= 0.05), the rounds are pooled; if it
does, the invocations' means are the repeats (t over invocations).
"""
import csv, math, os, statistics as st, sys

MIN_U = float(os.environ.get("MIN_U", "0.97"))


def betacf(a, b, x):
    # Continued fraction for the incomplete beta function (modified Lentz).
    tiny, qab, qap, qam = 1e-300, a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d; d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c; c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d; d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c; c = c if abs(c) > tiny else tiny
        de = d * c; h *= de
        if abs(de - 1) < 1e-12:
            break
    return h


def betai(a, b, x):
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0: return 0.0
    if x >= 1: return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1 - math.exp(lbt) * betacf(b, a, 1 - x) / b


def t_two_sided_p(t, df):
    return betai(df / 2, 0.5, df / (df + t * t))


def t95(df):
    lo, hi = 0.0, 100.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if t_two_sided_p(mid, df) > 0.05: lo = mid
        else: hi = mid
    return (lo + hi) / 2


def f_p(f, d1, d2):
    return betai(d2 / 2, d1 / 2, d2 / (d2 + d1 * f))


def mhw(xs):
    n = len(xs)
    return st.mean(xs), t95(n - 1) * st.stdev(xs) / math.sqrt(n)


def ratios(path, tool, mode, point):
    c, m = point.split("x")
    rows = [r for r in csv.DictReader(open(path))
            if r["mode"] == mode and r["connections"] == c and r["streams"] == m]
    by = {}
    for r in rows:
        by.setdefault(r["round"], {})[r["tool"]] = r
    out, dropped = [], 0
    for rd in sorted(by, key=int):
        d = by[rd]
        if tool not in d or "h2load" not in d:
            continue
        u = [float(d[k]["requests_per_s"]) * float(d[k]["server_cpu_us_per_request"]) / 1e6 for k in (tool, "h2load")]
        if min(u) < MIN_U:
            dropped += 1
            continue
        out.append(float(d[tool]["requests_per_s"]) / float(d["h2load"]["requests_per_s"]))
    return out, dropped


def main():
    mode, point, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    groups = []
    print(f"{mode} {point}: requests/s ratio load/h2load per round, rounds with nginx U >= {MIN_U}")
    for s in specs:
        path, tool = s.rsplit(":", 1)
        xs, dropped = ratios(path, tool, mode, point)
        if len(xs) < 2:
            print(f"  {os.path.basename(path):>10} {tool:>5}: {len(xs)} rounds of this mode and point, left out")
            continue
        m, hw = mhw(xs)
        print(f"  {os.path.basename(path):>10} {tool:>5}: n {len(xs):>3} (set aside {dropped}), {m:.3f} ± {hw:.3f}")
        groups.append(xs)
    for line in judge(groups):
        print(line)


def judge(groups):
    """The rule's verdict on the per-round ratios of each invocation: lines to print."""
    pooled = [x for g in groups for x in g]
    m, hw = mhw(pooled)
    k, n = len(groups), len(pooled)
    lines = [f"  pooled over rounds: n {n}, {m:.3f} ± {hw:.3f} ({m - hw:.3f} .. {m + hw:.3f})"]
    lo, hi, basis = m - hw, m + hw, "one invocation" if k == 1 else "rounds pooled"
    if k > 1:
        means = [st.mean(g) for g in groups]
        ssb = sum(len(g) * (st.mean(g) - m) ** 2 for g in groups)
        ssw = sum((x - st.mean(g)) ** 2 for g in groups for x in g)
        f = (ssb / (k - 1)) / (ssw / (n - k))
        p = f_p(f, k - 1, n - k)
        mi, hwi = mhw(means)
        lines.append(f"  over invocations' means: k {k}, {mi:.3f} ± {hwi:.3f} ({mi - hwi:.3f} .. {mi + hwi:.3f})")
        lines.append(f"  one-way ANOVA between invocations: F({k - 1}, {n - k}) = {f:.2f}, p = {p:.3f}")
        if p < 0.05:
            lo, hi, basis = mi - hwi, mi + hwi, "invocations' means"
    # Added after the rule (post hoc, not part of it): the geometric mean of
    # the ratios, an interval on their logarithms. The arithmetic mean of
    # X/Y is biased above X's mean over Y's when both vary a lot (Jensen:
    # E[1/Y] > 1/E[Y]), and it is not symmetric: h2load/load would not read
    # as its reciprocal. The log-ratio is.
    lm, lhw = mhw([math.log(x) for x in pooled])
    lines.append(f"  geometric mean over rounds (post hoc): {math.exp(lm):.3f} "
                 f"({math.exp(lm - lhw):.3f} .. {math.exp(lm + lhw):.3f})")
    inside = 0.95 <= lo and hi <= 1.05
    lines.append(f"  verdict ({basis}): interval {lo:.3f} .. {hi:.3f} "
                 + ("lies inside 0.95 .. 1.05: agreement within 5% shown" if inside
                    else "does not lie inside 0.95 .. 1.05: agreement within 5% not shown"))
    return lines


def check():
    """Cases the rule must decide one way; run with `agree.py --check`."""
    tight = [1.0 + 0.01 * ((i % 5) - 2) for i in range(20)]  # mean 1.00, sd about 0.014
    cases = [
        ("one tight set at 1.00", [tight], "one invocation", True),
        ("one tight set at 1.10", [[x + 0.10 for x in tight]], "one invocation", False),
        ("one wide set at 1.00", [[1.0 + 0.1 * ((i % 5) - 2) for i in range(8)]], "one invocation", False),
        ("sets at 1.00 and 1.20", [tight, [x + 0.20 for x in tight]], "invocations' means", False),
        ("two tight sets at 1.00", [tight, tight[::-1]], "rounds pooled", True),
    ]
    for name, groups, basis, shown in cases:
        last = judge(groups)[-1]
        got_basis = last.split("verdict (")[1].split(")")[0]
        ok = (" shown" in last and "not shown" not in last) == shown and got_basis == basis
        print(("ok   " if ok else "FAIL ") + name + ": " + last.strip())
        if not ok:
            sys.exit(1)


if sys.argv[1:] == ["--check"]:
    check()
else:
    main()

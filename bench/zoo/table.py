"""The zoo's table: reads OUT/runs.jsonl (one record per server, written by
bench/zoo/run.sh) and each server's predict results.json, writes OUT/zoo.md
and OUT/zoo.json. `--summary RESULTS_JSON` prints one server's line.

results.json's schema is read as `servelab predict` writes it:
validation.table (one row per target: max_abs_pct, limit_pct, verdict and
`why`, judged by predict itself: crates/predict/src/judge.rs) and,
where predict has the architecture probes, architecture.workers
({kind: held, workers} | not_held | not_kept_alive | unknown) and
architecture.keepalive ({kind: closes, after_s} | longer_than | ...), and
past_workers (the calibration step past W: served_users, reading, the
model's model_served_users and model_agrees) where
predict has it."""
import json
import sys
from pathlib import Path

TARGETS = [
    ("throughput", "throughput"),
    ("mean_below_knee", "mean R ≤ N*"),
    ("mean_beyond_knee", "mean R > N*"),
    ("goodput", "goodput"),
]
NO_PROBES = "not found (predict has no probes)"
SCHEMA = "servelab-predict/3"


def load(path):
    """One server's results.json; a file of another schema is refused in one
    line (the verdicts and their `why` are predict's own since /3)."""
    results = json.loads(Path(path).read_text())
    if results.get("schema") != SCHEMA:
        sys.exit(f"table.py: {path} is {results.get('schema')!r}; this table reads {SCHEMA} (rerun the zoo)")
    return results


def rows(results):
    return {r["target"]: dict(r) for r in (results.get("validation") or {}).get("table", [])}


def cell(row):
    if row is None or row.get("max_abs_pct") is None:
        return "–"
    v = row.get("verdict")
    label = {"met": "met", "missed": "MISSED", "inconclusive": "inconclusive", None: ""}.get(v, v)
    return f"{row['max_abs_pct']:.1f}% {label}".strip()


def workers_found(results):
    arch = results.get("architecture")
    if arch is None:
        return NO_PROBES
    w = arch.get("workers", {})
    kind = w.get("kind")
    if kind == "held":
        past = results.get("past_workers")
        served = (past or {}).get("served_users")
        if served is None:
            return f"held, W = {w['workers']}"
        reading = past.get("reading")
        verdict = {"held": "confirmed", "passed": "between W and N: passed on under load",
                   "not_held": "not confirmed"}.get(reading, reading)
        model = past.get("model_served_users")
        if model is not None:
            agrees = "agrees" if past.get("model_agrees") else "does not agree"
            verdict += f"; model {model['value']:.2f}, {agrees}"
        hw = served.get("half_width")
        pm = f" ± {hw:.2f}" if hw is not None else ""
        return (f"held, W = {w['workers']}; under load X·R = {served['value']:.2f}{pm} at "
                f"{past['step']['load']['users']} users ({verdict})")
    if kind == "not_held":
        return f"not held ({w['held']} idle answered)"
    if kind == "not_kept_alive":
        return "not kept alive"
    return f"unknown: {w.get('why', '?')}"


def keepalive_found(results):
    arch = results.get("architecture")
    if arch is None:
        return NO_PROBES
    k = arch.get("keepalive", {})
    kind = k.get("kind")
    if kind == "closes":
        return f"{k['after_s']:.2f} s"
    if kind == "longer_than":
        return f"> {k['wait_s']:.0f} s"
    if kind == "not_kept_alive":
        return "not kept alive"
    return f"unknown: {k.get('why', '?')}"


def max_requests_found(results):
    arch = results.get("architecture")
    if arch is None:
        return NO_PROBES
    m = arch.get("max_requests")
    if m is None:
        return "–"
    if m.get("kind") == "closes":
        return f"{m['after']}"
    return f"≥ {m['answered']}"


def summary(results):
    t = rows(results)
    if not t:
        return f"no validation; W {workers_found(results)}; keep-alive {keepalive_found(results)}"
    missed = [label for key, label in TARGETS if t.get(key, {}).get("verdict") == "missed"]
    open_ = [label for key, label in TARGETS if t.get(key, {}).get("verdict") == "inconclusive"]
    parts = [f"{label} {t[key]['max_abs_pct']:.1f}%" for key, label in TARGETS
             if key in t and t[key].get("max_abs_pct") is not None]
    verdict = "; ".join(([f"missed: {', '.join(missed)}"] if missed else [])
                        + ([f"inconclusive: {', '.join(open_)}"] if open_ else [])) or "all met"
    return f"{verdict} (largest |error|: {', '.join(parts)}); W {workers_found(results)}; keep-alive {keepalive_found(results)}"


def conf_workers(r):
    if r.get("conf_workers") is None:
        return "–"
    held = {True: " held", False: " not held", None: ""}[r.get("conf_held")]
    return f"{r['conf_workers']}{held}"


def conf_keepalive(r):
    if r.get("conf_max_requests") == "none":
        return "off"
    ka = r.get("conf_keepalive_s")
    return "–" if ka is None else f"{ka:g} s"


def main(out):
    out = Path(out).resolve()
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line.strip()]
    servers = []
    md = [
        "# predict zoo",
        "",
        "Largest |error| over the validation loads, (predicted − measured) / measured, "
        "against predict's targets (throughput 5%, mean R up to N* 10%, past N* 15%, goodput 10%).",
        "",
        "| server | exit | " + " | ".join(label for _, label in TARGETS)
        + " | W configured | W found | keep-alive configured | keep-alive found"
        + " | requests/conn configured | requests/conn found | time |",
        "|---" * (len(TARGETS) + 9) + "|",
    ]
    for r in runs:
        results = {}
        # The server's directory beside the table, or else the record's
        # absolute path (a table written elsewhere).
        for d in ([out / Path(r["dir"]).name, Path(r["dir"])] if r.get("dir") else []):
            if (d / "results.json").is_file():
                results = load(d / "results.json")
                r = dict(r, dir=str(d.relative_to(out)) if d.is_relative_to(out) else str(d))
                break
        t = rows(results)
        entry = dict(r)
        if results:
            # Judged now, by this table.py (the record's line is from the run).
            entry["summary"] = summary(results)
        entry["targets"] = {key: t.get(key) for key, _ in TARGETS}
        entry["architecture"] = results.get("architecture")
        entry["workers_found"] = workers_found(results) if results else None
        entry["keepalive_found"] = keepalive_found(results) if results else None
        entry["max_requests_found"] = max_requests_found(results) if results else None
        entry["knee_users"] = results.get("knee_users")
        entry["warnings"] = results.get("warnings", [])
        servers.append(entry)
        ex = "–" if r.get("exit") is None else str(r["exit"])
        if not results:
            md.append(f"| {r['server']} | {ex} | " + " | ".join("–" for _ in TARGETS)
                      + f" | {conf_workers(r)} | – | {conf_keepalive(r)} | – | {r.get('conf_max_requests') or '–'} | – | {r['seconds']:.0f} s |")
            continue
        md.append(f"| {r['server']} | {ex} | " + " | ".join(cell(t.get(key)) for key, _ in TARGETS)
                  + f" | {conf_workers(r)} | {entry['workers_found']} | {conf_keepalive(r)} | {entry['keepalive_found']}"
                  + f" | {r.get('conf_max_requests') or '–'} | {entry['max_requests_found']} | {r['seconds']:.0f} s |")
    md += ["", "## Servers", ""]
    for r in servers:
        md.append(f"- **{r['server']}**: {r.get('version') or '?'}; {r.get('desc') or ''}; "
                  f"exit {r.get('exit')}; {r.get('summary')}" + (f"; results `{r['dir']}/`" if r.get("dir") else ""))
        for key, label in TARGETS:
            row = (r.get("targets") or {}).get(key) or {}
            for why in row.get("why") or []:
                md.append(f"  - {label}, {row.get('verdict')}: {why}")
    (out / "zoo.md").write_text("\n".join(md) + "\n")
    (out / "zoo.json").write_text(json.dumps({"schema": "servelab-zoo/1", "servers": servers}, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--summary":
        print(summary(load(sys.argv[2])))
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit("usage: table.py OUT_DIR | --summary RESULTS_JSON")

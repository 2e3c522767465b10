#!/usr/bin/env python3
"""Who pays for a large transfer over loopback: server and client CPU per request.

`filesize` measures serial at 1.5 ms of server CPU per 3.3 MB request and the
pool at 0.27 ms. This script tests the explanation: on loopback the kernel's
TCP work for a transfer (segmenting, the receiver's softirq, the wake-ups) is
charged to whichever process's context sends the data. A sender whose
`sendfile` finds room in the socket does that work itself; when the client
is the bottleneck, most segments go out from the client's own ACK processing
and are charged to the client. So the split depends on how many requests are
in flight, not on the engine: at 1 user the pool should cost what serial
costs.

For each round (interleaved, so drift hits every configuration alike) it runs
`servelab serve` pinned to CPU 0 and `servelab load` pinned to CPU 1 for
DURATION, and records the server's CPU from /proc/PID/task/*/schedstat
(nanoseconds) and the client's from getrusage(RUSAGE_CHILDREN).

    python3 bench/loopback-cpu.py [--size BYTES] [--rounds N] [--duration S]

Prints, per engine and users: requests/s, server µs per request, client µs
per request and their sum, each as mean ± 95% half-width over the rounds.
"""

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time

# 97.5% Student-t quantiles for n - 1 degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
        8: 2.306, 9: 2.262, 10: 2.228}


def interval(xs):
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, T975.get(len(xs) - 1, 2.0) * statistics.stdev(xs) / len(xs) ** 0.5


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_ns(pid):
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return total


def wait_listening(port, proc):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"loopback-cpu: error: the server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"loopback-cpu: error: the server is not listening on {port} after 10 s")


def one(exe, root, engine, users, session, duration):
    port = free_port()
    srv = subprocess.Popen(
        ["taskset", "-c", "0", exe, "serve", "--root", root, "--port", str(port),
         "--engine", engine, "--workers", "8", "--log", "off"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, srv)
        before = server_ns(srv.pid)
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        with tempfile.NamedTemporaryFile(suffix=".json") as js:
            subprocess.run(
                ["taskset", "-c", "1", exe, "load", f"http://127.0.0.1:{port}/f.bin",
                 "-c", str(users), "--session", str(session), "-d", f"{duration}s",
                 "--json", js.name],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            after = server_ns(srv.pid)
            ru2 = resource.getrusage(resource.RUSAGE_CHILDREN)
            report = json.load(open(js.name))
    finally:
        srv.terminate()
        srv.wait()
    n = report["counts"]["ok"]
    if n == 0:
        sys.exit(f"loopback-cpu: error: {engine} at {users} users answered no request")
    # The whole load process (its start-up included), from the kernel.
    client_s = (ru2.ru_utime - ru.ru_utime) + (ru2.ru_stime - ru.ru_stime)
    return {
        "rps": n / report["duration_s"],
        "server_us": (after - before) / 1e3 / n,
        "client_us": client_s * 1e6 / n,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", default="target/release/servelab")
    ap.add_argument("--size", type=int, default=3_300_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=4.0)
    ap.add_argument("--session", type=int, default=10)
    args = ap.parse_args()
    if not os.access(args.exe, os.X_OK):
        sys.exit(f"loopback-cpu: error: {args.exe} is not an executable (cargo build --release)")
    configs = [(e, u) for u in (1, 8) for e in ("serial", "pool")]
    with tempfile.TemporaryDirectory(prefix="servelab-loopback-") as root:
        with open(os.path.join(root, "f.bin"), "wb") as f:
            f.write(os.urandom(args.size))
        got = {c: [] for c in configs}
        for r in range(args.rounds):
            for c in configs:
                got[c].append(one(args.exe, root, c[0], c[1], args.session, args.duration))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{args.size} B file, session {args.session}, {args.rounds} interleaved rounds of "
          f"{args.duration} s; server on CPU 0, client on CPU 1; mean ± 95% half-width")
    print(f"{'engine':8} {'users':>5} {'req/s':>14} {'server µs/req':>16} "
          f"{'client µs/req':>16} {'sum µs/req':>16}")
    for (e, u), rs in got.items():
        cols = [interval([x[k] for x in rs]) for k in ("rps", "server_us", "client_us")]
        cols.append(interval([x["server_us"] + x["client_us"] for x in rs]))
        print(f"{e:8} {u:>5} " + " ".join(f"{m:>8.1f} ± {h:<5.1f}" for m, h in cols))


if __name__ == "__main__":
    main()

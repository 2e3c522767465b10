#!/usr/bin/env python3
"""Holds N idle keep-alive connections to a servelab engine and reports its RSS.

Starts `servelab serve --engine E`, opens N connections, sends one request on
each and reads the answer (so every connection has been used once and is now
idle between requests), then reads VmRSS of the server and checks that a new
connection is still answered. Prints one CSV line:
engine,connections,rss_kib,rss_before_kib,new_request_ok
"""
import argparse, os, resource, socket, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--bin", required=True)
ap.add_argument("--engine", required=True)
ap.add_argument("--conns", type=int, default=10000)
a = ap.parse_args()

need = a.conns + 100
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < need:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
root = tempfile.mkdtemp(prefix="idle-")
open(os.path.join(root, "1k.txt"), "w").write("a" * 1024)
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
srv = subprocess.Popen([a.bin, "serve", "--engine", a.engine, "--workers", "1", "--log", "off",
                        "--keepalive-timeout", "120s", "--read-timeout", "120s",
                        "--root", root, "--port", str(port)], stderr=subprocess.DEVNULL)


def rss():
    for line in open(f"/proc/{srv.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def get(s):
    s.sendall(b"GET /1k.txt HTTP/1.1\r\nHost: t\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf or len(buf) < buf.index(b"\r\n\r\n") + 4 + 1024:
        d = s.recv(65536)
        if not d:
            return False
        buf += d
    return buf.startswith(b"HTTP/1.1 200")


try:
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            break
        except OSError:
            time.sleep(0.05)
    before = rss()
    conns = []
    for i in range(a.conns):
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(30)
        conns.append(s)
        if not get(s):
            sys.exit(f"{a.engine}: connection {i} not answered")
    time.sleep(0.5)
    during = rss()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(5)
        ok = get(s)
    print(f"{a.engine},{a.conns},{during},{before},{ok}")
finally:
    srv.terminate()
    srv.wait(timeout=30)

#!/usr/bin/env python3
"""servelab side by side with nginx, lighttpd and h2o, each on one CPU, wrk on another.

Every server runs with one worker pinned to one CPU (--server-cpu, default 0) and
wrk runs with one thread pinned to another (--client-cpu, default 1), so a server
cannot borrow the client's CPU nor the client the server's. Rounds are interleaved
and their order rotates (A B C, B C A, C A B ...), so a machine that gets busier
or quieter during the run, and the position in a round, hurt every server alike.

Per server and scenario, over the rounds:
  rps        requests per second that wrk saw (median, min..max)
  cpu_us     server CPU time (user + sys) per request, in microseconds, summed over
             the server's process tree from /proc: the live processes and the
             children they have reaped. Far steadier than rps on a shared machine.
  client_us  wrk's CPU time per request (from wait4): a server that leaves work
             to the client's CPU (on loopback, TCP sending that happens while
             processing the client's ACKs) shows here.
and the ratio of rps and cpu_us to the best peer.

Scenarios: keepalive (1k.txt), close (1k.txt, Connection: close), 1m (1m.bin,
keep-alive) by default; 10k and 100k (keep-alive) on request.

HTTP/2 scenarios (--scenario h2, or by name): h2-tls (1k.txt over TLS, ALPN
h2) and h2c (1k.txt, cleartext with prior knowledge), driven by h2load (nghttp2)
with --conns connections and --streams concurrent streams each (h2load -m);
h2-load-tls is h2-tls driven by `servelab load --h2 --streams N` instead, so
that the two clients' CPU per request stand side by side on the same servers
(client_us). The servers run HTTP/2 listeners (nginx `http2`, lighttpd
server.h2proto, h2o's default; a servelab engine gets --h2c for h2c, and
offers h2 by ALPN over TLS), apart from their HTTP/1.1 ones.

TLS scenarios (--scenario tls, or any of them by name): tls-keepalive (1k.txt),
tls-full and tls-resume (1k.txt, a connection per request from `servelab load
--session 1`, without and with session resumption: a full or a resumed
handshake per request, so cpu_us is server CPU per connection), tls-1m (1m.bin,
keep-alive). Every server gets the same ECDSA P-256 certificate,
made with openssl in the temp dir, TLS 1.3 only, the suite TLS_AES_128_GCM_SHA256
and the group X25519 (h2o 2.2 has no setting for TLS 1.3 suites or groups: it
gets them from an OpenSSL configuration file, OPENSSL_CONF). The results record
what `openssl s_client` negotiates with each server. Clients: wrk (OpenSSL) for tls-keepalive
and tls-1m; `servelab load -k` (--load BIN, default the --servelab binary) for
tls-full and tls-resume: wrk resumes every session it can and cannot be told
not to, so it cannot make a full handshake per connection. A
servelab engine is started with --tls-cert/--tls-key for them; a --server
command gets them from {cert} and {key}, and is left out of TLS scenarios
without them. lighttpd needs its mod_openssl (Debian lighttpd-mod-openssl).

Missing peers and wrk are installed with apt-get when running as root; a peer
that is still missing is left out with a message. Raw rounds go to
<out>/<prefix>-rounds.csv, medians and the setup to <out>/<prefix>-<scenario>.json,
and the tables to <out>/<prefix>-summary.md; <out> defaults to
bench/results/<UTC date>/.

Examples (from the repository root):
  bench/peers.py --servelab target/release/servelab --engine reactor
  bench/peers.py --servelab target/release/servelab --engine reactor --engine epoll \\
      --scenario 1m --rounds 5 --duration 5
  bench/peers.py --server 'mine=target/release/servelab serve --root {root} --port {port}' \\
      --peers h2o --scenario keepalive
  bench/peers.py --servelab target/release/servelab --engine reactor --scenario tls
"""
import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import http.client
import ssl

PEERS = ("nginx", "lighttpd", "h2o")
# Debian package that provides each tool.
PACKAGES = {"nginx": "nginx", "lighttpd": "lighttpd", "h2o": "h2o", "wrk": "wrk",
            "openssl": "openssl", "h2load": "nghttp2-client", "curl": "curl"}
LIGHTTPD_OPENSSL = "/usr/lib/lighttpd/mod_openssl.so"
# Files served, by name and size. Text for the small ones, random bytes for the
# large ones (so no layer can shortcut them by compressing).
FILES = {"1k.txt": 1024, "10k.txt": 10 * 1024, "100k.bin": 100 * 1024, "1m.bin": 1 << 20}
# name: (file, Connection: close, title, TLS, client)
# The client is wrk, or `servelab load` ("load-full": --session 1 with
# --tls-resume off; "load-resume": the same with --tls-resume on). wrk speaks
# HTTPS (OpenSSL) but always resumes its sessions on reconnect and has no flag
# against it (nginx's $ssl_session_reused said "r" for 159 of 161 connections
# of `wrk -H 'Connection: close'` over TLS 1.3), so it cannot make a full
# handshake per request; both handshake scenarios use `servelab load`, so
# that resumed/full is also a same-client ratio.
SCENARIOS = {
    "keepalive": ("1k.txt", False, "keep-alive, 1 KiB", False, "wrk"),
    "close": ("1k.txt", True, "Connection: close, 1 KiB", False, "wrk"),
    "1m": ("1m.bin", False, "keep-alive, 1 MiB", False, "wrk"),
    "10k": ("10k.txt", False, "keep-alive, 10 KiB", False, "wrk"),
    "100k": ("100k.bin", False, "keep-alive, 100 KiB", False, "wrk"),
    "tls-keepalive": ("1k.txt", False, "TLS, keep-alive, 1 KiB", True, "wrk"),
    "tls-full": ("1k.txt", True, "TLS, a full handshake per request, servelab load "
                 "--session 1 --tls-resume off; cpu_us is per connection", True, "load-full"),
    "tls-resume": ("1k.txt", True, "TLS, a resumed handshake per request, servelab load "
                   "--session 1 --tls-resume on; cpu_us is per connection", True, "load-resume"),
    "tls-1m": ("1m.bin", False, "TLS, keep-alive, 1 MiB", True, "wrk"),
    "h2-tls": ("1k.txt", False, "HTTP/2 over TLS, 1 KiB, h2load", True, "h2load"),
    "h2c": ("1k.txt", False, "HTTP/2 cleartext (prior knowledge), 1 KiB, h2load", False,
            "h2load"),
    "h2-load-tls": ("1k.txt", False, "HTTP/2 over TLS, 1 KiB, servelab load --h2", True,
                    "load-h2"),
}
# Clients that speak HTTP/2: their scenarios run against HTTP/2 listeners.
H2_CLIENTS = ("h2load", "load-h2")
H2_SCENARIOS = "h2-tls,h2c,h2-load-tls"
DEFAULT_SCENARIOS = "keepalive,close,1m"
TLS_SCENARIOS = "tls-keepalive,tls-full,tls-resume,tls-1m"
# The one TLS 1.3 suite and key exchange group every server is given.
TLS_SUITE = "TLS_AES_128_GCM_SHA256"
TLS_GROUP = "X25519"
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchError(Exception):
    """A reason to stop, said in one line."""


# ---------------------------------------------------------------- setup

def make_root(root):
    os.makedirs(root)
    for name, size in FILES.items():
        with open(os.path.join(root, name), "wb") as f:
            if name.endswith(".bin"):
                f.write(os.urandom(size))
            else:
                line = b"x" * 63 + b"\n"
                f.write((line * (size // len(line) + 1))[:size])
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write("<html><body>bench</body></html>\n")
    for dirpath, _, names in os.walk(root):
        os.chmod(dirpath, 0o755)
        for n in names:
            os.chmod(os.path.join(dirpath, n), 0o644)


_apt_updated = False


def ensure_tool(tool, install):
    """True when `tool` is on PATH, installing its package with apt-get if allowed."""
    if shutil.which(tool):
        return True
    ensure_package(PACKAGES[tool], install)
    return shutil.which(tool) is not None


def ensure_package(package, install):
    """apt-get install `package` when allowed (root, apt-get present)."""
    global _apt_updated
    if not install or os.geteuid() != 0 or not shutil.which("apt-get"):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    if not _apt_updated:
        subprocess.run(["apt-get", "update"], **quiet)
        _apt_updated = True
    print(f"# installing {package} with apt-get", file=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", package], **quiet)


def peer_argv(name, root, port, work, tls=None, h2=False):
    """The command line of a peer configured like servelab: one worker, no access
    log, sendfile, keep-alive without a request limit. With tls = (cert, key):
    HTTPS only, TLS 1.3, TLS_SUITE and TLS_GROUP, session resumption on (the
    servers' defaults: tickets and a session cache). With h2: HTTP/2 (ALPN h2
    over TLS, prior knowledge in cleartext)."""
    if name == "nginx":
        # Debian 12's nginx 1.22 takes http2 on the listen line (1.25 moved it
        # to `http2 on;`); a cleartext http2 listener speaks h2c only.
        h2_flag = " http2" if h2 else ""
        listen = f"listen 127.0.0.1:{port}{h2_flag};"
        if tls:
            listen = f"""listen 127.0.0.1:{port} ssl{h2_flag};
        ssl_certificate {tls[0]};
        ssl_certificate_key {tls[1]};
        ssl_protocols TLSv1.3;
        ssl_conf_command Ciphersuites {TLS_SUITE};
        ssl_ecdh_curve {TLS_GROUP};
        ssl_session_cache shared:SSL:10m;
        ssl_session_tickets on;"""
        conf = f"""worker_processes 1;
daemon off;
master_process off;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=60s;
    types {{ text/plain txt; text/html html; application/octet-stream bin; }}
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    server {{
        {listen}
        root {root};
    }}
}}
"""
        path = os.path.join(work, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        return ["nginx", "-p", work, "-c", path]
    if name == "lighttpd":
        conf = f"""server.document-root = "{root}"
server.bind = "127.0.0.1"
server.port = {port}
server.max-keep-alive-requests = 1000000
server.max-fds = 16384
server.errorlog = "{work}/error.log"
index-file.names = ("index.html")
mimetype.assign = (".txt" => "text/plain", ".html" => "text/html", ".bin" => "application/octet-stream")
server.feature-flags = ("server.h2proto" => "{'enable' if h2 else 'disable'}")
"""
        if tls:
            conf += f"""server.modules += ("mod_openssl")
ssl.engine = "enable"
ssl.pemfile = "{tls[0]}"
ssl.privkey = "{tls[1]}"
ssl.openssl.ssl-conf-cmd = ("MinProtocol" => "TLSv1.3", "Ciphersuites" => "{TLS_SUITE}", "Groups" => "{TLS_GROUP}")
"""
        path = os.path.join(work, "lighttpd.conf")
        with open(path, "w") as f:
            f.write(conf)
        return ["lighttpd", "-D", "-f", path]
    if name == "h2o":
        # Started as root, h2o serves as 'nobody': the root is world-readable.
        ssl = ""
        if tls:
            # h2o 2.2 has no setting for TLS 1.3 suites or groups (2.3 added
            # cipher-suite-tls1.3): they come from OPENSSL_CONF (see h2o_env),
            # else OpenSSL follows the client's order (AES-256 first for wrk).
            ssl = f"""
  ssl:
    certificate-file: {tls[0]}
    key-file: {tls[1]}
    minimum-version: TLSv1.3"""
        conf = f"""listen:
  host: 127.0.0.1
  port: {port}{ssl}
num-threads: 1
hosts:
  default:
    paths:
      /:
        file.dir: {root}
"""
        path = os.path.join(work, "h2o.conf")
        with open(path, "w") as f:
            f.write(conf)
        return ["h2o", "-c", path]
    raise ValueError(name)


def h2o_env(work):
    """The environment that gives h2o 2.2 the TLS 1.3 suite and group: an
    OpenSSL configuration file, which libssl reads when it starts."""
    path = os.path.join(work, "openssl.cnf")
    with open(path, "w") as f:
        f.write(f"""openssl_conf = bench
[bench]
ssl_conf = bench_ssl
[bench_ssl]
system_default = bench_tls
[bench_tls]
MinProtocol = TLSv1.3
Ciphersuites = {TLS_SUITE}
Groups = {TLS_GROUP}
""")
    return dict(os.environ, OPENSSL_CONF=path)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def wait_listening(port, proc, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def serves(port, path, size, tls=False, h2=False):
    """True when GET /path answers 200 with exactly `size` bytes (over HTTP/2
    when h2: curl, which must say it spoke HTTP/2)."""
    if h2:
        scheme = "https" if tls else "http"
        flag = "--http2" if tls else "--http2-prior-knowledge"
        try:
            r = subprocess.run(["curl", "-sk", flag, "-o", "/dev/null", "-w",
                                "%{http_code} %{size_download} %{http_version}",
                                f"{scheme}://127.0.0.1:{port}/{path}"],
                               capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return r.stdout.split() == ["200", str(size), "2"]
    try:
        if tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            c = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=ctx)
        else:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/" + path)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status == 200 and len(body) == size
    except (OSError, http.client.HTTPException):
        return False


def make_cert(tmp):
    """The one certificate every server gets: ECDSA P-256, self-signed, for
    localhost and 127.0.0.1. Returns (cert, key) paths."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-keyout", key,
                        "-out", cert, "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise BenchError(f"openssl could not make the certificate: {r.stderr.strip()[:200]}")
    # h2o and nginx workers may run as another user.
    os.chmod(key, 0o644)
    return cert, key


def negotiated(port):
    """What an OpenSSL client with default settings (as wrk) gets from the
    server: 'TLSv1.3 TLS_AES_128_GCM_SHA256 X25519', or 'unknown'."""
    try:
        r = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-brief"],
                           input="", capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    got = {}
    for line in (r.stdout + r.stderr).splitlines():
        k, _, v = line.partition(":")
        got[k.strip()] = v.strip()
    return " ".join(got.get(k, "?") for k in ("Protocol version", "Ciphersuite",
                                               "Server Temp Key")) or "unknown"


class Server:
    """A server process (and its descendants), started in its own session."""

    def __init__(self, name, argv, work, cpu, env=None):
        self.name = name
        self.port = None
        self.work = work
        self.stderr = open(os.path.join(work, "stderr"), "w")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.stderr, preexec_fn=pinned(cpu),
                                     start_new_session=True, env=env)

    def stop(self):
        """SIGTERM to the server's process group, SIGKILL after 3 s. Once only."""
        if self.proc.returncode is not None:
            return
        for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 1.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        self.stderr.close()


# ---------------------------------------------------------------- measuring

def proc_stat(pid):
    """(ppid, utime+stime+cutime+cstime in ticks) of one process, or None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields[0] is the state (field 3 of stat(5)); ppid is field 4, utime 14 .. cstime 17.
    return int(fields[1]), sum(int(x) for x in fields[11:15])


def tree_cpu(root_pid):
    """(CPU ticks, pids) of root_pid and its descendants: their own time and that
    of the children they reaped. A descendant that exited and was not reaped by
    the tree is not counted: the caller compares the pid sets to know."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            s = proc_stat(int(entry))
            if s:
                stats[int(entry)] = s
    kids = {}
    for pid, (ppid, _) in stats.items():
        kids.setdefault(ppid, []).append(pid)
    seen, todo = set(), [root_pid]
    while todo:
        p = todo.pop()
        if p in stats and p not in seen:
            seen.add(p)
            todo.extend(kids.get(p, []))
    return sum(stats[p][1] for p in seen), frozenset(seen)


def run_wrk(port, path, conns, secs, close, cpu, tls=False):
    """One wrk run: (requests, rps, errors, wrk CPU seconds); raises BenchError
    when wrk's output cannot be read."""
    argv = ["wrk", "-t1", f"-c{conns}", f"-d{secs}s", "--timeout", "5s"]
    if close:
        argv += ["-H", "Connection: close"]
    argv.append(f"{'https' if tls else 'http'}://127.0.0.1:{port}/{path}")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         preexec_fn=pinned(cpu))
    with p.stdout:
        out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    requests = rps = None
    errors = 0
    for line in out.splitlines():
        words = line.replace(",", " ").replace(":", " ").split()
        if " requests in " in line:
            requests = int(words[0])
        elif line.startswith("Requests/sec:"):
            rps = float(words[1])
        elif line.lstrip().startswith(("Socket errors", "Non-2xx")):
            errors += sum(int(w) for w in words if w.isdigit())
    if p.returncode != 0 or requests is None or rps is None:
        said = " / ".join(line.strip() for line in out.strip().splitlines()[:3])
        raise BenchError(f"wrk failed (exit {p.returncode}): {said or 'no output'}")
    return requests, rps, errors, usage.ru_utime + usage.ru_stime


def run_load(load, port, path, conns, secs, resume, cpu, work):
    """One `servelab load` run, a connection per request over TLS: (requests,
    rps, errors, client CPU seconds, resumed handshakes, full handshakes)."""
    out = os.path.join(work, "load.json")
    argv = [load, "load", "-c", str(conns), "-d", f"{secs}s", "--session", "1", "-k",
            "--tls-resume", "on" if resume else "off", "-q", "--json", out,
            f"https://127.0.0.1:{port}/{path}"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=pinned(cpu))
    with p.stderr:
        err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    try:
        with open(out) as f:
            j = json.load(f)
        c = j["counts"]
        return (c["completed"], j["throughput"]["requests_per_s"], c["failed"],
                usage.ru_utime + usage.ru_stime, c.get("tls_resumed"), c.get("tls_full"))
    except (OSError, ValueError, KeyError) as e:
        said = err.strip().splitlines()[-1] if err.strip() else "no output"
        raise BenchError(f"servelab load failed (exit {code}): {said} ({e})")


def run_h2load(port, path, conns, streams, secs, tls, cpu):
    """One h2load run (one thread): (requests, rps, errors, h2load CPU seconds)."""
    scheme = "https" if tls else "http"
    argv = ["h2load", "-t1", f"-c{conns}", f"-m{streams}", "-D", str(secs),
            f"{scheme}://127.0.0.1:{port}/{path}"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         preexec_fn=pinned(cpu))
    with p.stdout:
        out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    done = rps = None
    errors = 0
    for line in out.splitlines():
        words = line.replace(",", " ").split()
        # "finished in 3.00s, 41234.33 req/s, 44.01MB/s"
        if line.startswith("finished in") and "req/s" in words:
            rps = float(words[words.index("req/s") - 1])
        # "requests: 123 total, 123 started, 123 done, 123 succeeded, 0 failed, 0 errored, 0 timeout"
        elif line.startswith("requests:"):
            n = {words[i + 1]: int(words[i]) for i in range(1, len(words) - 1, 2)
                 if words[i].isdigit()}
            done = n.get("succeeded")
            errors = n.get("failed", 0) + n.get("errored", 0) + n.get("timeout", 0)
    if code != 0 or done is None or rps is None:
        said = " / ".join(line.strip() for line in out.strip().splitlines()[-3:])
        raise BenchError(f"h2load failed (exit {code}): {said or 'no output'}")
    return done, rps, errors, usage.ru_utime + usage.ru_stime


def run_load_h2(load, port, path, conns, streams, secs, tls, cpu, work):
    """One `servelab load --h2` run: (requests, rps, errors, client CPU seconds)."""
    out = os.path.join(work, "load-h2.json")
    if os.path.exists(out):
        os.remove(out)
    scheme = "https" if tls else "http"
    argv = [load, "load", "--h2", "--streams", str(streams), "-c", str(conns), "-d",
            f"{secs}s", "-k", "-q", "--json", out, f"{scheme}://127.0.0.1:{port}/{path}"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=pinned(cpu))
    with p.stderr:
        err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    try:
        with open(out) as f:
            j = json.load(f)
        c = j["counts"]
        return (c["completed"], j["throughput"]["requests_per_s"], c["failed"],
                usage.ru_utime + usage.ru_stime)
    except (OSError, ValueError, KeyError) as e:
        said = err.strip().splitlines()[-1] if err.strip() else "no output"
        raise BenchError(f"servelab load --h2 failed (exit {code}): {said} ({e})")


def run_client(client, server, path, conns, secs, close, cpu, tls, load, streams):
    """One round of `client` against `server`: (requests, rps, errors, client
    CPU seconds, resumed handshakes, full handshakes)."""
    if client == "wrk":
        return run_wrk(server.port, path, conns, secs, close, cpu, tls) + (None, None)
    if client == "h2load":
        return run_h2load(server.port, path, conns, streams, secs, tls, cpu) + (None, None)
    if client == "load-h2":
        return run_load_h2(load, server.port, path, conns, streams, secs, tls, cpu,
                           server.work) + (None, None)
    return run_load(load, server.port, path, conns, secs, client == "load-resume", cpu,
                    server.work)


def measure(server, scenario, conns, secs, client_cpu, load=None, streams=1):
    path, close, _, tls, client = SCENARIOS[scenario]
    t0, pids0 = tree_cpu(server.proc.pid)
    requests, rps, errors, client_s, resumed, full = run_client(
        client, server, path, conns, secs, close, client_cpu, tls, load, streams)
    t1, pids1 = tree_cpu(server.proc.pid)
    row = {"requests": requests, "rps": rps, "errors": errors,
           "cpu_complete": pids0 == pids1, "cpu_us": None, "client_us": None,
           "resumed": resumed, "full": full}
    if requests > 0:
        row["cpu_us"] = (t1 - t0) / CLK_TCK / requests * 1e6
        row["client_us"] = client_s / requests * 1e6
    return row


# ---------------------------------------------------------------- reporting

def summarize(rows):
    """Medians and spread of one server's rounds in one scenario."""
    rps = [r["rps"] for r in rows]
    cpu = [r["cpu_us"] for r in rows if r["cpu_us"] is not None]
    client = [r["client_us"] for r in rows if r["client_us"] is not None]
    med = statistics.median(rps)
    return {
        "rps": med,
        "rps_min": min(rps),
        "rps_max": max(rps),
        # (max - min) / median: the width the goal "spread no wider" is about.
        "rps_spread": (max(rps) - min(rps)) / med if med else None,
        "cpu_us": statistics.median(cpu) if cpu else None,
        "cpu_us_min": min(cpu) if cpu else None,
        "cpu_us_max": max(cpu) if cpu else None,
        "cpu_complete": all(r["cpu_complete"] for r in rows),
        "client_us": statistics.median(client) if client else None,
        "errors": sum(r["errors"] for r in rows),
        # Handshakes that `servelab load` counted (None under wrk, which says nothing).
        "resumed": sum(r["resumed"] for r in rows) if all(r.get("resumed") is not None for r in rows) else None,
        "full": sum(r["full"] for r in rows) if all(r.get("full") is not None for r in rows) else None,
        "rounds": len(rows),
    }


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def table(scenario, medians, header):
    """A markdown table of one scenario, with ratios to the best peer."""
    peers = [n for n in medians if n in PEERS]
    best_rps = max((medians[p]["rps"] for p in peers), default=None)
    cpus = [medians[p]["cpu_us"] for p in peers if medians[p]["cpu_us"] is not None]
    best_cpu = min(cpus, default=None)
    lines = [header, "",
             "| server | rps (median) | rps min..max | spread | cpu_us/req | client_us/req | rps/best | cpu/best | errors |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, m in medians.items():
        cpu = fmt(m["cpu_us"], ".2f")
        if m["cpu_us"] is not None and not m["cpu_complete"]:
            cpu = "≥" + cpu  # some processes came and went unreaped during a round
        rr = f"{m['rps'] / best_rps:.2f}" if best_rps else "n/a"
        rc = f"{m['cpu_us'] / best_cpu:.2f}" if best_cpu and m["cpu_us"] is not None else "n/a"
        lines.append(f"| {n} | {m['rps']:.0f} | {m['rps_min']:.0f}..{m['rps_max']:.0f} | "
                     f"{fmt(m['rps_spread'], '.2f')} | {cpu} | {fmt(m['client_us'], '.2f')} | "
                     f"{rr} | {rc} | {m['errors']} |")
    return lines


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return {"cpu": model, "cpus": os.cpu_count(), "kernel": platform.release(), "loadavg": load}


# ---------------------------------------------------------------- main

def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servelab", metavar="BIN", help="the servelab binary that --engine runs")
    ap.add_argument("--engine", action="append", default=[],
                    help="a servelab engine to run with --workers 1 (repeatable)")
    ap.add_argument("--server", action="append", default=[], metavar="NAME=COMMAND",
                    help="another server; {root} and {port} are filled in (repeatable)")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma list of peers, or 'none'")
    ap.add_argument("--scenario", default=DEFAULT_SCENARIOS,
                    help=f"comma list from {','.join(SCENARIOS)}, 'tls' for all TLS ones or "
                    f"'h2' for all HTTP/2 ones (default {DEFAULT_SCENARIOS})")
    ap.add_argument("--streams", type=int, default=10,
                    help="concurrent streams per connection in the HTTP/2 scenarios (h2load -m)")
    ap.add_argument("--load", metavar="BIN",
                    help="the servelab binary whose `load` drives tls-full and tls-resume "
                    "(default: --servelab)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=int, default=3, help="seconds per round")
    ap.add_argument("--conns", type=int, default=50, help="wrk connections")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(here, "results", today),
                    help="directory for the results (default bench/results/<UTC date>)")
    ap.add_argument("--prefix", default="peers", help="file name prefix of the results")
    ap.add_argument("--no-install", action="store_true", help="never call apt-get")
    a = ap.parse_args()
    if a.engine and not a.servelab:
        ap.error("--engine needs --servelab BIN")
    if a.rounds < 1 or a.duration < 1 or a.conns < 1 or a.streams < 1:
        ap.error("--rounds, --duration, --conns and --streams must be at least 1")
    a.scenarios = []
    for s in a.scenario.split(","):
        groups = {"tls": TLS_SCENARIOS, "h2": H2_SCENARIOS}
        a.scenarios += groups[s].split(",") if s in groups else [s] if s else []
    a.load = a.load or a.servelab
    for s in a.scenarios:
        if s not in SCENARIOS:
            ap.error(f"unknown scenario {s!r}; choose from {', '.join(SCENARIOS)}")
        if SCENARIOS[s][4] not in ("wrk", "h2load") and not a.load:
            ap.error(f"scenario {s} runs `servelab load`: give --load BIN or --servelab BIN")
    a.peer_list = [] if a.peers == "none" else [p for p in a.peers.split(",") if p]
    for p in a.peer_list:
        if p not in PEERS:
            ap.error(f"unknown peer {p!r}; choose from {', '.join(PEERS)} or 'none'")
    a.targets = []
    for e in a.engine:
        a.targets.append((e, f"{a.servelab} serve --engine {e} --workers 1 --log off --root {{root}} --port {{port}}"))
    for s in a.server:
        name, eq, cmd = s.partition("=")
        if not eq or not name or not cmd:
            ap.error(f"--server wants NAME=COMMAND, got {s!r}")
        a.targets.append((name, cmd))
    names = [n for n, _ in a.targets] + a.peer_list
    if len(set(names)) != len(names):
        ap.error("every server needs a different name")
    if not names:
        ap.error("nothing to measure: give --engine, --server or peers")
    cpus = os.sched_getaffinity(0)
    for flag, cpu in (("--server-cpu", a.server_cpu), ("--client-cpu", a.client_cpu)):
        if cpu not in cpus:
            ap.error(f"{flag} {cpu} is not a CPU this process may use ({sorted(cpus)})")
    if a.server_cpu == a.client_cpu:
        ap.error("--server-cpu and --client-cpu must differ")
    return a


def start_all(a, root, tmp, started, scenarios, tls, h2=False):
    """Starts every server (appending it to `started`, so the caller stops it) and
    returns those that serve every scenario's file. tls: None (plain HTTP) or
    the (cert, key) the servers serve HTTPS with; h2: HTTP/2 listeners."""
    ok = []
    for name, cmd in a.targets + [(p, None) for p in a.peer_list]:
        if cmd is None and not ensure_tool(name, not a.no_install):
            print(f"# {name}: not installed, left out", file=sys.stderr)
            continue
        if tls and cmd is None and name == "lighttpd" and not os.path.exists(LIGHTTPD_OPENSSL):
            ensure_package("lighttpd-mod-openssl", not a.no_install)
            if not os.path.exists(LIGHTTPD_OPENSSL):
                print("# lighttpd: no mod_openssl (lighttpd-mod-openssl); left out of TLS",
                      file=sys.stderr)
                continue
        if tls and cmd is not None and "{cert}" not in cmd:
            if name in a.engine:
                cmd += " --tls-cert {cert} --tls-key {key}"
            else:
                print(f"# {name}: its command has no {{cert}} and {{key}}; left out of TLS",
                      file=sys.stderr)
                continue
        if h2 and not tls and cmd is not None and name in a.engine:
            cmd += " --h2c"
        work = os.path.join(tmp, ("tls-" if tls else "") + ("h2-" if h2 else "") + name)
        os.makedirs(work)
        port = free_port()
        cert, key = tls or (None, None)
        argv = peer_argv(name, root, port, work, tls, h2) if cmd is None else \
            ["sh", "-c", "exec " + cmd.format(root=root, port=port, cert=cert, key=key)]
        env = h2o_env(work) if tls and cmd is None and name == "h2o" else None
        s = Server(name, argv, work, a.server_cpu, env)
        s.port = port
        # What the results record: the command as given, or the peer's name
        # (its configuration is the one peer_argv writes).
        s.recipe = cmd if cmd is not None else f"{name} (configured by bench/peers.py)"
        started.append(s)
        if not wait_listening(port, s.proc):
            print(f"# {name}: not listening on {port}: {tail(work)}", file=sys.stderr)
            continue
        files = {SCENARIOS[sc][0] for sc in scenarios}
        bad = [f for f in sorted(files) if not serves(port, f, FILES[f], bool(tls), h2)]
        if bad:
            over = " over HTTP/2" if h2 else ""
            print(f"# {name}: GET /{bad[0]} did not answer 200 with the whole file{over}; "
                  "left out", file=sys.stderr)
            continue
        s.negotiated = negotiated(port) if tls else None
        ok.append(s)
    return ok


def tail(work):
    try:
        with open(os.path.join(work, "stderr")) as f:
            text = f.read().strip().splitlines()
        return text[-1] if text else "(no output)"
    except OSError:
        return "(no output)"


def main():
    a = parse_args()
    if not ensure_tool("wrk", not a.no_install):
        raise BenchError("wrk is needed and is not installed (apt-get install wrk)")
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="servelab-peers-")
    os.chmod(tmp, 0o755)
    root = os.path.join(tmp, "www")
    make_root(root)
    # Plain scenarios first, then TLS ones, each group against its own set of
    # servers (HTTP or HTTPS listeners), so that a server's process carries
    # only one kind of traffic and its CPU is the scenario's.
    # HTTP/2 scenarios likewise run against HTTP/2 listeners of their own.
    groups = [(tls, h2, [sc for sc in a.scenarios if SCENARIOS[sc][3] == tls
                         and (SCENARIOS[sc][4] in H2_CLIENTS) == h2])
              for tls in (False, True) for h2 in (False, True)]
    if any(SCENARIOS[sc][4] == "h2load" for sc in a.scenarios) and \
            not ensure_tool("h2load", not a.no_install):
        raise BenchError("h2load is needed for the HTTP/2 scenarios (apt-get install nghttp2-client)")
    if any(SCENARIOS[sc][4] in H2_CLIENTS for sc in a.scenarios) and \
            not ensure_tool("curl", not a.no_install):
        raise BenchError("curl is needed to check the HTTP/2 listeners (apt-get install curl)")
    started = []
    info = machine()
    rows = []
    summary = [f"# Side by side: {', '.join(n for n, _ in a.targets + [(p, 0) for p in a.peer_list])}",
               "",
               f"Machine: {info['cpu']}, {info['cpus']} CPUs, Linux {info['kernel']}, "
               f"load average {info['loadavg']} at the start.",
               f"Every server has one worker on CPU {a.server_cpu}; the client (wrk or h2load, one thread, "
               f"or `servelab load`, one thread) with {a.conns} connections on CPU {a.client_cpu}. "
               f"{a.rounds} interleaved rounds of {a.duration} s per scenario, medians. cpu_us is "
               "server CPU (user+sys) per request; client_us is the client's; /best is the ratio to "
               "the best peer; spread is (max - min) / median of rps.",
               f"Command: `{' '.join(sys.argv)}`", ""]
    try:
        for tls_on, h2, scenarios in groups:
            if not scenarios:
                continue
            tls = None
            if tls_on:
                if not ensure_tool("openssl", not a.no_install):
                    raise BenchError("openssl is needed for the TLS scenarios (apt-get install openssl)")
                tls = make_cert(tmp)
            servers = start_all(a, root, tmp, started, scenarios, tls, h2)
            if not servers:
                raise BenchError("no server could be started")
            if tls:
                summary += ["TLS: one ECDSA P-256 certificate for all; what an OpenSSL client "
                            "with default settings (as wrk) negotiates with each server:", ""]
                summary += [f"- {s.name}: {s.negotiated}" for s in servers] + [""]
            for sc in scenarios:
                path, close, title, _, client = SCENARIOS[sc]
                for s in servers:  # warm-up: open-file caches, TCP buffer autotuning
                    run_client(client, s, path, a.conns, 1, close, a.client_cpu, tls_on,
                               a.load, a.streams)
                per = {s.name: [] for s in servers}
                for r in range(a.rounds):
                    k = r % len(servers)
                    for s in servers[k:] + servers[:k]:
                        row = measure(s, sc, a.conns, a.duration, a.client_cpu, a.load,
                                      a.streams)
                        per[s.name].append(row)
                        rows.append({"scenario": sc, "round": r + 1, "server": s.name, **row})
                medians = {n: summarize(v) for n, v in per.items()}
                lines = table(sc, medians, f"## {title} ({sc})")
                if client in H2_CLIENTS:
                    lines += ["", f"HTTP/2: {a.conns} connections x {a.streams} concurrent "
                              "streams each."]
                elif client != "wrk":
                    lines += ["", "Handshakes the client counted (all rounds), resumed/full: " +
                              ", ".join(f"{n} {m['resumed']}/{m['full']}" for n, m in medians.items())]
                print("\n".join(lines) + "\n", flush=True)
                summary += lines + [""]
                with open(os.path.join(a.out, f"{a.prefix}-{sc}.json"), "w") as f:
                    json.dump({"scenario": sc, "file": path, "close": close, "tls": tls_on,
                               "client": client, "conns": a.conns,
                               "streams": a.streams if client in H2_CLIENTS else None,
                               "duration_s": a.duration, "rounds": a.rounds,
                               "server_cpu": a.server_cpu, "client_cpu": a.client_cpu,
                               "machine": info, "command": sys.argv,
                               "servers": {s.name: s.recipe for s in servers},
                               "negotiated": {s.name: s.negotiated for s in servers},
                               "medians": medians, "rounds_raw": per}, f, indent=2)
            for s in servers:
                s.stop()
        if any(not r["cpu_complete"] for r in rows):
            summary.append("≥: processes of that server came and went during a round without being "
                           "reaped inside its process tree, so their CPU is missing from the figure.")
        with open(os.path.join(a.out, f"{a.prefix}-rounds.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["scenario", "round", "server", "requests", "rps",
                                              "errors", "cpu_us", "client_us", "cpu_complete",
                                              "resumed", "full"])
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(a.out, f"{a.prefix}-summary.md"), "w") as f:
            f.write("\n".join(summary) + "\n")
        print(f"# results in {a.out}/{a.prefix}-*", file=sys.stderr)
    finally:
        for s in started:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except BenchError as e:
        sys.exit(f"peers.py: {e}")
    except KeyboardInterrupt:
        sys.exit(130)

#!/usr/bin/env bash
# `servelab predict` against a second server nobody here wrote: gunicorn
# (issue 17 §3), sync workers or threaded workers, serving a tiny WSGI app that
# burns a fixed amount of real CPU per request.
#
# Everything lives in a temporary directory: a Python venv into which pip
# installs gunicorn (never system-wide), the app, gunicorn's own config file,
# its pid file and error log. gunicorn listens on a free loopback port, pinned
# to CPU 0 with taskset (its workers inherit the mask); `servelab predict` runs
# on CPU 1 with `--pid` on gunicorn's master, whose process tree includes the
# workers, so the demand comes from D = U/X. The script stops only the gunicorn
# it started, by its pid, and removes the temporary directory.
#
# The app burns CPU by an iteration count, not by sleeping and not by reading a
# clock in the loop: each worker calibrates its loop once at start-up, as the
# fastest of 20 short samples timed with time.thread_time() (this thread's own
# CPU clock, which another process's or thread's turn on the CPU does not
# advance), and a request then runs BURN_MS worth of iterations. With threads,
# Python's GIL lets one thread burn at a time, so a worker serves like one
# CPU-bound thread whatever `--threads` says.
#
# Usage: bench/predict-gunicorn.sh OUT_DIR [sync|threads]
#   OUT_DIR  the results directory for `servelab predict` (must not exist)
#   sync     (default) WORKERS sync worker processes, one request each at a time
#   threads  one gthread worker process with THREADS threads
# Env: SERVELAB    binary (default target/release/servelab, else target/debug/servelab)
#      BURN_MS     CPU per request in ms (default 5)
#      WORKERS     sync worker processes (default 2)
#      THREADS     threads of the gthread worker (default 4)
#      PREDICT_ARGS extra flags for `servelab predict` (e.g. "--budget 30s --users 1,4,16")
#      KEEP=1      keep the temporary directory (config, error log) for a look
# Needs python3 with venv and pip (pip uses its configured index or wheel dir),
# taskset, curl. Prints the report's path at the end.
set -euo pipefail

OUT=${1:?usage: bench/predict-gunicorn.sh OUT_DIR [sync|threads]}
MODE=${2:-sync}
case "$MODE" in sync | threads) ;; *) echo "servelab: error: mode must be sync or threads, not \`$MODE\`" >&2; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SERVELAB:-}" ]; then
    if [ -x "$HERE/target/release/servelab" ]; then SERVELAB=$HERE/target/release/servelab; else SERVELAB=$HERE/target/debug/servelab; fi
fi
[ -x "$SERVELAB" ] || { echo "servelab: error: no servelab binary at $SERVELAB (cargo build --release -p servelab)" >&2; exit 1; }
[ -e "$OUT" ] && { echo "servelab: error: $OUT exists; predict never overwrites" >&2; exit 1; }
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
BURN_MS=${BURN_MS:-5}
WORKERS=${WORKERS:-2}
THREADS=${THREADS:-4}

WORK=$(mktemp -d)
GPID=""
cleanup() {
    if [ -n "$GPID" ]; then kill "$GPID" 2>/dev/null || true; wait "$GPID" 2>/dev/null || true; fi
    if [ -n "${KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

echo "installing gunicorn into a venv in $WORK" >&2
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet gunicorn
GUNICORN_VERSION=$("$WORK/venv/bin/gunicorn" --version)

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cat > "$WORK/app.py" <<'EOF'
"""A WSGI app that burns a fixed amount of CPU per request (no sleep)."""
import os
import time

BURN_S = float(os.environ["BURN_MS"]) / 1000.0
CHUNK = 20000


def spin(n):
    x = 0
    for i in range(n):
        x += i % 7
    return x


def calibrate():
    # Fastest of 20 samples on this thread's own CPU clock: an interrupted
    # sample only looks slower, so the fastest is the loop's own speed.
    best = 0.0
    for _ in range(20):
        t0 = time.thread_time()
        spin(CHUNK)
        t = time.thread_time() - t0
        if t > 0 and CHUNK / t > best:
            best = CHUNK / t
    return best


# Calibrated in each worker after the fork (gunicorn imports the app there
# unless preload_app is set, which this config does not).
ITERATIONS = int(calibrate() * BURN_S)
BODY = b"ok\n"


def app(environ, start_response):
    spin(ITERATIONS)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
    return [BODY]
EOF

if [ "$MODE" = sync ]; then
    WORKER_CONF="worker_class = \"sync\"
workers = $WORKERS"
    SHAPE="$WORKERS sync workers"
else
    WORKER_CONF="worker_class = \"gthread\"
workers = 1
threads = $THREADS"
    SHAPE="1 gthread worker with $THREADS threads"
fi
cat > "$WORK/gunicorn.conf.py" <<EOF
bind = "127.0.0.1:$PORT"
$WORKER_CONF
backlog = 2048
timeout = 120
pidfile = "$WORK/gunicorn.pid"
errorlog = "$WORK/error.log"
accesslog = None
loglevel = "warning"
chdir = "$WORK"
raw_env = ["BURN_MS=$BURN_MS"]
EOF

# exec keeps the pid: taskset becomes gunicorn's master.
(cd "$WORK" && exec taskset -c 0 "$WORK/venv/bin/gunicorn" -c "$WORK/gunicorn.conf.py" app:app) &
GPID=$!
for _ in $(seq 1 100); do
    curl -fs -o /dev/null "http://127.0.0.1:$PORT/" && break
    kill -0 "$GPID" 2>/dev/null || { echo "servelab: error: gunicorn exited at start-up: $(tail -n 3 "$WORK/error.log" 2>/dev/null)" >&2; GPID=""; exit 1; }
    sleep 0.1
done
curl -fs -o /dev/null "http://127.0.0.1:$PORT/" || { echo "servelab: error: gunicorn does not answer on 127.0.0.1:$PORT" >&2; exit 1; }
echo "$GUNICORN_VERSION, $SHAPE, $BURN_MS ms of CPU per request, pid $GPID on CPU 0, port $PORT" >&2

# shellcheck disable=SC2086 # PREDICT_ARGS is a list of flags on purpose.
taskset -c 1 "$SERVELAB" predict "http://127.0.0.1:$PORT/" --pid "$GPID" --out "$OUT" ${PREDICT_ARGS:-}
{
    echo "server: $GUNICORN_VERSION, $SHAPE, taskset -c 0, WSGI app burning $BURN_MS ms of CPU per request"
    echo "config:"
    sed 's/^/  /' "$WORK/gunicorn.conf.py"
} > "$OUT/server.txt"
echo "report: $OUT/report.html (server: $OUT/server.txt)"

#!/usr/bin/env bash
# `servelab predict` against Apache httpd (Debian's apache2), issue 17 §3: the
# same server and handler as the lab's `apache` experiment, measured and
# predicted by `servelab predict URL --pid PID`.
#
# The configuration is the lab's (crates/lab/src/apache.rs, whose test checks
# that this script keeps the directives below): its own ServerRoot, port, pid
# file, mutex and error log in a temporary directory, never a system instance
# or a system file; 4 request threads (event, worker) or 4 processes
# (prefork); KeepAlive Off unless KEEPALIVE=on (issue 17 §4: the event MPM closes idle keep-alive
# connections when its workers are busy, which the model does not describe);
# ListenBacklog 511, the model's buffer; and a mod_lua handler at /burn that
# burns CPU for an exponential time of mean BURN_MS (or exactly BURN_MS with
# BURN=const) by an iteration count calibrated once per Lua state (LuaScope
# thread) as the fastest of 20 samples, because Lua has no thread CPU clock.
#
# Apache runs in the foreground pinned to CPU 0 with taskset (its children
# inherit the mask); `servelab predict` runs on CPU 1 with --pid on Apache's
# parent, whose process tree includes every child. The script stops only the
# Apache it started, by its pid, and removes the temporary directory.
#
# Usage: bench/predict-apache.sh OUT_DIR [event|worker|prefork]
#   OUT_DIR  the results directory for `servelab predict` (must not exist)
# Env: SERVELAB     binary (default target/release/servelab, else target/debug/servelab)
#      BURN_MS      mean CPU per request in the handler, ms (default 20)
#      BURN         exp (default) or const
#      PREDICT_ARGS extra flags for `servelab predict` (e.g. "--think exp:200ms --users 2,5,10,25")
#      KEEPALIVE    off (default, the lab's experiment) or on (Apache's own default:
#                   a kept-alive connection holds its worker, issue 27)
#      KEEPALIVE_TIMEOUT  with KEEPALIVE=on, KeepAliveTimeout in seconds (default 5, Apache's)
#      KEEP=1       keep the temporary directory (config, error log) for a look
# Needs apache2 with mod_lua (.ci/run installs it), taskset, curl, python3 (to
# find a free port). Prints the report's path at the end.
set -euo pipefail

OUT=${1:?usage: bench/predict-apache.sh OUT_DIR [event|worker|prefork]}
MPM=${2:-event}
case "$MPM" in event | worker | prefork) ;; *) echo "servelab: error: the MPM must be event, worker or prefork, not \`$MPM\`" >&2; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SERVELAB:-}" ]; then
    if [ -x "$HERE/target/release/servelab" ]; then SERVELAB=$HERE/target/release/servelab; else SERVELAB=$HERE/target/debug/servelab; fi
fi
[ -x "$SERVELAB" ] || { echo "servelab: error: no servelab binary at $SERVELAB (cargo build --release -p servelab)" >&2; exit 1; }
[ -e "$OUT" ] && { echo "servelab: error: $OUT exists; predict never overwrites" >&2; exit 1; }
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
APACHE=${APACHE:-/usr/sbin/apache2}
MODULES=/usr/lib/apache2/modules
[ -x "$APACHE" ] || { echo "servelab: error: no apache2 at $APACHE (apt-get install apache2; .ci/run does)" >&2; exit 1; }
[ -f "$MODULES/mod_lua.so" ] || { echo "servelab: error: no mod_lua at $MODULES/mod_lua.so" >&2; exit 1; }
BURN_MS=${BURN_MS:-20}
BURN=${BURN:-exp}
case "$BURN" in exp | const) ;; *) echo "servelab: error: BURN must be exp or const, not \`$BURN\`" >&2; exit 2 ;; esac
WORKERS=4
BACKLOG=511
# The experiment's KeepAlive Off, or Apache's default with KEEPALIVE=on.
case "${KEEPALIVE:-off}" in
    off) KEEPALIVE_CONF="KeepAlive Off" ;;
    on) KEEPALIVE_CONF="KeepAlive On
KeepAliveTimeout ${KEEPALIVE_TIMEOUT:-5}
MaxKeepAliveRequests 100" ;;
    *) echo "servelab: error: KEEPALIVE must be on or off, not \`$KEEPALIVE\`" >&2; exit 2 ;;
esac

WORK=$(mktemp -d)
chmod 755 "$WORK" # as root, Apache's children run as www-data and read the handler
APID=""
cleanup() {
    if [ -n "$APID" ]; then kill "$APID" 2>/dev/null || true; wait "$APID" 2>/dev/null || true; fi
    if [ -n "${KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/www"
echo ok > "$WORK/www/index.txt"

if [ "$BURN" = exp ]; then DRAW='-math.log(1 - math.random()) * MEAN'; else DRAW='MEAN'; fi
cat > "$WORK/burn.lua" <<EOF
-- servelab: burn $BURN $BURN_MS ms of CPU per request (as crates/lab/src/apache.rs)
local MEAN = $BURN_MS / 1000
local CHUNK = 20000
local rate
local function spin(n)
  local x = 0
  for i = 1, n do x = x + i % 7 end
  return x
end
local function calibrate()
  local best = 0
  for _ = 1, 20 do
    local t0 = os.clock()
    spin(CHUNK)
    local t = os.clock() - t0
    if t > 0 and CHUNK / t > best then best = CHUNK / t end
  end
  return best
end
function handle(r)
  if not rate then
    rate = calibrate()
    math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  end
  local s = $DRAW
  spin(math.floor(s * rate))
  r.content_type = "text/plain"
  r:puts("ok\n")
  return apache2.OK
end
EOF

if [ "$MPM" = prefork ]; then
    MPM_CONF="StartServers $WORKERS
ServerLimit $WORKERS
MinSpareServers $WORKERS
MaxSpareServers $WORKERS
MaxRequestWorkers $WORKERS
MaxConnectionsPerChild 0"
else
    MPM_CONF="StartServers 1
ServerLimit 1
ThreadLimit $WORKERS
ThreadsPerChild $WORKERS
MinSpareThreads 1
MaxSpareThreads $WORKERS
MaxRequestWorkers $WORKERS
MaxConnectionsPerChild 0"
fi
USER_CONF=""
[ "$(id -u)" = 0 ] && USER_CONF="User www-data
Group www-data"
cat > "$WORK/apache2.conf" <<EOF
ServerRoot $WORK
ServerName 127.0.0.1
Listen 127.0.0.1:$PORT
PidFile $WORK/apache2.pid
DefaultRuntimeDir $WORK
Mutex file:$WORK default
ErrorLog $WORK/error.log
LogLevel warn
$USER_CONF
LoadModule mpm_${MPM}_module $MODULES/mod_mpm_${MPM}.so
LoadModule authz_core_module $MODULES/mod_authz_core.so
LoadModule mime_module $MODULES/mod_mime.so
LoadModule lua_module $MODULES/mod_lua.so
$MPM_CONF
ListenBacklog $BACKLOG
$KEEPALIVE_CONF
Timeout 60
TypesConfig /dev/null
AddType text/plain .txt
DocumentRoot $WORK/www
<Directory $WORK/www>
  Require all granted
</Directory>
LuaScope thread
LuaMapHandler ^/burn\$ $WORK/burn.lua handle
EOF

# exec keeps the pid: taskset becomes Apache's parent process.
(exec taskset -c 0 "$APACHE" -d "$WORK" -f "$WORK/apache2.conf" -DFOREGROUND) &
APID=$!
for _ in $(seq 1 100); do
    curl -fs -o /dev/null "http://127.0.0.1:$PORT/burn" && break
    kill -0 "$APID" 2>/dev/null || { echo "servelab: error: apache2 exited at start-up: $(tail -n 3 "$WORK/error.log" 2>/dev/null)" >&2; APID=""; exit 1; }
    sleep 0.1
done
curl -fs -o /dev/null "http://127.0.0.1:$PORT/burn" || { echo "servelab: error: apache2 does not answer on 127.0.0.1:$PORT/burn" >&2; exit 1; }
VERSION=$("$APACHE" -v | head -n 1)
echo "$VERSION, mpm_$MPM, $WORKERS workers, ${KEEPALIVE_CONF%%$'\n'*}, $BURN $BURN_MS ms of CPU per request, pid $APID on CPU 0, port $PORT" >&2

# shellcheck disable=SC2086 # PREDICT_ARGS is a list of flags on purpose.
taskset -c 1 "$SERVELAB" predict "http://127.0.0.1:$PORT/burn" --pid "$APID" --out "$OUT" ${PREDICT_ARGS:-}
{
    echo "server: $VERSION, mpm_$MPM, $WORKERS workers, taskset -c 0, mod_lua burning $BURN $BURN_MS ms of CPU per request"
    echo "config:"
    sed 's/^/  /' "$WORK/apache2.conf"
} > "$OUT/server.txt"
echo "report: $OUT/report.html (server: $OUT/server.txt)"

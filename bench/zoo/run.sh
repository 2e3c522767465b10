#!/usr/bin/env bash
# The predict zoo (issue 27): `servelab predict` against many servers, each
# pinned to CPU 0 with taskset and `predict` pinned to CPU 1, each with its
# own configuration in a temporary directory (never a system instance, never
# a system config file). Writes one predict results directory per server
# under OUT_DIR, then OUT_DIR/zoo.md and OUT_DIR/zoo.json (bench/zoo/table.py).
# See docs/predict-zoo.md for the servers and why each is configured so.
#
# Usage: bench/zoo/run.sh OUT_DIR [SERVER...]   (default: all; `list` lists them)
#   serve-ENGINE          servelab serve --engine ENGINE --work exp:5ms
#                         (serial thread pool fork prefork epoll reactor async event)
#   apache-MPM-ka|-noka   Apache httpd, mpm prefork|worker|event, KeepAlive On|Off
#   gunicorn-sync, gunicorn-gthread
#   waitress              waitress (Python thread pool, PyPI)
# Env: SERVELAB         binary (default target/release/servelab, else target/debug/servelab)
#      BUDGET           predict --budget: the calibration, probes included where
#                       predict has them (default 60s; at most 90 s)
#      VALIDATE_BUDGET  predict --validate-budget (default 60s)
#      WORK_MS          mean CPU per request, ms, exponential (default 5)
#      PREDICT_ARGS     flags for predict (default "--users 2,6,16 --think exp:20ms")
#      ZOO_VENV         the Python venv for gunicorn and waitress (default
#                       ~/.cache/servelab-zoo/venv; created, and pip-installed
#                       into, only when missing)
#      KEEP=1           keep each server's temporary directory
# A server that cannot start is recorded as such and the zoo goes on.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/../.." && pwd)
ZOO=$HERE/bench/zoo
ENGINES="serial thread pool fork prefork epoll reactor async event"
ALL=""
for e in $ENGINES; do ALL="$ALL serve-$e"; done
for m in prefork worker event; do ALL="$ALL apache-$m-ka apache-$m-noka"; done
ALL="$ALL gunicorn-sync gunicorn-gthread waitress"

die() { echo "servelab: zoo: error: $*" >&2; exit 2; }
say() { echo "servelab: zoo: $*" >&2; }

read -r -a ALL_LIST <<< "$ALL"
[ "${1:-}" = list ] && { printf '%s\n' "${ALL_LIST[@]}"; exit 0; }
OUT=${1:?usage: bench/zoo/run.sh OUT_DIR [SERVER...|all|list]}
shift
[ -e "$OUT" ] && die "$OUT exists; the zoo never overwrites"
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
SERVERS=()
for s in "${@:-all}"; do
    if [ "$s" = all ]; then SERVERS+=("${ALL_LIST[@]}"); continue; fi
    case " $ALL " in *" $s "*) SERVERS+=("$s") ;; *) die "no server \`$s\` (bench/zoo/run.sh list)" ;; esac
done

if [ -z "${SERVELAB:-}" ]; then
    if [ -x "$HERE/target/release/servelab" ]; then SERVELAB=$HERE/target/release/servelab; else SERVELAB=$HERE/target/debug/servelab; fi
fi
[ -x "$SERVELAB" ] || die "no servelab binary at $SERVELAB (cargo build --release -p servelab)"
BUDGET=${BUDGET:-60s}
VALIDATE_BUDGET=${VALIDATE_BUDGET:-60s}
budget_s=$(python3 -c 'import sys,re; m=re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?",sys.argv[1]); print(-1 if not m else float(m[1])*{"ms":0.001,"s":1,"m":60,None:1}[m[2]])' "$BUDGET")
python3 -c 'import sys; sys.exit(0 if 0 < float(sys.argv[1]) <= 90 else 1)' "$budget_s" || die "BUDGET must be a duration of at most 90 s (the zoo's calibration budget, probes included), not \`$BUDGET\`"
WORK_MS=${WORK_MS:-5}
PREDICT_ARGS=${PREDICT_ARGS:---users 2,6,16 --think exp:20ms}
ZOO_VENV=${ZOO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/servelab-zoo/venv}
for tool in taskset curl python3; do command -v "$tool" > /dev/null || die "$tool is missing"; done

# What this run started: the current server's pid and its directory. Each
# server runs in its own session (setsid, which does not fork here, so the pid
# is the server's): Apache's prefork parent ends by signalling its whole
# process group, which would otherwise be this script's.
SPID=""
PRED=""
WORK=""
stop_server() {
    if [ -n "$SPID" ]; then kill "$SPID" 2> /dev/null || true; wait "$SPID" 2> /dev/null || true; SPID=""; fi
    if [ -n "$WORK" ]; then
        if [ -n "${KEEP:-}" ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
        WORK=""
    fi
}
cleanup() {
    if [ -n "$PRED" ]; then kill "$PRED" 2> /dev/null || true; wait "$PRED" 2> /dev/null || true; PRED=""; fi
    stop_server
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

need_apache() {
    if [ ! -x /usr/sbin/apache2 ] || [ ! -f /usr/lib/apache2/modules/mod_lua.so ]; then
        say "apache2 or mod_lua is missing: apt-get install -y apache2"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q apache2 >&2 || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q apache2 >&2; }
    fi
}
need_python() {
    if [ ! -x "$ZOO_VENV/bin/python" ]; then
        say "no venv at $ZOO_VENV: python3 -m venv"
        python3 -m venv "$ZOO_VENV"
    fi
    if ! "$ZOO_VENV/bin/python" -c 'import gunicorn, waitress' 2> /dev/null; then
        say "gunicorn or waitress is missing in $ZOO_VENV: pip install gunicorn waitress"
        "$ZOO_VENV/bin/pip" install --quiet gunicorn waitress >&2
    fi
}

# start_SERVER: sets SPID, URL, VERSION, DESC and the configured CONF_W (a
# number or ""), CONF_HELD (yes, no or ""), CONF_KA_S, CONF_MAXREQ (a number,
# "unlimited" or "none": not kept alive) and writes CONFIG (the file to quote).
start_serve() {
    local engine=$1 port
    port=$(free_port)
    echo ok > "$WORK/index.html"
    local args=(--engine "$engine" --workers 4 --work "exp:${WORK_MS}ms" --keepalive-timeout 5s --port "$port")
    CONF_KA_S=5
    CONF_MAXREQ=unlimited
    case "$engine" in
        serial) CONF_W=1; CONF_HELD=yes ;;
        thread | fork) args+=(--max-conns 4); CONF_W=4; CONF_HELD=yes ;;
        pool | prefork) CONF_W=4; CONF_HELD=yes ;;
        epoll) CONF_W=1; CONF_HELD=no ;;
        *) CONF_W=4; CONF_HELD=no ;;
    esac
    echo "servelab serve ${args[*]} $WORK" > "$WORK/config.txt"
    CONFIG=$WORK/config.txt
    (exec setsid taskset -c 0 "$SERVELAB" serve "${args[@]}" "$WORK" > "$WORK/server.log" 2>&1) &
    SPID=$!
    URL=http://127.0.0.1:$port/
    VERSION="servelab $("$SERVELAB" --version 2> /dev/null | awk '{print $NF}')"
    DESC="serve --engine $engine, exp ${WORK_MS} ms of CPU per request"
}
start_apache() {
    local mpm=$1 ka=$2 port
    need_apache
    # shellcheck source=bench/zoo/apache.conf.sh
    . "$ZOO/apache.conf.sh"
    port=$(free_port)
    chmod 755 "$WORK" # as root, Apache's children run as www-data and read the handler
    zoo_apache_conf "$WORK" "$port" "$mpm" "$ka" 4 "$WORK_MS"
    CONFIG=$WORK/apache2.conf
    (exec setsid taskset -c 0 /usr/sbin/apache2 -d "$WORK" -f "$WORK/apache2.conf" -DFOREGROUND) &
    SPID=$!
    URL=http://127.0.0.1:$port/burn
    VERSION=$(/usr/sbin/apache2 -v | head -n 1 | sed 's/^Server version: //')
    CONF_W=4
    if [ "$ka" = on ]; then
        CONF_KA_S=5; CONF_MAXREQ=100
        case "$mpm" in prefork | worker) CONF_HELD=yes ;; event) CONF_HELD=no ;; esac
    else
        CONF_KA_S=""; CONF_MAXREQ=none; CONF_HELD=""
    fi
    DESC="mpm_$mpm, 4 workers, KeepAlive $(tr '[:lower:]' '[:upper:]' <<< "${ka:0:1}")${ka:1}, mod_lua burning exp ${WORK_MS} ms"
}
start_gunicorn() {
    local mode=$1 port
    need_python
    port=$(free_port)
    cp "$ZOO/app.py" "$WORK/app.py"
    if [ "$mode" = sync ]; then
        printf 'worker_class = "sync"\nworkers = 4\n' > "$WORK/gunicorn.conf.py"
        CONF_W=4; CONF_HELD=""; CONF_KA_S=""; CONF_MAXREQ=none
        DESC="4 sync workers (they close every connection), exp ${WORK_MS} ms"
    else
        printf 'worker_class = "gthread"\nworkers = 1\nthreads = 4\nkeepalive = 5\nworker_connections = 1000\n' > "$WORK/gunicorn.conf.py"
        CONF_W=4; CONF_HELD=no; CONF_KA_S=5; CONF_MAXREQ=unlimited
        DESC="1 gthread worker, 4 threads, keep-alive 5 s, exp ${WORK_MS} ms"
    fi
    cat >> "$WORK/gunicorn.conf.py" <<CONF
bind = "127.0.0.1:$port"
backlog = 2048
timeout = 120
max_requests = 0
pidfile = "$WORK/gunicorn.pid"
errorlog = "$WORK/error.log"
accesslog = None
loglevel = "warning"
chdir = "$WORK"
raw_env = ["BURN_MS=$WORK_MS"]
CONF
    CONFIG=$WORK/gunicorn.conf.py
    (cd "$WORK" && exec setsid taskset -c 0 "$ZOO_VENV/bin/gunicorn" -c "$WORK/gunicorn.conf.py" app:app) &
    SPID=$!
    URL=http://127.0.0.1:$port/
    VERSION=$("$ZOO_VENV/bin/gunicorn" --version)
}
start_waitress() {
    local port
    need_python
    port=$(free_port)
    cp "$ZOO/app.py" "$WORK/app.py"
    local args=(--listen="127.0.0.1:$port" --threads=4 --channel-timeout=5 --cleanup-interval=1 --connection-limit=100 --backlog=1024 app:app)
    echo "BURN_MS=$WORK_MS waitress-serve ${args[*]}" > "$WORK/config.txt"
    CONFIG=$WORK/config.txt
    (cd "$WORK" && BURN_MS=$WORK_MS exec setsid taskset -c 0 "$ZOO_VENV/bin/waitress-serve" "${args[@]}" > "$WORK/server.log" 2>&1) &
    SPID=$!
    URL=http://127.0.0.1:$port/
    VERSION="waitress $("$ZOO_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("waitress"))')"
    CONF_W=4; CONF_HELD=no; CONF_KA_S=5; CONF_MAXREQ=unlimited
    DESC="4 threads, channel timeout 5 s, exp ${WORK_MS} ms (GIL: one burns at a time)"
}

# The record of one server, a JSON line in OUT/runs.jsonl.
record() {
    python3 - "$@" >> "$OUT/runs.jsonl" <<'PY'
import json, sys
k = ["server", "version", "desc", "url", "conf_workers", "conf_held", "conf_keepalive_s", "conf_max_requests", "exit", "dir", "seconds", "summary"]
r = dict(zip(k, sys.argv[1:]))
for f in ("conf_workers", "exit"):
    r[f] = int(r[f]) if r[f] not in ("", None) else None
r["conf_keepalive_s"] = float(r["conf_keepalive_s"]) if r["conf_keepalive_s"] else None
r["conf_held"] = {"yes": True, "no": False}.get(r["conf_held"])
r["seconds"] = float(r["seconds"])
print(json.dumps(r))
PY
}

mkdir -p "$OUT"
read -r -a PARGS <<< "$PREDICT_ARGS"
say "${#SERVERS[@]} servers: ${SERVERS[*]}; predict --budget $BUDGET --validate-budget $VALIDATE_BUDGET $PREDICT_ARGS; $SERVELAB"
for s in "${SERVERS[@]}"; do
    WORK=$(mktemp -d)
    SPID="" URL="" VERSION="" DESC="" CONF_W="" CONF_HELD="" CONF_KA_S="" CONF_MAXREQ="" CONFIG=""
    t0=$(date +%s.%N)
    case "$s" in
        serve-*) start_serve "${s#serve-}" ;;
        apache-*-ka) m=${s#apache-}; start_apache "${m%-ka}" on ;;
        apache-*-noka) m=${s#apache-}; start_apache "${m%-noka}" off ;;
        gunicorn-sync) start_gunicorn sync ;;
        gunicorn-gthread) start_gunicorn gthread ;;
        waitress) start_waitress ;;
    esac
    up=""
    for _ in $(seq 1 150); do
        if curl -fs -o /dev/null "$URL"; then up=1; break; fi
        kill -0 "$SPID" 2> /dev/null || break
        sleep 0.1
    done
    dir=$OUT/$s
    if [ -z "$up" ]; then
        why="did not answer on $URL: $(tail -n 2 "$WORK"/*.log 2> /dev/null | tr '\n' ' ' | cut -c1-200)"
        say "$s: $why"
        record "$s" "$VERSION" "$DESC" "$URL" "$CONF_W" "$CONF_HELD" "$CONF_KA_S" "$CONF_MAXREQ" "" "" 0 "not run: $why"
        stop_server
        continue
    fi
    say "$s: $VERSION, $DESC, pid $SPID on CPU 0, $URL"
    rc=0
    taskset -c 1 "$SERVELAB" predict "$URL" --pid "$SPID" --budget "$BUDGET" --validate-budget "$VALIDATE_BUDGET" \
        --out "$dir" "${PARGS[@]}" > "$OUT/$s.out" 2> "$OUT/$s.err" &
    PRED=$!
    wait "$PRED" || rc=$?
    PRED=""
    secs=$(python3 -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))' "$t0" "$(date +%s.%N)")
    [ -d "$dir" ] && { echo "server: $VERSION, $DESC, taskset -c 0"; echo "config:"; sed 's/^/  /' "$CONFIG"; } > "$dir/server.txt"
    if [ -f "$dir/results.json" ]; then
        summary=$(python3 "$ZOO/table.py" --summary "$dir/results.json" 2>&1 || true)
    else
        summary="no results: $(tail -n 1 "$OUT/$s.err")"
    fi
    say "$s: exit $rc, ${secs} s: $summary"
    record "$s" "$VERSION" "$DESC" "$URL" "$CONF_W" "$CONF_HELD" "$CONF_KA_S" "$CONF_MAXREQ" "$rc" "$dir" "$secs" "$summary"
    stop_server
done
python3 "$ZOO/table.py" "$OUT"
say "table: $OUT/zoo.md, $OUT/zoo.json"

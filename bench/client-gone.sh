#!/usr/bin/env bash
# Does the server see clients that leave? (issue 11, part 2.) Seed 002's
# badput on a small scale: every response is held `--delay exp:200ms`, and ten
# users give up after 100 ms (`load --timeout 100ms`). A 1 KiB response fits
# in the socket buffer, so before the server watched for the close, writing it
# to a client that had gone succeeded and counted as 2xx.
#
# For each engine this prints the client's timeouts and the server's
# `abandoned` and `2xx` counters (/-/status, a second after the run). The
# server's abandoned count should be the client's timeouts plus the requests
# still in flight when `load` stops and closes its connections (up to 10).
#
# Usage: bench/client-gone.sh [engines...]   (default: every engine)
# Env:   SERVELAB=path/to/binary (default: target/release/servelab),
#        FLAGS (more serve flags, e.g. "--on-abandon finish").
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
BIN=${SERVELAB:-$HERE/target/release/servelab}
ENGINES=("$@")
[ ${#ENGINES[@]} -gt 0 ] || ENGINES=(serial thread pool fork prefork async epoll reactor event)
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
head -c 1024 /dev/urandom > "$WORK/1k.bin"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

printf '%-8s %9s %10s %6s\n' engine timeouts abandoned 2xx
for e in "${ENGINES[@]}"; do
    port=$(free_port)
    # shellcheck disable=SC2086
    "$BIN" serve --root "$WORK" --port "$port" --status --log off --engine "$e" \
        --workers 4 --delay exp:200ms ${FLAGS:-} 2>/dev/null &
    SERVER_PID=$!
    sleep 1
    timeouts=$("$BIN" load "http://127.0.0.1:$port/1k.bin" -c 10 --timeout 100ms -d 3s \
        --no-progress | grep -o '[0-9]* timeouts' | head -1 | cut -d' ' -f1)
    sleep 1.5
    read -r abandoned ok < <(curl -s "http://127.0.0.1:$port/-/status" | python3 -c '
import json, sys
r = json.load(sys.stdin)["requests"]
print(r["abandoned"], r["by_class"]["2xx"])')
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
    printf '%-8s %9s %10s %6s\n' "$e" "$timeouts" "$abandoned" "$ok"
done

# Shared by the hardening scripts (slowloris, exhaustion, faults, soak,
# shutdown-under-load): find the binary, start a server on a free port, sample
# a process from /proc. Source it; it defines functions only.

HERE=${HERE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# The servelab binary: $SERVELAB, or a release build of this checkout.
servelab_bin() {
    if [ -z "${SERVELAB:-}" ]; then
        (cd "$HERE" && cargo build --release -q -p servelab) >&2
        SERVELAB="${CARGO_TARGET_DIR:-$HERE/target}/release/servelab"
    fi
    echo "$SERVELAB"
}

# Engines to run: $ENGINES (space-separated) or every engine the binary lists.
engines_list() {
    if [ -n "${ENGINES:-}" ]; then echo "$ENGINES"; return; fi
    "$SERVELAB" engines | awk '{print $1}' | tr '\n' ' '
}

# A small site: index, 1 KiB, 64 KiB and 4 MiB files.
make_site() {
    local root=$1
    mkdir -p "$root/sub"
    printf '<!doctype html><title>t</title>\n' > "$root/index.html"
    head -c 1024 /dev/zero | tr '\0' 'a' > "$root/1k.txt"
    head -c 65536 /dev/urandom > "$root/64k.bin"
    head -c 4194304 /dev/urandom > "$root/4m.bin"
    printf 'sub\n' > "$root/sub/index.html"
}

# start_server LOGFILE ARGS...: starts `servelab serve -p 0 ARGS`, waits for its
# banner, sets SPID and PORT. The server's stderr goes to LOGFILE.
start_server() {
    local errlog=$1; shift
    # Removed first: the background shell truncates it only once it runs, and
    # the banner of a previous server must not be read as this one's.
    rm -f "$errlog"
    "$SERVELAB" serve -p 0 "$@" 2>"$errlog" &
    SPID=$!
    PORT=""
    for _ in $(seq 1 100); do
        PORT=$(sed -n 's|.*on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$errlog" 2>/dev/null | head -1)
        [ -n "$PORT" ] && return 0
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    echo "server did not start: $(cat "$errlog")" >&2
    return 1
}

# stop_server: SIGTERM, then wait (bounded), then SIGKILL.
stop_server() {
    [ -n "${SPID:-}" ] || return 0
    kill -TERM "$SPID" 2>/dev/null || true
    for _ in $(seq 1 200); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$SPID" 2>/dev/null || true
    wait "$SPID" 2>/dev/null || true
    SPID=""
}

# CPU time (user+system, in clock ticks) of a process and all its threads.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Resident set size in KiB.
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
# Open descriptors.
fd_count() { ls "/proc/$1/fd" | wc -l; }
# Clock ticks per second.
HZ=$(getconf CLK_TCK)

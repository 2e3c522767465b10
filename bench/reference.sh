#!/usr/bin/env bash
# The reference run (docs/lab.md, "The reference run"): every built-in
# experiment, one after another, from a release build of a clean commit, on a
# machine with nothing else running, into a new directory. The lab places the
# server on CPU 0 and the load generator on CPU 1 itself.
#
# Why a script: a reference run is what the docs and the README quote (and
# crates/lab/tests/lab/doc_figures.rs checks the quotes against), so it must
# be made the same way each time, from a commit anyone can check out, and say
# how quiet the machine was when each experiment began.
#
# Usage: bench/reference.sh OUT_DIR [NAME...]
#   NAME        a built-in experiment (`servelab lab list`), or EXP-ab for
#               the by-repeat pair `lab ab EXP` with the same binary on both
#               sides; default: every experiment, then connections-ab and
#               filesize-ab
# Installs the missing peers (nginx, lighttpd, h2o) with apt-get when root.
# Env:  LOAD_MAX    refuse to start an experiment while the 1-minute load
#                   average is above it (default 1.0; the run waits up to
#                   10 minutes for it to fall, then stops)
#       SERVELAB    the binary (default: target/release/servelab, built here)
# It refuses a working tree with uncommitted changes (a reference run names
# its commit, and `-dirty` cannot be checked out), and an OUT_DIR that exists.
# Writes OUT_DIR/NAME for each experiment (NAME.out and NAME.err beside it)
# and OUT_DIR/reference.log (the commit; each experiment's start, load
# average, end and exit status). Replace results/reference with it by hand,
# after reading it, and update the quotes doc_figures.rs checks.
set -euo pipefail

die() { echo "servelab: reference: error: $*" >&2; exit 2; }
say() { echo "servelab: reference: $*" >&2; }

HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: bench/reference.sh OUT_DIR [NAME...]}
shift
[ -e "$OUT" ] && die "$OUT exists; the reference run never overwrites"
LOAD_MAX=${LOAD_MAX:-1.0}
cd "$HERE"
clean() { [ -z "$(git status --porcelain --untracked-files=no -- ':/' ':(top,exclude)results')" ]; }
clean || die "the working tree has uncommitted changes: commit them (a reference run names a clean commit)"
if [ -z "${SERVELAB:-}" ]; then
    cargo build --release -q -p servelab
    SERVELAB=$HERE/target/release/servelab
fi
[ -x "$SERVELAB" ] || die "no servelab binary at $SERVELAB"

# The peers the experiments measure servelab against: a peer that is missing
# is reported unavailable and its points are left out of the run (the h2 rerun
# of 2026-12-04 23:14 lost h2o that way), so install them when we can (root
# and apt-get; the lab runs each from its own config in a temp dir).
missing=()
for peer in nginx:nginx-light lighttpd:lighttpd h2o:h2o; do
    command -v "${peer%%:*}" >/dev/null || missing+=("${peer#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing ${missing[*]} with apt-get"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        say "not installed (their points will be unavailable): ${missing[*]}"
    fi
fi

NAMES=("$@")
if [ ${#NAMES[@]} -eq 0 ]; then
    mapfile -t NAMES < <("$SERVELAB" lab list | awk '$1 != "total" {print $1}')
    NAMES+=(connections-ab filesize-ab)
fi
[ ${#NAMES[@]} -gt 0 ] || die "no experiment to run"

mkdir -p "$OUT"
LOG=$OUT/reference.log
load() { cut -d' ' -f1 /proc/loadavg; }
quiet() {
    local waited=0
    until python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$(load)" "$LOAD_MAX"; do
        [ $waited -ge 600 ] && die "the load average stayed above $LOAD_MAX for 10 minutes ($(load)): not a quiet machine"
        sleep 15; waited=$((waited + 15))
    done
}
echo "commit $(git rev-parse HEAD) binary $SERVELAB started $(date -u +%FT%TZ)" >> "$LOG"
run() {
    local what=$1; shift
    quiet
    local start; start=$(date -u +%FT%TZ)
    local la; la=$(load)
    say "$what: starting at load average $la"
    local rc=0
    "$SERVELAB" "$@" --no-progress > "$OUT/$what.out" 2> "$OUT/$what.err" || rc=$?
    echo "$what start $start load $la end $(date -u +%FT%TZ) exit $rc" >> "$LOG"
    say "$what: exit $rc"
    # The lab records the checkout's commit when each run starts, `-dirty` if
    # the tree has uncommitted changes then: an edit made while the run goes
    # on marks every later experiment, though the binary is the one built here.
    if ! clean; then
        echo "$what: the working tree changed during the run: later runs would record a -dirty commit" >> "$LOG"
        die "the working tree changed during $what: keep it clean until the run ends (edit in another worktree)"
    fi
}
for n in "${NAMES[@]}"; do
    case $n in
        *-ab) run "$n" lab ab "${n%-ab}" --a "$SERVELAB" --b "$SERVELAB" --out "$OUT/$n" ;;
        *) run "$n" lab run "$n" --out "$OUT/$n" ;;
    esac
done
echo "finished $(date -u +%FT%TZ)" >> "$LOG"
say "done: $OUT (log: $LOG)"

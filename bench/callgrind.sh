#!/bin/bash
# User-space instructions per keep-alive request, counted by callgrind: the machine's load does
# not move them (reruns of one build differ by a few dozen, from how requests are batched).
#
# Timing CPU per request on a shared 2-core machine resolves about 3% in 9
# rounds (bench/peers.py). Instruction counts do not depend on the machine's
# load, so a change to the request path can be judged in one run, then timed
# with peers.py once it is worth it. What they miss: cache misses, branch
# mispredictions and locked instructions (a `lock add` counts as one).
#
#   bench/callgrind.sh                 # the working tree, wrk's bare request
#   bench/callgrind.sh --browser       # the ten fields Firefox sends
#   bench/callgrind.sh --rev main      # a commit instead of the working tree
#   bench/callgrind.sh --engine epoll
#   bench/callgrind.sh --h2            # HTTP/2 (cleartext, `serve --h2c`): h2load with
#                                      # 50 connections x 10 streams instead of wrk
#
# It copies the source (the working tree's tracked files, or `git archive REV`)
# to a scratch directory and builds it in release mode there, with one change
# that exists only in that copy: valgrind has no openat2(2), so the copy opens
# files with openat(2) and skips serve's startup check for openat2. That copy
# keeps no path under the root against symlinks and is never to be served
# from; it only answers wrk on 127.0.0.1. Then it runs `serve --workers 1 --log
# off` under callgrind on a 1 KiB file, warms it with 1 s of wrk (50
# connections), zeroes the counts, counts 3 s of wrk, and prints the
# instructions per completed request. The callgrind file is kept for
# `callgrind_annotate --inclusive=yes`.
set -euo pipefail

rev="" browser=0 engine=reactor h2=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rev) rev="$2"; shift 2 ;;
    --browser) browser=1; shift ;;
    --h2) h2=1; shift ;;
    --engine) engine="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "callgrind.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

need() { command -v "$1" >/dev/null || { sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo; $sudo apt-get install -y "$2" >/dev/null; }; }
need valgrind valgrind
need wrk wrk
[ $h2 = 1 ] && need h2load nghttp2-client
[ $h2 = 1 ] && [ $browser = 1 ] && { echo "callgrind.sh: --h2 sends h2load's request; --browser is for wrk" >&2; exit 2; }

repo=$(git rev-parse --show-toplevel)
work=${TMPDIR:-/tmp}/servelab-callgrind
src=$work/src
# The scratch directory's src/ is replaced on every run and its target/ kept (rebuilds are
# incremental); the script refuses a directory it did not make.
if [ -e "$work" ] && [ ! -e "$work/.made-by-callgrind.sh" ]; then
  echo "callgrind.sh: $work exists and was not made by this script; move it or set TMPDIR" >&2
  exit 2
fi
mkdir -p "$work"; touch "$work/.made-by-callgrind.sh"
rm -rf "$src"; mkdir -p "$src"
# Fresh mtimes (-m) on both paths: with the commit's own dates, cargo would reuse a newer
# build of other sources left in target/.
if [ -n "$rev" ]; then
  git -C "$repo" archive "$rev" | tar -C "$src" -xmf -
  label=$(git -C "$repo" rev-parse --short "$rev")
else
  (cd "$repo" && git ls-files -z | xargs -0 tar -cf -) | tar -C "$src" -xmf -
  label="working tree at $(git -C "$repo" rev-parse --short HEAD)"
fi

python3 - "$src/crates/server/src/content/files.rs" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
s, n1 = re.subn(r'rustix::fs::openat2\(\s*&self\.dir,\s*rel,(\s*OFlags::RDONLY[^,]*,\s*Mode::empty\(\),)\s*ResolveFlags::BENEATH \| ResolveFlags::NO_MAGICLINKS,',
                r'rustix::fs::openat(&self.dir, rel,\1', s)
s, n2 = re.subn(r'rustix::fs::openat2\(\s*&dir,\s*"\.",.*?\}\)\?;', '', s, flags=re.S)
if (n1, n2) != (1, 1):
    sys.exit(f"callgrind.sh: the profiling change no longer applies to {p} (matched {n1} and {n2}); update this script")
open(p, 'w').write(s)
EOF

(cd "$src" && CARGO_TARGET_DIR=$work/target cargo build --release -q -p servelab)
bin=$work/target/release/servelab

root=$work/root
mkdir -p "$root"
python3 -c "import sys; open(sys.argv[1],'wb').write((b'x'*75+b'\n')*13+b'y'*(1024-13*76))" "$root/1k.txt"

H=()
if [ $browser = 1 ]; then
  H=(-H "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
     -H "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
     -H "Accept-Language: en-US,en;q=0.5" -H "Accept-Encoding: gzip, deflate, br, zstd"
     -H "Connection: keep-alive" -H "Upgrade-Insecure-Requests: 1" -H "Sec-Fetch-Dest: document"
     -H "Sec-Fetch-Mode: navigate" -H "Sec-Fetch-Site: none" -H "Priority: u=0, i")
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
out=$work/callgrind.out.$$
H2C=(); [ $h2 = 1 ] && H2C=(--h2c)
valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" serve --engine "$engine" \
  --workers 1 --log off "${H2C[@]}" --root "$root" --port "$port" > "$work/valgrind.log" 2>&1 &
vp=$!
trap 'kill $vp 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/1k.txt" && break
  sleep 0.2
done
url="http://127.0.0.1:$port/1k.txt"
if [ $h2 = 1 ]; then
  h2load -c50 -m10 -t1 -D1 "$url" > /dev/null
  callgrind_control -z $vp > /dev/null 2>&1
  h2load -c50 -m10 -t1 -D3 "$url" > "$work/wrk.txt"
else
  wrk "${H[@]}" -t1 -c50 -d1s "$url" > /dev/null
  callgrind_control -z $vp > /dev/null 2>&1
  wrk "${H[@]}" -t1 -c50 -d3s "$url" > "$work/wrk.txt"
fi
callgrind_control -d $vp > /dev/null 2>&1
kill -INT $vp
# The counts were dumped above. A server that does not stop on SIGINT under valgrind
# (uring does: it stops on SIGINT outside valgrind; why not under it is not known yet)
# is killed after 10 s.
for _ in $(seq 50); do kill -0 $vp 2>/dev/null || break; sleep 0.2; done
kill -KILL $vp 2>/dev/null || true
wait $vp || true
trap - EXIT

if [ $h2 = 1 ]; then
  # "requests: N total, N started, N done, N succeeded, F failed, E errored, T timeout"
  n=$(awk '/^requests:/ {print $8}' "$work/wrk.txt")
  bad=$(awk '/^requests:/ {print $10 + $12 + $14}' "$work/wrk.txt")
  if [ -z "$n" ] || [ "${bad:-1}" != 0 ]; then
    echo "callgrind.sh: h2load saw failures, so the count is not of served requests:" >&2
    cat "$work/wrk.txt" >&2
    exit 1
  fi
elif grep -q "Non-2xx\|Socket errors" "$work/wrk.txt"; then
  echo "callgrind.sh: wrk saw errors, so the count is not of served requests:" >&2
  cat "$work/wrk.txt" >&2
  exit 1
else
  n=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
fi
dump=$(ls -t "$out".* | head -1)
ir=$(callgrind_annotate "$dump" | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
mode=wrk; [ $browser = 1 ] && mode=browser; [ $h2 = 1 ] && mode="h2load (h2c, 50x10 streams)"
echo "$label, $engine, $mode request: $((ir / n)) instructions per request ($ir over $n requests)"
echo "callgrind file: $dump"

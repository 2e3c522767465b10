#!/bin/sh
# the working tree of this commit (--nap) with --nap 10us
sub=$1; shift
exec /tmp/prof/servelab-nap "$sub" --nap 10us "$@"

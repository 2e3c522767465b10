#!/bin/sh
sub=$1; shift
XGAP=2000 exec /tmp/prof/servelab-xgap "$sub" --poll-before-sleep 8us "$@"

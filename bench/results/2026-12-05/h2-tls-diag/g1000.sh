#!/bin/sh
sub=$1; shift
XGAP=1000 exec /tmp/prof/servelab-xgap "$sub" "$@"

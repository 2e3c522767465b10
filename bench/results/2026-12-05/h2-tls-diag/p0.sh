#!/bin/sh
sub=$1; shift
exec /tmp/servelab-f6b07ac "$sub" --poll-before-sleep 0 "$@"

#!/bin/sh
# servelab at 8a67805 with --poll-before-sleep 3us after the subcommand
sub=$1; shift
exec /tmp/h2agree/servelab-8a67805 "$sub" --poll-before-sleep 3us "$@"

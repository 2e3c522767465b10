#!/bin/sh
# servelab at 8ffd1b0 with --poll-before-sleep 5us after the subcommand
sub=$1; shift
exec ${SERVELAB_BIN:-/tmp/h2agree/servelab-8ffd1b0} "$sub" --poll-before-sleep 5us "$@"

#!/bin/sh
# servelab at 233ed3c with --poll-before-sleep 6us after the subcommand
sub=$1; shift
exec /tmp/h2agree/servelab-233ed3c "$sub" --poll-before-sleep 6us "$@"

#!/bin/sh
# servelab-new with --poll-before-sleep 3us after the subcommand
sub=$1; shift
exec /tmp/spin/servelab-new "$sub" --poll-before-sleep 3us "$@"

#!/bin/sh
# servelab at 8ffd1b0 whose h2c requests look like h2load's to the server: a user-agent (indexed
# after the first) and one literal field that is never indexed (credentials, RFC 7541 7.1.3), as
# h2load's :path is sent as a literal without indexing.
sub=$1; shift
exec ${SERVELAB_BIN:-/tmp/h2agree/servelab-8ffd1b0} "$sub" -H "User-Agent: h2load nghttp2/1.52.0" -H "Authorization: Basic eA==" "$@"

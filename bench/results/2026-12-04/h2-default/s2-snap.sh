#!/bin/bash
# One client run against the nginx on :18096 (h2c); ss -tni of nginx's sockets 2.5 s in.
# Requests are estimated from the response bytes nginx has had acknowledged
# (bytes_acked / B, B = one response's bytes on the wire, taken from a curl -v trace below).
tool=$1
if [ "$tool" = h2load ]; then
  (taskset -c 1 h2load -t1 -c50 -m10 -D 3 http://127.0.0.1:18096/1k.txt > /tmp/h2x/$tool.out 2>&1 &)
else
  (taskset -c 1 /tmp/h2agree/servelab-8ffd1b0 load --h2 -t 1 -c 50 --streams 10 -d 3s -q http://127.0.0.1:18096/1k.txt > /tmp/h2x/$tool.out 2>&1 &)
fi
sleep 2.5
ss -tniH state established "( sport = :18096 )" | tr -s ' ' '\n' | awk -F: -v t=$tool -v B=${B:-1066} '
  /^segs_out/{so+=$2} /^segs_in/{si+=$2} /^data_segs_out/{dso+=$2} /^data_segs_in/{dsi+=$2} /^bytes_received/{br+=$2} /^bytes_acked/{ba+=$2}
  END { n = ba / B; printf "%-6s per request (n ~ %d): nginx received %.3f segments (%.3f with data, %.1f request bytes each) and sent %.3f (%.3f with data)\n", t, n, si/n, dsi/n, br/dsi, so/n, dso/n }'
sleep 1.5

#!/usr/bin/env bash
# Writes an Apache httpd configuration and its CPU-burning mod_lua handler
# into a directory, the way bench/predict-apache.sh does (its own ServerRoot,
# port, pid file, mutex and error log there; never a system file), with
# KeepAlive On or Off. Sourced by bench/zoo/run.sh; also runs alone:
#
# Usage: bench/zoo/apache.conf.sh DIR PORT MPM KEEPALIVE [WORKERS [BURN_MS]]
#   MPM        prefork, worker or event
#   KEEPALIVE  on (Apache's default: KeepAliveTimeout 5, MaxKeepAliveRequests 100) or off
# The handler at /burn burns an exponential time of mean BURN_MS of CPU by an
# iteration count calibrated once per Lua state (fastest of 20 samples), as
# crates/lab/src/apache.rs and bench/predict-apache.sh do.
set -euo pipefail

# zoo_apache_conf DIR PORT MPM KEEPALIVE WORKERS BURN_MS
zoo_apache_conf() {
    local dir=$1 port=$2 mpm=$3 keepalive=$4 workers=${5:-4} burn_ms=${6:-5}
    local modules=/usr/lib/apache2/modules mpm_conf ka_conf user_conf=""
    case "$mpm" in prefork | worker | event) ;; *) echo "servelab: error: the MPM must be prefork, worker or event, not \`$mpm\`" >&2; return 2 ;; esac
    mkdir -p "$dir/www"
    echo ok > "$dir/www/index.txt"
    cat > "$dir/burn.lua" <<LUA
-- servelab zoo: burn exp $burn_ms ms of CPU per request (as crates/lab/src/apache.rs)
local MEAN = $burn_ms / 1000
local CHUNK = 20000
local rate
local function spin(n)
  local x = 0
  for i = 1, n do x = x + i % 7 end
  return x
end
local function calibrate()
  local best = 0
  for _ = 1, 20 do
    local t0 = os.clock()
    spin(CHUNK)
    local t = os.clock() - t0
    if t > 0 and CHUNK / t > best then best = CHUNK / t end
  end
  return best
end
function handle(r)
  if not rate then
    rate = calibrate()
    math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  end
  spin(math.floor(-math.log(1 - math.random()) * MEAN * rate))
  r.content_type = "text/plain"
  r:puts("ok\n")
  return apache2.OK
end
LUA
    if [ "$mpm" = prefork ]; then
        mpm_conf="StartServers $workers
ServerLimit $workers
MinSpareServers $workers
MaxSpareServers $workers
MaxRequestWorkers $workers
MaxConnectionsPerChild 0"
    else
        mpm_conf="StartServers 1
ServerLimit 1
ThreadLimit $workers
ThreadsPerChild $workers
MinSpareThreads 1
MaxSpareThreads $workers
MaxRequestWorkers $workers
MaxConnectionsPerChild 0"
    fi
    case "$keepalive" in
        on) ka_conf="KeepAlive On
KeepAliveTimeout 5
MaxKeepAliveRequests 100" ;;
        off) ka_conf="KeepAlive Off" ;;
        *) echo "servelab: error: KEEPALIVE must be on or off, not \`$keepalive\`" >&2; return 2 ;;
    esac
    [ "$(id -u)" = 0 ] && user_conf="User www-data
Group www-data"
    cat > "$dir/apache2.conf" <<CONF
ServerRoot $dir
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile $dir/apache2.pid
DefaultRuntimeDir $dir
Mutex file:$dir default
ErrorLog $dir/error.log
LogLevel warn
$user_conf
LoadModule mpm_${mpm}_module $modules/mod_mpm_${mpm}.so
LoadModule authz_core_module $modules/mod_authz_core.so
LoadModule mime_module $modules/mod_mime.so
LoadModule lua_module $modules/mod_lua.so
$mpm_conf
ListenBacklog 511
$ka_conf
Timeout 60
TypesConfig /dev/null
AddType text/plain .txt
DocumentRoot $dir/www
<Directory $dir/www>
  Require all granted
</Directory>
LuaScope thread
LuaMapHandler ^/burn\$ $dir/burn.lua handle
CONF
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    [ $# -ge 4 ] || { echo "usage: bench/zoo/apache.conf.sh DIR PORT MPM on|off [WORKERS [BURN_MS]]" >&2; exit 2; }
    zoo_apache_conf "$@"
fi

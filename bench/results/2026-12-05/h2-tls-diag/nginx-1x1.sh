#!/bin/bash
# starts nginx TLS h2 like bench/h2-load-vs-h2load.sh, on CPU 0; prints its pid
W=/tmp/prof/w; rm -rf $W; mkdir -p $W/www $W/nginx/logs; chmod 755 $W /tmp/prof
head -c 1024 /dev/zero | tr '\0' 'x' > $W/www/1k.txt
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout $W/key.pem -out $W/cert.pem -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
cat > $W/nginx/nginx.conf <<CONF
worker_processes 1;
daemon off;
pid $W/nginx/nginx.pid;
error_log $W/nginx/logs/error.log crit;
events { worker_connections 20000; }
http { access_log off; keepalive_requests 100000000; keepalive_timeout 60s; client_body_temp_path $W/nginx/tmp;
  server { listen 127.0.0.1:18099 ssl http2 backlog=4096; ssl_certificate $W/cert.pem; ssl_certificate_key $W/key.pem;
   ssl_protocols TLSv1.3; ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256; root $W/www; } }
CONF
taskset -c 0 /usr/sbin/nginx -p $W/nginx -c $W/nginx/nginx.conf > /dev/null 2>&1 &
echo $! > /tmp/prof/nginx.pid
sleep 0.5

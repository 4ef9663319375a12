#!/usr/bin/env bash
# HAProxy's configuration for the thumbnail replicas, printed: used by deploy/haproxy-replicas.sh
# and deploy/cache-tier.sh (and the model for deploy/k8s/cache-tier.yaml's).
#
# Usage: deploy/haproxy-config.sh FRONT_PORT STATS_PORT NAMING SERVER_OPTIONS REPLICA_PORT...
#   NAMING: "option forwardfor", or a comment when the servers get PROXY v2 (SERVER_OPTIONS)
set -euo pipefail
front="$1" stats="$2" naming="$3" server_options="$4"
shift 4
servers=""
index=0
for port in "$@"; do
    index=$((index + 1))
    servers+="    server r$index 127.0.0.1:$port check"$'\n'
done
cat <<CFG
global
    maxconn 1024
    log stderr format short local0 warning
defaults
    mode http
    log global
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout check 1s
    # A request whose connection failed, or whose answer was empty, cut, timed out or a 503
    # (busy, or a replica draining), goes to another replica; at most three times.
    retries 3
    retry-on conn-failure empty-response junk-response response-timeout 503
    option redispatch 1
    # The client's address in X-Forwarded-For or a PROXY header; the replicas trust it from
    # HAProxy's address only (THUMBNAIL_TRUSTED_PROXIES), so per-client limits apply to users,
    # not to HAProxy.
    $naming
frontend thumbnails
    bind 127.0.0.1:$front
    default_backend replicas
backend replicas
    # Cache affinity: /{signature}/{processing}/{source} is hashed on {source} alone, consistently
    # (a replica that goes moves only the sources it had). Paths without one (/ready, uploads)
    # have no such header and are spread round robin.
    http-request set-header X-Thumbnail-Source %[path,field(4,/)] if { path -m reg ^/[^/]+/[^/]+/[^/]+ }
    balance hdr(X-Thumbnail-Source)
    hash-type consistent
    option httpchk GET /ready
    http-check expect status 200
    default-server inter 500ms fastinter 200ms downinter 500ms fall 2 rise 2 $server_options
${servers}frontend stats
    bind 127.0.0.1:$stats
    stats enable
    stats uri /stats
CFG

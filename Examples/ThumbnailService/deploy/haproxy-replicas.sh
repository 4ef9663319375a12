#!/usr/bin/env bash
# Three ThumbnailService replicas behind HAProxy (Debian's package) on loopback, a bounded load
# of signed GET thumbnails through it (deploy/replica-load.py: a request count and a time limit),
# and one replica killed (SIGKILL) a third of the way through and restarted at two thirds.
#
# HAProxy health-checks /ready (so a draining or overloaded replica gets no new requests),
# sends each source to one replica (a consistent hash of the source part of the signed path, so
# its thumbnails are made where its bytes are, and a replica's death moves only its share), and retries a request whose connection failed, or whose
# response was empty, cut or a 503, on another replica (`retry-on`, `option redispatch`): the
# requests in flight on the killed replica are retried, not lost. Prints the load's statuses,
# HAProxy's retry and redispatch counts, and the CPU time per thumbnail of the replicas that ran
# throughout (for the README's scaling notes).
#
# Usage: deploy/haproxy-replicas.sh [--binary PATH] [--requests N] [--seconds S] [--concurrency C]
#                                   [--photo JPEG] [--proxy-protocol]
# Default binary: the release build (swift build -c release --static-swift-stdlib).
# --proxy-protocol: HAProxy tells the replicas who the client is in a PROXY v2 header
# (send-proxy-v2, from 127.0.0.2) instead of X-Forwarded-For.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binary=""
requests=3000
seconds=120
concurrency=6
photo=""
proxy_protocol=0
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift ;;
        --requests) requests="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        --concurrency) concurrency="$2"; shift ;;
        --photo) photo="$2"; shift ;;
        --proxy-protocol) proxy_protocol=1 ;;
        -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "haproxy-replicas: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
say() { echo "haproxy-replicas: $*" >&2; }
command -v haproxy >/dev/null || { say "haproxy is missing: apt-get install haproxy"; exit 1; }
[ -n "$binary" ] || binary="$(swift build --package-path "$here" -c release --static-swift-stdlib --show-bin-path)/ThumbnailService"
[ -x "$binary" ] || { say "no binary at $binary (build it, or pass --binary)"; exit 1; }

work="$(mktemp -d)"
# How HAProxy names the client: X-Forwarded-For from 127.0.0.1, or a PROXY v2 header from
# 127.0.0.2 (so that this script's own checks, from 127.0.0.1, need none).
if [ "$proxy_protocol" = 1 ]; then
    trusted="THUMBNAIL_TRUSTED_PROXIES=127.0.0.2 THUMBNAIL_PROXY_PROTOCOL=1"
    naming="# PROXY v2 from 127.0.0.2 (server options below)"
    server_options="source 127.0.0.2 send-proxy-v2 check-send-proxy"
else
    trusted="THUMBNAIL_TRUSTED_PROXIES=127.0.0.1"
    naming="option forwardfor"
    server_options=""
fi
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -f "$work/r2.pid" ] && kill "$(cat "$work/r2.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/sources"
if [ -n "$photo" ]; then
    cp "$photo" "$work/sources/photo.jpg"
else
    # A 12-megapixel photograph-like JPEG (smooth light, fine noise), quality 90.
    python3 - "$work/sources/photo.jpg" <<'PY'
import sys
from PIL import Image, ImageFilter
w, h = 4000, 3000
noise = Image.effect_noise((w, h), 40).convert("L")
gradient = Image.linear_gradient("L").resize((w, h))
image = Image.merge("RGB", (gradient, noise.filter(ImageFilter.GaussianBlur(2)), Image.radial_gradient("L").resize((w, h))))
image.save(sys.argv[1], quality=90)
PY
fi
say "source: $(python3 -c "from PIL import Image; import sys; i=Image.open(sys.argv[1]); print(i.size[0], 'x', i.size[1], end='')" "$work/sources/photo.jpg") JPEG, $(du -h "$work/sources/photo.jpg" | cut -f1)"
key="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"

# MARK: - Replicas
ports=(18501 18502 18503)
for index in 1 2 3; do
    port="${ports[$((index - 1))]}"
    cat > "$work/start-r$index.sh" <<SH
#!/bin/sh
env THUMBNAIL_HOSTNAME=127.0.0.1 THUMBNAIL_PORT=$port THUMBNAIL_SOURCE_DIRECTORY="$work/sources" \
    THUMBNAIL_SIGNING_KEY=$key THUMBNAIL_MAX_DECODES=2 THUMBNAIL_LOG_FORMAT=json $trusted \
    "$binary" >> "$work/r$index.log" 2>&1 &
echo \$! > "$work/r$index.pid"
SH
    chmod +x "$work/start-r$index.sh"
    "$work/start-r$index.sh"
done
sleep 0.2
for index in 1 3; do pids+=("$(cat "$work/r$index.pid")"); done
for port in "${ports[@]}"; do
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/ready" >/dev/null && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:$port/ready" >/dev/null || { say "replica on $port not ready"; cat "$work"/r*.log >&2; exit 1; }
done
say "replicas ready on ${ports[*]}"

# MARK: - HAProxy
"$here/deploy/haproxy-config.sh" 18500 18509 "$naming" "$server_options" "${ports[@]}" > "$work/haproxy.cfg"
haproxy -c -f "$work/haproxy.cfg" >/dev/null
haproxy -f "$work/haproxy.cfg" -db 2> "$work/haproxy.log" &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:18500/health" >/dev/null && break; sleep 0.1; done
say "HAProxy on 127.0.0.1:18500; load: $requests requests at most, $seconds s at most, $concurrency clients"

# MARK: - Load, with a replica killed and restarted
cpu() {  # user+system CPU seconds of a process and its reaped children (helpers)
    awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15 + $16 + $17) / hz}' "/proc/$1/stat"
}
served() {  # GET thumbnails a replica answered 200
    curl -sf "http://127.0.0.1:$1/metrics" | awk '/^thumbnail_requests_total\{route="get",status="200"/ {sum += $2} END {print sum + 0}'
}
r1="$(cat "$work/r1.pid")"; r3="$(cat "$work/r3.pid")"
cpu_before=$(( 0 )); c1="$(cpu "$r1")"; c3="$(cpu "$r3")"; s1="$(served 18501)"; s3="$(served 18503)"
python3 "$here/deploy/replica-load.py" --url http://127.0.0.1:18500 --key "$key" \
    --requests "$requests" --seconds "$seconds" --concurrency "$concurrency" \
    --kill-at 0.33 --kill-command "kill -KILL \$(cat '$work/r2.pid')" \
    --restart-at 0.66 --restart-command "'$work/start-r2.sh'" > "$work/load.json"
c1b="$(cpu "$r1")"; c3b="$(cpu "$r3")"; s1b="$(served 18501)"; s3b="$(served 18503)"
cat "$work/load.json"
curl -sf "http://127.0.0.1:18509/stats;csv" > "$work/stats.csv"
python3 - "$work/stats.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]).read().lstrip("# ").splitlines()))
for row in rows:
    if row["pxname"] == "replicas":
        print(f"haproxy {row['svname']}: responses {row['stot']}, retries {row['wretr']}, redispatches {row['wredis']}, "
              f"connection errors {row['econ']}, response errors {row['eresp']}, status {row['status']}")
PY
python3 - "$c1" "$c1b" "$c3" "$c3b" "$s1" "$s1b" "$s3" "$s3b" <<'PY'
import sys
c1, c1b, c3, c3b, s1, s1b, s3, s3b = map(float, sys.argv[1:])
cpu, served = (c1b - c1) + (c3b - c3), (s1b - s1) + (s3b - s3)
if served:
    print(f"CPU per thumbnail (replicas r1 and r3, which ran throughout): {cpu * 1000 / served:.1f} ms "
          f"({cpu:.1f} CPU s for {served:.0f} thumbnails)")
PY
curl -sf "http://127.0.0.1:18502/ready" >/dev/null && say "r2 is back and ready" || say "r2 did not come back"
failed="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['failed'])" "$work/load.json")"
if [ "$failed" != 0 ]; then say "FAIL: $failed requests lost"; exit 1; fi
say "OK: no request lost"

#!/usr/bin/env bash
# The thumbnail service past one machine, on loopback: Varnish (the cache tier, deploy/varnish)
# -> HAProxy (cache affinity: a consistent hash of the source) -> 3 replicas sharing one source
# cache folder -> an origin serving --sources photographs on 127.0.0.2. Stops everything it
# started, and prints what the system did, its last line for scripts:
#   origin-per-source=… thumbnails-per-variant=… hit-ratio=… front-vs-replica=… kill-5xx=…
#
# 1. A Zipf load (s = 1.1, 10 processings per source: 2,000 URLs for 200 sources, browsers'
#    Accept strings) through Varnish for --seconds, with replica 2 killed (SIGKILL) at a third
#    and restarted at two thirds: origin requests per distinct source fetched (goal 1), backend
#    fetches per distinct (source, processing, format) (goal 1: each thumbnail made once), the
#    tier's hit ratio, and 5xx answers (goal 0: HAProxy retries what the killed replica held).
# 2. The same load again, warm, through Varnish, and then at replica 1 alone: requests per
#    second and p50/p99 of each, and their ratio (front-vs-replica).
# 3. (Not with --short; needs wrk.) Hits only: wrk replays, for --seconds, the requests the warm
#    run had answered (now all cached, in their Zipf proportions), with the replicas idle: the
#    tier's own latency, which phase 2's p99 mixes with the misses still being made on the same cores.
#
# Usage: deploy/cache-tier.sh [--binary PATH] [--seconds S] [--sources N] [--concurrency C]
#                             [--photos DIR] [--short]
# --short: 8 s phases over 40 sources (the test command's form). Default binary: the debug build's.
# Needs varnishd, varnishncsa and haproxy (apt-get install varnish haproxy) and python3.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
binary="" seconds=60 sources=200 concurrency=8 photos=""
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        --sources) sources="$2"; shift ;;
        --concurrency) concurrency="$2"; shift ;;
        --photos) photos="$2"; shift ;;
        --short) seconds=8; sources=40 ;;
        -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "cache-tier: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
say() { echo "cache-tier: $*" >&2; }
for tool in varnishd varnishncsa varnishstat haproxy python3 curl; do
    command -v "$tool" >/dev/null || { say "$tool is missing: apt-get install varnish haproxy curl python3"; exit 1; }
done
[ -n "$binary" ] || binary="$(swift build --package-path "$here" --show-bin-path)/ThumbnailService"
[ -x "$binary" ] || { say "no binary at $binary (build it, or pass --binary)"; exit 1; }

work="$(mktemp -d)"
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for file in "$work"/r*.pid "$work"/varnishd.pid; do [ -f "$file" ] && kill "$(cat "$file")" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
key="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"

# MARK: - The origin: /pN.jpg for N < sources, each request logged.
mkdir -p "$work/photos"
if [ -n "$photos" ]; then
    find "$photos" -iname '*.jpg' -o -iname '*.jpeg' | head -200 | while read -r file; do cp "$file" "$work/photos/"; done
else
    cp "$root/Examples/progressive.jpg" "$root"/Fixtures/jpeg/baseline-4*.jpg "$work/photos/"
fi
cat > "$work/origin.py" <<'PY'
import http.server, os, sys
folder, log, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
pool = [open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))]
class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with open(log, "a") as file:
            file.write(self.path + "\n")
        name = self.path.lstrip("/")
        if not (name.startswith("p") and name.endswith(".jpg") and name[1:-4].isdigit()):
            self.send_error(404)
            return
        body = pool[int(name[1:-4]) % len(pool)]
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.2", port), Origin).serve_forever()
PY
python3 "$work/origin.py" "$work/photos" "$work/origin.log" 18620 &
pids+=($!)
touch "$work/origin.log"

# MARK: - Replicas, one source cache folder between them.
mkdir -p "$work/source-cache"
ports=(18611 18612 18613)
for index in 1 2 3; do
    port="${ports[$((index - 1))]}"
    cat > "$work/start-r$index.sh" <<SH
#!/bin/sh
env THUMBNAIL_HOSTNAME=127.0.0.1 THUMBNAIL_PORT=$port THUMBNAIL_SIGNING_KEY=$key THUMBNAIL_MAX_DECODES=2 \
    THUMBNAIL_ORIGINS=127.0.0.2 THUMBNAIL_ALLOWED_PRIVATE_NETWORKS=127.0.0.2/32 \
    THUMBNAIL_SOURCE_CACHE_DIRECTORY="$work/source-cache" THUMBNAIL_TRUSTED_PROXIES=127.0.0.1 \
    THUMBNAIL_MAX_PER_CLIENT=1000 THUMBNAIL_LOG_FORMAT=json "$binary" >> "$work/r$index.log" 2>&1 &
echo \$! > "$work/r$index.pid"
SH
    chmod +x "$work/start-r$index.sh"
    "$work/start-r$index.sh"
done
for port in "${ports[@]}"; do
    for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/ready" >/dev/null && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:$port/ready" >/dev/null || { say "replica on $port not ready"; cat "$work"/r*.log >&2; exit 1; }
done

# MARK: - HAProxy, then Varnish in front of it.
"$here/deploy/haproxy-config.sh" 18610 18619 "option forwardfor" "" "${ports[@]}" > "$work/haproxy.cfg"
haproxy -c -f "$work/haproxy.cfg" >/dev/null
haproxy -f "$work/haproxy.cfg" -db 2> "$work/haproxy.log" &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:18610/health" >/dev/null && break; sleep 0.1; done
sed 's/\.port = "18500";/.port = "18610";/' "$here/deploy/varnish/default.vcl" > "$work/default.vcl"
cp "$here/deploy/varnish/thumbnails.vcl" "$work/"
varnishd -n "$work/varnish" -j none -a 127.0.0.1:18600 -f "$work/default.vcl" -p vcl_path="$work" \
    -s malloc,256m -P "$work/varnishd.pid" -F > "$work/varnishd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:18600/health" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:18600/health" >/dev/null || { say "varnish did not start"; cat "$work/varnishd.log" >&2; exit 1; }
# Every backend fetch: its URL and the Accept Varnish sent (the normalised one).
varnishncsa -n "$work/varnish" -b -F '%U %{Accept}i' -w "$work/fetches.log" &
pids+=($!)
sleep 0.5
say "Varnish 127.0.0.1:18600 -> HAProxy :18610 -> replicas ${ports[*]} -> origin 127.0.0.2:18620; $sources sources, $seconds s phases"

load() {  # URL SECONDS [extra arguments]: one phase of the load, its JSON on stdout
    local url="$1" phase_seconds="$2"
    shift 2
    python3 "$here/deploy/cache-tier-load.py" --url "$url" --key "$key" --origin http://127.0.0.2:18620 \
        --sources "$sources" --seconds "$phase_seconds" --concurrency "$concurrency" "$@"
}
# 1. Cold, with a replica killed and restarted.
load http://127.0.0.1:18600 "$seconds" --kill-at 0.33 --kill-command "kill -KILL \$(cat '$work/r2.pid')" \
    --restart-at 0.66 --restart-command "'$work/start-r2.sh'" > "$work/cold.json"
hits="$(varnishstat -n "$work/varnish" -1 -f MAIN.cache_hit | awk '{print $2}')"
misses="$(varnishstat -n "$work/varnish" -1 -f MAIN.cache_miss | awk '{print $2}')"
sleep 0.5  # varnishncsa's last lines
cp "$work/origin.log" "$work/origin-cold.log"
cp "$work/fetches.log" "$work/fetches-cold.log"
# 2. Warm through the front; then one replica alone on the same load.
load http://127.0.0.1:18600 "$seconds" --seed 2 --record "$work/cached.tsv" > "$work/front.json"
load http://127.0.0.1:18611 "$seconds" --seed 2 > "$work/replica.json"
echo '{}' > "$work/hits.json"
if [ "$seconds" -gt 8 ] && command -v wrk >/dev/null; then
    cat > "$work/replay.lua" <<'LUA'
-- Replays recorded requests (path<TAB>accept), picked at random: their Zipf proportions.
local requests = {}
init = function(args)
    for line in io.lines(args[1]) do
        local path, accept = line:match("^([^\t]+)\t(.*)$")
        if path then requests[#requests + 1] = wrk.format("GET", path, { Accept = accept }) end
    end
    math.randomseed(os.time() + #requests)
end
request = function() return requests[math.random(#requests)] end
LUA
    wrk -t 2 -c "$concurrency" -d "${seconds}s" --latency -s "$work/replay.lua" http://127.0.0.1:18600 -- "$work/cached.tsv" > "$work/wrk.txt"
    python3 - "$work/wrk.txt" > "$work/hits.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
def ms(label):
    match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    if not match:
        return None
    value, unit = float(match.group(1)), match.group(2)
    return round(value / 1000 if unit == "us" else value * 1000 if unit == "s" else value, 3)
rate = re.search(r"Requests/sec:\s+([\d.]+)", text)
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(json.dumps({"rps": float(rate.group(1)) if rate else None, "p50_ms": ms("50"), "p99_ms": ms("99"),
                  "non_2xx": int(errors.group(1)) if errors else 0}))
PY
fi

python3 - "$work" "$hits" "$misses" <<'PY'
import collections, json, sys
work, hits, misses = sys.argv[1], int(sys.argv[2] or 0), int(sys.argv[3] or 0)
cold, front, replica, hits_only = (json.load(open(f"{work}/{name}.json")) for name in ("cold", "front", "replica", "hits"))
origin = [line.strip() for line in open(f"{work}/origin-cold.log") if line.strip()]
per_source = collections.Counter(origin)
fetches = collections.Counter(line.strip() for line in open(f"{work}/fetches-cold.log") if line.strip())
origin_per_source = sum(per_source.values()) / max(1, len(per_source))
thumbnails_per_variant = sum(fetches.values()) / max(1, len(fetches))
hit_ratio = hits / max(1, hits + misses)
ratio = front["rps"] / max(0.01, replica["rps"])
print(f"cold run: {cold['requests']} requests, {cold['rps']} per s, p50 {cold['p50_ms']} ms, p99 {cold['p99_ms']} ms, "
      f"statuses {cold['statuses']}, X-Cache {cold['x_cache']}")
print(f"origin: {sum(per_source.values())} requests for {len(per_source)} sources (most for one: {max(per_source.values(), default=0)})")
print(f"backend fetches: {sum(fetches.values())} for {len(fetches)} (URL, format) variants (most for one: {max(fetches.values(), default=0)})")
print(f"front, warm: {front['rps']} per s, p50 {front['p50_ms']} ms, p99 {front['p99_ms']} ms "
      f"(hits: p50 {front['hit_p50_ms']} ms, p99 {front['hit_p99_ms']} ms), X-Cache {front['x_cache']}")
if hits_only:
    print(f"hits only (wrk, replicas idle): {hits_only['rps']} per s, p50 {hits_only['p50_ms']} ms, p99 {hits_only['p99_ms']} ms, "
          f"non-2xx {hits_only['non_2xx']}")
print(f"one replica alone: {replica['rps']} per s, p50 {replica['p50_ms']} ms, p99 {replica['p99_ms']} ms, statuses {replica['statuses']}")
print(f"origin-per-source={origin_per_source:.2f} thumbnails-per-variant={thumbnails_per_variant:.2f} hit-ratio={hit_ratio:.3f} "
      f"front-vs-replica={ratio:.1f} kill-5xx={cold['server_errors'] + cold['failed']}")
PY

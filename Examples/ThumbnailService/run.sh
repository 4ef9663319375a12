#!/usr/bin/env bash
# Builds ThumbnailService (release), starts it on 127.0.0.1:8080 with a fresh signing key and
# Examples/ as its source directory, asks it for a 256-pixel WebP thumbnail of the bundled
# Examples/progressive.jpg by upload and by a signed GET URL (printed, with the key), and leaves
# it running (Ctrl-C stops it). Installs the codec libraries when missing, as the repository's
# own scripts do.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${PORT:-8080}"
"$here/../../scripts/install-deps.sh" curl
swift build --package-path "$here" -c release --static-swift-stdlib
binary="$(swift build --package-path "$here" -c release --static-swift-stdlib --show-bin-path)/ThumbnailService"
key="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
THUMBNAIL_SIGNING_KEY="$key" THUMBNAIL_SOURCE_DIRECTORY="$here/.." "$binary" --hostname 127.0.0.1 --port "$port" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/ready" >/dev/null && break; sleep 0.2; done
mkdir -p "$here/out"
curl -sf --data-binary @"$here/../progressive.jpg" -o "$here/out/thumbnail.webp" \
    "http://127.0.0.1:$port/thumbnail?size=256&format=webp"
echo "run: POST wrote $here/out/thumbnail.webp ($(wc -c < "$here/out/thumbnail.webp") bytes)"
# A signed GET URL (README, "Signed GET URLs"): HMAC-SHA256 of the path after the signature.
source="$(printf 'local:///progressive.jpg' | base64 -w0 | tr '+/' '-_' | tr -d '=')"
path="/fit:256:256/$source"
signature="$(printf '%s' "$path" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -binary | base64 -w0 | tr '+/' '-_' | tr -d '=')"
curl -sf -H 'Accept: image/webp,*/*' -o "$here/out/signed.webp" "http://127.0.0.1:$port/$signature$path"
echo "run: GET  wrote $here/out/signed.webp ($(wc -c < "$here/out/signed.webp") bytes) from"
echo "     http://127.0.0.1:$port/$signature$path"
echo "run: signing key $key (THUMBNAIL_SIGNING_KEY); the server keeps running (Ctrl-C stops it)"
wait $server

#!/usr/bin/env bash
# Builds ThumbnailService (release), starts it on 127.0.0.1:8080, asks it for a 256-pixel WebP
# thumbnail of the bundled Examples/progressive.jpg, and leaves it running (Ctrl-C stops it).
# Installs the codec libraries when missing, as the repository's own scripts do.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/../../scripts/install-deps.sh" curl
swift build --package-path "$here" -c release
binary="$(swift build --package-path "$here" -c release --show-bin-path)/ThumbnailService"
"$binary" --hostname 127.0.0.1 --port "${PORT:-8080}" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:${PORT:-8080}/health" >/dev/null && break; sleep 0.2; done
mkdir -p "$here/out"
curl -sf --data-binary @"$here/../progressive.jpg" -o "$here/out/thumbnail.webp" \
    "http://127.0.0.1:${PORT:-8080}/thumbnail?size=256&format=webp"
echo "run: wrote $here/out/thumbnail.webp ($(wc -c < "$here/out/thumbnail.webp") bytes); the server keeps running (Ctrl-C stops it)"
wait $server

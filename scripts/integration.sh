#!/usr/bin/env bash
# Builds the apps in IntegrationTests/ as separate packages that depend on this checkout:
# one with NukeCore alone (it must not link any codec library) and one with NukeCore and
# NukeJPEG (JPEG decodes with no registration call, PNG is a clear error, a custom decoder
# registered at startup wins), and one that links NukeHEIF with NukeIsolation and decodes HEIC
# in sandboxed helpers (itself in helper mode); then Examples/QOIPlugin, a third party's plugin
# with the conformance kit's tests; then the thumbnail service, met by a hostile client
# (Examples/ThumbnailService/edges.py: slow headers and bodies, oversized uploads, bad parameters,
# connection floods, a helper killed mid-decode, log lines), its own Swift Testing suite (signed
# URLs, SSRF refusals, negotiation, 304, drain, metrics; on loopback only), and its deployment
# steps outside a container (Examples/ThumbnailService/deploy/build-rootfs.sh --check). NukePipeline,
# a package of its own beside the library, runs its tests (real HTTP servers on loopback) before the service.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

ln -s "$root" "$work/NukeCodecs"
cp -R "$root/IntegrationTests/CoreOnlyApp" "$root/IntegrationTests/JPEGApp" "$root/IntegrationTests/IsolatedApp" "$work/"

echo "integration: building CoreOnlyApp (NukeCore only)"
swift build --package-path "$work/CoreOnlyApp" -q
core_bin="$(swift build --package-path "$work/CoreOnlyApp" --show-bin-path)/CoreOnlyApp"
if ldd "$core_bin" | grep -E "libjpeg|libpng"; then
    echo "integration: FAIL: an app depending on NukeCore alone links a codec library" >&2
    exit 1
fi
"$core_bin"

echo "integration: building JPEGApp (NukeCore + NukeJPEG)"
swift build --package-path "$work/JPEGApp" -q
jpeg_bin="$(swift build --package-path "$work/JPEGApp" --show-bin-path)/JPEGApp"
"$jpeg_bin" "$root/Examples/progressive.jpg" "$root/Fixtures/png/rgba-8.png"

echo "integration: building IsolatedApp (NukeCore + NukeJPEG + NukeHEIF + NukeIsolation)"
swift build --package-path "$work/IsolatedApp" -q
isolated_bin="$(swift build --package-path "$work/IsolatedApp" --show-bin-path)/IsolatedApp"
"$isolated_bin" "$root/Fixtures/heif/photo.heic" "$root/Fixtures/jpeg/baseline-420.jpg"

echo "integration: testing Examples/QOIPlugin (a third party's plugin: the conformance kit, and what the core gives it)"
swift test --package-path "$root/Examples/QOIPlugin" -q

echo "integration: testing NukePipeline (its own package: loading, caches, sharing and resuming against HTTP servers on loopback)"
swift test --package-path "$root/NukePipeline" -q
echo "integration: scripts/install.sh --debug, then nuke fetch from a loopback origin (nuke runs the nuke-fetch beside it)"
"$root/scripts/install.sh" --debug --prefix "$work/prefix"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$root/Examples" > "$work/origin.log" 2>&1 &
origin=$!
port=""
for _ in $(seq 600); do  # the line the server prints once it listens (at most a minute)
    port="$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$work/origin.log" | head -n 1)"
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "integration: FAIL: the loopback origin did not start" >&2; cat "$work/origin.log" >&2; kill "$origin"; exit 1; }
env -u NUKE_FETCH "$work/prefix/bin/nuke" fetch "http://127.0.0.1:$port/progressive.jpg" --size 64 --out "$work/fetched" \
    || { kill "$origin"; exit 1; }
kill "$origin"
"$work/prefix/bin/nuke" info "$work/fetched/progressive.jpg" | tee "$work/fetched.info"
grep -Eq "size +(64×[0-9]+|[0-9]+×64)$" "$work/fetched.info" || { echo "integration: FAIL: nuke fetch did not write a 64 px image" >&2; exit 1; }
echo "integration: NukePipeline's DocC catalogue (its articles' code is NukeDocumentationTests'), warnings as errors"
swift package --package-path "$root/NukePipeline" generate-documentation --target NukePipeline --warnings-as-errors

echo "integration: building Examples/ThumbnailService and meeting its edges as a hostile client"
swift build --package-path "$root/Examples/ThumbnailService" -q
service_bin="$(swift build --package-path "$root/Examples/ThumbnailService" --show-bin-path)/ThumbnailService"
python3 "$root/Examples/ThumbnailService/edges.py" --binary "$service_bin"
echo "integration: testing Examples/ThumbnailService (signatures, SSRF, negotiation, 304, drain, metrics)"
swift test --package-path "$root/Examples/ThumbnailService" -q
echo "integration: the cache tier (Varnish -> HAProxy by source -> 3 replicas -> an origin; deploy/cache-tier.sh --short, the VCL's varnishtest)"
if command -v varnishd >/dev/null && command -v varnishtest >/dev/null && command -v haproxy >/dev/null; then
    varnishtest -q "$root/Examples/ThumbnailService/deploy/varnish/tests/thumbnails.vtc"
    tier="$("$root/Examples/ThumbnailService/deploy/cache-tier.sh" --short --binary "$service_bin")"
    echo "$tier"
    # Varnish coalesces a variant's misses (one fetch each) and HAProxy retries what the killed
    # replica held (no 5xx); a source the killed replica had not yet written to the shared
    # source cache may be fetched once more, hence the margin on origin-per-source.
    python3 - "$(tail -1 <<<"$tier")" <<'PY'
import sys
figures = dict(part.split("=") for part in sys.argv[1].split())
problems = [name for name, limit in (("thumbnails-per-variant", 1.05), ("origin-per-source", 1.25), ("kill-5xx", 0))
            if float(figures[name]) > limit]
if problems:
    sys.exit(f"integration: the cache tier missed {', '.join(problems)}: {sys.argv[1]}")
PY
else
    echo "integration: skipped the cache tier: varnishd or haproxy is not installed (no install candidate here)"
fi
echo "integration: the container's runtime steps outside a container (deploy/build-rootfs.sh --check)"
chmod 0755 "$work"  # the service runs as an unprivileged user, which must reach the staged binary
"$root/Examples/ThumbnailService/deploy/build-rootfs.sh" --check --binary "$service_bin" --stage "$work/rootfs"
echo "integration: OK"

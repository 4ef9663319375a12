#!/usr/bin/env bash
# NukePipeline's benchmark: the caches' figures, a cut 10 MB download resumed, and 1,000 thumbnail
# requests over 200 URLs of real photographs served from loopback (by hand with AsyncHTTPClient
# and the registry, the pipeline without sharing, the pipeline), each figure a ratio from one run.
#
# The photographs are those of Benchmarks/Thumbnails/steady-state.sh (Debian's lomiri-wallpapers
# and mate-backgrounds, fetched with `apt-get download` and unpacked, never installed) in
# out/benchmarks/steady/photos. Options: --no-install (fetch nothing), --no-build.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HELP_LINES='2,8p'
. "$HERE/../Benchmarks/Thumbnails/bench-common.sh"
say() { printf '[pipeline-bench] %s\n' "$*" >&2; }
PHOTOS="${NUKE_BENCH_CACHE:-$ROOT/out/benchmarks}/steady/photos"
fetch_photos "$PHOTOS" lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 mate-backgrounds
[ "$BUILD" = 1 ] && swift build --package-path "$HERE" -c release --product NukePipelineBenchmarks >&2
exec "$(swift build --package-path "$HERE" -c release --show-bin-path)/NukePipelineBenchmarks" --photos "$PHOTOS" ${PASS[@]+"${PASS[@]}"}

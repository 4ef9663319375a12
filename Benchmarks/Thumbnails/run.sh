#!/usr/bin/env bash
# Thumbnail benchmark: `nuke convert --max-size` against vipsthumbnail and Pillow, and
# `nuke convert X.jpg out.pam` against djpeg. Prints one markdown table and writes it to
# out/benchmarks/thumbnails.md. See README.md beside this file.
#
#   Benchmarks/Thumbnails/run.sh [--runs N] [--inputs DIR] [--quality Q] [--no-install] [--no-build]
#
# Everything that is missing is installed first: Debian's libvips-tools and libjpeg-turbo-progs
# (apt-get, with sudo when not root), numpy and Pillow (pip --user, or a venv in the cache
# directory when pip refuses). The cache directory is $NUKE_BENCH_CACHE or out/benchmarks.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HELP_LINES='2,10p'
. "$HERE/bench-common.sh"
CACHE="${NUKE_BENCH_CACHE:-$ROOT/out/benchmarks}"
mkdir -p "$CACHE"

say() { printf '[bench] %s\n' "$*" >&2; }

# --- Debian tools: vipsthumbnail (libvips-tools), djpeg and cjpeg (libjpeg-turbo-progs) ---------
if [ "$INSTALL" = 1 ]; then
    missing=()
    command -v vipsthumbnail >/dev/null || missing+=(libvips-tools)
    { command -v djpeg >/dev/null && command -v cjpeg >/dev/null; } || missing+=(libjpeg-turbo-progs)
    if [ ${#missing[@]} -gt 0 ] && ! apt_install "${missing[@]}"; then
        say "could not install ${missing[*]}: their rows will show n/a"
    fi
fi

# --- Python with numpy and Pillow -------------------------------------------------------------------
has_pillow() { "$1" -c 'import numpy, PIL.Image' 2>/dev/null; }
if ! find_python has_pillow "$CACHE/venv" numpy pillow; then
    say "numpy and Pillow are needed to make the inputs and check the outputs ($PY has not got them)"
    exit 1
fi

# --- nuke, release build ------------------------------------------------------------------------------
# (No cd: a relative --inputs DIR stays relative to where run.sh was started.)
if [ "$BUILD" = 1 ]; then
    say "building nuke (release, static Swift runtime)"
    # As scripts/demo.sh builds it, and as a service would deploy it: the Swift runtime linked in.
    swift build --package-path "$ROOT" -c release --static-swift-stdlib -Xswiftc -use-ld=lld --product nuke >&2
fi
NUKE="$(swift build --package-path "$ROOT" -c release --show-bin-path)/nuke"
if [ ! -x "$NUKE" ]; then
    say "no release nuke at $NUKE"
    exit 1
fi

exec "$PY" "$HERE/measure.py" --nuke "$NUKE" --cache "$CACHE" --out "$CACHE/thumbnails.md" ${PASS[@]+"${PASS[@]}"}

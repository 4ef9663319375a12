#!/usr/bin/env bash
# Steady-state thumbnail benchmark: nuke's API, pyvips and Pillow, each in one long-lived process
# pinned to the same core, on real photographs from Debian packages (JPEG baseline and progressive,
# and PNG, WebP and AVIF made from them). Prints one table and writes it to
# out/benchmarks/steady/steady-state.md. See README.md beside this file ("Steady state").
#
#   Benchmarks/Thumbnails/steady-state.sh [--quick] [--held-out] [--rounds N] [--core C] [--formats jpeg,png,webp,avif]
#                                         [--no-install] [--no-build]
#
# Run it under the shared build lock, so that no build runs beside it:
#   flock /tmp/nuke-swift.lock Benchmarks/Thumbnails/steady-state.sh
#
# What is missing is installed first: Debian's libvips42 (for pyvips), webp (cwebp) and
# libheif-examples (heif-enc) with apt-get (sudo when not root); numpy, Pillow and pyvips with pip
# (--user, or a venv in the cache directory when pip refuses). The photographs come from Debian's
# lomiri-wallpapers-16.04, lomiri-wallpapers-20.04 and mate-backgrounds, fetched with
# `apt-get download` and unpacked with `dpkg-deb -x` into the cache (never installed). The cache
# directory is $NUKE_BENCH_CACHE/steady, or out/benchmarks/steady.
set -euo pipefail
# ldconfig is in /sbin, which a user's PATH on Debian lacks.
PATH="$PATH:/usr/sbin:/sbin"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HELP_LINES='2,18p'
. "$HERE/bench-common.sh"
CACHE="${NUKE_BENCH_CACHE:-$ROOT/out/benchmarks}/steady"
PACKAGES=(lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 mate-backgrounds)
mkdir -p "$CACHE"

say() { printf '[steady] %s\n' "$*" >&2; }

# --- Debian tools: libvips (pyvips loads it), cwebp, heif-enc, taskset ----------------------------
if [ "$INSTALL" = 1 ]; then
    missing=()
    ldconfig -p | grep -q 'libvips.so.42 ' || missing+=(libvips42)
    command -v cwebp >/dev/null || missing+=(webp)
    command -v heif-enc >/dev/null || missing+=(libheif-examples)
    command -v taskset >/dev/null || missing+=(util-linux)
    [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
fi

# --- The photographs: Debian packages, unpacked into the cache ------------------------------------
PHOTOS="$CACHE/photos"
fetch_photos "$PHOTOS" "${PACKAGES[@]}"

# --- Python with numpy, Pillow and pyvips ---------------------------------------------------------
has_modules() { "$1" -c 'import numpy, PIL.Image, PIL.features as f, pyvips; assert f.check("avif")' 2>/dev/null; }
if ! find_python has_modules "$CACHE/venv" numpy pillow pyvips; then
    say "numpy, Pillow (with AVIF) and pyvips are needed ($PY has not got them)"
    exit 1
fi

# --- nuke's worker, release build -----------------------------------------------------------------
if [ "$BUILD" = 1 ]; then
    say "building NukeSteadyThumbnails (release)"
    swift build --package-path "$ROOT" -c release --product NukeSteadyThumbnails >&2
fi
WORKER="$(swift build --package-path "$ROOT" -c release --show-bin-path)/NukeSteadyThumbnails"
if [ ! -x "$WORKER" ]; then
    say "no release build at $WORKER"
    exit 1
fi

exec "$PY" "$HERE/steady_state.py" --nuke-worker "$WORKER" --photos "$PHOTOS" --cache "$CACHE" \
    --out "$CACHE/steady-state.md" ${PASS[@]+"${PASS[@]}"}

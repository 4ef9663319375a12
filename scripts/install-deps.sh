#!/usr/bin/env bash
# Installs the system packages NukeCodecs builds against, when they are missing.
# Debian names libjpeg-turbo's headers libjpeg62-turbo-dev, Ubuntu libjpeg-turbo8-dev.
set -euo pipefail

have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
have pkg-config || missing+=(pkg-config)
have libpng-dev || missing+=(libpng-dev)
have libgif-dev || missing+=(libgif-dev)
have libwebp-dev || missing+=(libwebp-dev)
have libheif-dev || missing+=(libheif-dev)
have librsvg2-dev || missing+=(librsvg2-dev)
have libjpeg62-turbo-dev || have libjpeg-turbo8-dev || missing+=(libjpeg-turbo)
# libavcodec (FFmpeg's, optional: NukeHEIF decodes large 8-bit HEVC images with it when it is
# installed) has its ABI version in the package name: 59 on Debian 12, 58 and 60 on Ubuntu 22.04
# and 24.04, 61 on Debian 13.
have_libavcodec() { have libavcodec61 || have libavcodec60 || have libavcodec59 || have libavcodec58; }
for extra in "$@"; do
    if [ "$extra" = libavcodec ]; then have_libavcodec || missing+=(libavcodec); continue; fi
    have "$extra" || missing+=("$extra")
done

if ((${#missing[@]} == 0)); then
    exit 0
fi

if ! command -v apt-get >/dev/null; then
    echo "install-deps: missing ${missing[*]}, and this is not a Debian or Ubuntu system (apt-get not found)." >&2
    echo "install-deps: install libjpeg-turbo, libpng, giflib, libwebp, libheif, librsvg and pkg-config with your package manager." >&2
    exit 1
fi

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
packages=()
for package in "${missing[@]}"; do
    if [ "$package" = libjpeg-turbo ]; then
        if apt-cache show libjpeg62-turbo-dev >/dev/null 2>&1; then
            packages+=(libjpeg62-turbo-dev)
        else
            packages+=(libjpeg-turbo8-dev)
        fi
    elif [ "$package" = libavcodec ]; then
        for version in 61 60 59 58; do
            if apt-cache show "libavcodec$version" >/dev/null 2>&1; then packages+=("libavcodec$version"); break; fi
        done
    else
        packages+=("$package")
    fi
done
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2

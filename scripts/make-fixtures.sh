#!/usr/bin/env bash
# Regenerates Fixtures/jpeg, Fixtures/png and Fixtures/gif (images, PAM reference decodes, manifest.json).
#
#   scripts/make-fixtures.sh
#
# Installs what it needs when missing: cjpeg/djpeg (libjpeg-turbo-progs), ImageMagick, netpbm's
# pngtopam (used for notes only), Pillow and numpy. Deterministic: re-running it reproduces the
# same bytes with the same tool versions. See Fixtures/README.md.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"

sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
    echo "make-fixtures: installing $*" >&2
    sudo_ apt-get install -y "$@" || { sudo_ apt-get update && sudo_ apt-get install -y "$@"; }
}

# ImageMagick's convert: prefer an explicit binary, since a `convert` early on PATH may be
# something else (e.g. a stand-in script); check that it really is ImageMagick.
find_imagemagick() {
    local c
    for c in "${IM_CONVERT:-}" /usr/bin/convert-im6.q16 /usr/bin/convert "$(command -v magick || true)"; do
        [ -n "$c" ] && [ -x "$c" ] || continue
        if "$c" -version 2>/dev/null | grep -q '^Version: ImageMagick'; then
            echo "$c"
            return 0
        fi
    done
    return 1
}

missing=()
command -v cjpeg >/dev/null && command -v djpeg >/dev/null || missing+=(libjpeg-turbo-progs)
find_imagemagick >/dev/null || missing+=(imagemagick)
command -v pngtopam >/dev/null || missing+=(netpbm)
command -v gifsicle >/dev/null || missing+=(gifsicle)
command -v cwebp >/dev/null && command -v img2webp >/dev/null || missing+=(webp)
command -v heif-enc >/dev/null && command -v heif-convert >/dev/null || missing+=(libheif-examples)
command -v rsvg-convert >/dev/null || missing+=(librsvg2-bin)
command -v cjxl >/dev/null && command -v djxl >/dev/null || missing+=(libjxl-tools)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

"$python" -c 'import numpy' 2>/dev/null || "$python" -m pip install numpy
"$python" -c 'import PIL' 2>/dev/null || "$python" -m pip install pillow

IM_CONVERT="$(find_imagemagick)" || { echo "make-fixtures: ImageMagick not found" >&2; exit 1; }
export IM_CONVERT

"$python" "$root/scripts/make-fixtures.py" "$root/Fixtures"
"$python" "$root/scripts/make-gif-fixtures.py" "$root/Fixtures"
"$python" "$root/scripts/make-apng-fixtures.py" "$root/Fixtures"
"$python" "$root/scripts/make-webp-fixtures.py" "$root/Fixtures"
"$python" "$root/scripts/make-heif-fixtures.py" "$root/Fixtures"
"$python" "$root/scripts/make-svg-fixtures.py" "$root/Fixtures"
# After the PNG fixtures: v5-icc.bmp embeds png/iccp.png's profile.
"$python" "$root/scripts/make-bmp-fixtures.py" "$root/Fixtures"
"$python" "$root/scripts/make-jxl-fixtures.py" "$root/Fixtures"
# After the JPEG fixtures: the output stage's references are made from them.
"$python" "$root/scripts/make-output-fixtures.py" "$root/Fixtures"
"$python" "$root/scripts/make-heif-orientation-fixture.py" "$root/Fixtures"
"$python" "$root/scripts/make-color-fixtures.py" "$root/Fixtures"
"$python" "$root/scripts/make-tiff-fixtures.py" "$root/Fixtures"

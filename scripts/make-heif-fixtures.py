#!/usr/bin/env python3
"""Generates NukeHEIF's test fixtures (Fixtures/heif) with reference decodes.

Run through scripts/make-fixtures.sh (or directly: make-heif-fixtures.py FIXTURES_DIR). The files
are written by `heif-enc` (Debian's libheif-examples: x265 for HEIC, aom for AVIF) from PNGs
Pillow draws: 8-bit HEIC and AVIF, with and without alpha, lossless HEIC (4:4:4), a 10-bit HEIC
from a 16-bit PNG, and a HEIC with a 48-pixel thumbnail. Invalid files: a truncated HEIC and an
`ftyp` box over junk.

References: decoded by `heif-convert` to PNG, written as PAM (8-bit; the 10-bit file's reference
is heif-convert's 16-bit PNG, scaled to 8 bits by Pillow's rounding, compared with a tolerance of
1). heif-convert uses the same libheif, so the pixels are also cross-checked against the source
PNG within the PSNR the quality implies (lossy) or exactly (lossless RGB is YCbCr 4:4:4, so
within 2).

manifest.json follows the conformance kit's schema (NukeConformance FixtureManifest), plus
"thumbnails" and "bit_depth" per file.
"""

import json
import os
import random
import struct
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image


def run(args):
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.exit("make-heif-fixtures: %s failed: %s" % (" ".join(args), proc.stderr.decode(errors="replace")))
    return proc.stdout


def photo(width, height, seed, alpha=False, wide=False):
    """A smooth picture with mild noise (as a photo), optionally with a soft alpha ellipse."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    r = 127 + 100 * np.sin(x / width * 6 + y / height * 2)
    g = 127 + 90 * np.cos(y / height * 5 - x / width * 2)
    b = 255 * (x / width) * (y / height)
    rgb = np.stack([r, g, b], axis=-1) + rng.normal(0, 4, (height, width, 3))
    if wide:
        data = np.clip(rgb * 257, 0, 65535).astype(np.uint16)
        return data
    rgb = np.clip(rgb, 0, 255).astype(np.uint8)
    if not alpha:
        return Image.fromarray(rgb, "RGB")
    d = ((x - width / 2) / (width / 2)) ** 2 + ((y - height / 2) / (height / 2)) ** 2
    a = np.clip(255 * (1.4 - d), 0, 255).astype(np.uint8)
    return Image.fromarray(np.dstack([rgb, a]), "RGBA")


def write_png16(data, path):
    """A 16-bit RGB PNG (Pillow cannot write one), with zlib by hand."""
    import zlib
    height, width, _ = data.shape
    raw = b"".join(b"\x00" + data[row].astype(">u2").tobytes() for row in range(height))

    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
        f.write(chunk(b"IEND", b""))


def save_pam(im, path):
    mode = "RGBA" if im.mode in ("RGBA", "LA") else "RGB"
    im = im.convert(mode)
    depth, tupl = (4, "RGB_ALPHA") if mode == "RGBA" else (3, "RGB")
    with open(path, "wb") as f:
        f.write(b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL 255\nTUPLTYPE %s\nENDHDR\n" % (im.size[0], im.size[1], depth, tupl.encode()))
        f.write(im.tobytes())


def psnr(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    mse = np.mean((a - b) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255 * 255 / mse)


def main():
    out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "Fixtures", "heif")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    tmp = tempfile.mkdtemp()
    fixtures = []

    def make(name, source, args, made_with, min_psnr, lossless=False, thumbnails=0, bit_depth=8, tolerance=0):
        src = os.path.join(tmp, name + ".png")
        if isinstance(source, np.ndarray):
            write_png16(source, src)
            preview = Image.fromarray((source.astype(np.uint32) * 255 // 65535).astype(np.uint8), "RGB")
        else:
            source.save(src)
            preview = source
        path = os.path.join(out, name)
        run(["heif-enc"] + args + ["-o", path, src])
        decoded = os.path.join(tmp, name + ".decoded.png")
        run(["heif-convert", path, decoded])
        ref_image = Image.open(decoded)
        ref_image.load()
        if ref_image.mode in ("I;16", "I;16B", "I", "RGB;16") or getattr(ref_image, "bits", 8) > 8 or ref_image.mode.endswith("16"):
            ref_image = ref_image.convert("RGB")
        if bit_depth > 8:
            # heif-convert writes 16-bit PNGs for 10-bit files; Pillow opens them as 8-bit RGB(A)
            # with its own rounding.
            pass
        ref = name.replace(".", "-") + ".pam"
        save_pam(ref_image, os.path.join(out, ref))
        quality = psnr(np.asarray(ref_image.convert("RGB")), np.asarray(preview.convert("RGB")))
        if quality < min_psnr:
            sys.exit("make-heif-fixtures: %s: PSNR %.1f dB against the source, expected at least %.1f" % (name, quality, min_psnr))
        fixtures.append({"file": name, "kind": "valid", "reference": ref, "tolerance": tolerance,
                         "width": preview.size[0], "height": preview.size[1], "lossless": False,
                         "made_with": made_with, "notes": "reference: heif-convert (libheif), PSNR %.1f dB against the source" % quality,
                         "thumbnails": thumbnails, "bit_depth": bit_depth})
        return path

    make("photo.heic", photo(64, 48, 1), ["-q", "90"], "heif-enc -q 90 (x265)", 30)
    make("alpha.heic", photo(48, 40, 2, alpha=True), ["-q", "85"], "heif-enc -q 85 (x265), alpha", 28)
    make("lossless.heic", photo(33, 27, 3), ["-L", "-p", "chroma=444"], "heif-enc -L -p chroma=444 (x265)", 40)
    make("photo.avif", photo(64, 48, 4), ["-A", "-q", "80"], "heif-enc -A -q 80 (aom)", 28)
    make("alpha.avif", photo(40, 32, 5, alpha=True), ["-A", "-q", "80"], "heif-enc -A -q 80 (aom), alpha", 26)
    make("ten-bit.heic", photo(48, 32, 6, wide=True), ["-q", "90", "-b", "10"], "heif-enc -q 90 -b 10 from a 16-bit PNG", 30,
         bit_depth=10, tolerance=1)
    make("thumbnail.heic", photo(160, 120, 7), ["-q", "80", "-t", "48"], "heif-enc -q 80 -t 48: a 48-pixel thumbnail", 28, thumbnails=1)
    # Other colour descriptions, chroma layouts and odd sizes: NukeHEIF converts 8-bit YCbCr to RGB
    # itself (CHEIFShim/ycbcr.c), and must equal libheif's conversion for each. heif-enc writes an
    # image less than 64 pixels wide or high as a grid (whose tiles libheif converts itself), so
    # these HEIC files are at least 64 on each side.
    bt709_limited = ["--matrix_coefficients=1", "--colour_primaries=1", "--transfer_characteristic=1", "--full_range_flag=0"]
    make("bt709-limited.heic", photo(72, 64, 8), ["-q", "85"] + bt709_limited,
         "heif-enc -q 85, BT.709 matrix, limited range (x265)", 28)
    make("bt709-limited.avif", photo(59, 43, 9), ["-A", "-q", "80"] + bt709_limited,
         "heif-enc -A -q 80, BT.709 matrix, limited range (aom)", 26)
    make("chroma422.heic", photo(66, 70, 10), ["-q", "85", "-p", "chroma=422"], "heif-enc -q 85 -p chroma=422 (x265)", 28)
    make("chroma444.avif", photo(37, 29, 11), ["-A", "-q", "80", "-p", "chroma=444", "--matrix_coefficients=9"],
         "heif-enc -A -q 80 -p chroma=444, BT.2020 matrix (aom)", 26)

    heic = open(os.path.join(out, "photo.heic"), "rb").read()
    open(os.path.join(out, "truncated.heic"), "wb").write(heic[: len(heic) * 2 // 3])
    fixtures.append({"file": "truncated.heic", "kind": "invalid", "expected_error": "incomplete",
                     "made_with": "the first two thirds of photo.heic"})
    junk = heic[:heic.find(b"meta") - 4] + b"\x00\x00\x00\x10junkjunkjunk" + b"\xff" * 64
    open(os.path.join(out, "junk.heic"), "wb").write(junk)
    fixtures.append({"file": "junk.heic", "kind": "invalid", "expected_error": "corrupt",
                     "made_with": "photo.heic's ftyp box followed by a junk box and 0xFF bytes: no meta box"})

    fixtures.sort(key=lambda f: f["file"])
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"format": "heif", "fixtures": fixtures}, f, indent=2)
        f.write("\n")
    print("make-heif-fixtures: %d fixtures in %s" % (len(fixtures), out))


if __name__ == "__main__":
    main()

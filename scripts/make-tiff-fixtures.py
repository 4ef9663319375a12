#!/usr/bin/env python3
"""TIFF fixtures and their references (Fixtures/tiff), for NukeTIFF.

    python3 scripts/make-tiff-fixtures.py [Fixtures]

Every file is 37x23 (odd, so tiles and strips end part-way) and made by tools independent of
NukeTIFF: Pillow 13's TIFF writer, libtiff's tiffcp and tiffset (libtiff-tools: tiles, planar
samples, compressions, orientation), or the small uncompressed writer below for layouts neither
writes (2- and 4-bit samples, min-is-white, 16-bit RGB, big-endian, unspecified extra samples).
References are the source samples for lossless files (what was encoded, not any decoder's
reading of it); Pillow's decode for JPEG compression; for CMYK, lcms2's transicc through the
embedded profile (Ghostscript's ps_cmyk.icc), from the source samples. Invalid files are valid
ones cut or patched. Installs libtiff-tools, liblcms2-utils and libgs-common when missing.
"""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixturelib import transicc, write_pam  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixtures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Fixtures")
out = os.path.join(fixtures, "tiff")
os.makedirs(out, exist_ok=True)
GS = "/usr/share/color/icc/ghostscript"

missing = [package for tool, package in (("tiffcp", "libtiff-tools"), ("transicc", "liblcms2-utils"))
           if shutil.which(tool) is None]
if not os.path.exists(os.path.join(GS, "ps_cmyk.icc")):
    missing.append("libgs-common")
if missing:
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "install", "-y"] + missing, check=True)

W, H = 37, 23
rng = np.random.default_rng(29)
yy, xx = np.mgrid[0:H, 0:W]
RGB = np.stack([xx * 255 // (W - 1), yy * 255 // (H - 1), (xx + yy) * 7 % 256], axis=-1).astype(np.uint8)
RGB[5:9, 5:30] = rng.integers(0, 256, (4, 25, 3), dtype=np.uint8)
ALPHA = ((xx * 255 // (W - 1)) ^ (yy * 11 % 256)).astype(np.uint8)
RGBA = np.dstack([RGB, ALPHA])
GRAY = ((xx * 3 + yy * 5) % 256).astype(np.uint8)
GRAY16 = (xx * 1771 + yy * 2897 + 13).astype(np.uint16)
RGB16 = np.stack([xx * 1771 + 3, yy * 2897 + 5, (xx * yy * 97) % 65536], axis=-1).astype(np.uint16)
BITS = ((xx // 3 + yy // 2) % 2).astype(np.uint8)
CMYK = np.stack([xx * 255 // (W - 1), yy * 255 // (H - 1), (xx + yy) * 5 % 256, (xx * yy) % 64], axis=-1).astype(np.uint8)

entries = []


def add(name, made_with, reference=None, tolerance=0, lossless=True, kind="valid", error=None, reference16=None,
        orientation=None, icc=None, notes=""):
    entry = {"file": name, "kind": kind, "made_with": made_with, "notes": notes}
    if kind == "valid":
        image_reference = name.rsplit(".", 1)[0] + ".pam"
        write_pam(os.path.join(out, image_reference), reference)
        entry.update({"reference": image_reference, "tolerance": tolerance, "lossless": lossless,
                      "width": int(reference.shape[1]), "height": int(reference.shape[0])})
        if reference16 is not None:
            wide_reference = name.rsplit(".", 1)[0] + ".16.pam"
            write_pam(os.path.join(out, wide_reference), reference16)
            entry["reference16"] = wide_reference
        if orientation is not None:
            entry["orientation"] = orientation
        if icc is not None:
            entry["icc_sha256"] = hashlib.sha256(icc).hexdigest()
            entry["icc_size"] = len(icc)
    else:
        entry["expected_error"] = error
    entries.append(entry)


def path(name):
    return os.path.join(out, name)


def image(array, mode):
    samples = array.astype("<u2") if mode == "I;16" else array
    return Image.frombytes(mode, (array.shape[1], array.shape[0]), np.ascontiguousarray(samples).tobytes())


def pillow(name, array, mode, **options):
    image(array, mode).save(path(name), **options)


def tiffcp(source, name, *arguments):
    subprocess.run(["tiffcp", *arguments, path(source), path(name)], check=True)


def to8(samples16):
    return ((samples16.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)


def raw_tiff(name, samples, bits, photometric, extra=None, colormap=None, big_endian=False, rows_per_strip=8, tags=()):
    """An uncompressed, contiguous TIFF of `samples` (H x W x S integers), packed MSB first at
    `bits` per sample, written tag by tag."""
    h, w, s = samples.shape
    order = ">" if big_endian else "<"
    rows = []
    for y in range(h):
        if samples.dtype.kind == "f":
            rows.append(samples[y].astype(order + "f4").tobytes())
        elif bits >= 8:
            rows.append(samples[y].astype(order + ("u2" if bits == 16 else "u1")).tobytes())
        else:
            values = samples[y].reshape(-1)
            packed = bytearray((len(values) * bits + 7) // 8)
            for i, v in enumerate(values):
                bit = i * bits
                packed[bit // 8] |= int(v) << (8 - bits - bit % 8)
            rows.append(bytes(packed))
    strips = [b"".join(rows[y:y + rows_per_strip]) for y in range(0, h, rows_per_strip)]
    more_tags = tags
    tags = [(256, 4, [w]), (257, 4, [h]), (258, 3, [bits] * s), (259, 3, [1]), (262, 3, [photometric]),
            (273, 4, [0] * len(strips)), (277, 3, [s]), (278, 4, [rows_per_strip]),
            (279, 4, [len(x) for x in strips]), (284, 3, [1])]
    if colormap is not None:
        tags.append((320, 3, colormap))
    if extra is not None:
        tags.append((338, 3, extra))
    if samples.dtype.kind == "f":
        tags.append((339, 3, [3] * s))   # SampleFormat: IEEE floating point
    tags = sorted(tags + list(more_tags))
    # Layout: header, strips, then out-of-line tag values, then the directory.
    data = bytearray(8)
    offsets = []
    for strip in strips:
        offsets.append(len(data))
        data += strip
    tags = [(t, k, offsets if t == 273 else v) for t, k, v in tags]
    fmt = {3: "H", 4: "I"}
    values = {}
    for tag, kind, vals in tags:
        blob = struct.pack(order + fmt[kind] * len(vals), *vals)
        if len(blob) > 4:
            if len(data) % 2:
                data += b"\0"
            values[tag] = len(data)
            data += blob
    if len(data) % 2:
        data += b"\0"
    directory = len(data)
    data += struct.pack(order + "H", len(tags))
    for tag, kind, vals in tags:
        blob = struct.pack(order + fmt[kind] * len(vals), *vals)
        field = struct.pack(order + "I", values[tag]) if tag in values else blob.ljust(4, b"\0")
        data += struct.pack(order + "HHI", tag, kind, len(vals)) + field
    data += struct.pack(order + "I", 0)
    data[0:8] = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(order + "I", directory)
    open(path(name), "wb").write(bytes(data))


# Pillow's writer: compressions and modes.
for compression, label in ((None, "none"), ("tiff_lzw", "lzw"), ("tiff_adobe_deflate", "deflate"), ("packbits", "packbits")):
    pillow("rgb-%s.tif" % label, RGB, "RGB", compression=compression)
    add("rgb-%s.tif" % label, "Pillow %s, compression=%s" % (Image.__version__, compression), RGB)
pillow("rgba-lzw.tif", RGBA, "RGBA", compression="tiff_lzw")
add("rgba-lzw.tif", "Pillow, RGBA (unassociated alpha), LZW", RGBA)
pillow("gray-deflate.tif", GRAY, "L", compression="tiff_adobe_deflate")
add("gray-deflate.tif", "Pillow, L, Deflate", GRAY)
pillow("gray16-lzw.tif", GRAY16, "I;16", compression="tiff_lzw")
add("gray16-lzw.tif", "Pillow, I;16, LZW", to8(GRAY16), reference16=GRAY16,
    notes="8-bit reference: round(v x 255 / 65535), as libtiff's RGBA reader scales")
bilevel = image(BITS * 255, "L").convert("1")
for compression, label in (("group4", "g4"), ("group3", "g3"), ("tiff_ccitt", "ccitt-rle"), ("packbits", "packbits")):
    bilevel.save(path("bilevel-%s.tif" % label), compression=compression)
    add("bilevel-%s.tif" % label, "Pillow, mode 1, compression=%s" % compression, BITS * 255)
palette = image(GRAY // 16 * 16, "L").convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
palette.save(path("palette-8.tif"), compression="tiff_lzw")
add("palette-8.tif", "Pillow, P (8-bit indices, 16 colours), LZW", np.array(palette.convert("RGB")))
pillow("rgb-jpeg.tif", RGB, "RGB", compression="jpeg", quality=90)
add("rgb-jpeg.tif", "Pillow, JPEG compression (quality 90)", np.array(Image.open(path("rgb-jpeg.tif")).convert("RGB")),
    tolerance=2, lossless=False, notes="reference: Pillow's decode")
icc = open(os.path.join(GS, "a98.icc"), "rb").read()
pillow("rgb-icc.tif", RGB, "RGB", compression="tiff_lzw", icc_profile=icc)
add("rgb-icc.tif", "Pillow, LZW, Ghostscript's a98.icc (Adobe RGB) embedded", RGB, icc=icc)
pillow("rgb-bigtiff.tif", RGB, "RGB", compression="tiff_adobe_deflate", big_tiff=True)
add("rgb-bigtiff.tif", "Pillow, BigTIFF, Deflate", RGB)
cmyk_profile = os.path.join(GS, "ps_cmyk.icc")
pillow("cmyk-lzw.tif", CMYK, "CMYK", compression="tiff_lzw", icc_profile=open(cmyk_profile, "rb").read())
add("cmyk-lzw.tif", "Pillow, CMYK, LZW, Ghostscript's ps_cmyk.icc embedded", transicc(CMYK, cmyk_profile, 100 / 255),
    tolerance=1, lossless=False, notes="reference: transicc (perceptual) from the source CMYK through ps_cmyk.icc to sRGB")

# libtiff's tiffcp: tiles, planar samples, fax, YCbCr; tiffset: orientation.
tiffcp("rgb-none.tif", "rgb-tiled-lzw.tif", "-t", "-w", "16", "-l", "16", "-c", "lzw:2")
add("rgb-tiled-lzw.tif", "tiffcp -t -w 16 -l 16 -c lzw:2 (16x16 tiles, partial at the edges)", RGB)
tiffcp("rgb-none.tif", "rgb-planar-deflate.tif", "-p", "separate", "-c", "zip", "-r", "5")
add("rgb-planar-deflate.tif", "tiffcp -p separate -c zip -r 5 (planar strips of 5 rows)", RGB)
tiffcp("rgba-lzw.tif", "rgba-planar-tiled.tif", "-p", "separate", "-t", "-w", "16", "-l", "16", "-c", "none")
add("rgba-planar-tiled.tif", "tiffcp -p separate -t -w 16 -l 16 (planar tiles, alpha)", RGBA)
tiffcp("bilevel-packbits.tif", "bilevel-tiled-g4.tif", "-t", "-w", "16", "-l", "16", "-c", "g4")
add("bilevel-tiled-g4.tif", "tiffcp -t -c g4 (CCITT G4 in tiles)", BITS * 255)
tiffcp("rgb-none.tif", "ycbcr-jpeg.tif", "-c", "jpeg:90", "-r", "16")
add("ycbcr-jpeg.tif", "tiffcp -c jpeg:90 (photometric YCbCr, 2x2 subsampling, strips of 16)",
    np.array(Image.open(path("ycbcr-jpeg.tif")).convert("RGB")), tolerance=3, lossless=False,
    notes="reference: Pillow's decode; libtiff's JPEG codec converts YCbCr to RGB for NukeTIFF")
for orientation in (3, 6, 8):
    name = "orientation-%d.tif" % orientation
    shutil.copy(path("rgb-lzw.tif"), path(name))
    subprocess.run(["tiffset", "-s", "274", str(orientation), path(name)], check=True)
    add(name, "rgb-lzw.tif with tiffset -s 274 %d" % orientation, RGB, orientation=orientation,
        notes="pixels as stored; the Orientation tag is reported")

# The small writer: layouts Pillow and tiffcp do not write.
for bits in (2, 4):
    levels = (GRAY.astype(np.uint32) * ((1 << bits) - 1) // 255).astype(np.uint8)
    raw_tiff("gray-%d.tif" % bits, levels[:, :, None], bits, 1)
    add("gray-%d.tif" % bits, "make-tiff-fixtures.py writer: %d-bit min-is-black" % bits,
        (levels.astype(np.uint32) * 255 // ((1 << bits) - 1)).astype(np.uint8))
raw_tiff("miniswhite-8.tif", GRAY[:, :, None], 8, 0)
add("miniswhite-8.tif", "make-tiff-fixtures.py writer: 8-bit min-is-white", 255 - GRAY)
indices = (GRAY // 16).astype(np.uint8)
colormap = [i * 4369 for i in range(16)] + [(15 - i) * 4369 for i in range(16)] + [(i * 7 % 16) * 4369 for i in range(16)]
raw_tiff("palette-4.tif", indices[:, :, None], 4, 3, colormap=colormap)
table = np.array([[i * 17, (15 - i) * 17, (i * 7 % 16) * 17] for i in range(16)], dtype=np.uint8)
add("palette-4.tif", "make-tiff-fixtures.py writer: 4-bit palette, 16-bit colour map", table[indices])
raw_tiff("rgb16-be.tif", RGB16, 16, 2, big_endian=True)
add("rgb16-be.tif", "make-tiff-fixtures.py writer: 16-bit RGB, big-endian (MM)", to8(RGB16), reference16=RGB16)
rgba16 = np.dstack([RGB16, (GRAY16 // 2 + 30000).astype(np.uint16)])
raw_tiff("rgba16-le.tif", rgba16, 16, 2, extra=[2])
add("rgba16-le.tif", "make-tiff-fixtures.py writer: 16-bit RGBA, unassociated alpha", to8(rgba16), reference16=rgba16)
raw_tiff("rgb-extra.tif", np.dstack([RGB, GRAY, ALPHA]), 8, 2, extra=[0, 0])
add("rgb-extra.tif", "make-tiff-fixtures.py writer: RGB and two unspecified extra samples", RGB,
    notes="unspecified extra samples are skipped, as libtiff's RGBA reader does")
# YCbCr, not subsampled (YCbCrSubsampling 1 1): libtiff's RGBA reader converts it. The
# reference is the TIFF 6.0 conversion (CCIR 601 coefficients, ReferenceBlackWhite's default
# full range) computed here from the source samples.
rgb = RGB.astype(np.float64)
luma = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
ycbcr = np.stack([luma, (rgb[..., 2] - luma) / 1.772 + 128, (rgb[..., 0] - luma) / 1.402 + 128], axis=-1)
ycbcr = np.clip(np.rint(ycbcr), 0, 255)
y, cb, cr = ycbcr[..., 0], ycbcr[..., 1] - 128, ycbcr[..., 2] - 128
back = np.stack([y + 1.402 * cr, y - 0.344136 * cb - 0.714136 * cr, y + 1.772 * cb], axis=-1)
raw_tiff("ycbcr-raw.tif", ycbcr.astype(np.uint8), 8, 6, tags=[(530, 3, [1, 1])])
add("ycbcr-raw.tif", "make-tiff-fixtures.py writer: uncompressed YCbCr, no subsampling (libtiff's RGBA reader)",
    np.clip(np.rint(back), 0, 255).astype(np.uint8), tolerance=2, lossless=False,
    notes="reference: the TIFF 6.0 YCbCr to RGB conversion of the written samples")
raw_tiff("private-tag.tif", RGB, 8, 2, tags=[(65000, 3, [7])])
add("private-tag.tif", "make-tiff-fixtures.py writer: 8-bit RGB with a private tag (65000) libtiff does not know", RGB,
    notes="libtiff warns while reading the directory: reported, not refused by a strict decode")
# 32-bit floating-point samples (SampleFormat 3), nominally 0 to 1: read as 16-bit samples,
# values outside 0…1 clamped (as libvips shows them). Some samples are out of range on purpose.
# Reference: the written floats clamped and scaled to 16 bits here (round(f × 65535)).
def float_reference(floats):
    return np.rint(np.clip(floats, 0, 1) * 65535).astype(np.uint16)
rgb_float = (RGB.astype(np.float32) / 255) * np.float32(1.25) - np.float32(0.1)
raw_tiff("rgb-float32.tif", rgb_float, 32, 2)
add("rgb-float32.tif", "make-tiff-fixtures.py writer: 32-bit floating-point RGB, some samples below 0 and above 1",
    to8(float_reference(rgb_float)), reference16=float_reference(rgb_float), tolerance=1,
    notes="reference: the written floats clamped to 0-1 and scaled to 16 bits")
gray_float = GRAY[..., None].astype(np.float32) / 255
raw_tiff("gray-float32.tif", gray_float, 32, 1, big_endian=True)
add("gray-float32.tif", "make-tiff-fixtures.py writer: 32-bit floating-point gray, big-endian",
    to8(float_reference(gray_float))[..., 0], reference16=float_reference(gray_float)[..., 0], tolerance=1,
    notes="reference: the written floats scaled to 16 bits")
raw_tiff("gray-alpha.tif", np.dstack([GRAY, ALPHA]), 8, 1, extra=[2])
add("gray-alpha.tif", "make-tiff-fixtures.py writer: 8-bit gray and unassociated alpha", np.dstack([GRAY, ALPHA]))

# Multi-page: three pages of different sizes.
pages = [image(RGB, "RGB"), image(np.ascontiguousarray(GRAY[:11, :20]), "L"), image(np.ascontiguousarray(RGBA[:7, :9]), "RGBA")]
pages[0].save(path("pages-3.tif"), save_all=True, append_images=pages[1:], compression="tiff_lzw")
add("pages-3.tif", "Pillow save_all: 37x23 RGB, 20x11 L, 9x7 RGBA pages (LZW)", RGB, notes="reference: the first page")
for index, page in enumerate(pages[1:], start=1):
    write_pam(path("pages-3.page%d.pam" % index), np.array(page))

# Invalid files.
whole = open(path("rgb-lzw.tif"), "rb").read()
open(path("truncated.tif"), "wb").write(whole[:len(whole) // 2])
add("truncated.tif", "rgb-lzw.tif cut in half (Pillow writes the directory after the strips: it is lost)", kind="invalid",
    error="incomplete")
plain = open(path("rgb-none.tif"), "rb").read()
open(path("strips-cut.tif"), "wb").write(plain[:len(plain) - 700])
add("strips-cut.tif", "rgb-none.tif (directory first, then the strip) without its last 700 bytes", kind="invalid",
    error="incomplete")
garbage = bytearray(whole)
garbage[8:8 + 1200] = rng.integers(0, 256, 1200, dtype=np.uint8).tobytes()
open(path("lzw-garbage.tif"), "wb").write(bytes(garbage))
add("lzw-garbage.tif", "rgb-lzw.tif with the first 1200 bytes of its LZW strip replaced by random bytes", kind="invalid",
    error="corrupt")
no_size = bytearray(plain)
count = struct.unpack("<H", plain[8:10])[0]
for i in range(count):
    entry = 10 + 12 * i
    if struct.unpack("<H", plain[entry:entry + 2])[0] == 256:
        no_size[entry:entry + 2] = struct.pack("<H", 65000)   # ImageWidth becomes a private tag
open(path("no-width.tif"), "wb").write(bytes(no_size))
add("no-width.tif", "rgb-none.tif with its ImageWidth entry renamed to tag 65000", kind="invalid", error="corrupt")

# Outside the manifest (a test reads it): rgb-jpeg.tif with its StripByteCounts 300 short, so
# libjpeg warns "Premature end of JPEG file" while libtiff decodes the strip.
jpeg = bytearray(open(path("rgb-jpeg.tif"), "rb").read())
directory = struct.unpack("<I", jpeg[4:8])[0]
for i in range(struct.unpack("<H", jpeg[directory:directory + 2])[0]):
    entry = directory + 2 + 12 * i
    if struct.unpack("<H", jpeg[entry:entry + 2])[0] == 279:
        jpeg[entry + 8:entry + 12] = struct.pack("<I", struct.unpack("<I", jpeg[entry + 8:entry + 12])[0] - 300)
open(path("jpeg-short-strip.tif"), "wb").write(bytes(jpeg))

manifest = {"format": "tiff", "fixtures": entries}
open(os.path.join(out, "manifest.json"), "w").write(json.dumps(manifest, indent=2) + "\n")
print("make-tiff-fixtures: %d fixtures in %s" % (len(entries), out))

#!/usr/bin/env python3
"""Generates Fixtures/resampler: Pillow thumbnails that ImageResampler is compared with.

The source images are not stored: they are defined by integer formulas (`photo` below) that
Tests/NukeCoreTests/ResamplerFixtures.swift implements the same way, and the manifest records an
FNV-1a hash of each source's bytes so the test can check it regenerated the same pixels. The
references are made by Pillow, an independent implementation of the same algorithm family:

    thumbnail-*   img.thumbnail((w, h))                  (reduce by int(factor / 2), then BICUBIC)
    fill-*        img.reduce(f).resize(size, BICUBIC, box) exactly as Image.resize does for
                  reducing_gap=2.0, at the size that covers (w, h) (aspect fill)
    box-*         img.resize(size, BICUBIC, box=(0, 0, w', h'), reducing_gap=2.0): a codec's
                  reduction rounded up, whose last row and column cover part of a pixel

and stored as 8-bit PAM (Netpbm P7), which the NukeCore tests read without any codec.

Usage: scripts/make-resampler-fixtures.py [FIXTURES_DIR]   (needs numpy and Pillow from PyPI)
Deterministic: the same Pillow version writes the same bytes.
"""

import json
import os
import sys

import numpy as np
import PIL
from PIL import Image

TUPLTYPES = {1: "GRAYSCALE", 2: "GRAYSCALE_ALPHA", 3: "RGB", 4: "RGB_ALPHA"}


def photo(width, height, alpha):
    """A photo-like test pattern: gradients, soft waves, a hard-edged disc, a 2-px checkerboard
    (the aliasing trap) and ±16 hashed noise. With alpha: transparent pure red on the left
    fifth, a ramp to opaque, a half-transparent disc. Integer maths only (mirrored in Swift)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)

    def tri(v, period):
        return np.abs(v % period - period // 2)

    def noise(c):
        h = ((x.astype(np.uint32) * np.uint32(73856093))
             ^ (y.astype(np.uint32) * np.uint32(19349663))
             ^ np.uint32((c + 1) * 83492791))
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x045D9F3B)
        h ^= h >> np.uint32(16)
        return (h % np.uint32(33)).astype(np.int64) - 16

    r = 30 + 120 * x // width + tri(3 * x + 2 * y, 96)
    g = 30 + 120 * y // height + tri(2 * x + 3 * height - y, 64) * 3 // 2
    b = 200 - 150 * (x + y) // (width + height) + tri(x + 5 * y, 40)
    cx, cy, radius = 3 * width // 10, 4 * height // 10, 15 * min(width, height) // 100
    disc = (x - cx) ** 2 + (y - cy) ** 2 <= radius * radius
    r = np.where(disc, 230, r)
    g = np.where(disc, 200, g)
    b = np.where(disc, 40, b)
    board = (x >= 6 * width // 10) & (x < 9 * width // 10) & (y >= 55 * height // 100) & (y < 85 * height // 100)
    checker = ((x // 2 + y // 2) % 2) * 200 + 20
    r, g, b = (np.where(board, checker, v) for v in (r, g, b))
    channels = [np.clip(v + noise(c), 0, 255) for c, v in enumerate((r, g, b))]
    if alpha:
        left = width // 5
        a = np.clip(255 * (x - left) // (width // 2), 0, 255)
        a = np.where(disc, 160, a)
        clear = x < left
        channels = [np.where(clear, red, v) for v, red in zip(channels, (255, 0, 0))] + [a]
    return np.stack(channels, axis=-1).astype(np.uint8)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def pam(pixels):
    h, w, depth = pixels.shape
    header = "P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL 255\nTUPLTYPE %s\nENDHDR\n" % (w, h, depth, TUPLTYPES[depth])
    return header.encode("ascii") + pixels.astype(np.uint8).tobytes()


def fill_like_thumbnail(img, width, height):
    """Image.resize(size, BICUBIC, reducing_gap=2.0) spelled out: reduce, then BICUBIC on the box."""
    factor_x = int(img.width / width / 2.0) or 1
    factor_y = int(img.height / height / 2.0) or 1
    premultiplied = img.mode == "RGBA"
    if premultiplied:
        img = img.convert("RGBa")
    box = (0, 0, img.width, img.height)
    if factor_x > 1 or factor_y > 1:
        img = img.reduce((factor_x, factor_y))
        box = (0, 0, box[2] / factor_x, box[3] / factor_y)
    out = img.resize((width, height), Image.Resampling.BICUBIC, box=box)
    return out.convert("RGBA") if premultiplied else out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "Fixtures")
    folder = os.path.join(root, "resampler")
    os.makedirs(folder, exist_ok=True)
    cases = []

    def add(name, width, height, alpha, target, mode, extent=None):
        pixels = photo(width, height, alpha)
        img = Image.fromarray(pixels, "RGBA" if alpha else "RGB")
        if extent is not None:
            # A codec's reduction rounded up: the source covers only `extent` of its pixels
            # (as Pillow's thumbnail resizes from draft()'s box); `target` is the exact size.
            thumb = img.resize(target, Image.Resampling.BICUBIC, box=(0, 0) + extent, reducing_gap=2.0)
        elif mode == "aspectFit":
            thumb = img.copy()
            thumb.thumbnail(target)
        else:
            scale = max(target[0] / width, target[1] / height)
            size = (max(target[0], round(width * scale)), max(target[1], round(height * scale)))
            thumb = fill_like_thumbnail(img, *size)
            same = img.resize(size, Image.Resampling.BICUBIC, reducing_gap=2.0)
            assert np.array_equal(np.asarray(thumb), np.asarray(same)), "fill differs from Image.resize"
        reference = np.asarray(thumb)
        filename = name + ".pam"
        with open(os.path.join(folder, filename), "wb") as f:
            f.write(pam(reference))
        cases.append({
            "name": name,
            "source": {"pattern": "photo", "width": width, "height": height, "alpha": alpha,
                       "fnv1a64": fnv1a64(pixels.tobytes())},
            "target": {"width": target[0], "height": target[1]},
            "contentMode": mode,
            "reference": filename,
            "referenceSize": {"width": thumb.width, "height": thumb.height},
        })
        if extent is not None:
            cases[-1]["extent"] = {"width": extent[0], "height": extent[1]}

    add("thumbnail-rgb-64", 400, 300, False, (64, 64), "aspectFit")
    add("thumbnail-rgb-32", 400, 300, False, (32, 32), "aspectFit")
    add("thumbnail-rgb-100", 400, 300, False, (100, 100), "aspectFit")
    add("thumbnail-rgba-64", 300, 200, True, (64, 64), "aspectFit")
    add("fill-rgb-64", 400, 300, False, (64, 64), "aspectFill")
    add("fill-rgba-48", 300, 200, True, (48, 48), "aspectFill")
    # 1603 × 1203 decoded at 2/8 by libjpeg: 401 × 301 pixels for 400.75 × 300.75 of the image.
    add("box-rgb-64", 401, 301, False, (64, 48), "aspectFit", extent=(400.75, 300.75))

    manifest = {
        "generator": "scripts/make-resampler-fixtures.py",
        "pillow": PIL.__version__,
        "cases": cases,
    }
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generates Fixtures/processing: what NukeProcessing's processors are compared with, made by
independent tools (Pillow, scipy), stored as PAM (Netpbm P7) that the tests read without a codec.

Sources (written here, deterministic integer patterns):
    source-rgb.pam      120 x 80 RGB   gradients, waves, a hard-edged disc, a checkerboard, noise
    source-rgba.pam      60 x 40 RGBA  the same with an alpha ramp and a transparent band
    source-small.pam     60 x 40 RGB   the same pattern
    source.jpg          400 x 300      the RGB pattern at that size, Pillow's libjpeg, quality 80

References:
    fit-48x48.pam, fit-50x20.pam   ImageOps.fit(source-rgb, size)  (cover, centre crop, BICUBIC)
    fit-jpeg-64x64.pam             ImageOps.fit(the full decode of source.jpg, (64, 64))
    blur-2.pam, blur-4.pam         source-rgb.filter(ImageFilter.GaussianBlur(r))
    gaussian-4.pam                 scipy.ndimage.gaussian_filter(source-rgb, sigma=(4, 4, 0),
                                   mode="nearest", truncate=4) in float, rounded: a true Gaussian
    rotate-90.pam, rotate-180.pam, rotate-270.pam   source-rgba.transpose(ROTATE_270 / 180 /
                                   ROTATE_90): 90 degrees clockwise, 180, 90 counter-clockwise
    flip-h.pam, flip-v.pam         ImageOps.mirror, ImageOps.flip of source-rgba
    crop-40x30+10+5.pam            source-rgb.crop((10, 5, 50, 35))
    flatten-white.pam              source-rgba pasted with its alpha as mask onto white RGB
    upscale-90x60.pam              source-small.resize((90, 60), BICUBIC)

Usage: scripts/make-processing-fixtures.py [FIXTURES_DIR]   (needs numpy, scipy and Pillow)
"""

import os
import sys

import numpy as np
from PIL import Image, ImageFilter, ImageOps
from scipy import ndimage

sys.path.insert(0, os.path.dirname(__file__))
from fixturelib import write_pam  # noqa: E402


def pattern(width, height, alpha):
    """Integer-only test pattern: detail at every scale, so resampling differences show."""
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)

    def tri(v, period):
        return np.abs(v % period - period // 2)

    h = (x * 73856093) ^ (y * 19349663)
    h ^= h >> 16
    h = (h * 0x045D9F3B) & 0xFFFFFFFF
    h ^= h >> 16
    noise = h % 17 - 8
    r = 30 + 150 * x // width + tri(3 * x + 2 * y, 24)
    g = 30 + 150 * y // height + tri(2 * x + 5 * y, 16)
    b = 200 - 150 * (x + y) // (width + height) + tri(x + 5 * y, 10)
    cx, cy, radius = width * 3 // 10, height * 4 // 10, min(width, height) // 5
    disc = (x - cx) ** 2 + (y - cy) ** 2 <= radius * radius
    r, g, b = np.where(disc, 230, r), np.where(disc, 200, g), np.where(disc, 40, b)
    board = (x >= width * 6 // 10) & (x < width * 9 // 10) & (y >= height // 2) & (y < height * 8 // 10)
    checker = ((x // 2 + y // 2) % 2) * 200 + 20
    channels = [np.clip(np.where(board, checker, v) + noise, 0, 255) for v in (r, g, b)]
    if alpha:
        a = np.clip(255 * (x - width // 5) // (width // 2), 0, 255)
        channels.append(np.where(disc, 160, a))
    return np.stack(channels, axis=-1).astype(np.uint8)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "Fixtures")
    folder = os.path.join(root, "processing")
    os.makedirs(folder, exist_ok=True)

    def out(name, image):
        write_pam(os.path.join(folder, name), np.asarray(image))

    rgb = Image.fromarray(pattern(120, 80, False), "RGB")
    rgba = Image.fromarray(pattern(60, 40, True), "RGBA")
    out("source-rgb.pam", rgb)
    small = Image.fromarray(pattern(60, 40, False), "RGB")
    out("source-rgba.pam", rgba)
    out("source-small.pam", small)
    Image.fromarray(pattern(400, 300, False), "RGB").save(os.path.join(folder, "source.jpg"), quality=80)

    out("fit-48x48.pam", ImageOps.fit(rgb, (48, 48), method=Image.Resampling.BICUBIC))
    out("fit-50x20.pam", ImageOps.fit(rgb, (50, 20), method=Image.Resampling.BICUBIC))
    with Image.open(os.path.join(folder, "source.jpg")) as jpeg:
        out("fit-jpeg-64x64.pam", ImageOps.fit(jpeg.convert("RGB"), (64, 64), method=Image.Resampling.BICUBIC))

    out("blur-2.pam", rgb.filter(ImageFilter.GaussianBlur(2)))
    out("blur-4.pam", rgb.filter(ImageFilter.GaussianBlur(4)))
    gaussian = ndimage.gaussian_filter(np.asarray(rgb).astype(np.float64), sigma=(4, 4, 0), mode="nearest", truncate=4)
    out("gaussian-4.pam", np.clip(np.round(gaussian), 0, 255).astype(np.uint8))

    out("rotate-90.pam", rgba.transpose(Image.Transpose.ROTATE_270))
    out("rotate-180.pam", rgba.transpose(Image.Transpose.ROTATE_180))
    out("rotate-270.pam", rgba.transpose(Image.Transpose.ROTATE_90))
    out("flip-h.pam", ImageOps.mirror(rgba))
    out("flip-v.pam", ImageOps.flip(rgba))
    out("crop-40x30+10+5.pam", rgb.crop((10, 5, 50, 35)))

    white = Image.new("RGB", rgba.size, (255, 255, 255))
    white.paste(rgba.convert("RGB"), mask=rgba.getchannel("A"))
    out("flatten-white.pam", white)

    out("upscale-90x60.pam", small.resize((90, 60), Image.Resampling.BICUBIC))


if __name__ == "__main__":
    main()

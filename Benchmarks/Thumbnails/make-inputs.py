#!/usr/bin/env python3
"""Make the thumbnail benchmark's input images, deterministically (numpy + Pillow).

    make-inputs.py OUTDIR [--formats jpeg,png]

The content is photo-like so that the codecs behave as they do on photographs: per image, a
luminance field and two chroma fields, each a sum of smoothly (bicubic) upscaled random-noise
octaves down to 2-pixel cells, amplitude x0.72 per octave (~f^-0.5: flatter than the ~f^-1 of
whole photographs, standing in for the fine texture, foliage or fabric, that a plain f^-1 field
lacks); then 400 soft-edged shapes (ellipses, rectangles, polygons) with their own colour and the
same texture; then Gaussian noise (sigma 3 levels) as a sensor adds. The seed is fixed per image.
Sizes made here: 12 MP JPEG about 2 MB (1.3 bits/pixel), 12 MP PNG about 19 MB.

JPEG files are written by `cjpeg -quality 90 -sample 2x2,1x1,1x1` (libjpeg-turbo-progs: baseline,
4:2:0, standard Huffman tables) from a PPM; when cjpeg is missing, by Pillow with the same settings
(quality=90, subsampling=4:2:0, not progressive, not optimized). The manifest.json written beside
the files says which. PNG files (8-bit RGB) are written by Pillow (zlib level 6, Pillow's adaptive
row filters). Files that exist and were made by this same script text are kept.

Add a format by adding a line to INPUTS (and a writer to WRITERS when it needs one); measure.py
asks only for the formats that `nuke formats` can decode.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

# file name, width, height, seed, format (a key of WRITERS). The two 12 MP files share a seed: the
# same picture as JPEG and as PNG.
INPUTS = [
    ("photo-12mp.jpg", 4256, 2832, 12, "jpeg"),
    ("photo-12mp.png", 4256, 2832, 12, "png"),
    ("photo-24mp.png", 6000, 4000, 24, "png"),
    ("photo-12mp.webp", 4256, 2832, 12, "webp"),
    ("photo-12mp.avif", 4256, 2832, 12, "avif"),
    ("photo-12mp.heic", 4256, 2832, 12, "heic"),
    ("photo-12mp.gif", 4256, 2832, 12, "gif"),
    ("photo-12mp.tif", 4256, 2832, 12, "tiff"),
]
DEFAULT_FORMATS = ("jpeg", "png")


def octave_field(rng, width, height, finest_cell=2.0):
    """A float32 field, std about 1: octave k has amplitude 0.72^k (a 1/f^0.5 spectrum)."""
    acc = np.zeros((height, width), dtype=np.float32)
    cells = 3.0
    amplitude = 1.0
    while width / cells >= finest_cell:
        nx = int(np.ceil(cells * width / min(width, height)))
        ny = int(np.ceil(cells * height / min(width, height)))
        noise = rng.standard_normal((ny + 3, nx + 3)).astype(np.float32)
        layer = Image.fromarray(noise, mode="F").resize(
            (width, height), Image.Resampling.BICUBIC, box=(1, 1, nx + 1, ny + 1)
        )
        acc += amplitude * np.asarray(layer, dtype=np.float32)
        cells *= 2
        amplitude *= 0.72
    acc -= acc.mean()
    acc /= acc.std() + 1e-6
    return acc


def photo(width, height, seed):
    """An RGB uint8 array of photo-like content, the same for the same arguments."""
    rng = np.random.default_rng(seed)
    lum = octave_field(rng, width, height)
    chroma_a = octave_field(rng, width, height)
    chroma_b = octave_field(rng, width, height)
    texture = np.empty((height, width, 3), dtype=np.float32)
    texture[..., 0] = lum + 0.35 * chroma_a
    texture[..., 1] = lum - 0.20 * chroma_a + 0.15 * chroma_b
    texture[..., 2] = lum - 0.35 * chroma_b
    del chroma_a, chroma_b
    base = 110.0 + 42.0 * texture

    # Shapes: flat-coloured objects with soft edges (blurred premultiplied, so no dark fringes),
    # textured like the rest.
    overlay = Image.new("RGBA", (width, height))
    draw = ImageDraw.Draw(overlay)
    scale = min(width, height)
    for _ in range(400):
        kind = rng.integers(0, 3)
        cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        r = scale * rng.uniform(0.004, 0.12)
        fill = tuple(int(v) for v in rng.integers(20, 236, size=3)) + (int(rng.integers(150, 256)),)
        if kind == 0:
            draw.ellipse([cx - r, cy - r * rng.uniform(0.4, 1.0), cx + r, cy + r * rng.uniform(0.4, 1.0)], fill=fill)
        elif kind == 1:
            draw.rectangle([cx - r, cy - r * rng.uniform(0.2, 1.0), cx + r * rng.uniform(0.3, 1.0), cy + r], fill=fill)
        else:
            n = int(rng.integers(3, 7))
            angles = np.sort(rng.uniform(0, 2 * np.pi, size=n))
            radii = r * rng.uniform(0.4, 1.0, size=n)
            draw.polygon([(float(cx + a * np.cos(t)), float(cy + a * np.sin(t))) for t, a in zip(angles, radii)], fill=fill)
    del draw
    overlay = np.asarray(overlay.convert("RGBa").filter(ImageFilter.GaussianBlur(1.0)), dtype=np.float32)
    alpha = overlay[..., 3:] / 255.0
    out = base * (1.0 - alpha) + overlay[..., :3] + alpha * (24.0 * texture)
    del base, overlay, alpha, texture
    out += rng.normal(0.0, 3.0, size=out.shape).astype(np.float32)
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def write_jpeg(image, path):
    cjpeg = shutil.which("cjpeg")
    if cjpeg:
        with tempfile.NamedTemporaryFile(suffix=".ppm", dir=os.path.dirname(path)) as ppm:
            image.save(ppm.name, format="PPM")
            subprocess.run(
                [cjpeg, "-quality", "90", "-sample", "2x2,1x1,1x1", "-outfile", path, ppm.name], check=True
            )
        version = subprocess.run([cjpeg, "-version"], capture_output=True, text=True)
        return "cjpeg -quality 90 -sample 2x2,1x1,1x1 (%s)" % (version.stderr or version.stdout).strip()
    image.save(path, format="JPEG", quality=90, subsampling=2, progressive=False, optimize=False)
    return "Pillow %s quality=90 subsampling=4:2:0 baseline (cjpeg not found)" % Image.__version__


def write_png(image, path):
    image.save(path, format="PNG", compress_level=6)
    return "Pillow %s PNG compress_level=6" % Image.__version__


def write_pillow(fmt, **params):
    def write(image, path):
        image.save(path, format=fmt, **params)
        return "Pillow %s %s %s" % (Image.__version__, fmt, params)
    return write


def write_heic(image, path):
    encoder = shutil.which("heif-enc")
    if not encoder:
        raise RuntimeError("heif-enc (libheif-examples) not found")
    with tempfile.NamedTemporaryFile(suffix=".png", dir=os.path.dirname(path)) as png:
        image.save(png.name, format="PNG", compress_level=1)
        subprocess.run([encoder, "-q", "90", "-o", path, png.name], check=True, capture_output=True)
    return "heif-enc -q 90"


WRITERS = {
    "tiff": write_pillow("TIFF", compression="tiff_lzw"),
    "jpeg": write_jpeg,
    "png": write_png,
    "webp": write_pillow("WEBP", quality=90),
    "avif": write_pillow("AVIF", quality=90),
    "gif": lambda image, path: write_pillow("GIF")(image.quantize(256, dither=Image.Dither.FLOYDSTEINBERG), path),
    "heic": write_heic,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--formats", default=",".join(DEFAULT_FORMATS), help="comma-separated keys of WRITERS")
    args = parser.parse_args()
    formats = {f.strip().lower() for f in args.formats.split(",") if f.strip()}
    os.makedirs(args.outdir, exist_ok=True)

    with open(__file__, "rb") as f:
        script_hash = hashlib.sha256(f.read()).hexdigest()[:16]
    manifest_path = os.path.join(args.outdir, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        manifest = {}

    pictures = {}
    for name, width, height, seed, fmt in INPUTS:
        if fmt not in formats:
            continue
        path = os.path.join(args.outdir, name)
        entry = manifest.get(name, {})
        if os.path.exists(path) and entry.get("script") == script_hash:
            continue
        key = (width, height, seed)
        if key not in pictures:
            print("make-inputs: drawing %dx%d seed %d" % key, file=sys.stderr)
            pictures.clear()  # keep one picture in memory at a time
            pictures[key] = Image.fromarray(photo(width, height, seed), mode="RGB")
        try:
            how = WRITERS[fmt](pictures[key], path + ".tmp")
            os.replace(path + ".tmp", path)
        except Exception as error:  # a missing encoder leaves that one input out, not the others
            print("make-inputs: %s not made: %s" % (name, error), file=sys.stderr)
            if os.path.exists(path + ".tmp"):
                os.remove(path + ".tmp")
            continue
        manifest[name] = {"script": script_hash, "width": width, "height": height, "seed": seed, "how": how}
        print("make-inputs: wrote %s (%s)" % (path, how), file=sys.stderr)
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()

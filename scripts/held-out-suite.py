#!/usr/bin/env python3
"""Decodes every TIFF in a directory with `nuke convert` and compares it with libtiff's own
tiff2rgba (libtiff-tools) and with Pillow: a held-out suite check, such as libtiff's test images
(test/images in libtiff's source).

    python3 scripts/tiff-suite.py .build/debug/nuke DIR [--tolerance 2]

For each file: nuke's PAM (stored orientation, stored colours: `--orientation keep --color
keep`) against tiff2rgba's RGBA (`-c none`, read by Pillow), compared in RGBA after expanding
gray and scaling 16-bit samples to 8 bits; alpha is compared premultiplied (libtiff's raster is). Prints one
line per file (match, max difference, or the error) and a summary. Exit status 0 when every file
that a reference decodes matches within the tolerance.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixturelib import read_pam  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("nuke")
parser.add_argument("directory")
parser.add_argument("--tolerance", type=int, default=2)
parser.add_argument("--reference", choices=["tiff2rgba", "pillow"], default="tiff2rgba")
parser.add_argument("--extensions", default="tif,tiff", help="comma-separated, the files to check")
parser.add_argument("--reference-images", help="a folder of the suite's own reference PNGs (bmpsuite's html/): NAME.png, when present, is the reference for NAME.*")
args = parser.parse_args()
extensions = tuple("." + e.strip().lower() for e in args.extensions.split(","))


def rgba(pixels):
    if pixels.dtype == np.uint16:
        pixels = ((pixels.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    channels = pixels.shape[2]
    if channels == 1:
        return np.dstack([pixels, pixels, pixels, np.full(pixels.shape[:2], 255, np.uint8)])
    if channels == 2:
        return np.dstack([pixels[:, :, :1]] * 3 + [pixels[:, :, 1:]])
    if channels == 3:
        return np.dstack([pixels, np.full(pixels.shape[:2], 255, np.uint8)])
    return pixels


def premultiplied(pixels):
    alpha = pixels[:, :, 3:].astype(np.uint32)
    color = (pixels[:, :, :3].astype(np.uint32) * alpha + 127) // 255
    return np.dstack([color.astype(np.uint8), pixels[:, :, 3:]])


counts = {"match": 0, "differ": 0, "nuke error": 0, "no reference": 0}
with tempfile.TemporaryDirectory() as tmp:
    for name in sorted(os.listdir(args.directory)):
        if not name.lower().endswith(extensions):
            continue
        path = os.path.join(args.directory, name)
        ours = os.path.join(tmp, "ours.pam")
        ref = os.path.join(tmp, "ref.tif")
        reference = None
        stem = os.path.splitext(name)[0]
        published = os.path.join(args.reference_images, stem + ".png") if args.reference_images else None
        try:
            if published and os.path.exists(published):
                reference = np.array(Image.open(published).convert("RGBA"))
            elif args.reference == "pillow":
                reference = np.array(Image.open(path).convert("RGBA"))
            elif subprocess.run(["tiff2rgba", "-c", "none", path, ref], capture_output=True).returncode == 0:
                reference = np.array(Image.open(ref).convert("RGBA"))
        except Exception:
            reference = None
        run = subprocess.run([args.nuke, "convert", path, ours, "--orientation", "keep", "--color", "keep"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            message = (run.stderr.strip().splitlines() or ["?"])[-1]
            counts["nuke error"] += 1
            print("%-50s nuke error%s: %s" % (name, "" if reference is None else " (%s decodes it)" % args.reference, message[:150]))
            continue
        if reference is None:
            counts["no reference"] += 1
            print("%-50s decoded; %s cannot" % (name, args.reference))
            continue
        mine = rgba(read_pam(ours))
        if mine.shape != reference.shape:
            counts["differ"] += 1
            print("%-50s size %s, %s %s" % (name, mine.shape, args.reference, reference.shape))
            continue
        # tiff2rgba writes libtiff's premultiplied raster as associated alpha, which Pillow
        # un-premultiplies: both sides are compared premultiplied (again).
        difference = np.abs(premultiplied(mine).astype(int) - premultiplied(reference).astype(int)).max()
        if difference <= args.tolerance:
            counts["match"] += 1
            print("%-50s match (max difference %d)" % (name, difference))
        else:
            counts["differ"] += 1
            print("%-50s DIFFERS: max difference %d" % (name, difference))
print(", ".join("%s %d" % item for item in counts.items()))
sys.exit(1 if counts["differ"] else 0)

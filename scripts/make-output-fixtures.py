#!/usr/bin/env python3
"""Fixtures for the decode's output stage and the encoders' metadata policy (Fixtures/output).

    python3 scripts/make-output-fixtures.py [Fixtures]

Made from Fixtures/jpeg (run make-fixtures.sh first) with independent tools:
- upright-N.pam (N = 1..8): Fixtures/jpeg/baseline-420.pam (djpeg's decode of baseline-420.jpg, the
  pixels of every exif-orientation-N-*.jpg) turned upright by Pillow's ImageOps.exif_transpose
  with EXIF Orientation N.
- location.jpg: baseline-420.jpg with EXIF written by exiftool: Orientation 6, Make, a camera serial
  number, GPS latitude and longitude; and XMP with the same GPS position. Its upright pixels are
  upright-6.pam.
- alpha.pam: a 37x23 RGBA gradient whose alpha runs from 0 to 255 (numpy).
- alpha-on-white.pam, alpha-on-ff8000.pam: alpha.pam composited by Pillow's Image.alpha_composite
  onto opaque white and onto #ff8000, alpha dropped.
Installs exiftool (libimage-exiftool-perl) when missing.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image, ImageOps

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixturelib import read_pam, write_pam  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixtures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Fixtures")
out = os.path.join(fixtures, "output")
os.makedirs(out, exist_ok=True)

if shutil.which("exiftool") is None:
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "install", "-y", "libimage-exiftool-perl"], check=True)


stored = read_pam(os.path.join(fixtures, "jpeg", "baseline-420.pam"))
for orientation in range(1, 9):
    image = Image.fromarray(stored, "RGB")
    exif = Image.Exif()
    exif[0x0112] = orientation
    image.info["exif"] = exif.tobytes()
    image.getexif()[0x0112] = orientation
    upright = ImageOps.exif_transpose(image)
    write_pam(os.path.join(out, "upright-%d.pam" % orientation), np.asarray(upright))

location = os.path.join(out, "location.jpg")
if os.path.exists(location):
    os.remove(location)
subprocess.run([
    "exiftool", "-q", "-o", location,
    "-EXIF:Orientation#=6", "-EXIF:Make=NukeTestCamera", "-EXIF:SerialNumber=SN-0451-7731",
    "-EXIF:GPSLatitude=48.858370", "-EXIF:GPSLatitudeRef=N", "-EXIF:GPSLongitude=2.294481", "-EXIF:GPSLongitudeRef=E",
    "-XMP-exif:GPSLatitude=48.858370N", "-XMP-exif:GPSLongitude=2.294481E",
    os.path.join(fixtures, "jpeg", "baseline-420.jpg"),
], check=True)

h, w = 23, 37
y, x = np.mgrid[0:h, 0:w]
rgba = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), 255 - x * 255 // (w - 1), (x + y) * 255 // (w + h - 2)], axis=-1).astype(np.uint8)
write_pam(os.path.join(out, "alpha.pam"), rgba)
for name, colour in (("white", (255, 255, 255)), ("ff8000", (255, 128, 0))):
    background = Image.new("RGBA", (w, h), colour + (255,))
    flat = Image.alpha_composite(background, Image.fromarray(rgba, "RGBA")).convert("RGB")
    write_pam(os.path.join(out, "alpha-on-%s.pam" % name), np.asarray(flat))
print("wrote", sorted(os.listdir(out)))

#!/usr/bin/env python3
"""A HEIC turned by irot with an EXIF Orientation 6 beside it, as phones write (Fixtures/output).

    python3 scripts/make-heif-orientation-fixture.py [Fixtures]

irot-6.heic: the stored pixels of Fixtures/output/upright-1.pam (37x23) encoded by libheif's own
encoder (x265, quality 90) with heif_encoding_options.image_orientation = 6, so libheif writes the
irot/imir boxes; then an EXIF block whose Orientation is 6, added with
heif_context_add_exif_metadata. The writer is fixturelib.py's small C program, compiled here
against libheif (libheif-dev). irot-6.pam is heif-convert's decode (libheif-examples), which applies irot: 23x37.
Run after make-output-fixtures.py.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixturelib import read_pam, write_heif, write_pam  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixtures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Fixtures")
out = os.path.join(fixtures, "output")

stored = read_pam(os.path.join(out, "upright-1.pam"))
heic = os.path.join(out, "irot-6.heic")
write_heif(stored, heic, orientation=6)
with tempfile.TemporaryDirectory() as tmp:
    png = os.path.join(tmp, "decoded.png")
    subprocess.run(["heif-convert", heic, png], check=True, stdout=subprocess.DEVNULL)
    decoded = np.asarray(Image.open(png).convert("RGB"))
    assert decoded.shape[:2] == (stored.shape[1], stored.shape[0]), decoded.shape
    write_pam(os.path.join(out, "irot-6.pam"), decoded)
print("wrote irot-6.heic", os.path.getsize(heic), "bytes and irot-6.pam", decoded.shape)

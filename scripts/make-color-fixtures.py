#!/usr/bin/env python3
"""Colour-management fixtures and their references (Fixtures/color), for NukeColor.

    python3 scripts/make-color-fixtures.py [Fixtures]

Run after make-fixtures.py (it starts from Fixtures/jpeg). Every reference is lcms2's own
`transicc` (liblcms2-utils) applied to each pixel of an independent decode, perceptual intent,
rounded and clamped to 8 bits; the decodes are djpeg's (Fixtures/jpeg/*.pam), Pillow's CMYK
samples and heif-convert's (libheif-examples).
- display-p3.icc: a Display P3 profile (D65, P3 primaries, sRGB's tone curve) written by lcms2
  (a small C program compiled here against liblcms2-dev).
- p3.jpg / p3-srgb.pam: baseline-420.jpg with display-p3.icc embedded by exiftool; its pixels
  (djpeg) from Display P3 to sRGB.
- adobe-rgb.jpg / adobe-rgb-srgb.pam: the same with Ghostscript's a98.icc (Adobe RGB 1998,
  Debian's libgs-common).
- cmyk-adobe-srgb.pam: Fixtures/jpeg/cmyk-adobe.jpg (Adobe CMYK, no profile) through
  Ghostscript's default_cmyk.icc to sRGB, from Pillow's CMYK samples.
- cmyk-ps.jpg / cmyk-ps-srgb.pam: the same file with Ghostscript's ps_cmyk.icc embedded by
  exiftool, through that profile.
- nclx-p3.avif / nclx-p3-srgb.pam: a 37x23 AVIF whose colour is nclx only (primaries 12, Display
  P3; transfer 13, sRGB; matrix 6, full range), written by libheif's encoder (aom) through fixturelib.py's
  small C program (heif-enc 1.15 writes "unspecified" whatever its --colour_primaries says);
  heif-convert's RGB, from Display P3 to sRGB.
Installs liblcms2-utils, liblcms2-dev, libgs-common and libimage-exiftool-perl when missing.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixturelib import read_pam, transicc, write_heif, write_pam  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixtures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Fixtures")
out = os.path.join(fixtures, "color")
os.makedirs(out, exist_ok=True)
GS = "/usr/share/color/icc/ghostscript"

missing = [package for tool, package in (("transicc", "liblcms2-utils"), ("exiftool", "libimage-exiftool-perl"),
                                         ("heif-enc", "libheif-examples")) if shutil.which(tool) is None]
if not os.path.exists("/usr/include/lcms2.h"):
    missing.append("liblcms2-dev")
if not os.path.exists(os.path.join(GS, "default_cmyk.icc")):
    missing.append("libgs-common")
if missing:
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "install", "-y"] + missing, check=True)

WRITER = r"""
#include <lcms2.h>
int main(int argc, char **argv) {
    cmsCIExyY white = {0.3127, 0.3290, 1.0};
    cmsCIExyYTRIPLE primaries = {{0.680, 0.320, 1.0}, {0.265, 0.690, 1.0}, {0.150, 0.060, 1.0}};
    cmsFloat64Number parameters[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
    cmsToneCurve *curve = cmsBuildParametricToneCurve(NULL, 4, parameters);
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsMLU *description = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(description, "en", "US", "Display P3 (NukeCodecs fixture)");
    cmsWriteTag(profile, cmsSigProfileDescriptionTag, description);
    return cmsSaveProfileToFile(profile, argv[1]) ? 0 : 1;
}
"""

with tempfile.TemporaryDirectory() as tmp:
    source = os.path.join(tmp, "writer.c")
    open(source, "w").write(WRITER)
    writer = os.path.join(tmp, "writer")
    subprocess.run(["cc", "-O1", "-o", writer, source, "-llcms2"], check=True)
    p3 = os.path.join(out, "display-p3.icc")
    subprocess.run([writer, p3], check=True)
    # lcms2 stamps the creation time into the header (bytes 24-35): a fixed one keeps the
    # fixture's bytes the same from run to run (the profile ID, bytes 84-99, is left zero).
    profile = bytearray(open(p3, "rb").read())
    profile[24:36] = bytes([0x07, 0xEA, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0])   # 2026-01-01 00:00:00
    open(p3, "wb").write(bytes(profile))

    base = os.path.join(fixtures, "jpeg", "baseline-420.jpg")
    stored = read_pam(os.path.join(fixtures, "jpeg", "baseline-420.pam"))
    for name, profile in (("p3", p3), ("adobe-rgb", os.path.join(GS, "a98.icc"))):
        target = os.path.join(out, name + ".jpg")
        if os.path.exists(target):
            os.remove(target)
        subprocess.run(["exiftool", "-q", "-o", target, "-ICC_Profile<=" + profile, base], check=True)
        write_pam(os.path.join(out, name + "-srgb.pam"), transicc(stored, profile, 1.0))

    cmyk = np.asarray(Image.open(os.path.join(fixtures, "jpeg", "cmyk-adobe.jpg")).convert("CMYK"))
    write_pam(os.path.join(out, "cmyk-adobe-srgb.pam"), transicc(cmyk, os.path.join(GS, "default_cmyk.icc"), 100.0 / 255.0))
    # The same CMYK file with a profile of its own (Ghostscript's ps_cmyk.icc), which wins.
    tagged = os.path.join(out, "cmyk-ps.jpg")
    if os.path.exists(tagged):
        os.remove(tagged)
    subprocess.run(["exiftool", "-q", "-o", tagged, "-ICC_Profile<=" + os.path.join(GS, "ps_cmyk.icc"),
                    os.path.join(fixtures, "jpeg", "cmyk-adobe.jpg")], check=True)
    write_pam(os.path.join(out, "cmyk-ps-srgb.pam"), transicc(cmyk, os.path.join(GS, "ps_cmyk.icc"), 100.0 / 255.0))

    avif = os.path.join(out, "nclx-p3.avif")
    write_heif(stored, avif, av1=True, nclx=(12, 13, 6))
    decoded = os.path.join(tmp, "decoded.png")
    subprocess.run(["heif-convert", avif, decoded], check=True, stdout=subprocess.DEVNULL)
    rgb = np.asarray(Image.open(decoded).convert("RGB"))
    write_pam(os.path.join(out, "nclx-p3-srgb.pam"), transicc(rgb, p3, 1.0))
print("wrote", sorted(os.listdir(out)))

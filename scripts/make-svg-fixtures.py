#!/usr/bin/env python3
"""Generates NukeSVG's test fixtures (Fixtures/svg) with reference renderings.

Run through scripts/make-fixtures.sh (or directly: make-svg-fixtures.py FIXTURES_DIR). The SVGs
are written by hand below: shapes, gradients, transforms, text, opacity with semi-transparent
edges, viewBox and preserveAspectRatio cases, a document with only a viewBox, one with neither
size nor viewBox (300 × 150, as browsers), physical units, an SVGZ, and documents that reference
other files (`file://`, absolute and relative `href`s, CSS `@import`), which must render without
them.

References: `rsvg-convert` (Debian's librsvg2-bin) at the size NukeSVG renders (`-w W -h H`), PNG
written as PAM (RGBA, straight alpha). A second reference at a larger size checks rendering to a
target size ("NAME.at-W.pam": twice the size, or half for documents over 100 pixels wide).

manifest.json follows the conformance kit's schema (NukeConformance FixtureManifest), plus
"intrinsic" ([w, h]) and "viewbox" per file, and "larger" ([w, h, reference]).
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile

from PIL import Image

DOCUMENTS = {
    "shapes.svg": ("""<?xml version="1.0" encoding="UTF-8"?>
<!-- shapes with strokes and fills -->
<svg xmlns="http://www.w3.org/2000/svg" width="64" height="48">
  <rect x="4" y="4" width="30" height="20" fill="#c03" stroke="#003" stroke-width="2"/>
  <circle cx="46" cy="16" r="12" fill="none" stroke="#06c" stroke-width="3"/>
  <path d="M4 44 L30 28 L56 44 Z" fill="#2a2"/>
  <ellipse cx="48" cy="38" rx="10" ry="5" fill="#fc0"/>
</svg>
""", (64, 48), None),
    "gradients.svg": ("""<svg xmlns="http://www.w3.org/2000/svg" width="60" height="40">
  <defs>
    <linearGradient id="l" x1="0" x2="1"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#00f" stop-opacity="0.2"/></linearGradient>
    <radialGradient id="r"><stop offset="0" stop-color="#ff0"/><stop offset="1" stop-color="#0a0" stop-opacity="0"/></radialGradient>
  </defs>
  <rect width="60" height="20" fill="url(#l)"/>
  <circle cx="30" cy="30" r="10" fill="url(#r)"/>
</svg>
""", (60, 40), None),
    "transforms-opacity.svg": ("""<svg xmlns="http://www.w3.org/2000/svg" width="50" height="50" viewBox="0 0 100 100">
  <g transform="translate(50 50) rotate(30)" opacity="0.6">
    <rect x="-30" y="-20" width="60" height="40" fill="#08f"/>
  </g>
  <circle cx="30" cy="70" r="20" fill="#f80" fill-opacity="0.5"/>
  <line x1="0" y1="0" x2="100" y2="100" stroke="#000" stroke-width="1.3" stroke-opacity="0.7"/>
</svg>
""", (50, 50), [0, 0, 100, 100]),
    "text.svg": ("""<svg xmlns="http://www.w3.org/2000/svg" width="80" height="30">
  <text x="2" y="20" font-family="sans-serif" font-size="16" fill="#222">Nuke</text>
  <text x="48" y="26" font-family="serif" font-size="10" font-style="italic" fill="#a00">svg</text>
</svg>
""", (80, 30), None),
    "viewbox-only.svg": ("""<svg xmlns="http://www.w3.org/2000/svg" viewBox="10 10 40 20">
  <rect x="10" y="10" width="40" height="20" fill="#eee"/>
  <circle cx="30" cy="20" r="8" fill="#639"/>
</svg>
""", (40, 20), [10, 10, 40, 20]),
    "aspect-meet.svg": ("""<svg xmlns="http://www.w3.org/2000/svg" width="60" height="30" viewBox="0 0 10 10" preserveAspectRatio="xMidYMid meet">
  <rect width="10" height="10" fill="#0c9"/><circle cx="5" cy="5" r="4" fill="#fff"/>
</svg>
""", (60, 30), [0, 0, 10, 10]),
    "aspect-slice.svg": ("""<svg xmlns="http://www.w3.org/2000/svg" width="30" height="60" viewBox="0 0 10 10" preserveAspectRatio="xMinYMin slice">
  <rect width="10" height="10" fill="#c90"/><rect width="5" height="5" fill="#036"/>
</svg>
""", (30, 60), [0, 0, 10, 10]),
    "no-size.svg": ("""<svg xmlns="http://www.w3.org/2000/svg"><rect x="10" y="10" width="100" height="50" fill="#933"/></svg>
""", (300, 150), None),
    "physical-units.svg": ("""<svg xmlns="http://www.w3.org/2000/svg" width="0.5in" height="10mm"><rect width="100%" height="100%" fill="#369"/></svg>
""", (48, 38), None),
    "references.svg": ("""<?xml version="1.0"?>
<!DOCTYPE svg [ <!ENTITY ignored "x"> ]>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="40">
  <style>@import url("file:///etc/nuke-style.css"); @import url("style.css");</style>
  <image href="file:///etc/hostname" width="20" height="20"/>
  <image xlink:href="/usr/share/pixmaps/debian-logo.png" x="20" width="20" height="20"/>
  <image href="../secret.png" y="20" width="20" height="20"/>
  <use href="other.svg#shape"/>
  <rect x="20" y="20" width="20" height="20" fill="#0a0"/>
</svg>
""", (40, 40), None),
}


def run(args):
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.exit("make-svg-fixtures: %s failed: %s" % (" ".join(args), proc.stderr.decode(errors="replace")))
    return proc.stdout


def save_pam(im, path):
    im = im.convert("RGBA")
    with open(path, "wb") as f:
        f.write(b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" % im.size)
        f.write(im.tobytes())


def render(svg_path, width, height, out_pam, tmp):
    png = os.path.join(tmp, os.path.basename(out_pam) + ".png")
    if os.path.basename(svg_path) == "no-size.svg":
        # rsvg-convert sizes a document without width, height or viewBox by its drawing's extent;
        # browsers (and NukeSVG) give it 300 x 150 user units. Render the equivalent document.
        with open(svg_path) as f:
            text = f.read().replace('<svg xmlns="http://www.w3.org/2000/svg">',
                                    '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150">')
        svg_path = os.path.join(tmp, "no-size-sized.svg")
        with open(svg_path, "w") as f:
            f.write(text)
    run(["rsvg-convert", "-w", str(width), "-h", str(height), "-f", "png", "-o", png, svg_path])
    save_pam(Image.open(png), out_pam)


def main():
    out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "Fixtures", "svg")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    tmp = tempfile.mkdtemp()
    fixtures = []
    for name, (text, (width, height), viewbox) in sorted(DOCUMENTS.items()):
        path = os.path.join(out, name)
        with open(path, "w") as f:
            f.write(text)
        stem = name[:-4]
        render(path, width, height, os.path.join(out, stem + ".pam"), tmp)
        # A second size: twice as large, or half as large for the big ones (keeps the files small).
        larger = (width * 2, height * 2) if width * 2 <= 200 else (width // 2, height // 2)
        render(path, larger[0], larger[1], os.path.join(out, "%s.at-%d.pam" % (stem, larger[0])), tmp)
        entry = {"file": name, "kind": "valid", "reference": stem + ".pam", "tolerance": 1,
                 "width": width, "height": height, "lossless": False,
                 "made_with": "written by hand in scripts/make-svg-fixtures.py",
                 "notes": "reference: rsvg-convert -w %d -h %d" % (width, height),
                 "intrinsic": [width, height], "viewbox": viewbox,
                 "larger": [larger[0], larger[1], "%s.at-%d.pam" % (stem, larger[0])]}
        fixtures.append(entry)

    # SVGZ: shapes.svg compressed.
    with open(os.path.join(out, "shapes.svg"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "shapes.svgz"), "wb") as f:
        f.write(gzip.compress(data, mtime=0))
    fixtures.append({"file": "shapes.svgz", "kind": "valid", "reference": "shapes.pam", "tolerance": 1,
                     "width": 64, "height": 48, "lossless": False, "made_with": "gzip of shapes.svg",
                     "notes": "reference: rsvg-convert of shapes.svg", "intrinsic": [64, 48], "viewbox": None})

    # Invalid: not well-formed XML; an svg root that never closes.
    with open(os.path.join(out, "malformed.svg"), "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"></svg>\n')
    fixtures.append({"file": "malformed.svg", "kind": "invalid", "expected_error": "corrupt",
                     "made_with": "a rect element that is never closed"})
    with open(os.path.join(out, "truncated.svg"), "w") as f:
        f.write(DOCUMENTS["shapes.svg"][0][:200])
    fixtures.append({"file": "truncated.svg", "kind": "invalid", "expected_error": "corrupt",
                     "made_with": "the first 200 bytes of shapes.svg"})

    fixtures.sort(key=lambda f: f["file"])
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"format": "svg", "fixtures": fixtures}, f, indent=2)
        f.write("\n")
    print("make-svg-fixtures: %d fixtures in %s" % (len(fixtures), out))


if __name__ == "__main__":
    main()

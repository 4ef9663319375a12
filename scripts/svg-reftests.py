#!/usr/bin/env python3
"""librsvg's reference renderings: how often NukeSVG and rsvg-convert each match them.

    scripts/svg-reftests.py [FOLDER]     (default: ../shared/corpora/svg, searched for reftests)

For every `NAME.svg` with a `NAME-ref.png` beside it, renders the SVG at its intrinsic size with
`nuke convert --in-process` (built in release) and with `rsvg-convert`, and counts the files whose
every channel is within 2 of the reference, compared as straight RGBA (the colour of a pixel
transparent in both is ignored). Text differs where librsvg's tests use their own fonts.
Needs Pillow and rsvg-convert (`librsvg2-bin`). Prints one line per file that either misses, then
the totals; exits 1 when NukeSVG matches fewer files than rsvg-convert.
"""
import os, subprocess, sys, tempfile
from pathlib import Path
from PIL import Image

root = Path(__file__).resolve().parent.parent
folder = Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared/corpora/svg"
if not folder.exists():
    print(f"svg-reftests: {folder} is absent; nothing to check")
    sys.exit(0)
subprocess.run(["swift", "build", "-c", "release", "--product", "nuke"], cwd=root, check=True, stdout=subprocess.DEVNULL)
nuke = root / ".build/release/nuke"

def within(a, b, tolerance=2):
    if a.size != b.size:
        return False, f"size {a.size} against {b.size}"
    worst = 0
    pixels = (lambda image: image.get_flattened_data()) if hasattr(Image.Image, "get_flattened_data") else (lambda image: image.getdata())
    for p, q in zip(pixels(a), pixels(b)):
        if p[3] == 0 and q[3] == 0:
            continue
        worst = max(worst, max(abs(x - y) for x, y in zip(p, q)))
        if worst > tolerance:
            return False, f"differs by {worst}"
    return True, ""

cases = sorted(p for p in folder.rglob("*.svg") if p.with_name(p.stem + "-ref.png").exists())
ours = theirs = same = 0
with tempfile.TemporaryDirectory() as tmp:
    for svg in cases:
        ref = Image.open(svg.with_name(svg.stem + "-ref.png")).convert("RGBA")
        a, b = Path(tmp, "nuke.png"), Path(tmp, "rsvg.png")
        for f in (a, b):
            f.unlink(missing_ok=True)
        subprocess.run([str(nuke), "convert", "--in-process", str(svg), str(a)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        subprocess.run(["rsvg-convert", "-o", str(b), str(svg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        ok_ours, why_ours = within(Image.open(a).convert("RGBA"), ref) if a.exists() else (False, "no image")
        ok_theirs, why_theirs = within(Image.open(b).convert("RGBA"), ref) if b.exists() else (False, "no image")
        ours += ok_ours
        theirs += ok_theirs
        same += ok_ours == ok_theirs
        if not (ok_ours and ok_theirs):
            print(f"{svg.relative_to(folder)}: NukeSVG {'match' if ok_ours else why_ours}; rsvg-convert {'match' if ok_theirs else why_theirs}")
print(f"{len(cases)} reference renderings: NukeSVG matches {ours}, rsvg-convert matches {theirs} (within 2 per channel); "
      f"the two agree on {same}")
sys.exit(1 if ours < theirs else 0)

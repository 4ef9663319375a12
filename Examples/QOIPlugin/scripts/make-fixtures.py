#!/usr/bin/env python3
"""Makes Fixtures/qoi: QOI files written by Pillow (an encoder independent of NukeQOI), each with
its reference decode as a PNG of the same pixels, plus invalid files, and the manifest.

    python3 -m venv /tmp/qoi-venv && /tmp/qoi-venv/bin/pip install 'Pillow>=11.2'
    /tmp/qoi-venv/bin/python scripts/make-fixtures.py
"""
import json, os, random, struct
from PIL import Image

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "qoi")
os.makedirs(out, exist_ok=True)
rng = random.Random(7)
fixtures = []

def entry(file, kind, **extra):
    item = {"file": file, "kind": kind, "reference": None, "tolerance": 0, "expected_error": None,
            "made_with": "Pillow %s" % Image.__version__ if hasattr(Image, "__version__") else "Pillow"}
    item.update(extra)
    fixtures.append(item)

def valid(name, image, notes):
    image.save(os.path.join(out, name + ".qoi"))
    # The reference: what Pillow reads back from its own file, as PNG.
    Image.open(os.path.join(out, name + ".qoi")).save(os.path.join(out, name + ".png"))
    entry(name + ".qoi", "valid", reference=name + ".png", width=image.width, height=image.height, notes=notes)

# Every operation: a gradient (DIFF and LUMA), flat areas (RUN, longer than 62), repeats (INDEX),
# noise (RGB), changing alpha (RGBA), odd sizes.
gradient = Image.new("RGB", (40, 30))
gradient.putdata([(x * 6, y * 8, (x + y) * 3) for y in range(30) for x in range(40)])
valid("gradient-rgb", gradient, "small steps: DIFF and LUMA")
flat = Image.new("RGB", (97, 5), (200, 30, 60))
flat.paste((10, 220, 90), (0, 2, 97, 3))
valid("runs-rgb", flat, "runs longer than 62 pixels")
noise = Image.new("RGB", (17, 13))
noise.putdata([tuple(rng.randrange(256) for _ in range(3)) for _ in range(17 * 13)])
valid("noise-rgb", noise, "large steps: RGB")
rgba = Image.new("RGBA", (33, 21))
palette = [(255, 0, 0, 255), (0, 255, 0, 128), (0, 0, 255, 0), (250, 250, 250, 64)]
rgba.putdata([palette[(x // 3 + y // 2) % 4] if (x + y) % 5 else (x * 7, y * 11, 40, (x * y) % 256)
              for y in range(21) for x in range(33)])
valid("alpha-rgba", rgba, "alpha changes (RGBA), repeated colours (INDEX)")

def invalid(name, data, error, notes):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    entry(name, "invalid", expected_error=error, notes=notes)

whole = open(os.path.join(out, "noise-rgb.qoi"), "rb").read()
invalid("bad-truncated.qoi", whole[: len(whole) // 2], "incomplete", "half of noise-rgb.qoi")
invalid("bad-zero-width.qoi", b"qoif" + struct.pack(">II", 0, 4) + bytes([3, 0]) + bytes(7) + b"\x01",
        "corrupt", "a 0×4 image")
invalid("bad-channels.qoi", b"qoif" + struct.pack(">II", 2, 2) + bytes([5, 0]) + bytes(7) + b"\x01",
        "corrupt", "5 channels")
invalid("bad-huge-dimensions.qoi", b"qoif" + struct.pack(">II", 100000, 100000) + bytes([4, 0]) + bytes(7) + b"\x01",
        "limit", "100000 × 100000 declared: the core's limits refuse it before pixels are allocated")

with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump({"format": "qoi", "fixtures": fixtures}, f, indent=1)
    f.write("\n")
print("wrote", len(fixtures), "fixtures to", os.path.normpath(out))

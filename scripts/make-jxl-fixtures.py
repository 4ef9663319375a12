#!/usr/bin/env python3
"""Generates NukeJXL's test fixtures (Fixtures/jxl) with reference decodes.

Run through scripts/make-fixtures.sh (or directly: make-jxl-fixtures.py FIXTURES_DIR). The files
are written by libjxl's command-line tools (cjxl and djxl from Debian's `libjxl-tools`, 0.7) from
images Pillow draws:

- still: lossless and lossy RGB, lossless RGBA, grey, 16-bit RGB (from a 16-bit PPM), 32-bit
  float RGB (from a PFM), the container format (--container=1), progressive (-p);
- a JPEG recompressed losslessly (cjxl's default for JPEG input), from a JPEG whose EXIF says
  orientation 6: libjxl carries the orientation into the codestream's header, which is how the
  orientation fixture is made (cjxl 0.7 has no option to set one). The source JPEG is kept
  (recompressed.source.jpg) for the bit-exact reconstruction test;
- an animation: cjxl from a GIF Pillow writes (3 frames, 100/200/300 ms, loop forever);
- invalid: a truncated lossy file, a codestream signature over junk, and a bomb: a codestream
  whose SizeHeader declares 100000 x 100000 pixels (written bit by bit below; the rest of the
  headers are "all default").

References: djxl's decodes (PPM/PGM, or PNG turned into PAM for alpha), 8-bit
(--bits_per_sample=8) and, for the 16-bit and float files, 16-bit (`reference16`). djxl applies
the orientation, NukeJXL reports it: the orientation fixture's reference is turned back to the
stored layout. The animation's frames are the GIF's own (lossless), NAME.N.pam.

manifest.json follows the conformance kit's schema (NukeConformance FixtureManifest) plus, for the
animation, "frames", "loop" and "durations" (seconds), and "source_jpeg" for the recompressed file.
"""

import json
import os
import random
import struct
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixturelib import write_pam  # noqa: E402


def run(args):
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.exit("make-jxl-fixtures: %s failed: %s" % (" ".join(args), proc.stderr.decode(errors="replace")))
    return proc.stdout


def photo(width, height, seed, alpha=False):
    """A smooth image with some noise, like a small photo; optional alpha with soft edges."""
    rng = random.Random(seed)
    y, x = np.mgrid[0:height, 0:width]
    r = (x * 255) // max(width - 1, 1)
    g = (y * 255) // max(height - 1, 1)
    noise = np.array([rng.randint(-20, 20) for _ in range(width * height)]).reshape(height, width)
    b = (128 + 60 * ((x // 7 + y // 5) % 3) + noise) % 256
    channels = [r, g, b]
    if alpha:
        cx, cy = width / 2, height / 2
        d = (x - cx) ** 2 / (cx * cx + 1) + (y - cy) ** 2 / (cy * cy + 1)
        channels.append(np.clip(255 * (1.3 - d), 0, 255).astype(int))
    return np.stack(channels, axis=-1).astype(np.uint8)


def bits(fields):
    """Packs (value, bit count) fields least significant bit first, as JPEG XL's headers are."""
    out, acc, n = bytearray(), 0, 0
    for value, count in fields:
        acc |= value << n
        n += count
    while n > 0:
        out.append(acc & 0xFF)
        acc >>= 8
        n -= 8
    return bytes(out)


def size_header_bomb(width, height):
    """FF 0A, SizeHeader (small = 0, height − 1 and width − 1 as U32 selector 2: 18 bits, aspect
    ratio 0), ImageMetadata all_default = 1, then zero padding."""
    return b"\xff\x0a" + bits([(0, 1), (2, 2), (height - 1, 18), (0, 3), (2, 2), (width - 1, 18), (1, 1)]) + bytes(16)


def main():
    out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "Fixtures", "jxl")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    tmp = tempfile.mkdtemp()
    fixtures = []

    def reference(jxl, name, alpha=False, gray=False, bits16=False):
        """djxl's decode as the kit reads it."""
        if alpha:
            png = os.path.join(tmp, name + ".png")
            run(["djxl", jxl, png, "--bits_per_sample=8", "--quiet"])
            ref = name + ".pam"
            write_pam(os.path.join(out, ref), np.asarray(Image.open(png).convert("RGBA")))
            return ref
        ext = ".pgm" if gray else ".ppm"
        ref = name + (".16" if bits16 else "") + ext
        run(["djxl", jxl, os.path.join(out, ref), "--bits_per_sample=%d" % (16 if bits16 else 8), "--quiet"])
        return ref

    def reference8_from16(name):
        """djxl 0.7's --bits_per_sample=8 writes wrong samples for a file of more than 8 bits
        (its PNM writer keeps the wrong byte: 2047/65535 comes out 0, not 8), so the 8-bit reference
        of those is the 16-bit one rounded (round(v × 255 / 65535), as libjxl converts)."""
        with open(os.path.join(out, name + ".16.ppm"), "rb") as f:
            data = f.read()
        fields = data.split(b"\n", 3)
        w, h = map(int, fields[1].split())
        samples = np.frombuffer(fields[3], dtype=">u2").reshape(h, w, 3).astype(np.float64)
        Image.fromarray(np.round(samples * 255 / 65535).astype(np.uint8)).save(os.path.join(out, name + ".ppm"))
        return name + ".ppm"

    def entry(file, width, height, made_with, **extra):
        e = {"file": file, "kind": "valid", "reference": None, "reference16": None, "tolerance": 0,
             "width": width, "height": height, "progressive": False, "orientation": 1,
             "expected_error": None, "lossless": False, "made_with": made_with, "notes": ""}
        e.update(extra)
        fixtures.append(e)
        return e

    def still(name, source_path, args, width, height, made_with, alpha=False, gray=False, bits16=False, **extra):
        path = os.path.join(out, name + ".jxl")
        run(["cjxl", source_path, path, "--quiet", "--num_threads=1"] + args)
        ref16 = reference(path, name, gray=gray, bits16=True) if bits16 else None
        ref = reference8_from16(name) if bits16 else reference(path, name, alpha=alpha, gray=gray)
        return entry(name + ".jxl", width, height, made_with, reference=ref, reference16=ref16, **extra)

    # Lossless and lossy RGB.
    src = os.path.join(tmp, "photo.png")
    Image.fromarray(photo(48, 32, 1)).save(src)
    still("lossless", src, ["-d", "0", "-e", "7"], 48, 32, "cjxl -d 0 -e 7 (lossless) from a PNG", lossless=True,
          notes="reference: djxl; equal to the source PNG")
    still("lossy", src, ["-d", "1.5", "-e", "7"], 48, 32, "cjxl -d 1.5 -e 7 (XYB, VarDCT)", tolerance=1,
          notes="reference: djxl --bits_per_sample=8; libjxl's own rounding, hence tolerance 1")

    # Alpha (lossless).
    src = os.path.join(tmp, "alpha.png")
    Image.fromarray(photo(40, 28, 2, alpha=True), "RGBA").save(src)
    still("alpha", src, ["-d", "0"], 40, 28, "cjxl -d 0 from an RGBA PNG", alpha=True, lossless=True)

    # Grey.
    src = os.path.join(tmp, "gray.pgm")
    Image.fromarray(photo(36, 24, 3)[:, :, 0]).save(src)
    still("gray", src, ["-d", "0"], 36, 24, "cjxl -d 0 from a PGM", gray=True, lossless=True)

    # 16-bit RGB from a 16-bit PPM.
    src = os.path.join(tmp, "sixteen.ppm")
    y, x = np.mgrid[0:24, 0:32]
    rgb16 = np.stack([x * 2047, y * 2849, (x * y * 97) % 65536], axis=-1).astype(">u2")
    with open(src, "wb") as f:
        f.write(b"P6\n32 24\n65535\n" + rgb16.tobytes())
    still("sixteen", src, ["-d", "0"], 32, 24, "cjxl -d 0 from a 16-bit PPM", bits16=True, lossless=True,
          tolerance=1, notes="reference16: djxl --bits_per_sample=16; reference: it, rounded to 8 bits")

    # 32-bit float from a PFM (little-endian, rows bottom to top).
    src = os.path.join(tmp, "float.pfm")
    rgbf = np.stack([x / 31.0, y / 23.0, (x * y) / (31.0 * 23.0)], axis=-1).astype("<f4")
    with open(src, "wb") as f:
        f.write(b"PF\n32 24\n-1.0\n" + rgbf[::-1].tobytes())
    still("float", src, ["-d", "0"], 32, 24, "cjxl -d 0 from a 32-bit float PFM", bits16=True, tolerance=1,
          notes="float samples, decoded as 16-bit integers; reference16 from djxl, reference it rounded to 8 bits")

    # The container format.
    src = os.path.join(tmp, "photo2.png")
    Image.fromarray(photo(30, 20, 4)).save(src)
    still("container", src, ["-d", "0", "--container=1"], 30, 20, "cjxl -d 0 --container=1 (ISO BMFF boxes)", lossless=True)

    # Progressive: wider than one 256-pixel group, so libjxl flushes a pass before the end.
    src = os.path.join(tmp, "progressive.png")
    Image.fromarray(photo(272, 32, 5)).save(src)
    still("progressive", src, ["-d", "2", "-p"], 272, 32, "cjxl -d 2 -p (progressive AC, responsive)", tolerance=1,
          progressive=True)

    # A JPEG with EXIF orientation 6, recompressed losslessly.
    jpeg = os.path.join(out, "recompressed.source.jpg")
    exif = b"Exif\x00\x00" + b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1) + struct.pack("<HHII", 0x0112, 3, 1, 6) + struct.pack("<I", 0)
    Image.fromarray(photo(48, 32, 6)).save(jpeg, quality=85, exif=exif)
    path = os.path.join(out, "recompressed.jxl")
    run(["cjxl", jpeg, path, "--quiet", "--num_threads=1"])
    displayed = os.path.join(tmp, "recompressed.ppm")
    run(["djxl", path, displayed, "--quiet"])
    stored = np.rot90(np.asarray(Image.open(displayed).convert("RGB")), 1)  # undo orientation 6 (90° clockwise)
    Image.fromarray(np.ascontiguousarray(stored)).save(os.path.join(out, "recompressed.ppm"))
    entry("recompressed.jxl", 48, 32, "cjxl from a JPEG with EXIF orientation 6 (lossless JPEG recompression)",
          reference="recompressed.ppm", orientation=6, tolerance=1, source_jpeg="recompressed.source.jpg",
          notes="reference: djxl's decode turned back to the stored layout; djxl reconstructs the source JPEG bit for bit")

    # An animation from a GIF.
    frames = [np.zeros((30, 40, 3), np.uint8) for _ in range(3)]
    for i, f in enumerate(frames):
        f[:, :, i] = 255
        f[2 + 9 * i:9 + 9 * i, 10:20] = (255, 255, 255)  # apart: every pixel changes, none is transparent
    gif = os.path.join(tmp, "anim.gif")
    images = [Image.fromarray(f) for f in frames]
    images[0].save(gif, save_all=True, append_images=images[1:], duration=[100, 200, 300], loop=0)
    run(["cjxl", gif, os.path.join(out, "anim.jxl"), "-d", "0", "--quiet", "--num_threads=1"])
    for i, f in enumerate(frames):
        write_pam(os.path.join(out, "anim.%d.pam" % i), np.dstack([f, np.full((30, 40), 255, np.uint8)]))
    entry("anim.jxl", 40, 30, "cjxl -d 0 from a GIF Pillow wrote", reference="anim.0.pam", lossless=True,
          frames=3, loop=0, durations=[0.1, 0.2, 0.3], notes="frames: the GIF's, NAME.N.pam")

    # Invalid files.
    lossy = open(os.path.join(out, "lossy.jxl"), "rb").read()
    open(os.path.join(out, "truncated.jxl"), "wb").write(lossy[: len(lossy) // 2])
    entry("truncated.jxl", None, None, "the first half of lossy.jxl", kind="invalid", expected_error="incomplete")
    junk = bytes(random.Random(7).randrange(256) for _ in range(64))
    open(os.path.join(out, "garbage.jxl"), "wb").write(b"\xff\x0a" + b"\xff" * 8 + junk)
    entry("garbage.jxl", None, None, "FF 0A, eight FF bytes, then random bytes", kind="invalid", expected_error="corrupt")
    open(os.path.join(out, "bomb.jxl"), "wb").write(size_header_bomb(100000, 100000))
    entry("bomb.jxl", None, None, "a SizeHeader declaring 100000 x 100000 written bit by bit", kind="invalid",
          expected_error="limit", declared_width=100000, declared_height=100000)

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"format": "jxl", "fixtures": fixtures}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()

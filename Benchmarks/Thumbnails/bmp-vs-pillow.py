#!/usr/bin/env python3
"""NukeBMP's decode against Pillow's on a 12 MP 24-bit BMP, in process, as one ratio.

    Benchmarks/Thumbnails/bmp-vs-pillow.py [ROUNDS]

Makes a 4000x3000 photo-like 24-bit BMP (a gradient with seeded noise) with Pillow, times
`Image.open(path).load()` ROUNDS times (default 9) in this process, runs the release build of
NukeBMPBenchmark on the same file (it reads and decodes it ROUNDS times after one warm-up,
through the registry, with the default heap allocator, and prints the median), checks both decoded the same pixels (the sum of the samples),
and prints the medians and NukeBMP's time divided by Pillow's (goal: at most 1.0).

Builds NukeBMPBenchmark in release when .build/release/NukeBMPBenchmark is missing, under the
machine's Swift lock (/tmp/nuke-swift.lock) when `flock` exists.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
binary = os.path.join(root, ".build", "release", "NukeBMPBenchmark")
if not os.path.exists(binary):
    command = ["swift", "build", "-c", "release", "--product", "NukeBMPBenchmark"]
    if shutil.which("flock"):
        command = ["flock", "/tmp/nuke-swift.lock"] + command
    subprocess.run(command, cwd=root, check=True, stdout=subprocess.DEVNULL)

with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "12mp-24.bmp")
    rng = np.random.default_rng(29)
    y, x = np.mgrid[0:3000, 0:4000]
    base = np.dstack([x * 255 // 3999, y * 255 // 2999, (x + y) * 255 // 6998]).astype(np.int16)
    pixels = np.clip(base + rng.integers(-12, 13, size=base.shape), 0, 255).astype(np.uint8)
    Image.fromarray(pixels).save(path)

    times = []
    for _ in range(rounds + 1):
        start = time.perf_counter()
        with Image.open(path) as im:
            im.load()
            times.append(time.perf_counter() - start)
    pillow = sorted(times[1:])[rounds // 2]
    with Image.open(path) as im:
        pillow_sum = int(np.asarray(im).astype(np.uint64).sum())

    out = subprocess.run([binary, path, str(rounds)], check=True, capture_output=True, text=True).stdout
    fields = dict(line.split("=", 1) for line in out.split() if "=" in line)
    nuke = float(fields["median_seconds"])
    same = int(fields["sample_sum"]) == pillow_sum
    print("12 MP 24-bit BMP (%d bytes), medians of %d in process" % (os.path.getsize(path), rounds))
    print("  Pillow %s Image.open().load(): %.1f ms" % (Image.__version__, pillow * 1000))
    print("  NukeBMP (release, file read + decode through the registry): %.1f ms (%s)" % (nuke * 1000, fields.get("size", "")))
    print("  same pixels: %s" % ("yes" if same else "NO"))
    print("NukeBMP / Pillow = %.2f (goal <= 1.0)" % (nuke / pillow))
    sys.exit(0 if same else 1)

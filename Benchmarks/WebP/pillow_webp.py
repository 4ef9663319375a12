"""Pillow's WebP decode and encode, timed as NukeBenchmarks times NukeWebP (same files, same run).

    python3 pillow_webp.py ROUNDS LOSSY.webp LOSSLESS.webp RAW.ppm

Prints one line per case: NAME MEDIAN_SECONDS. Decodes are `Image.open(...).load()` from bytes in
memory; encodes are `save(format="WEBP")` into memory at quality 85 method 4: lossy from RAW.ppm (the
photo NukeBenchmarks encodes lossy), lossless (exact) from LOSSLESS.webp's own RGBA pixels (the image
with alpha it encodes lossless), so both sides encode the same pixels at the same settings.
"""

import io
import statistics
import sys
import time

from PIL import Image

rounds = int(sys.argv[1])
lossy, lossless, raw = (open(p, "rb").read() for p in sys.argv[2:5])
source = Image.open(io.BytesIO(raw))
source.load()
with_alpha = Image.open(io.BytesIO(lossless))
with_alpha.load()


def decode(data):
    im = Image.open(io.BytesIO(data))
    im.load()


def encode(image, **params):
    image.save(io.BytesIO(), format="WEBP", **params)


cases = [
    ("decode-lossy", lambda: decode(lossy)),
    ("decode-lossless", lambda: decode(lossless)),
    ("encode-lossy", lambda: encode(source, quality=85, method=4)),
    ("encode-lossless", lambda: encode(with_alpha, lossless=True, quality=85, method=4, exact=True)),
]
for name, body in cases:
    body()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        body()
        samples.append(time.perf_counter() - start)
    print(name, statistics.median(samples))

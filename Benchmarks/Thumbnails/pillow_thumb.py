"""What a Pillow user writes to make a thumbnail, as the benchmark times it.

    python3 pillow_thumb.py IN OUT [SIZE [QUALITY]]

`Image.thumbnail` calls `draft()` itself, so a JPEG is decoded by libjpeg's DCT scaling to the
smallest scale still at least twice the target (reducing_gap=2.0), then resized with BICUBIC.
"""

import sys

from PIL import Image

src, dst = sys.argv[1], sys.argv[2]
size = int(sys.argv[3]) if len(sys.argv) > 3 else 256
quality = int(sys.argv[4]) if len(sys.argv) > 4 else 75

im = Image.open(src)
im.thumbnail((size, size))
if dst.lower().endswith((".jpg", ".jpeg")) and im.mode not in ("RGB", "L"):
    im = im.convert("RGB")
im.save(dst, quality=quality)

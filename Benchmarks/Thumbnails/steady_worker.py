#!/usr/bin/env python3
"""A long-lived thumbnailing process for steady_state.py: pyvips or Pillow, one request a line.

    steady_worker.py pyvips|pillow|pillow-fit [--size N] [--quality Q]

It speaks the protocol of NukeSteadyThumbnails (Benchmarks/SteadyThumbnails/main.swift):

    T <tab> IN <tab> OUT [<tab> PIXELS]  ->  ok CPU_NS WALL_NS WIDTH HEIGHT  (or err MESSAGE)
    R                                    ->  rss KIB (ru_maxrss of this process)

CPU_NS is this process's CPU time for the request, all threads (time.process_time_ns, i.e.
CLOCK_PROCESS_CPUTIME_ID), from before the file is opened to after the JPEG is written. PIXELS,
when given, receives the thumbnail's pixels as PNG after the clock has stopped.

What each tool does is what its users write:
- pyvips: `pyvips.Image.thumbnail(IN, N, height=N, size="down")` (shrink-on-load for JPEG and
  WebP, then vips's lanczos3 reduce; EXIF orientation applied), `jpegsave(OUT, Q=Q, strip=True)`.
  The operation cache is off (`cache_set_max(0)`): otherwise a repeated request is a cache hit.
- Pillow: `Image.open(IN)`, `im.thumbnail((N, N))` (which calls `draft()`: libjpeg's DCT scaling
  to no less than twice the box, reducing_gap=2.0; then BICUBIC), `ImageOps.exif_transpose`,
  `save(OUT, "JPEG", quality=Q)`. AVIF through Pillow's own plugin (libavif).
  Pillow's `thumbnail` asks `draft()` for twice the *box* in both dimensions, so a 16:9 photograph
  is decoded at a larger DCT scale than twice its thumbnail needs.
- pillow-fit (JPEG): `draft("RGB", (2w, 2h))`, (w, h) being the thumbnail's size: the scale rule
  NukeCodecs' plan uses (the largest reduction that leaves twice the final size); then what
  `thumbnail` does after its draft: `resize((w, h), BICUBIC, box=draft's box, reducing_gap=2.0)`.
"""

import argparse
import math
import resource
import sys
import time


def make_pyvips(size, quality):
    import pyvips

    pyvips.cache_set_max(0)

    def thumbnail(src, dst):
        image = pyvips.Image.thumbnail(src, size, height=size, size="down")
        image.jpegsave(dst, Q=quality, strip=True)
        return image, src

    def pixels(made, path):
        # The same thumbnail again (the pipeline reads its input sequentially, once): the same pixels.
        pyvips.Image.thumbnail(made[1], size, height=size, size="down").pngsave(path)

    return thumbnail, pixels


def fitted_size(source, size):
    """The thumbnail's size inside SIZE x SIZE, rounded as Image.thumbnail rounds it."""
    width, height = source
    aspect = width / height
    x, y = size, size
    if x / y >= aspect:
        options = (math.floor(y * aspect), math.ceil(y * aspect))
        x = max(min(options, key=lambda n: abs(aspect - n / y)), 1)
    else:
        options = (math.floor(x / aspect), math.ceil(x / aspect))
        y = max(min(options, key=lambda n: 0 if n == 0 else abs(aspect - x / n)), 1)
    return x, y


def make_pillow(size, quality, fitted=False):
    from PIL import Image, ImageOps

    def thumbnail(src, dst):
        with Image.open(src) as im:
            if fitted and im.format == "JPEG" and max(im.size) > size:
                final = fitted_size(im.size, size)
                drafted = im.draft("RGB", (2 * final[0], 2 * final[1]))
                # As thumbnail() does after its own draft(): the box is the source's extent in
                # the scaled image, a fraction of a pixel short where the size is not a multiple
                # of the scale's denominator.
                im = im.resize(final, Image.Resampling.BICUBIC, box=drafted[1] if drafted else None, reducing_gap=2.0)
            else:
                im.thumbnail((size, size))
            im = ImageOps.exif_transpose(im)
            if im.mode not in ("RGB", "L"):
                im = im.convert("RGB")
            im.save(dst, "JPEG", quality=quality)
            return im, src

    def pixels(made, path):
        made[0].save(path, "PNG")

    return thumbnail, pixels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tool", choices=("pyvips", "pillow", "pillow-fit"))
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--quality", type=int, default=85)
    args = parser.parse_args()
    if args.tool == "pyvips":
        thumbnail, pixels = make_pyvips(args.size, args.quality)
    else:
        thumbnail, pixels = make_pillow(args.size, args.quality, fitted=args.tool == "pillow-fit")
    out = sys.stdout
    for line in sys.stdin:
        fields = line.rstrip("\n").split("\t")
        if fields[0] == "T" and len(fields) >= 3:
            try:
                cpu, wall = time.process_time_ns(), time.monotonic_ns()
                made = thumbnail(fields[1], fields[2])
                cpu, wall = time.process_time_ns() - cpu, time.monotonic_ns() - wall
                if len(fields) >= 4 and fields[3]:
                    pixels(made, fields[3])
                out.write("ok\t%d\t%d\t%d\t%d\n" % (cpu, wall, made[0].width, made[0].height))
            except Exception as error:  # reported to the driver, which marks the tool n/a
                out.write("err\t%s\n" % str(error).replace("\n", " ")[:300])
        elif fields[0] == "R":
            out.write("rss\t%d\n" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        else:
            out.write("err\tunknown request: %s\n" % line[:80].strip())
        out.flush()


if __name__ == "__main__":
    main()

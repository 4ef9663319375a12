#!/usr/bin/env python3
"""Load test for ThumbnailService, on loopback only, bounded in time.

    python3 loadtest.py --server PID --url http://127.0.0.1:8080 [--seconds 60] [--concurrency 8]

Posts a mix of photos of every format (made here with Pillow, heif-enc and cwebp when present) and
hostile files (truncated, corrupt, bombs, the fixtures' invalid files and ../shared/corpora's crash
tests when present) at a fixed concurrency. Reports requests per second, p50/p99 latency, the count
of each status, and the server's peak resident memory (VmHWM of PID). Fails (exit 1) if the server
died, answered 5xx (other than 503 busy) to a valid upload, or its resident memory grew without
bound (the last quarter's RSS more than 1.5 times the first quarter's after warm-up).
"""

import argparse
import glob
import io
import os
import random
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def photo(width, height, seed):
    rng = random.Random(seed)
    im = Image.new("RGB", (width, height))
    px = im.load()
    for y in range(height):
        for x in range(width):
            px[x, y] = ((x * 255) // width, (y * 255) // height, (x * y + rng.randint(0, 40)) % 256)
    return im


def encoded(im, fmt, **params):
    buffer = io.BytesIO()
    im.save(buffer, format=fmt, **params)
    return buffer.getvalue()


def inputs():
    valid = []
    base = photo(640, 480, 1).resize((1600, 1200))
    valid.append(("photo.jpg", encoded(base, "JPEG", quality=88)))
    valid.append(("photo.png", encoded(base, "PNG", compress_level=3)))
    valid.append(("photo.webp", encoded(base, "WEBP", quality=85)))
    valid.append(("anim.gif", encoded(base.resize((320, 240)).quantize(64), "GIF")))
    # A phone-sized upload: 4032 × 3024 (12 MP).
    valid.append(("photo-12mp.jpg", encoded(base.resize((4032, 3024)), "JPEG", quality=90)))
    # Real photographs and animations from ../shared/corpora, when present.
    for pattern in ["../shared/corpora/jpeg/kean_Nuke/Tests/Resources/fixture.jpeg",
                    "../shared/corpora/jpeg/kean_Nuke/Tests/Resources/image-p3.jpg",
                    "../shared/corpora/heif/kean_Nuke/Tests/Resources/img_751.heic",
                    "../shared/corpora/png/python-pillow_Pillow/Tests/images/hopper.png",
                    "../shared/corpora/webp/webmproject_libwebp/examples/test.webp",
                    "../shared/corpora/webp/SDWebImage_SDWebImageWebPCoder/Tests/Images/TestImageAnimated.webp"]:
        for path in glob.glob(os.path.join(ROOT, pattern)):
            valid.append((os.path.basename(path), open(path, "rb").read()))
    for path in sorted(glob.glob(os.path.join(ROOT, "Fixtures/heif/photo.heic")) + glob.glob(os.path.join(ROOT, "Fixtures/heif/alpha.avif"))
                       + glob.glob(os.path.join(ROOT, "Fixtures/svg/text.svg")) + glob.glob(os.path.join(ROOT, "Fixtures/svg/gradients.svg"))):
        valid.append((os.path.basename(path), open(path, "rb").read()))
    hostile = []
    for name, data in valid[:3]:  # the 1600 × 1200 JPEG, PNG and WebP
        hostile.append(("truncated-" + name, data[: len(data) // 3]))
        corrupt = bytearray(data)
        for i in range(200, len(corrupt), 97):
            corrupt[i] ^= 0x5A
        hostile.append(("corrupt-" + name, bytes(corrupt)))
    manifest_dirs = ["jpeg", "png", "gif", "webp", "heif", "svg"]
    for folder in manifest_dirs:
        for path in glob.glob(os.path.join(ROOT, "Fixtures", folder, "*")):
            name = os.path.basename(path)
            if any(word in name for word in ("truncated", "junk", "malformed", "outside", "overflow", "zero")):
                hostile.append((folder + "/" + name, open(path, "rb").read()))
    # Crash and bomb inputs for every library: librsvg's crash tests, libheif's clusterfuzz
    # reproducers, libpng's crashers, Pillow's damaged JPEGs and GIF bombs, and the inputs our
    # own fuzzing kept (Fixtures/regressions).
    for pattern in ["../shared/corpora/svg/GNOME_librsvg/rsvg/tests/fixtures/crash/*.svg",
                    "../shared/corpora/svg/GNOME_librsvg/rsvg/tests/fixtures/render-crash/*.svg",
                    "../shared/corpora/heif/strukturag_libheif/fuzzing/data/corpus/clusterfuzz-*",
                    "../shared/corpora/heif/strukturag_libheif/fuzzing/data/corpus/crash-*",
                    "../shared/corpora/png/pnggroup_libpng/contrib/testpngs/crashers/*.png",
                    "../shared/corpora/png/python-pillow_Pillow/Tests/images/png_decompression_dos.png",
                    "../shared/corpora/png/python-pillow_Pillow/Tests/images/truncated_image.png",
                    "../shared/corpora/jpeg/python-pillow_Pillow/Tests/images/*trunc*.jpg",
                    "../shared/corpora/jpeg/python-pillow_Pillow/Tests/images/junk_jpeg_header.jpg",
                    "../shared/corpora/gif/python-pillow_Pillow/Tests/images/decompression_bomb*.gif",
                    "Fixtures/regressions/*/*"]:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern)))[:12]:
            if not path.endswith(".md"):
                hostile.append((os.path.basename(path), open(path, "rb").read()))
    hostile.append(("empty", b""))
    hostile.append(("text", b"hello, this is not an image\n" * 10))
    return valid, hostile


def rss(pid, field):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", type=int, required=True, help="the server's pid")
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--hostile-share", type=float, default=0.25)
    args = parser.parse_args()
    if not args.url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
        sys.exit("loadtest: loopback only")
    valid, hostile = inputs()
    print("loadtest: %d valid uploads, %d hostile; %d clients for %.0f s" % (len(valid), len(hostile), args.concurrency, args.seconds))
    formats = ["webp", "jpeg", "png", "avif"]
    lock = threading.Lock()
    latencies, statuses, failures = [], {}, []
    end = time.monotonic() + args.seconds

    def client(index):
        rng = random.Random(index)
        while time.monotonic() < end:
            is_hostile = rng.random() < args.hostile_share
            name, data = rng.choice(hostile if is_hostile else valid)
            fmt = rng.choice(formats)
            request = urllib.request.Request("%s/thumbnail?size=256&format=%s" % (args.url, fmt), data=data, method="POST")
            started = time.monotonic()
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    response.read()
                    status = response.status
            except urllib.error.HTTPError as error:
                status = error.code
                error.read()
            except Exception as error:  # connection refused or reset: the server may have died
                status = "error: %s" % type(error).__name__
            elapsed = time.monotonic() - started
            if status == 503:
                time.sleep(0.2)  # Retry-After says 1 s; a busy client comes back sooner
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
                if status == 200 or isinstance(status, int) and 400 <= status < 500:
                    latencies.append(elapsed)
                if not is_hostile and isinstance(status, int) and status >= 500 and status != 503:
                    failures.append("%s → %s %d" % (name, fmt, status))
                if isinstance(status, str):
                    failures.append("%s: %s" % (name, status))

    samples = []
    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.concurrency)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        time.sleep(0.5)
        samples.append(rss(args.server, "VmRSS"))
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    alive = rss(args.server, "VmRSS") is not None
    peak = rss(args.server, "VmHWM")
    count = sum(statuses.values())
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")
    print("loadtest: %d requests in %.1f s: %.1f requests/s; latency p50 %.1f ms, p99 %.1f ms" % (count, wall, count / wall, p(0.5), p(0.99)))
    print("loadtest: statuses %s" % ", ".join("%s: %d" % (k, v) for k, v in sorted(statuses.items(), key=lambda kv: str(kv[0]))))
    known = [s for s in samples if s]
    growth = None
    if len(known) >= 8:
        quarter = len(known) // 4
        first, last = statistics.median(known[quarter:2 * quarter]), statistics.median(known[-quarter:])
        growth = last / first
        print("loadtest: server RSS %.1f MiB (second quarter) → %.1f MiB (last quarter), peak %.1f MiB"
              % (first / 2**20, last / 2**20, (peak or 0) / 2**20))
    problems = []
    if not alive:
        problems.append("the server died")
    if failures:
        problems.append("%d failures, e.g. %s" % (len(failures), failures[:3]))
    if growth is not None and growth > 1.5:
        problems.append("resident memory grew %.2f times" % growth)
    if problems:
        print("loadtest: FAIL: " + "; ".join(problems))
        sys.exit(1)
    print("loadtest: OK")


if __name__ == "__main__":
    main()

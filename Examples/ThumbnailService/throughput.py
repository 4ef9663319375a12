#!/usr/bin/env python3
"""Throughput of ThumbnailService against a loop of vipsthumbnail, on the same cores, in one run.

    python3 throughput.py --server PID --input photo-12mp.jpg [--url http://127.0.0.1:8080]
                          [--seconds 60] [--size 256] [--format webp]

Phase 1 posts INPUT to the running service from --concurrency clients (default: the cores plus
two, so that a decode is always waiting) for --seconds and counts the thumbnails answered.
Phase 2 runs `vipsthumbnail INPUT -s SIZExSIZE -o OUT.webp` in a loop, as many loops at once as
gives vips its best figure among 1, the number of cores and twice that, each for --seconds. Both
phases use every core of the machine; the clients and the loops' own overhead count against the
side that has them, as they would in a deployment. Every thumbnail is checked (it must decode and
fit the size). Prints thumbnails per second for each, the ratio service ÷ vips, and the CPU time
per thumbnail of the server process and of vipsthumbnail.
"""

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from PIL import Image


def cpu_seconds(pid):
    """User plus system time of PID and its reaped children, from /proc (clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks


def check(data, size, fmt):
    with Image.open(io.BytesIO(data)) as im:
        im.load()
        if max(im.size) != size or im.format.lower() != {"jpeg": "jpeg", "webp": "webp", "png": "png"}.get(fmt, im.format.lower()):
            raise ValueError("a %s %s thumbnail, expected %s fitting %d" % (im.format, im.size, fmt, size))


def service(args, data):
    url = "%s/thumbnail?size=%d&format=%s" % (args.url, args.size, args.format)
    lock = threading.Lock()
    done, other = [0], {}
    end = time.monotonic() + args.seconds

    def client():
        while time.monotonic() < end:
            request = urllib.request.Request(url, data=data, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    body = response.read()
                status = response.status
            except urllib.error.HTTPError as error:
                error.read()
                status, body = error.code, None
            if status == 200 and time.monotonic() <= end:
                with lock:
                    first = done[0] == 0
                    done[0] += 1
                if first:
                    check(body, args.size, args.format)
            elif status != 200:
                with lock:
                    other[status] = other.get(status, 0) + 1
                if status == 503:
                    time.sleep(0.01)

    cpu_before = cpu_seconds(args.server)
    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(args.concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = min(time.monotonic(), end) - started
    cpu = cpu_seconds(args.server) - cpu_before
    return done[0] / wall, cpu / max(done[0], 1), other


def vips(args, loops, workdir):
    end = time.monotonic() + args.seconds
    lock = threading.Lock()
    done = [0]
    cpu = [0.0]
    errors = []

    def loop(index):
        out = os.path.join(workdir, "thumb-%d.%s" % (index, args.format))
        while time.monotonic() < end:
            child = subprocess.Popen([args.vipsthumbnail, args.input, "-s", "%dx%d" % (args.size, args.size), "-o", out],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            message = child.stderr.read()
            child.stderr.close()
            # The child's own CPU time (all its threads), from the kernel as it is reaped.
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            if child.returncode != 0:
                errors.append(message.decode(errors="replace").strip())
                return
            with lock:
                if time.monotonic() <= end:
                    done[0] += 1
                    cpu[0] += usage.ru_utime + usage.ru_stime
        with open(out, "rb") as f:
            check(f.read(), args.size, args.format)

    started = time.monotonic()
    threads = [threading.Thread(target=loop, args=(i,)) for i in range(loops)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        sys.exit("throughput: vipsthumbnail failed: %s" % errors[0])
    wall = min(time.monotonic(), end) - started
    return done[0] / wall, cpu[0] / max(done[0], 1)


def main():
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", type=int, required=True, help="the server's pid")
    parser.add_argument("--input", required=True, help="the photo to thumbnail (a 12 MP JPEG for the published figure)")
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--format", default="webp", choices=["webp", "jpeg", "png"])
    parser.add_argument("--concurrency", type=int, default=cores + 2)
    parser.add_argument("--vipsthumbnail", default=shutil.which("vipsthumbnail"))
    args = parser.parse_args()
    if not args.url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
        sys.exit("throughput: loopback only")
    if not args.vipsthumbnail:
        sys.exit("throughput: vipsthumbnail not found (apt-get install libvips-tools)")
    data = open(args.input, "rb").read()
    with Image.open(args.input) as im:
        described = "%s %d×%d (%.1f MP, %d KiB)" % (im.format, im.size[0], im.size[1], im.size[0] * im.size[1] / 1e6, len(data) // 1024)
    print("throughput: %s → %d px %s, %d cores, %.0f s per phase" % (described, args.size, args.format, cores, args.seconds))

    rate, cpu, other = service(args, data)
    print("throughput: service, %d clients: %.2f thumbnails/s, %.1f ms server CPU each%s"
          % (args.concurrency, rate, cpu * 1000, "; other statuses %s" % other if other else ""))
    best = None
    with tempfile.TemporaryDirectory() as workdir:
        for loops in sorted({1, cores, 2 * cores}):
            vrate, vcpu = vips(args, loops, workdir)
            print("throughput: vipsthumbnail, %d loops: %.2f thumbnails/s, %.1f ms CPU each" % (loops, vrate, vcpu * 1000))
            if best is None or vrate > best[0]:
                best = (vrate, loops)
    print("throughput: service ÷ vipsthumbnail (its best, %d loops) = %.2f (target ≥ 0.9)" % (best[1], rate / best[0]))


if __name__ == "__main__":
    main()

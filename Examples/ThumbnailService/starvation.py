#!/usr/bin/env python3
"""Can slow uploads starve the service? Valid JPEG uploads alone, then beside clients that upload
SVG documents made to stall librsvg, on loopback, in one run.

    python3 starvation.py --binary PATH/ThumbnailService [--seconds 20] [--jpeg-clients 4] [--svg-clients 4]

Starts the service on a free port, then:
1. `--jpeg-clients` clients post a 1600 x 1200 JPEG (made here with Pillow) in a loop for
   `--seconds`: requests per second and p50 latency;
2. the same, beside `--svg-clients` clients that post, in turn, librsvg's own stalling test cases
   (a turbulence of 33 billion octaves, bug 1062; a recursive `use`, bug 1092; from
   ../shared/corpora when present, else written here) and a legitimate but slow turbulence
   (400 octaves at 256 x 256, just under `.untrusted`'s work limit, about a second and a half of
   drawing), each client from its own loopback address (127.0.0.2...).

Prints both phases and the goals of issue 26: the JPEG uploads keep at least 40% of their rate and
a p50 within 3 times (or 200 ms more than) the first phase's. Exit 1 when a goal is missed or the
service died.
"""

import argparse
import http.client
import io
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.abspath(os.path.join(HERE, "..", "..", "..", "shared", "corpora", "svg", "GNOME_librsvg", "rsvg", "tests", "fixtures"))

TURBULENCE = b"""<svg>
  <filter id="a">
    <feTurbulence numOctaves="33333333333"/>
  </filter>
  <path d="m10 10 H1 V1" filter="url(#a)"/>
</svg>
"""

RECURSIVE_USE = b"""<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64">
  <defs><g id="a"><use xlink:href="#b"/><use xlink:href="#b"/></g><g id="b"><use xlink:href="#a"/><use xlink:href="#a"/></g></defs>
  <use xlink:href="#a"/>
</svg>
"""

SLOW_BUT_ALLOWED = b"""<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256">
  <filter id="t" x="0" y="0" width="1" height="1"><feTurbulence baseFrequency="0.02" numOctaves="400"/></filter>
  <rect width="256" height="256" filter="url(#t)"/>
</svg>
"""


def spinners():
    files = []
    for name, inline in [("render-crash/bug1062-feTurbulence-limit-numOctaves.svg", TURBULENCE),
                         ("render-crash/bug1092-fuzz-recursive-use-stack-overflow.svg", RECURSIVE_USE)]:
        path = os.path.join(CORPUS, name)
        files.append((os.path.basename(name), open(path, "rb").read() if os.path.exists(path) else inline))
    files.append(("slow-but-allowed.svg", SLOW_BUT_ALLOWED))
    return files


def jpeg():
    image = Image.radial_gradient("L").resize((1600, 1200)).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=88)
    return buffer.getvalue()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, body, source, timeout=60):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    started = time.monotonic()
    try:
        connection.request("POST", "/thumbnail?size=256&format=jpeg", body=body, headers={"Content-Type": "application/octet-stream"})
        response = connection.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    except Exception:
        return 0, time.monotonic() - started
    finally:
        connection.close()


def run(port, seconds, jpeg_clients, svg_clients, photo):
    stop = time.monotonic() + seconds
    jpeg_latencies, jpeg_statuses, svg_results = [], {}, {}
    lock = threading.Lock()

    def jpeg_loop(index):
        source = "127.0.1.%d" % (index + 1)
        while time.monotonic() < stop:
            status, elapsed = post(port, photo, source)
            with lock:
                jpeg_statuses[status] = jpeg_statuses.get(status, 0) + 1
                if status == 200:
                    jpeg_latencies.append(elapsed)

    def svg_loop(index):
        source = "127.0.0.%d" % (index + 2)
        files = spinners()
        turn = index
        while time.monotonic() < stop:
            name, body = files[turn % len(files)]
            turn += 1
            status, elapsed = post(port, body, source)
            with lock:
                svg_results.setdefault(name, []).append((status, elapsed))
            if status in (429, 503):
                time.sleep(0.2)

    threads = [threading.Thread(target=jpeg_loop, args=(i,)) for i in range(jpeg_clients)]
    threads += [threading.Thread(target=svg_loop, args=(i,)) for i in range(svg_clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return jpeg_latencies, jpeg_statuses, svg_results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--jpeg-clients", type=int, default=4)
    parser.add_argument("--svg-clients", type=int, default=4)
    args = parser.parse_args()

    port = free_port()
    server = subprocess.Popen([args.binary, "--hostname", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        photo = jpeg()
        for _ in range(5):
            post(port, photo, "127.0.0.1")

        alone, alone_statuses, _ = run(port, args.seconds, args.jpeg_clients, 0, photo)
        beside, beside_statuses, svgs = run(port, args.seconds, args.jpeg_clients, args.svg_clients, photo)
        if server.poll() is not None:
            print("starvation: FAIL: the service died")
            return 1

        def describe(latencies, statuses):
            rate = len(latencies) / args.seconds
            p50 = statistics.median(latencies) * 1000 if latencies else float("nan")
            return rate, p50, "%.1f/s, p50 %.1f ms, statuses %s" % (rate, p50, dict(sorted(statuses.items())))

        rate_alone, p50_alone, text_alone = describe(alone, alone_statuses)
        rate_beside, p50_beside, text_beside = describe(beside, beside_statuses)
        print("JPEG uploads alone:            " + text_alone)
        print("JPEG uploads beside %d SVG clients: %s" % (args.svg_clients, text_beside))
        for name, results in sorted(svgs.items()):
            statuses = {}
            for status, _ in results:
                statuses[status] = statuses.get(status, 0) + 1
            latencies = sorted(elapsed for _, elapsed in results)
            print("  SVG %s: %d requests, statuses %s, p50 %.0f ms, max %.0f ms"
                  % (name, len(results), dict(sorted(statuses.items())), statistics.median(latencies) * 1000, latencies[-1] * 1000))
        rate_kept = rate_beside / rate_alone if rate_alone else 0
        p50_ok = p50_beside <= 3 * p50_alone or p50_beside <= p50_alone + 200
        print("rate kept: %.0f%% (goal >= 40%%); p50 %.1f ms vs %.1f ms (goal <= 3x or +200 ms): %s"
              % (rate_kept * 100, p50_beside, p50_alone, "met" if rate_kept >= 0.4 and p50_ok else "MISSED"))
        return 0 if rate_kept >= 0.4 and p50_ok else 1
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    sys.exit(main())

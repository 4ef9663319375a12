#!/usr/bin/env python3
"""The service under real traffic (issue 41): each attack, reproduced on loopback against a
build of ThumbnailService, with the figures it is judged by.

    python3 traffic.py --binary PATH/ThumbnailService [--scenario all|uploads|http|slow-lane]
                       [--budget-mib 256] [--spool-mib 1024] [--uploads 60] [--upload-mib 30]

- uploads: `--uploads` clients post `--upload-mib` MiB at once, twice: bytes no codec reads (the
  service answers 415 after the first 64 KiB) and a JPEG signature followed by noise (read in
  full, within the byte budget, then refused 422, or 503 beyond the budget), and a valid 1600 x 1200
  JPEG padded with comment segments to that size (decoded as it arrives). Prints the service's
  RSS before (after one such upload alone), its peak (VmHWM) and its RSS 10 s later; goals: peak <= budget + 200 MiB, and back
  within 25 % of the pre-burst RSS within 10 s.
- http: HTTP/1.0 `GET /health` (answered and closed) and `POST` with `Expect: 100-continue` of a
  1.5 MB JPEG (100 Continue, then the thumbnail), 20 times each; goal: median <= 50 ms.
- slow-lane: a valid AVIF's p50 alone, then beside 4 clients (4 addresses) posting a 5.6 MB SVG
  of 400,000 path segments in a loop; goal: p50 beside them <= 3 x alone.

Clients behind a proxy: `deploy/haproxy-replicas.sh --concurrency 30` (30 users, one address
each, through HAProxy; 0 x 429 expected). Valid SVGs under load: `starvation.py`.
Exit 1 when a goal is missed or the service died.
"""

import argparse
import http.client
import io
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    def __init__(self, binary, **settings):
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("THUMBNAIL_")}
        arguments = [binary, "--hostname", "127.0.0.1", "--port", str(self.port)]
        for key, value in settings.items():
            arguments += ["--" + key.replace("_", "-"), str(value)]
        self.process = subprocess.Popen(arguments, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
                connection.request("GET", "/ready")
                if connection.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit("traffic: the service did not become ready")

    def status(self, field):
        with open("/proc/%d/status" % self.process.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        return 0

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        self.process.terminate()
        self.process.wait()


def post(port, path, body, source="127.0.0.1", timeout=120):
    """POSTs `body` over a socket of its own; returns (status, seconds). A service that answers
    before the body is read (415, 503, 413) and closes is read, not counted as an error."""
    started = time.monotonic()
    head = ("POST %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n"
            "Connection: close\r\n\r\n" % (path, len(body))).encode()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.bind((source, 0))
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(head)
            view = memoryview(body)
            for offset in range(0, len(body), 1 << 16):
                s.sendall(view[offset:offset + (1 << 16)])
        except (BrokenPipeError, ConnectionResetError):
            pass
        except OSError:
            return "error", time.monotonic() - started
        received = b""
        try:
            while True:
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                received += chunk
        except OSError:
            pass
    try:
        return int(received.split(b" ", 2)[1]), time.monotonic() - started
    except (IndexError, ValueError):
        return "reset", time.monotonic() - started


def together(target, count, stop=None):
    """Runs target(index) on `count` threads; when `stop` is given, returns at once with a
    function that sets it and waits for them."""
    threads = [threading.Thread(target=target, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()

    def join():
        if stop is not None:
            stop.set()
        for thread in threads:
            thread.join()
    if stop is None:
        join()
    return join


def mib(value):
    return value / (1 << 20)


def uploads(args):
    budget = args.budget_mib << 20
    service = Service(args.binary, max_buffered_bytes=budget, max_spooled_bytes=args.spool_mib << 20, max_upload_bytes=(args.upload_mib + 1) << 20,
                      max_connections_per_client=args.uploads + 8, max_per_client=args.uploads + 8, max_waiting=args.uploads + 8)
    ok = True
    try:
        size = args.upload_mib << 20
        noise = random.Random(1).randbytes(size)
        bodies = {"unknown bytes": b"\x00" * 64 + noise[64:], "JPEG signature + noise": b"\xff\xd8\xff\xe0" + noise[4:],
                  "valid JPEG (1600 x 1200) padded with comments": padded_jpeg(photo_jpeg(), size)}
        for name, body in bodies.items():
            # One upload alone first: the code it runs is paged in (file-backed pages the burst
            # did not take), so "before" is the service at work, not the service never used.
            post(service.port, "/thumbnail?size=128", body)
            time.sleep(1)
            before = service.status("VmRSS")
            statuses = {}
            lock = threading.Lock()

            def one(_):
                status, _ = post(service.port, "/thumbnail?size=128", body)
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1

            started = time.monotonic()
            together(one, args.uploads)
            burst = time.monotonic() - started
            peak = service.status("VmHWM")
            settled_at = None
            for step in range(100):
                if service.status("VmRSS") <= before * 1.25:
                    settled_at = step * 0.1
                    break
                time.sleep(0.1)
            after = service.status("VmRSS")
            met = peak <= budget + (200 << 20) and settled_at is not None
            ok = ok and met
            print("uploads, %s: %d x %d MiB in %.1f s: statuses %s; RSS %.0f MiB before, peak %.0f MiB "
                  "(goal <= %.0f), %.0f MiB after (%s): %s"
                  % (name, args.uploads, args.upload_mib, burst, dict(sorted(statuses.items(), key=str)), mib(before), mib(peak),
                     mib(budget + (200 << 20)), mib(after),
                     "within 25%% after %.1f s" % settled_at if settled_at is not None else "not within 25% in 10 s",
                     "met" if met else "MISSED"))
    finally:
        ok = ok and service.alive()
        service.stop()
    return ok


def padded_jpeg(jpeg, size):
    """`jpeg` with comment segments after its frame header up to `size` bytes: an upload far larger
    than the image it decodes to, which the service decodes as it arrives."""
    offset = 2
    while jpeg[offset + 1] not in (0xC0, 0xC1, 0xC2):
        offset += 2 + (jpeg[offset + 2] << 8 | jpeg[offset + 3])
    end = offset + 2 + (jpeg[offset + 2] << 8 | jpeg[offset + 3])
    padding = bytearray()
    while len(jpeg) + len(padding) + 4 < size:
        length = min(65535, size - len(jpeg) - len(padding) - 2)
        padding += b"\xff\xfe" + bytes([length >> 8, length & 0xFF]) + b" " * (length - 2)
    return jpeg[:end] + bytes(padding) + jpeg[end:]


def raw(port, parts, wait_for=None, marks=None):
    """Sends parts over one connection (each after the first once `wait_for` has arrived) and reads
    until the service closes it; returns (seconds, everything read). The seconds `wait_for` took
    are appended to `marks`."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        received = b""
        for index, part in enumerate(parts):
            while index > 0 and wait_for and wait_for not in received:
                chunk = s.recv(65536)
                if not chunk:
                    break
                received += chunk
            if index > 0 and marks is not None:
                marks.append(time.monotonic() - started)
            s.sendall(part)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            received += chunk
    return time.monotonic() - started, received


def photo_jpeg():
    from PIL import Image
    image = Image.effect_noise((1600, 1200), 60).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def http_dialect(args):
    service = Service(args.binary)
    try:
        times = []
        for _ in range(20):
            elapsed, text = raw(service.port, [b"GET /health HTTP/1.0\r\n\r\n"])
            assert text.startswith(b"HTTP/1.1 200") and b"ok\n" in text, text[:200]
            times.append(elapsed)
        http10 = statistics.median(times) * 1000
        jpeg = photo_jpeg()
        head = ("POST /thumbnail?size=128&format=jpeg HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\nExpect: 100-continue\r\n"
                "Connection: close\r\n\r\n" % len(jpeg)).encode()
        times, continues = [], []
        for _ in range(20):
            elapsed, text = raw(service.port, [head, jpeg], wait_for=b"100 Continue\r\n\r\n", marks=continues)
            assert text.startswith(b"HTTP/1.1 100 Continue") and b"HTTP/1.1 200" in text, text[:200]
            times.append(elapsed)
        expect = statistics.median(times) * 1000
        continued = statistics.median(continues) * 1000
        # curl sends `Expect: 100-continue` for a body over 1 MiB and waits a second for the 100.
        curl = None
        if shutil.which("curl"):
            with tempfile.NamedTemporaryFile(suffix=".jpg") as photo:
                photo.write(jpeg)
                photo.flush()
                times = []
                for _ in range(5):
                    result = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", "--data-binary", "@" + photo.name,
                                             "http://127.0.0.1:%d/thumbnail?size=128&format=jpeg" % service.port],
                                            capture_output=True, text=True, check=False)
                    times.append(float(result.stdout or "nan"))
                curl = statistics.median(times) * 1000
        # The upload alone (no Expect), for the thumbnail's own time.
        times = []
        for _ in range(20):
            times.append(post(service.port, "/thumbnail?size=128&format=jpeg", jpeg)[1])
        plain = statistics.median(times) * 1000
        met = http10 <= 50 and continued <= 50 and expect <= plain + 50 and (curl is None or curl <= plain + 50)
        print("http: HTTP/1.0 GET /health answered and closed: median %.1f ms (goal <= 50 ms); "
              "Expect: 100-continue POST of %.1f MB: 100 Continue after a median %.1f ms (goal <= 50 ms), the answer after %.1f ms (curl --data-binary: %s), the same POST without Expect %.1f ms "
              "(goal: within 50 ms of it): %s" % (http10, len(jpeg) / 1e6, continued, expect, "%.1f ms" % curl if curl is not None else "no curl",
                                                   plain, "met" if met else "MISSED"))
        return met and service.alive()
    finally:
        service.stop()


def attack_svg():
    segments = " ".join("l%d %d" % ((i % 7) - 3, (i % 5) - 2) for i in range(400_000))
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="4000"><path d="M10 10 %s" stroke="black"/></svg>'
            % segments).encode()


def avif_fixture():
    for name in ["photo.avif", "alpha.avif", "bt709-limited.avif"]:
        path = os.path.join(ROOT, "Fixtures", "heif", name)
        if os.path.exists(path):
            return name, open(path, "rb").read()
    raise SystemExit("traffic: no AVIF fixture in Fixtures/heif")


def slow_lane(args):
    service = Service(args.binary)
    try:
        name, avif = avif_fixture()
        svg = attack_svg()

        def user_p50(seconds):
            latencies, statuses = [], {}
            stop = time.monotonic() + seconds
            while time.monotonic() < stop:
                status, elapsed = post(service.port, "/thumbnail?size=256&format=jpeg", avif, source="127.0.2.1")
                statuses[status] = statuses.get(status, 0) + 1
                if status == 200:
                    latencies.append(elapsed)
            return (statistics.median(latencies) * 1000 if latencies else float("inf")), statuses

        for _ in range(3):
            post(service.port, "/thumbnail?size=256&format=jpeg", avif)
        alone, alone_statuses = user_p50(args.seconds)
        stop = threading.Event()
        attacker_statuses = {}
        lock = threading.Lock()

        def attacker(index):
            while not stop.is_set():
                status, _ = post(service.port, "/thumbnail?size=256", svg, source="127.0.3.%d" % (index + 1))
                with lock:
                    attacker_statuses[status] = attacker_statuses.get(status, 0) + 1
                if status in (429, 503):
                    time.sleep(0.2)

        finish = together(attacker, 4, stop)
        time.sleep(1)
        # While the attackers' first documents run (nothing yet says they are heavy), then after.
        first, first_statuses = user_p50(args.seconds)
        beside, beside_statuses = user_p50(args.seconds)
        finish()
        met = beside <= 3 * alone and first <= 3 * alone
        print("slow lane: AVIF (%s) p50 alone %.0f ms %s; beside 4 attackers (%.1f MB SVG, 400,000 segments): "
              "first %.0f s %.0f ms %s, next %.0f s %.0f ms %s (goal <= 3 x = %.0f ms); attackers' statuses %s: %s"
              % (name, alone, dict(alone_statuses), len(svg) / 1e6, args.seconds, first, dict(first_statuses),
                 args.seconds, beside, dict(beside_statuses), 3 * alone,
                 dict(sorted(attacker_statuses.items(), key=str)), "met" if met else "MISSED"))
        return met and service.alive()
    finally:
        service.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--scenario", default="all", choices=["all", "uploads", "http", "slow-lane"])
    parser.add_argument("--budget-mib", type=int, default=256)
    parser.add_argument("--spool-mib", type=int, default=1024, help="uploads beyond the memory budget on disk; 0: none")
    parser.add_argument("--uploads", type=int, default=60)
    parser.add_argument("--upload-mib", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=15)
    args = parser.parse_args()
    results = []
    if args.scenario in ("all", "uploads"):
        results.append(uploads(args))
    if args.scenario in ("all", "http"):
        results.append(http_dialect(args))
    if args.scenario in ("all", "slow-lane"):
        results.append(slow_lane(args))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

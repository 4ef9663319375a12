#!/usr/bin/env python3
"""The service's edges, as a hostile client meets them (part of the repository's test command).

    python3 edges.py --binary PATH/ThumbnailService

Starts the service on a free port with short timeouts and checks, each as a client would see it:
- headers sent a byte a second are cut off at the header timeout;
- a body sent a byte a second is cut off at its deadline;
- an upload that declares 200 MB is answered 413 at once, without the server reading it;
- `size=abc`, an unknown parameter and an unknown format are 400;
- one address cannot hold more connections than its share;
- a helper killed mid-decode costs the upload a retry (200) or a 503 with Retry-After, never a 4xx;
- every log line is one line, whatever a codec's message holds;
- the service still answers a valid upload afterwards.
Exit 1 on the first failure.
"""

import argparse
import http.client
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HEADER_TIMEOUT = 3
PER_CLIENT = 8
failures = []


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message)
    if not condition:
        failures.append(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, path, body, timeout=30, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    started = time.monotonic()
    try:
        connection.request("POST", path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders()), time.monotonic() - started
    finally:
        connection.close()


def png_chunks(data):
    """A PNG's chunks by type (the last of each), or {} when it is not a PNG."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return {}
    chunks, offset = {}, 8
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        chunks[kind.decode("latin-1")] = data[offset + 8:offset + 8 + length]
        offset += 12 + length
    return chunks


def jpeg():
    return open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progressive.jpg"), "rb").read()


def trickle(port, head, body=b""):
    """Sends `head` (byte by byte when `body` is empty), then `body` a byte a second, until the
    server closes the connection; the seconds it took."""
    s = socket.create_connection(("127.0.0.1", port))
    started = time.monotonic()
    pieces = [bytes([b]) for b in head] if not body else [head] + [bytes([b]) for b in body]
    try:
        for piece in pieces:
            s.send(piece)
            time.sleep(1 if len(piece) == 1 else 0)
            s.settimeout(0.01)
            try:
                if s.recv(4096) == b"":
                    break
            except socket.timeout:
                pass
    except OSError:
        pass
    return time.monotonic() - started


def slow_headers(port):
    return trickle(port, b"POST /thumbnail HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")


def slow_body(port):
    return trickle(port, b"POST /thumbnail HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", b"x" * 120)


def declared_too_large(port):
    s = socket.create_connection(("127.0.0.1", port))
    started = time.monotonic()
    s.send(b"POST /thumbnail HTTP/1.1\r\nHost: x\r\nContent-Length: 200000000\r\n\r\n" + b"\0" * 65536)
    s.settimeout(5)
    answer = b""
    try:
        answer = s.recv(4096)
    except socket.timeout:
        pass
    return answer, time.monotonic() - started


def helper_pids(server):
    """The service's helpers: its descendants of the same program."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % entry).read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, frontier = [], [server]
    while frontier:
        pid = frontier.pop()
        for child in children.get(pid, []):
            found.append(child)
            frontier.append(child)
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    args = parser.parse_args()
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="thumbnail-service-", suffix=".log", delete=False)
    server = subprocess.Popen([args.binary, "--hostname", "127.0.0.1", "--port", str(port), "--header-timeout", str(HEADER_TIMEOUT),
                               "--max-connections-per-client", str(PER_CLIENT), "--max-upload-bytes", str(4 << 20)],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        photo = jpeg()
        status, _, _, _ = post(port, "/thumbnail?size=128&format=jpeg", photo)
        check(status == 200, "a valid upload is answered 200 (got %d)" % status)

        # Thumbnails as a user's browser gets them: upright, private, in sRGB (PNG read here
        # chunk by chunk). location.jpg is 37×23 stored as EXIF 6, with GPS and a serial number;
        # p3.jpg carries a Display P3 profile (Fixtures/README.md).
        fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Fixtures")
        upload = open(os.path.join(fixtures, "output", "location.jpg"), "rb").read()
        status, body, _, _ = post(port, "/thumbnail?size=64&format=png", upload)
        chunks = png_chunks(body) if status == 200 else {}
        size = struct.unpack(">II", chunks["IHDR"][:8]) if "IHDR" in chunks else None
        check(size == (23, 37), "an EXIF 6 upload comes back upright: 23×37 (got %d, %s)" % (status, size))
        check(b"SN-0451" not in body and b"GPS" not in body and "eXIf" not in chunks,
              "no EXIF, GPS or serial number in the thumbnail (%s)" % sorted(chunks))
        status, body, _, _ = post(port, "/thumbnail?size=64&format=png", open(os.path.join(fixtures, "color", "p3.jpg"), "rb").read())
        chunks = png_chunks(body) if status == 200 else {}
        check(status == 200 and "iCCP" not in chunks, "a Display P3 upload comes back in sRGB, untagged (%d, %s)" % (status, sorted(chunks)))

        # The formats Nuke gets from its platform: TIFF (stored as EXIF 6, so upright is 23×37),
        # JPEG XL, BMP and ICO uploads thumbnail like the others.
        for folder, name, expected in [("tiff", "orientation-6.tif", (23, 37)), ("jxl", "lossy.jxl", (48, 32)),
                                       ("bmp", "pil-24.bmp", (24, 16)), ("ico", "pil-png.ico", (48, 48))]:
            status, body, _, _ = post(port, "/thumbnail?size=64&format=png", open(os.path.join(fixtures, folder, name), "rb").read())
            chunks = png_chunks(body) if status == 200 else {}
            size = struct.unpack(">II", chunks["IHDR"][:8]) if "IHDR" in chunks else None
            check(size == expected, "a %s upload is thumbnailed: %s (got %d, %s)" % (name, expected, status, size))

        results = {}
        threads = [threading.Thread(target=lambda: results.__setitem__("headers", slow_headers(port))),
                   threading.Thread(target=lambda: results.__setitem__("body", slow_body(port)))]
        for thread in threads:
            thread.start()

        answer, elapsed = declared_too_large(port)
        check(answer.startswith(b"HTTP/1.1 413"), "200 MB declared: 413 in %.2f s, unread (%r)" % (elapsed, answer[:40]))
        for query, what in [("size=abc", "size=abc"), ("size=12", "size=12"), ("foo=1", "an unknown parameter"), ("format=bmp", "an unknown format")]:
            status, body, _, _ = post(port, "/thumbnail?" + query, photo)
            check(status == 400, "%s: %d %s" % (what, status, body.decode(errors="replace").strip()))

        sockets = []
        for _ in range(PER_CLIENT * 3):
            try:
                sockets.append(socket.create_connection(("127.0.0.1", port)))
            except OSError:
                break
        time.sleep(0.5)
        open_count = 0
        for s in sockets:
            s.settimeout(0.05)
            try:
                if s.recv(1) != b"":
                    open_count += 1
            except socket.timeout:
                open_count += 1
            except OSError:
                pass
            s.close()
        check(open_count <= PER_CLIENT, "%d idle connections from one address: %d kept (at most %d)" % (len(sockets), open_count, PER_CLIENT))

        # A helper killed in the middle of a slow SVG: a retry or 503, never the upload's fault.
        slow = (b'<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"><filter id="t"><feTurbulence '
                b'baseFrequency="0.02" numOctaves="300"/></filter><rect width="256" height="256" filter="url(#t)"/></svg>')
        outcome = {}
        request = threading.Thread(target=lambda: outcome.__setitem__("answer", post(port, "/thumbnail?size=256&format=png", slow)))
        request.start()
        killed = 0
        deadline = time.monotonic() + 5
        while killed == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
            for pid in helper_pids(server.pid):
                try:
                    fields = open("/proc/%d/stat" % pid).read()
                    # A helper drawing: running, and busy for a while already.
                    if fields[fields.rfind(")") + 2] == "R" and int(fields[fields.rfind(")") + 2:].split()[11]) > 10:
                        os.kill(pid, signal.SIGKILL)
                        killed += 1
                except (OSError, ValueError, IndexError):
                    pass
        request.join()
        status, body, headers, _ = outcome["answer"]
        check(killed >= 1 and (status == 200 or (status == 503 and "Retry-After" in headers)),
              "a helper killed mid-decode (%d killed): %d %s" % (killed, status, body[:80] if status != 200 else b""))

        for thread in threads:
            thread.join()
        check(results["headers"] < HEADER_TIMEOUT + 3, "headers a byte a second: cut after %.1f s" % results["headers"])
        check(results["body"] < 10 + 3 + 2, "a body a byte a second: cut after %.1f s" % results["body"])

        # A codec's message with a line break (libxml2's) stays on one log line.
        post(port, "/thumbnail", b"<svg xmlns='http://www.w3.org/2000/svg'>\n<g>\n</svg>")
        status, _, _, _ = post(port, "/thumbnail?size=128&format=jpeg", photo)
        check(status == 200, "still answering afterwards (%d)" % status)
        check(server.poll() is None, "the service is still running")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    lines = open(log.name, errors="replace").read().splitlines()
    stray = [line for line in lines if line and not line[:4].isdigit()]
    check(not stray, "every log line is one line (%d lines, %d stray: %r)" % (len(lines), len(stray), stray[:2]))
    check(any("\\n" in line for line in lines), "a codec message's line break is escaped in the log")
    check(any("helper lost" in line or "killed (SIGKILL)" in line for line in lines) or killed == 0, "the lost helper is in the log")
    os.unlink(log.name)
    if failures:
        print("edges: %d failure(s)" % len(failures))
        return 1
    print("edges: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

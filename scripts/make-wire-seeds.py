#!/usr/bin/env python3
"""Writes Fixtures/wire/: seed conversations for the `wire` fuzz target (Fuzz/NukeFuzz).

Each file is 8 bytes that choose the decode's limits, then helper messages: a kind byte, a
16-bit little-endian length, the payload, encoded as NukeIsolation's wire does (64-bit
little-endian integers and doubles, strings and blocks with a 64-bit length, -1 for none).
Honest answers and a few hostile ones, so the fuzzer starts from every message kind.
"""
import os
import struct

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "wire")


def i(v):
    return struct.pack("<q", v)


def d(v):
    return struct.pack("<d", v)


def b(v):
    return i(-1) if v is None else i(len(v)) + v


def s(v):
    return b(None if v is None else v.encode())


def msg(kind, payload):
    return bytes([kind]) + struct.pack("<H", len(payload)) + payload


def image(width=3, height=2, duration=-1.0, loop=0, animation=None, user_info=()):
    p = i(width) + i(height) + i(4) + i(8) + s("straight") + i(width * 4) + i(width * 4 * height)
    p += s("public.png") + b"\x00" + i(1) + b(None) + d(0.45455) + i(0) + i(loop) + d(duration) + b(None) + b(None)
    p += i(len(user_info))
    for key, tag, value in user_info:
        p += s(key) + i(tag) + b(value)
    p += b(animation)
    return b(p) + i(1)


def animation(frames=3, duration=0.1):
    p = i(3) + i(2) + i(0) + b(None) + i(frames)
    for _ in range(frames):
        p += i(0) + i(0) + i(3) + i(2) + d(duration) + i(0) + b"\x01"
    return p


header = s("public.png") + i(3) + i(2) + i(8) + i(4) + i(1) + b"\x00" + i(1) + b"\x00" + i(1)
failure = s("corrupt") + s("decoding") + s("public.png") + s("libpng") + s("IDAT: CRC error")
limits = bytes([64, 8, 16, 16, 0, 0, 0, 0])
seeds = {
    "honest-still": limits + msg(12, header) + msg(16, i(24)) + msg(14, image()),
    "honest-animation": limits + msg(16, i(24)) + msg(14, image(duration=0.1, animation=animation())),
    "honest-failure": limits + msg(12, header) + msg(15, failure),
    "previews": limits + msg(16, i(24)) + msg(13, image(user_info=[("nukecodecs/is-progressive", 3, b"\x01")])) + msg(14, image()),
    "hostile-duration": limits + msg(16, i(24)) + msg(14, image(duration=float("nan"), animation=animation(duration=1e300))),
    "hostile-allocations": limits + msg(16, i(1 << 40)) + msg(16, i(-1)) + msg(16, i(60000)) + msg(16, i(60000)),
}
os.makedirs(here, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(here, name + ".wire"), "wb") as f:
        f.write(data)
print(f"wrote {len(seeds)} seeds to Fixtures/wire/")

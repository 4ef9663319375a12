#!/usr/bin/env python3
"""Makes the APNG fixtures in Fixtures/apng with Pillow (whose PNG reader and writer do not use
libpng), with each frame composited by Pillow's APNG reader as the reference (PAM).

Usage: scripts/make-apng-fixtures.py [Fixtures directory]
"""
import json
import os
import struct
import sys
import zlib

from PIL import Image, ImageDraw, ImageSequence

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "Fixtures")
out = os.path.join(root, "apng")
os.makedirs(out, exist_ok=True)


def frames_rgba(width, height, count, seed):
    """Frames with moving shapes, some transparency."""
    frames = []
    for i in range(count):
        im = Image.new("RGBA", (width, height), (0, 0, 0, 0))
        d = ImageDraw.Draw(im)
        d.rectangle([i * 3, i * 2, i * 3 + width // 2, i * 2 + height // 2], fill=(200, 40 + 20 * i, 80, 255))
        d.ellipse([width // 3, height // 3 - i, width - 2, height - 2 - i], fill=(30, 120, 220 - 10 * i, 160))
        d.line([0, (seed + i * 5) % height, width - 1, height - 1 - (i * 7) % height], fill=(255, 255, 0, 255), width=2)
        frames.append(im)
    return frames


def write_pam(im, path):
    im = im.convert("RGBA")
    w, h = im.size
    with open(path, "wb") as f:
        f.write(f"P7\nWIDTH {w}\nHEIGHT {h}\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n".encode())
        f.write(im.tobytes())


def references(path, name):
    """Pillow's composited frames (full canvas, RGBA) as name.frameN.pam."""
    with Image.open(path) as im:
        # With a default image that is not part of the animation, Pillow shows it as its frame
        # 0: the references are the animation's frames only.
        skip = 1 if im.info.get("default_image") else 0
        count = 0
        for index, frame in enumerate(ImageSequence.Iterator(im)):
            if index < skip:
                continue
            write_pam(frame.convert("RGBA"), os.path.join(out, f"{name}.frame{index - skip}.pam"))
            count += 1
        return count, im.info.get("loop", 0)


fixtures = []


def add(name, frames, **save):
    path = os.path.join(out, name + ".png")
    frames[0].save(path, save_all=True, append_images=frames[1:], **save)
    count, loop = references(path, name)
    fixtures.append({"file": name + ".png", "frames": count, "loop": loop,
                     "width": frames[0].width, "height": frames[0].height})


add("anim-basic", frames_rgba(48, 32, 4, 1), duration=[100, 50, 200, 30], loop=0)
add("anim-loop3", frames_rgba(40, 40, 3, 7), duration=80, loop=3)
add("anim-dispose-background", frames_rgba(48, 32, 4, 3), duration=60, loop=0, disposal=1)
add("anim-dispose-previous", frames_rgba(48, 32, 4, 5), duration=60, loop=0, disposal=[0, 2, 2, 0])
# Source-over blending with only opaque and transparent pixels: Pillow's APNG reader pastes an
# OVER frame with its alpha as the mask, which is not the spec's source-over when both the frame
# and the canvas are partly transparent (the core compositor follows the spec; its own tests
# cover partial alpha). With binary alpha the two agree.
binary = [f.point(lambda v: v).copy() for f in frames_rgba(48, 32, 4, 9)]
for f in binary:
    f.putalpha(f.getchannel("A").point(lambda a: 255 if a >= 128 else 0))
add("anim-blend-over", binary, duration=60, loop=0, blend=1)
add("anim-rgb", [f.convert("RGB") for f in frames_rgba(36, 24, 3, 11)], duration=40, loop=0)
# The default image is not part of the animation: Pillow writes it with default_image=True.
add("anim-default-not-frame", frames_rgba(32, 32, 4, 13), duration=50, loop=0, default_image=True)


def chunks(data):
    offset = 8
    while offset < len(data):
        length = struct.unpack(">I", data[offset:offset + 4])[0]
        yield offset, data[offset + 4:offset + 8], data[offset + 8:offset + 8 + length]
        offset += 12 + length


def rebuild(data, edit):
    """The file with each chunk passed through `edit(type, payload)` -> payload or None (drop)."""
    out_bytes = bytearray(data[:8])
    for _, ctype, payload in chunks(data):
        payload = edit(ctype, payload)
        if payload is None:
            continue
        out_bytes += struct.pack(">I", len(payload)) + ctype + payload
        out_bytes += struct.pack(">I", zlib.crc32(ctype + payload) & 0xFFFFFFFF)
    return bytes(out_bytes)


base = open(os.path.join(out, "anim-basic.png"), "rb").read()


def bad_sequence(ctype, payload):
    if ctype == b"fdAT" and struct.unpack(">I", payload[:4])[0] == 2:
        return struct.pack(">I", 9) + payload[4:]
    return payload


def outside(ctype, payload):
    if ctype == b"fcTL" and struct.unpack(">I", payload[:4])[0] > 0:
        return payload[:12] + struct.pack(">I", 1000) + payload[16:]   # x offset far outside
    return payload


# Broken APNG chunks: browsers show the default image; so must we.
for name, edit in [("broken-sequence", bad_sequence), ("broken-frame-outside", outside)]:
    with open(os.path.join(out, name + ".png"), "wb") as f:
        f.write(rebuild(base, edit))
    # Reference: the default image, as libpng and Pillow's still reader see it.
    with Image.open(os.path.join(out, "anim-basic.png")) as im:
        write_pam(im.convert("RGBA"), os.path.join(out, name + ".default.pam"))
    fixtures.append({"file": name + ".png", "broken": True, "width": 48, "height": 32})

with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump({"format": "apng", "tool": f"Pillow {Image.__version__}", "fixtures": fixtures}, f, indent=2, sort_keys=True)
print(f"apng fixtures: {len(fixtures)} in {out}")

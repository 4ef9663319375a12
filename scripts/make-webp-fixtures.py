#!/usr/bin/env python3
"""Generates NukeWebP's test fixtures (Fixtures/webp) with reference decodes.

Run through scripts/make-fixtures.sh (or directly: make-webp-fixtures.py FIXTURES_DIR). The files
are written by libwebp's command-line tools (cwebp, img2webp, gif2webp, webpmux from Debian's
`webp` package) from images Pillow draws:

- still lossy, lossless, lossy and lossless with alpha, grey, odd and tiny sizes (cwebp);
- metadata: an ICC profile, EXIF with orientation 6 and XMP added with webpmux;
- animations: img2webp (mixed lossy/lossless frames, loop count), gif2webp (from a GIF Pillow
  writes), and webpmux (explicit frame offsets, disposal to background and blending off, a
  background colour);
- invalid files: a truncated lossy file, a RIFF header over junk, an animation whose frame was
  patched to lie outside the canvas, a VP8 chunk claiming more bytes than the RIFF holds.

References: still images decoded by `dwebp` (PAM with alpha, PPM without), and for some opaque
ones also `dwebp -scale` to fit a target size ("scaled" in the manifest); animations
composited by Pillow (its own libwebp build's WebPAnimDecoder), written as PAM per frame, named
NAME.N.pam. Frames that blend use binary alpha, so the reference does not depend on how a
compositor rounds partial alpha.

manifest.json follows the conformance kit's schema (NukeConformance FixtureManifest) plus, per
animated fixture, "frames", "loop", "durations" (seconds) and "background" (RGBA).
"""

import io
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

from PIL import Image, ImageCms, ImageSequence


def run(args):
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.exit("make-webp-fixtures: %s failed: %s" % (" ".join(args), proc.stderr.decode(errors="replace")))
    return proc.stdout


def fit_size(width, height, target_width, target_height):
    """NukeCore's ImageResampler.targetSize for .aspectFit: the limiting side gets the target's
    length, the other is rounded to nearest (half away from zero) and kept inside the target."""
    sx, sy = target_width / width, target_height / height
    scale = min(sx, sy)
    if scale >= 1:
        return width, height

    def side(length, target, side_scale):
        if side_scale == scale:
            return min(length, target)
        return min(max(1, int(length * scale + 0.5)), target)

    return side(width, target_width, sx), side(height, target_height, sy)


def scaled_references(webp, out, width, height, targets):
    """`dwebp -scale` decodes (libwebp's own scaler) for NukeWebP's prefersFastScaling, which
    must equal them: one PPM per target size, named NAME.fit-WxH.ppm."""
    entries = []
    for tw, th in targets:
        w, h = fit_size(width, height, tw, th)
        ref = os.path.basename(webp).replace(".webp", ".fit-%dx%d.ppm" % (tw, th))
        run(["dwebp", webp, "-scale", str(w), str(h), "-ppm", "-o", os.path.join(out, ref)])
        entries.append({"target": [tw, th], "width": w, "height": h, "reference": ref})
    return entries


def photo(width, height, seed, alpha=False):
    """A smooth image with some noise, like a small photo; optional alpha with soft edges."""
    rng = random.Random(seed)
    im = Image.new("RGBA" if alpha else "RGB", (width, height))
    for y in range(height):
        for x in range(width):
            r = (x * 255) // max(width - 1, 1)
            g = (y * 255) // max(height - 1, 1)
            b = (128 + 60 * ((x // 7 + y // 5) % 3) + rng.randint(-20, 20)) % 256
            if alpha:
                cx, cy = width / 2, height / 2
                d = ((x - cx) ** 2 / (cx * cx + 1) + (y - cy) ** 2 / (cy * cy + 1))
                a = max(0, min(255, int(255 * (1.3 - d))))
                im.putpixel((x, y), (r, g, b, a))
            else:
                im.putpixel((x, y), (r, g, b))
    return im


def solid(width, height, color, hole=None):
    """One colour; `hole` (x0, y0, x1, y1) is transparent."""
    im = Image.new("RGBA", (width, height), color)
    if hole:
        x0, y0, x1, y1 = hole
        for y in range(y0, y1):
            for x in range(x0, x1):
                im.putpixel((x, y), (0, 0, 0, 0))
    return im


def dwebp_reference(webp, out, alpha):
    run(["dwebp", webp, "-pam" if alpha else "-ppm", "-o", out])


def pillow_frames(path):
    """Every frame composited by Pillow, as RGBA images, with durations and loop count."""
    im = Image.open(path)
    frames, durations = [], []
    for frame in ImageSequence.Iterator(im):
        frames.append(frame.convert("RGBA").copy())
        durations.append(frame.info.get("duration", 0) / 1000.0)
    return frames, durations, im.info.get("loop", 0), im.info.get("background")


def save_pam(im, path):
    """PAM (RGB_ALPHA), written by hand so that the header is the kit's."""
    im = im.convert("RGBA")
    with open(path, "wb") as f:
        f.write(b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" % im.size)
        f.write(im.tobytes())


def exif_with_orientation(value):
    """A little-endian TIFF block with one IFD entry: Orientation."""
    return b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1) + struct.pack("<HHII", 0x0112, 3, 1, value) + struct.pack("<I", 0)


def main():
    out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "Fixtures", "webp")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    fixtures = []
    tmp = tempfile.mkdtemp()

    def still(name, source, args, alpha, made_with, lossless=False, **extra):
        src = os.path.join(tmp, name + ".png")
        source.save(src)
        path = os.path.join(out, name)
        run(["cwebp", "-quiet"] + args + [src, "-o", path])
        ref = name.replace(".webp", ".pam" if alpha else ".ppm")
        dwebp_reference(path, os.path.join(out, ref), alpha)
        entry = {"file": name, "kind": "valid", "reference": ref, "tolerance": 0,
                 "width": source.size[0], "height": source.size[1], "lossless": lossless,
                 "made_with": made_with, "notes": "reference: dwebp %s" % ("-pam" if alpha else "-ppm")}
        scaled = extra.pop("scaled", None)
        entry.update(extra)
        if scaled:
            entry["scaled"] = scaled_references(path, out, source.size[0], source.size[1], scaled)
        fixtures.append(entry)
        return path

    still("lossy.webp", photo(67, 45, 1), ["-q", "80"], False, "cwebp -q 80", scaled=[(16, 16), (33, 40)])
    still("lossy-q20-m6.webp", photo(64, 64, 2), ["-q", "20", "-m", "6", "-sharp_yuv"], False, "cwebp -q 20 -m 6 -sharp_yuv")
    still("lossless.webp", photo(41, 29, 3), ["-lossless"], False, "cwebp -lossless", lossless=True)
    still("lossy-alpha.webp", photo(50, 38, 4, alpha=True), ["-q", "75", "-alpha_q", "100"], True, "cwebp -q 75 -alpha_q 100")
    still("lossy-alpha-filtered.webp", photo(33, 47, 5, alpha=True), ["-q", "60", "-alpha_q", "50", "-alpha_filter", "best"], True,
          "cwebp -q 60 -alpha_q 50 -alpha_filter best")
    still("lossless-alpha.webp", photo(36, 36, 6, alpha=True), ["-lossless", "-exact"], True, "cwebp -lossless -exact", lossless=True)
    still("gray.webp", photo(40, 40, 7).convert("L"), ["-q", "85"], False, "cwebp -q 85 from a greyscale PNG")
    still("tiny.webp", photo(1, 1, 8), ["-q", "90"], False, "cwebp -q 90, 1×1")
    still("tall-odd.webp", photo(17, 133, 9), ["-q", "70"], False, "cwebp -q 70, 17×133 (odd width, many rows)",
          scaled=[(5, 40)])

    # Metadata: ICC, EXIF (orientation 6) and XMP added with webpmux.
    base = still("metadata-base.webp", photo(30, 20, 10), ["-q", "80"], False, "cwebp -q 80 (base of metadata.webp)")
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    icc_path, exif_path, xmp_path = (os.path.join(tmp, n) for n in ("p.icc", "e.exif", "x.xmp"))
    open(icc_path, "wb").write(icc)
    open(exif_path, "wb").write(exif_with_orientation(6))
    xmp = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta>'
    open(xmp_path, "wb").write(xmp)
    step1, step2 = os.path.join(tmp, "m1.webp"), os.path.join(tmp, "m2.webp")
    run(["webpmux", "-set", "icc", icc_path, base, "-o", step1])
    run(["webpmux", "-set", "exif", exif_path, step1, "-o", step2])
    run(["webpmux", "-set", "xmp", xmp_path, step2, "-o", os.path.join(out, "metadata.webp")])
    dwebp_reference(os.path.join(out, "metadata.webp"), os.path.join(out, "metadata.ppm"), False)
    import hashlib
    fixtures.append({"file": "metadata.webp", "kind": "valid", "reference": "metadata.ppm", "tolerance": 0,
                     "width": 30, "height": 20, "orientation": 6,
                     "icc_sha256": hashlib.sha256(icc).hexdigest(), "icc_size": len(icc),
                     "made_with": "cwebp -q 80, then webpmux -set icc / exif (orientation 6) / xmp",
                     "notes": "reference: dwebp -ppm; XMP is %d bytes" % len(xmp)})

    def animated(name, path, made_with, tolerance=0):
        frames, durations, loop, background = pillow_frames(path)
        stem = name.replace(".webp", "")
        for i, frame in enumerate(frames):
            save_pam(frame, os.path.join(out, "%s.%d.pam" % (stem, i)))
        if isinstance(background, tuple):
            background = list(background)
        elif isinstance(background, int):
            # Pillow reports ANIM's colour as one integer, stored as B, G, R, A bytes.
            b, g, r, a = background & 255, (background >> 8) & 255, (background >> 16) & 255, (background >> 24) & 255
            background = [r, g, b, a]
        fixtures.append({"file": name, "kind": "valid", "reference": "%s.0.pam" % stem, "tolerance": tolerance,
                         "width": frames[0].size[0], "height": frames[0].size[1], "lossless": False,
                         "made_with": made_with, "notes": "references: Pillow %s (libwebp WebPAnimDecoder), NAME.N.pam per frame" % Image.__version__,
                         "frames": len(frames), "loop": loop, "durations": durations, "background": background})

    # img2webp: whole-canvas frames, mixed lossy and lossless, the encoder picks rectangles.
    srcs = []
    for i, (seed, alpha) in enumerate([(20, False), (21, True), (22, True), (23, False)]):
        p = os.path.join(tmp, "f%d.png" % i)
        im = photo(48, 32, seed, alpha=alpha)
        if alpha:  # binary alpha
            im.putalpha(im.getchannel("A").point(lambda a: 255 if a >= 128 else 0))
        im.save(p)
        srcs.append(p)
    path = os.path.join(out, "anim-img2webp.webp")
    run(["img2webp", "-loop", "3", "-mixed", "-d", "80", srcs[0], "-d", "120", "-lossless", srcs[1],
         "-d", "50", "-lossy", "-q", "70", srcs[2], "-d", "200", srcs[3], "-o", path])
    animated("anim-img2webp.webp", path, "img2webp -loop 3 -mixed, 4 frames with durations 80/120/50/200 ms")

    # gif2webp from a GIF Pillow writes (palette frames with transparency).
    gif = os.path.join(tmp, "g.gif")
    gframes = [solid(30, 24, (200, 30, 30, 255), hole=(5, 5, 15, 15)), solid(30, 24, (30, 200, 30, 255)),
               solid(30, 24, (30, 30, 200, 255), hole=(10, 8, 25, 20))]
    gframes[0].save(gif, save_all=True, append_images=gframes[1:], duration=[100, 150, 70], loop=0, disposal=2)
    path = os.path.join(out, "anim-gif2webp.webp")
    run(["gif2webp", "-quiet", "-lossy", "-q", "90", gif, "-o", path])
    animated("anim-gif2webp.webp", path, "gif2webp -lossy -q 90 from a 3-frame GIF (disposal 2, holes)", tolerance=0)

    # webpmux: explicit offsets, disposal and blending.
    parts = []
    for i, (im, w, h) in enumerate([(solid(40, 30, (250, 250, 0, 255)), 40, 30),
                                     (solid(16, 12, (0, 0, 250, 255), hole=(4, 4, 12, 8)), 16, 12),
                                     (solid(20, 10, (0, 200, 0, 255), hole=(0, 0, 6, 10)), 20, 10),
                                     (solid(10, 10, (200, 0, 200, 255)), 10, 10)]):
        src = os.path.join(tmp, "part%d.png" % i)
        im.save(src)
        dst = os.path.join(tmp, "part%d.webp" % i)
        run(["cwebp", "-quiet", "-lossless", "-exact", src, "-o", dst])
        parts.append(dst)
    path = os.path.join(out, "anim-dispose-blend.webp")
    # +duration+x+y+dispose(0 none, 1 background)+blend(b or -b); offsets are even.
    run(["webpmux",
         "-frame", parts[0], "+100+0+0+0+b",
         "-frame", parts[1], "+150+4+6+1+b",
         "-frame", parts[2], "+50+20+10+0-b",
         "-frame", parts[3], "+300+28+18+1+b",
         "-loop", "0", "-bgcolor", "255,10,20,30", "-o", path])
    animated("anim-dispose-blend.webp", path, "webpmux: 4 lossless frames, offsets, dispose to background on frames 2 and 4, frame 3 not blended")

    # Invalid files.
    lossy = open(os.path.join(out, "lossy.webp"), "rb").read()
    open(os.path.join(out, "truncated.webp"), "wb").write(lossy[: len(lossy) // 2])
    fixtures.append({"file": "truncated.webp", "kind": "invalid", "expected_error": "incomplete",
                     "made_with": "the first half of lossy.webp"})
    open(os.path.join(out, "junk.webp"), "wb").write(b"RIFF" + struct.pack("<I", 40) + b"WEBP" + b"JUNK" * 10)
    fixtures.append({"file": "junk.webp", "kind": "invalid", "expected_error": "corrupt",
                     "made_with": "a RIFF WEBP header over 40 bytes of 'JUNK': no image chunk"})
    data = bytearray(open(os.path.join(out, "anim-dispose-blend.webp"), "rb").read())
    at = data.find(b"ANMF", 12, len(data))
    at = data.find(b"ANMF", at + 4)  # the second frame
    data[at + 8: at + 11] = struct.pack("<I", 30)[:3]  # x = 60 on a 40-wide canvas
    open(os.path.join(out, "frame-outside.webp"), "wb").write(bytes(data))
    fixtures.append({"file": "frame-outside.webp", "kind": "invalid", "expected_error": "corrupt",
                     "made_with": "anim-dispose-blend.webp with frame 2's X offset patched to 60 on a 40-wide canvas"})
    data = bytearray(lossy)
    data[16:20] = struct.pack("<I", len(lossy) * 4)  # the VP8 chunk size
    open(os.path.join(out, "chunk-overflow.webp"), "wb").write(bytes(data))
    fixtures.append({"file": "chunk-overflow.webp", "kind": "invalid", "expected_error": "corrupt",
                     "made_with": "lossy.webp with its VP8 chunk size patched past the RIFF size"})

    fixtures.sort(key=lambda f: f["file"])
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"format": "webp", "fixtures": fixtures}, f, indent=2)
        f.write("\n")
    print("make-webp-fixtures: %d fixtures in %s" % (len(fixtures), out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generates NukeGIF's test fixtures (Fixtures/gif) with composited reference frames.

Run through scripts/make-fixtures.sh (or directly: make-gif-fixtures.py FIXTURES_DIR). The GIFs
are written by tools independent of giflib's encoder: Pillow (still, transparency, disposal,
durations, loop counts) and gifsicle (interlacing, frame positions, loop counts); Pillow writes local colour tables; one
file has its logical screen patched smaller so its frames lie partly outside it.

References: every frame composited on the canvas by ImageMagick (`convert X.gif -coalesce`),
written as PAM (RGB_ALPHA, straight alpha), named NAME.N.pam (N from 0). ImageMagick's
coalesce clears a frame disposed to background to transparent, as browsers do; the script
cross-checks each reference against Pillow's own compositing where Pillow's semantics are the
same (frames not disposed to background), and fails when they differ.

manifest.json follows the conformance kit's schema (NukeConformance FixtureManifest), the
reference being frame 0, plus per fixture: "frames", "loop" (as stored, or null) and "durations"
(as stored, seconds). Two invalid files: a truncated animation and a zero-width screen.

Environment: IM_CONVERT = ImageMagick's convert (default /usr/bin/convert).
"""

import json
import os
import subprocess
import sys
import tempfile

from PIL import Image, ImageSequence

IM_CONVERT = os.environ.get("IM_CONVERT", "/usr/bin/convert")


def run(args):
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.exit("make-gif-fixtures: %s failed: %s" % (" ".join(args), proc.stderr.decode(errors="replace")))
    return proc.stdout


def solid(width, height, color, transparent_box=None):
    """An RGBA image of one colour, with an optional transparent (x0, y0, x1, y1) box."""
    im = Image.new("RGBA", (width, height), color)
    if transparent_box:
        x0, y0, x1, y1 = transparent_box
        for y in range(y0, y1):
            for x in range(x0, x1):
                im.putpixel((x, y), (0, 0, 0, 0))
    return im


def gradient(width, height):
    im = Image.new("RGB", (width, height))
    for y in range(height):
        for x in range(width):
            im.putpixel((x, y), ((x * 255) // max(width - 1, 1), (y * 255) // max(height - 1, 1), ((x + y) * 7) % 256))
    return im


def to_p(im, transparent=True):
    """Palette image with index 255 transparent where alpha < 128."""
    rgba = im.convert("RGBA")
    p = rgba.convert("RGB").quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    if transparent:
        alpha = rgba.getchannel("A")
        px = p.load()
        a = alpha.load()
        for y in range(p.height):
            for x in range(p.width):
                if a[x, y] < 128:
                    px[x, y] = 255
        pal = p.getpalette()[: 256 * 3]
        pal += [0] * (768 - len(pal))
        p.putpalette(pal)
        p.info["transparency"] = 255
    return p


def write_pam(path, im):
    """Writes RGBA PAM; fully transparent pixels are written as transparent black (their colour
    means nothing, and ImageMagick leaves the background colour there)."""
    im = im.convert("RGBA")
    px = im.load()
    for y in range(im.height):
        for x in range(im.width):
            if px[x, y][3] == 0:
                px[x, y] = (0, 0, 0, 0)
    header = "P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" % im.size
    with open(path, "wb") as f:
        f.write(header.encode() + im.tobytes())


def coalesce(gif_path):
    """The frames composited by ImageMagick, as RGBA images."""
    with tempfile.TemporaryDirectory() as tmp:
        pattern = "PNG32:" + os.path.join(tmp, "f-%04d.png")
        run([IM_CONVERT, gif_path, "-coalesce", pattern])
        frames = []
        for name in sorted(os.listdir(tmp)):
            frames.append(Image.open(os.path.join(tmp, name)).convert("RGBA").copy())
        return frames


def same_visible(a, b):
    """Equal where either is opaque; transparent pixels compare by alpha only."""
    if a.size != b.size:
        return False
    pa, pb = a.load(), b.load()
    for y in range(a.height):
        for x in range(a.width):
            ca, cb = pa[x, y], pb[x, y]
            if ca[3] == 0 and cb[3] == 0:
                continue
            if ca != cb:
                return False
    return True


def make(out):
    os.makedirs(out, exist_ok=True)
    manifest = {}
    tmp = tempfile.mkdtemp()

    def pillow_animation(name, frames, durations, disposal, loop=None, **extra):
        path = os.path.join(out, name)
        kwargs = dict(save_all=True, append_images=frames[1:], duration=durations, disposal=disposal, optimize=False)
        if loop is not None:
            kwargs["loop"] = loop
        kwargs.update(extra)
        frames[0].save(path, **kwargs)
        return path

    # still: a 200-colour gradient, one frame, no transparency.
    still = gradient(32, 24).quantize(colors=200, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    still.save(os.path.join(out, "still.gif"))
    # interlaced: the same, interlaced by gifsicle.
    run(["gifsicle", "--interlace", os.path.join(out, "still.gif"), "-o", os.path.join(out, "interlaced.gif")])
    # transparent: a still with a transparent hole.
    to_p(solid(16, 16, (200, 30, 40, 255), (4, 4, 12, 12))).save(os.path.join(out, "transparent.gif"), transparency=255)

    # Disposal: three frames, each with a transparent hole, so what shows through depends on
    # the previous frame's disposal.
    colors = [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)]
    holes = [(0, 0, 10, 10), (10, 10, 20, 20), (5, 5, 15, 15)]
    base = [to_p(solid(20, 20, c, h)) for c, h in zip(colors, holes)]
    for name, method in (("dispose-none.gif", 1), ("dispose-background.gif", 2), ("dispose-previous.gif", 3)):
        pillow_animation(name, base, [100, 200, 300], method, loop=0, transparency=255)

    # Frames at positions on a larger screen, loop count 3 (local colour tables: the Pillow files).
    parts = []
    for i, (c, size) in enumerate(zip(colors, [(8, 8), (6, 10), (12, 4)])):
        p = os.path.join(tmp, "part%d.gif" % i)
        to_p(solid(size[0], size[1], c, (1, 1, 3, 3)), transparent=True).save(p, transparency=255)
        parts.append(p)
    run(["gifsicle", "--loopcount=3", "--logical-screen", "20x16", "--disposal=none", "--delay=7",
         "--position", "0,0", parts[0], "--position", "10,4", parts[1], "--position", "4,12", parts[2],
         "-o", os.path.join(out, "positions-loop3.gif")])
    # mixed disposal, including background and previous on sub-rectangles.
    run(["gifsicle", "--no-loopcount", "--logical-screen", "20x16", "--delay=0",
         "--disposal=none", "--position", "0,0", parts[0],
         "--disposal=previous", "--position", "6,2", parts[1],
         "--disposal=background", "--position", "4,10", parts[2],
         "--disposal=none", "--position", "12,0", parts[0],
         "-o", os.path.join(out, "mixed-disposal.gif")])
    # outside: frames that stick out of a smaller screen (the screen is patched after writing).
    outside = os.path.join(out, "outside.gif")
    run(["gifsicle", "--loopcount=0", "--logical-screen", "20x16", "--delay=1", "--disposal=none",
         "--position", "0,0", parts[0], "--position", "10,8", parts[1], "--position", "14,12", parts[2],
         "-o", outside])
    with open(outside, "r+b") as f:
        f.seek(6)
        f.write(bytes([14, 0, 12, 0]))  # 14×12 screen: frames 2 and 3 are clipped
    # tiny delays: 0, 10 and 20 ms, loop forever.
    pillow_animation("tiny-delays.gif", [to_p(solid(8, 8, c), transparent=False) for c in colors], [0, 10, 20], 1, loop=0)

    made_with = {
        "still.gif": "Pillow (median-cut 200 colours, Pillow interlaces by default)",
        "interlaced.gif": "gifsicle --interlace still.gif",
        "transparent.gif": "Pillow, transparent index 255",
        "dispose-none.gif": "Pillow save_all, disposal 1, local colour tables",
        "dispose-background.gif": "Pillow save_all, disposal 2, local colour tables",
        "dispose-previous.gif": "Pillow save_all, disposal 3, local colour tables",
        "positions-loop3.gif": "gifsicle --loopcount=3 --position, 20x16 screen",
        "mixed-disposal.gif": "gifsicle --disposal none/previous/background on sub-rectangles, no loop extension",
        "outside.gif": "gifsicle, then the logical screen patched to 14x12: frame 2 partly, frame 3 wholly outside",
        "tiny-delays.gif": "Pillow save_all, durations 0, 10 and 20 ms",
    }
    fixtures = []
    for name in sorted(made_with):
        path = os.path.join(out, name)
        stem = name[:-4]
        frames = coalesce(path)
        pillow_frames = [f.convert("RGBA") for f in ImageSequence.Iterator(Image.open(path))]
        durations = [f.info.get("duration", 0) / 1000.0 for f in ImageSequence.Iterator(Image.open(path))]
        if len(pillow_frames) != len(frames):
            sys.exit("make-gif-fixtures: %s: Pillow sees %d frames, ImageMagick %d" % (name, len(pillow_frames), len(frames)))
        for i, frame in enumerate(frames):
            write_pam(os.path.join(out, "%s.%d.pam" % (stem, i)), frame)
        checked = name not in ("dispose-background.gif", "mixed-disposal.gif", "outside.gif")
        if checked:
            for i, (a, b) in enumerate(zip(frames, pillow_frames)):
                if not same_visible(a, b):
                    sys.exit("make-gif-fixtures: %s frame %d: ImageMagick and Pillow differ" % (name, i))
        im = Image.open(path)
        fixtures.append({
            "file": name,
            "kind": "valid",
            "reference": "%s.0.pam" % stem,
            "tolerance": 0,
            "width": im.size[0],
            "height": im.size[1],
            "lossless": True,
            "made_with": made_with.get(name, ""),
            "notes": "references: ImageMagick -coalesce, NAME.N.pam per frame" + ("; cross-checked with Pillow" if checked else ""),
            "frames": len(frames),
            "loop": im.info.get("loop"),
            "durations": durations,
        })
    # Invalid files: a truncated animation and a zero-width screen.
    with open(os.path.join(out, "dispose-none.gif"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.gif"), "wb") as f:
        f.write(data[: len(data) // 2])
    fixtures.append({"file": "truncated.gif", "kind": "invalid", "expected_error": "incomplete",
                     "made_with": "the first half of dispose-none.gif", "notes": ""})
    with open(os.path.join(out, "still.gif"), "rb") as f:
        data = bytearray(f.read())
    data[6:8] = b"\x00\x00"
    with open(os.path.join(out, "zero-width.gif"), "wb") as f:
        f.write(bytes(data))
    fixtures.append({"file": "zero-width.gif", "kind": "invalid", "expected_error": "corrupt",
                     "made_with": "still.gif with the logical screen width patched to 0", "notes": ""})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"format": "gif", "fixtures": fixtures}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    make(os.path.join(sys.argv[1] if len(sys.argv) > 1 else "Fixtures", "gif"))

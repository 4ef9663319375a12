#!/usr/bin/env python3
"""Generates NukeCodecs' JPEG and PNG test fixtures with reference decodes.

Run through scripts/make-fixtures.sh, which installs the tools this needs. Everything here is
deterministic: the source pixels come from fixed seeds, and the tools (cjpeg, Pillow, ImageMagick,
zlib) produce the same bytes for the same input, so re-running reproduces the same files.

    Fixtures/jpeg/  encoded with cjpeg (also Pillow and ImageMagick for CMYK/YCCK); references
                    decoded with djpeg (libjpeg-turbo), written as PAM.
    Fixtures/png/   encoded by the small PNG writer below (independent of libpng; ImageMagick for
                    two files); references are the known source pixels as PAM, cross-checked
                    against Pillow and ImageMagick decodes.

Usage: make-fixtures.py FIXTURES_DIR   (environment: IM_CONVERT = path of ImageMagick's convert)
"""

import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import PIL
from PIL import Image, ImageCms

IM_CONVERT = os.environ.get("IM_CONVERT", "/usr/bin/convert")

# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def fail(message):
    sys.stderr.write("make-fixtures: FAILED: " + message + "\n")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def run(args, stdin=None, ok_codes=(0,)):
    """Runs a tool, returning (stdout bytes, stderr text, exit code)."""
    proc = subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode not in ok_codes:
        fail("%s exited %d: %s" % (" ".join(args), proc.returncode, proc.stderr.decode(errors="replace")))
    return proc.stdout, proc.stderr.decode(errors="replace").strip(), proc.returncode


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def tool_versions():
    _, err, _ = run(["cjpeg", "-version"])
    jpeg = err.splitlines()[0].replace("libjpeg-turbo version ", "libjpeg-turbo ").strip()
    jpeg = jpeg.split(" (build")[0]
    out, _, _ = run([IM_CONVERT, "-version"])
    im = out.decode().splitlines()[0].split("https")[0].replace("Version: ", "").strip()
    return jpeg, im, "Pillow " + PIL.__version__


# --------------------------------------------------------------------------------------------
# PAM / PNM
# --------------------------------------------------------------------------------------------

TUPLTYPES = {1: "GRAYSCALE", 2: "GRAYSCALE_ALPHA", 3: "RGB", 4: "RGB_ALPHA"}


def pam_bytes(pixels, maxval):
    """pixels: array (h, w, depth). 8-bit for maxval 255, 16-bit big-endian for 65535."""
    h, w, depth = pixels.shape
    header = "P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL %d\nTUPLTYPE %s\nENDHDR\n" % (
        w, h, depth, maxval, TUPLTYPES[depth])
    if maxval == 255:
        check(pixels.min() >= 0 and pixels.max() <= 255, "8-bit PAM sample out of range")
        body = pixels.astype(np.uint8).tobytes()
    else:
        check(maxval == 65535 and pixels.min() >= 0 and pixels.max() <= 65535, "16-bit PAM range")
        body = pixels.astype(">u2").tobytes()
    return header.encode("ascii") + body


def parse_pam(data):
    """Parses our own PAM (and validates size). Returns (array, maxval, tupltype)."""
    end = data.index(b"ENDHDR\n") + len(b"ENDHDR\n")
    lines = data[:end].decode("ascii").split("\n")
    check(lines[0] == "P7", "PAM magic")
    fields = dict(line.split(" ", 1) for line in lines[1:] if line and line != "ENDHDR")
    w, h, d, m = (int(fields[k]) for k in ("WIDTH", "HEIGHT", "DEPTH", "MAXVAL"))
    t = fields["TUPLTYPE"]
    check(TUPLTYPES[d] == t, "PAM tuple type vs depth")
    bps = 1 if m == 255 else 2
    check(m in (255, 65535), "PAM maxval")
    check(len(data) - end == w * h * d * bps, "PAM payload size")
    dtype = np.uint8 if bps == 1 else ">u2"
    return np.frombuffer(data[end:], dtype=dtype).reshape(h, w, d).astype(np.int64), m, t


def parse_pnm(data):
    """Parses binary PGM/PPM/PAM as written by djpeg or ImageMagick. Returns (array, maxval)."""
    if data.startswith(b"P7"):
        end = data.index(b"ENDHDR\n") + 7
        fields = {}
        for line in data[:end].decode("ascii").split("\n")[1:]:
            if line and not line.startswith("#") and line != "ENDHDR":
                k, _, v = line.partition(" ")
                fields[k] = v
        w, h, d, m = (int(fields[k]) for k in ("WIDTH", "HEIGHT", "DEPTH", "MAXVAL"))
        body = data[end:]
    else:
        magic = data[:2]
        check(magic in (b"P5", b"P6"), "unexpected PNM magic %r" % magic)
        d = 1 if magic == b"P5" else 3
        tokens, pos = [], 2
        while len(tokens) < 3:
            while data[pos:pos + 1].isspace():
                pos += 1
            if data[pos:pos + 1] == b"#":
                pos = data.index(b"\n", pos)
                continue
            start = pos
            while not data[pos:pos + 1].isspace():
                pos += 1
            tokens.append(int(data[start:pos]))
        w, h, m = tokens
        body = data[pos + 1:]
    dtype = np.uint8 if m < 256 else ">u2"
    bps = 1 if m < 256 else 2
    check(len(body) == w * h * d * bps, "PNM payload size")
    return np.frombuffer(body, dtype=dtype).reshape(h, w, d).astype(np.int64), m


# --------------------------------------------------------------------------------------------
# Source pixels
# --------------------------------------------------------------------------------------------


def field(w, h, seed, channels=3, maxval=255, noise=4.0):
    """Smooth gradients + hard edges + a little seeded noise, as floats in [0, maxval]."""
    rng = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    fx = x / max(w - 1, 1)
    fy = y / max(h - 1, 1)
    r = fx
    g = fy
    b = (1 - fx) * (0.35 + 0.65 * fy)
    img = np.stack([r, g, b], axis=-1)
    # Hard edges: a flat rectangle, a diagonal where colours invert, a 2-pixel checkerboard.
    rect = (x >= w // 5) & (x < w // 2) & (y >= h // 4) & (y < (3 * h) // 4)
    img[rect] = (0.98, 0.12, 0.16)
    diag = (x - y * (w / max(h, 1))) > w * 0.55
    img[diag] = 1 - img[diag]
    checker = (x >= (3 * w) // 4) & (y >= (2 * h) // 3) & ((((x // 2) + (y // 2)) % 2) == 0)
    img[checker] = (0.05, 0.05, 0.05)
    img = img * maxval + rng.normal(0, noise * maxval / 255.0, img.shape)
    img = np.clip(img, 0, maxval)
    if channels == 1:
        img = img[..., 0:1] * 0.299 + img[..., 1:2] * 0.587 + img[..., 2:3] * 0.114
    return img


def quantize(img, maxval):
    return np.clip(np.rint(img), 0, maxval).astype(np.int64)


def alpha_plane(w, h, maxval):
    """Alpha gradient with fully transparent (left strip, a disc) and fully opaque (right strip)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    a = (x - w / 8.0) / max(w * 0.75, 1)
    a = np.clip(a, 0, 1)
    a[x < w / 8.0] = 0
    a[x >= (7 * w) / 8.0] = 1
    cy, cx, radius = h / 2.0, w / 2.0, min(w, h) / 5.0
    a[(x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2] = 0
    top = (y < h / 6.0) & (x >= w / 3.0)
    a[top] = 1
    return quantize(a[..., None] * maxval, maxval)


def rgb8(w, h, seed):
    return quantize(field(w, h, seed), 255)


def ppm_bytes(pixels):
    h, w, d = pixels.shape
    magic = b"P5" if d == 1 else b"P6"
    return magic + b"\n%d %d\n255\n" % (w, h) + pixels.astype(np.uint8).tobytes()


# --------------------------------------------------------------------------------------------
# ICC profiles (hand-written ICC v2 RGB display profiles, valid for LittleCMS and libpng)
# --------------------------------------------------------------------------------------------


def s15(v):
    return struct.pack(">i", int(round(v * 65536)))


def xyz_tag(x, y, z):
    return b"XYZ " + b"\0" * 4 + s15(x) + s15(y) + s15(z)


def desc_tag(text):
    ascii_ = text.encode("ascii") + b"\0"
    return (b"desc" + b"\0" * 4 + struct.pack(">I", len(ascii_)) + ascii_ +
            struct.pack(">II", 0, 0) + struct.pack(">HB", 0, 0) + b"\0" * 67)


def text_tag(text):
    return b"text" + b"\0" * 4 + text.encode("ascii") + b"\0"


def curv_tag(entries):
    return b"curv" + b"\0" * 4 + struct.pack(">I", len(entries)) + b"".join(
        struct.pack(">H", e) for e in entries)


def srgb_curve(n):
    out = []
    for i in range(n):
        v = i / (n - 1)
        lin = v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
        out.append(int(round(lin * 65535)))
    return out


def make_icc(description, curve_entries):
    """An ICC v2 'mntr' RGB profile with sRGB primaries (D50-adapted) and the given TRC.

    curve_entries == 1 gives a single gamma-2.2 curve shared by the three channels (small
    profile); a larger number gives three separate sampled sRGB curves (large profile)."""
    if curve_entries == 1:
        curves = [curv_tag([0x0233])]  # u8Fixed8 gamma 2.199
    else:
        c = srgb_curve(curve_entries)
        curves = [curv_tag(c), curv_tag(c), curv_tag(c)]
    tags = [
        (b"desc", desc_tag(description)),
        (b"cprt", text_tag("No copyright, use freely (NukeCodecs test fixture)")),
        (b"wtpt", xyz_tag(0.9642, 1.0, 0.8249)),
        (b"rXYZ", xyz_tag(0.4360747, 0.2225045, 0.0139322)),
        (b"gXYZ", xyz_tag(0.3850649, 0.7168786, 0.0971045)),
        (b"bXYZ", xyz_tag(0.1430804, 0.0606169, 0.7141733)),
    ]
    trc_names = [b"rTRC", b"gTRC", b"bTRC"]
    table_len = 4 + 12 * (len(tags) + 3)
    offset = 128 + table_len
    entries, blobs = [], []

    def place(data):
        nonlocal offset
        at = offset
        padded = data + b"\0" * (-len(data) % 4)
        blobs.append(padded)
        offset += len(padded)
        return at, len(data)

    for sig, data in tags:
        at, size = place(data)
        entries.append((sig, at, size))
    if len(curves) == 1:
        at, size = place(curves[0])
        for sig in trc_names:
            entries.append((sig, at, size))
    else:
        for sig, data in zip(trc_names, curves):
            at, size = place(data)
            entries.append((sig, at, size))
    body = struct.pack(">I", len(entries)) + b"".join(
        sig + struct.pack(">II", at, size) for sig, at, size in entries) + b"".join(blobs)
    total = 128 + len(body)
    header = (struct.pack(">I", total) + b"\0" * 4 + struct.pack(">I", 0x02100000) + b"mntr" +
              b"RGB " + b"XYZ " + struct.pack(">6H", 2024, 1, 1, 0, 0, 0) + b"acsp" +
              b"\0" * 4 + struct.pack(">I", 0) + b"\0" * 4 + b"\0" * 4 + b"\0" * 8 +
              struct.pack(">I", 0) + s15(0.9642) + s15(1.0) + s15(0.8249) + b"\0" * 4 +
              b"\0" * 16 + b"\0" * 28)
    check(len(header) == 128, "ICC header length")
    profile = header + body
    # Validate with LittleCMS.
    prof = ImageCms.ImageCmsProfile(io.BytesIO(profile))
    check(ImageCms.getProfileDescription(prof).strip() == description, "ICC description round trip")
    return profile


# --------------------------------------------------------------------------------------------
# JPEG structure helpers
# --------------------------------------------------------------------------------------------


def jpeg_segments(data):
    """Walks a JPEG: yields (marker, start, end) for every marker segment, scan header and EOI.
    Entropy-coded data following an SOS is included in the SOS item's span."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("JPEG without SOI")
    out = [(0xD8, 0, 2)]
    pos = 2
    n = len(data)
    while pos < n:
        if data[pos] != 0xFF:
            raise ValueError("JPEG marker expected at %d" % pos)
        while pos < n and data[pos] == 0xFF:
            pos += 1
        marker = data[pos]
        start = pos - 1
        pos += 1
        if marker == 0xD9:
            out.append((marker, start, pos))
            break
        length = struct.unpack(">H", data[pos:pos + 2])[0]
        pos += length
        if marker == 0xDA:
            # Skip entropy-coded data: stop at FF followed by a non-zero, non-RST byte.
            while pos < n:
                if data[pos] == 0xFF and pos + 1 < n and data[pos + 1] != 0 and not (0xD0 <= data[pos + 1] <= 0xD7):
                    break
                pos += 1
        out.append((marker, start, pos))
    return out


def count_scans(data):
    return sum(1 for m, _, _ in jpeg_segments(data) if m == 0xDA)


def sof_info(data):
    for m, s, _ in jpeg_segments(data):
        if m in (0xC0, 0xC1, 0xC2, 0xC3, 0xC9, 0xCA, 0xCB):
            h, w = struct.unpack(">HH", data[s + 5:s + 9])
            return m, s, w, h
    raise ValueError("no SOF")


def adobe_transform(data):
    for m, s, e in jpeg_segments(data):
        if m == 0xEE and data[s + 4:s + 9] == b"Adobe":
            return data[s + 15]
    return None


def insert_after_app0(data, segment):
    segs = jpeg_segments(data)
    check(segs[1][0] == 0xE0, "expected JFIF APP0 after SOI")
    at = segs[1][2]
    return data[:at] + segment + data[at:]


def exif_segment(orientation, little_endian):
    """An APP1 Exif segment whose IFD0 holds Make and Orientation."""
    bo = "<" if little_endian else ">"
    make = b"NukeCodecs\0"
    tiff = (b"II*\0" if little_endian else b"MM\0*") + struct.pack(bo + "I", 8)
    ifd_entries = 2
    data_offset = 8 + 2 + 12 * ifd_entries + 4
    tiff += struct.pack(bo + "H", ifd_entries)
    tiff += struct.pack(bo + "HHII", 0x010F, 2, len(make), data_offset)          # Make, ASCII
    tiff += struct.pack(bo + "HHI", 0x0112, 3, 1) + struct.pack(bo + "HH", orientation, 0)  # SHORT
    tiff += struct.pack(bo + "I", 0)                                             # no IFD1
    tiff += make
    payload = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload, tiff


# --------------------------------------------------------------------------------------------
# Manifest entries
# --------------------------------------------------------------------------------------------


def entry(file, kind, **kw):
    e = {
        "file": file,
        "kind": kind,
        "reference": None,
        "reference16": None,
        "tolerance": None,
        "width": None,
        "height": None,
        "progressive": False,
        "interlaced": False,
        "scans": None,
        "orientation": None,
        "icc_sha256": None,
        "icc_size": None,
        "gamma": None,
        "srgb_intent": None,
        "expected_error": None,
        "lossless": False,
        "made_with": "",
        "notes": "",
        "declared_width": None,
        "declared_height": None,
        "derived_from": None,
    }
    for k, v in kw.items():
        check(k in e, "unknown manifest key " + k)
        e[k] = v
    check(kind in ("valid", "invalid"), "kind")
    check((kind == "valid") == (e["expected_error"] is None), "expected_error vs kind for " + file)
    check(e["expected_error"] in (None, "incomplete", "corrupt", "limit"), "expected_error value")
    return e


def write_manifest(folder, fmt, entries):
    names = [e["file"] for e in entries]
    check(len(names) == len(set(names)), "duplicate fixture names")
    doc = {"format": fmt, "fixtures": entries}
    write(os.path.join(folder, "manifest.json"), (json.dumps(doc, indent=2) + "\n").encode())


# --------------------------------------------------------------------------------------------
# JPEG fixtures
# --------------------------------------------------------------------------------------------


def make_jpeg(out, tmp, versions, icc_small, icc_large):
    jpeg_ver, im_ver, pil_ver = versions
    entries = []

    def src_file(name, pixels):
        path = os.path.join(tmp, name)
        write(path, ppm_bytes(pixels))
        return path

    def djpeg_ref(jpg_path, ref_name, extra_args=()):
        pnm, err, _ = run(["djpeg", "-pnm", *extra_args, jpg_path])
        check(err == "", "djpeg warned on %s: %s" % (jpg_path, err))
        pixels, maxval = parse_pnm(pnm)
        check(maxval == 255, "djpeg maxval")
        write(os.path.join(out, ref_name), pam_bytes(pixels, 255))
        return pixels

    def cjpeg(name, src, args, desc, notes="", ref_name=None, **kw):
        path = os.path.join(out, name)
        data, _, _ = run(["cjpeg", *args, src])
        write(path, data)
        return add_valid(name, data, "cjpeg %s (%s); reference djpeg -pnm" % (" ".join(args), jpeg_ver)
                         if desc is None else desc, notes, ref_name, **kw)

    def add_valid(name, data, made_with, notes="", ref_name=None, **kw):
        path = os.path.join(out, name)
        stem = os.path.splitext(name)[0]
        if ref_name is None:
            ref_name = stem + ".pam"
            pixels = djpeg_ref(path, ref_name)
        else:
            pixels = parse_pam(read(os.path.join(out, ref_name)))[0]
            check(np.array_equal(djpeg_ref(path, ref_name + ".check"), pixels), "shared reference differs")
            os.remove(os.path.join(out, ref_name + ".check"))
        sof, _, w, h = sof_info(data)
        check(pixels.shape[:2] == (h, w), "djpeg size vs SOF")
        kw.setdefault("orientation", 1)
        e = entry(name, "valid", reference=ref_name, tolerance=0, width=w, height=h,
                  progressive=(sof in (0xC2, 0xCA)), scans=count_scans(data), made_with=made_with,
                  notes=notes, declared_width=w, declared_height=h, **kw)
        entries.append(e)
        return data

    def add_invalid(name, data, error, made_with, notes, derived_from=None, dims=None, djpeg_args=(), **kw):
        write(os.path.join(out, name), data)
        scans = None
        progressive = False
        try:
            scans = count_scans(data)
        except (ValueError, struct.error, IndexError):
            pass
        try:
            sof, _, w, h = sof_info(data)
            progressive = sof in (0xC2, 0xCA)
            if dims is None:
                dims = (w, h)
        except (ValueError, struct.error, IndexError):
            pass
        # djpeg's verdict, for the notes.
        path = os.path.join(out, name)
        args = ["djpeg", "-pnm", "-maxscans", "500", *djpeg_args]
        proc = subprocess.run(args + [path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        msg = proc.stderr.decode(errors="replace").strip().replace("\n", " | ")
        verdict = "%s: exit %d, %s" % (" ".join(args), proc.returncode, msg or "no message")
        entries.append(entry(name, "invalid", expected_error=error, made_with=made_with,
                             notes=(notes + " " + verdict).strip(), progressive=progressive, scans=scans,
                             declared_width=dims[0] if dims else None,
                             declared_height=dims[1] if dims else None, derived_from=derived_from, **kw))
        return proc

    # Sources.
    s37 = src_file("s37x23.ppm", rgb8(37, 23, 1))
    s61 = src_file("s61x45.ppm", rgb8(61, 45, 2))
    s160 = src_file("s160x120.ppm", rgb8(160, 120, 3))
    s16 = src_file("s16x16.ppm", rgb8(16, 16, 4))
    s1 = src_file("s1x1.ppm", rgb8(1, 1, 5))
    s33 = src_file("s33x17.ppm", rgb8(33, 17, 6))

    q = ["-quality", "85"]
    cjpeg("baseline-420.jpg", s37, q + ["-sample", "2x2"], None,
          "Odd size: partial MCUs on both edges (37x23, MCU 16x16).")
    cjpeg("baseline-444.jpg", s37, q + ["-sample", "1x1"], None)
    cjpeg("baseline-422.jpg", s61, q + ["-sample", "2x1"], None)
    cjpeg("baseline-440.jpg", s33, q + ["-sample", "1x2"], None, "4:4:0 (h1v2) chroma.")
    cjpeg("baseline-420-160x120.jpg", s160, q + ["-sample", "2x2"], None)
    cjpeg("baseline-1x1.jpg", s1, q, None, "Single pixel.")
    cjpeg("grayscale.jpg", s61, q + ["-grayscale"], None)
    cjpeg("restart-rows.jpg", s61, q + ["-restart", "1"], None, "RST marker after every MCU row.")
    cjpeg("restart-blocks.jpg", s37, q + ["-restart", "1B"], None, "RST marker after every MCU.")
    cjpeg("optimized.jpg", s61, q + ["-optimize"], None, "Optimized Huffman tables.")
    cjpeg("arithmetic.jpg", s61, q + ["-arithmetic"], None, "Arithmetic coding (SOF9).")
    cjpeg("progressive.jpg", s61, q + ["-progressive"], None, "cjpeg's default progression script.")
    cjpeg("progressive-gray.jpg", s61, q + ["-grayscale", "-progressive"], None)
    cjpeg("progressive-160x120.jpg", s160, q + ["-progressive"], None, "For preview tests.")
    cjpeg("progressive-arithmetic.jpg", s37, q + ["-progressive", "-arithmetic"], None,
          "Progressive arithmetic coding (SOF10).")

    # Custom scan script with many scans (successive approximation and narrow spectral bands).
    script = ["0,1,2: 0-0, 0, 1;"]
    for band in ["1-1", "2-2", "3-3", "4-5", "6-8", "9-12", "13-17", "18-23", "24-30", "31-38",
                 "39-47", "48-55", "56-63"]:
        script.append("0: %s, 0, 2;" % band)
    script += ["1: 1-5, 0, 1;", "1: 6-63, 0, 1;", "2: 1-5, 0, 1;", "2: 6-63, 0, 1;"]
    script += ["0: 1-9, 2, 1;", "0: 10-30, 2, 1;", "0: 31-63, 2, 1;"]
    script += ["0,1,2: 0-0, 1, 0;", "1: 1-63, 1, 0;", "2: 1-63, 1, 0;"]
    script += ["0: %d-%d, 1, 0;" % (i, i) for i in range(1, 17)]
    script += ["0: 17-32, 1, 0;", "0: 33-48, 1, 0;", "0: 49-63, 1, 0;"]
    script_path = os.path.join(tmp, "many.scans")
    write(script_path, ("\n".join(script) + "\n").encode())
    data = cjpeg("progressive-many-scans.jpg", s61, q + ["-scans", script_path],
                 "cjpeg -quality 85 -scans <script> (%s); reference djpeg -pnm" % jpeg_ver,
                 "Custom scan script (in make-fixtures.py): %d scans, successive approximation, "
                 "single-coefficient bands. For scan-cap tests." % len(script))
    check(count_scans(data) == len(script), "scan count of custom script")

    # Decodes at 1/8 read only some scans (NukeJPEG's JPEGScanFilter): progressive files big
    # enough for a 1/8 decode, in every sampling, each with djpeg's 1/8 decode of the whole file
    # (Fixtures/jpeg-eighth/STEM.pam) beside the full-size reference.
    s203 = src_file("s203x131.ppm", rgb8(203, 131, 7))
    eighth_out = os.path.join(os.path.dirname(out), "jpeg-eighth")
    os.makedirs(eighth_out, exist_ok=True)
    eighth = [("420", ["-sample", "2x2"]), ("444", ["-sample", "1x1"]), ("422", ["-sample", "2x1"]),
              ("440", ["-sample", "1x2"]), ("gray", ["-grayscale"]),
              ("420-restart", ["-sample", "2x2", "-restart", "1B"])]
    # A script whose DC is never split (no DC refinement) and whose chroma AC is interleaved with luma's.
    eighth_script = os.path.join(tmp, "eighth.scans")
    write(eighth_script, b"0,1,2: 0-0, 0, 0;\n0: 1-5, 0, 1;\n1: 1-63, 0, 0;\n0: 6-63, 0, 1;\n"
                         b"2: 1-63, 0, 0;\n0: 1-63, 1, 0;\n")
    eighth.append(("420-script", ["-sample", "2x2", "-scans", eighth_script]))
    for tag, args in eighth:
        name = "progressive-eighth-%s.jpg" % tag
        made_with = "cjpeg -quality 85 -progressive %s (%s); reference djpeg -pnm, and djpeg -pnm -scale 1/8 in ../jpeg-eighth/%s" % (
            " ".join(a if a != eighth_script else "<script in make-fixtures.py>" for a in args), jpeg_ver,
            "progressive-eighth-%s.pam" % tag)
        cjpeg(name, s203, q + ["-progressive"] + args, made_with,
              "203x131: a decode at 1/8 (26x17) reads only the DC of full-resolution components.")
        pnm, err, _ = run(["djpeg", "-pnm", "-scale", "1/8", os.path.join(out, name)])
        check(err == "", "djpeg warned on %s: %s" % (name, err))
        pixels, _ = parse_pnm(pnm)
        check(pixels.shape[:2] == (17, 26), "1/8 size of " + name)
        write(os.path.join(eighth_out, "progressive-eighth-%s.pam" % tag), pam_bytes(pixels, 255))

    # Scan bomb: a progressive file whose last AC scan is repeated until there are 1000 scans.
    # Repeating a first scan with Al = 0 is idempotent and libjpeg does not even warn, so an
    # uncapped decoder returns the same pixels; only a scan cap stops it.
    bomb_script = os.path.join(tmp, "bomb.scans")
    write(bomb_script, b"0,1,2: 0-0, 0, 0;\n0: 1-63, 0, 0;\n1: 1-63, 0, 0;\n2: 1-63, 0, 0;\n")
    base = cjpeg("progressive-16x16.jpg", s16, q + ["-scans", bomb_script],
                 "cjpeg -quality 85 -scans <4 scans, Al=0> (%s); reference djpeg -pnm" % jpeg_ver,
                 "Spectral selection only; the base of progressive-scan-bomb.jpg.")
    segs = jpeg_segments(base)
    last_sos = [s for s in segs if s[0] == 0xDA][-1]
    scan = base[last_sos[1]:last_sos[2]]
    bomb = base[:last_sos[2]] + scan * (1000 - 4) + base[last_sos[2]:]
    check(count_scans(bomb) == 1000, "bomb scan count")
    write(os.path.join(tmp, "bomb.jpg"), bomb)
    uncapped, err, _ = run(["djpeg", "-pnm", os.path.join(tmp, "bomb.jpg")])
    check(err == "" and np.array_equal(parse_pnm(uncapped)[0],
                                       parse_pam(read(os.path.join(out, "progressive-16x16.pam")))[0]),
          "uncapped bomb decode should equal its base")
    proc = add_invalid("progressive-scan-bomb.jpg", bomb, "limit",
                       "progressive-16x16.jpg with its last scan (Cr AC 1-63, Al=0) repeated to 1000 scans",
                       "1000 scans (spec violation: repeated spectral band). Without a scan cap libjpeg "
                       "decodes it silently to the pixels of progressive-16x16.pam; a decoder capping "
                       "scans (as djpeg -maxscans does) must refuse it.",
                       derived_from="progressive-16x16.jpg")
    check(proc.returncode != 0, "djpeg -maxscans should refuse the scan bomb")

    # CMYK (Adobe, transform 0) via Pillow and YCCK (Adobe, transform 2) via ImageMagick.
    cmyk_rule = ("Reference: djpeg -pnm, which converts libjpeg's JCS_CMYK output (Adobe-inverted "
                 "samples as stored: c,m,y,k with 255 = no ink) with R = c*k/255, G = m*k/255, "
                 "B = y*k/255 rounded to nearest, i.e. (x*k + 127) / 255 in integers. Cross-checked "
                 "exactly against Pillow's CMYK decode (Pillow un-inverts Adobe CMYK, so stored = 255 - "
                 "Pillow's value) with the same formula.")

    def cross_check_cmyk(path, ref_name):
        pil = np.asarray(Image.open(path).convert("CMYK") if Image.open(path).mode != "CMYK"
                         else Image.open(path)).astype(np.int64)
        stored = 255 - pil
        rgb = (stored[..., :3] * stored[..., 3:4] + 127) // 255
        ref = parse_pam(read(os.path.join(out, ref_name)))[0]
        check(np.array_equal(rgb, ref), "CMYK reference mismatch with Pillow for " + path)

    src = rgb8(37, 23, 7).astype(np.float64) / 255.0
    k = 1 - src.max(axis=-1, keepdims=True)
    cmy = np.where(k < 1, (1 - src - k) / np.maximum(1 - k, 1e-9), 0)
    ink = quantize(np.concatenate([cmy, k], axis=-1) * 255, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(ink, "CMYK").save(buf, "JPEG", quality=90)
    data = buf.getvalue()
    write(os.path.join(out, "cmyk-adobe.jpg"), data)
    check(adobe_transform(data) == 0, "Pillow CMYK should be Adobe transform 0")
    add_valid("cmyk-adobe.jpg", data,
              "Pillow Image.save(mode CMYK, quality=90) (%s, system %s); reference djpeg -pnm" % (pil_ver, jpeg_ver),
              "Adobe APP14 transform 0 (CMYK, inverted). " + cmyk_rule)
    cross_check_cmyk(os.path.join(out, "cmyk-adobe.jpg"), "cmyk-adobe.pam")

    ycck_path = os.path.join(out, "ycck-adobe.jpg")
    run([IM_CONVERT, s61, "-colorspace", "CMYK", "-quality", "90", "-strip", "jpg:" + ycck_path])
    data = read(ycck_path)
    check(adobe_transform(data) == 2, "ImageMagick CMYK JPEG should be YCCK (Adobe transform 2)")
    add_valid("ycck-adobe.jpg", data,
              "%s: convert src.ppm -colorspace CMYK -quality 90 -strip; reference djpeg -pnm" % im_ver,
              "Adobe APP14 transform 2 (YCCK, inverted; libjpeg converts YCCK to CMYK). " + cmyk_rule)
    cross_check_cmyk(ycck_path, "ycck-adobe.pam")

    # EXIF orientation: baseline-420.jpg with an APP1 Exif segment; same pixels, same reference.
    base = read(os.path.join(out, "baseline-420.jpg"))
    for endian, little in (("le", True), ("be", False)):
        for orientation in range(1, 9):
            seg, tiff = exif_segment(orientation, little)
            data = insert_after_app0(base, seg)
            name = "exif-orientation-%d-%s.jpg" % (orientation, endian)
            write(os.path.join(out, name), data)
            check(Image.open(io.BytesIO(data)).getexif().get(0x0112) == orientation, "EXIF round trip")
            add_valid(name, data,
                      "baseline-420.jpg + APP1 Exif (TIFF %s, IFD0: Make, Orientation) written by "
                      "make-fixtures.py; reference djpeg -pnm" % ("II" if little else "MM"),
                      "Pixels are identical to baseline-420.jpg; the decoder does not rotate.",
                      ref_name="baseline-420.pam", orientation=orientation,
                      derived_from="baseline-420.jpg")

    # ICC profiles.
    small_path = os.path.join(tmp, "small.icc")
    large_path = os.path.join(tmp, "large.icc")
    write(small_path, icc_small)
    write(large_path, icc_large)
    data = cjpeg("icc.jpg", s37, q + ["-icc", small_path],
                 "cjpeg -quality 85 -icc <make-fixtures.py sRGB-like v2 profile> (%s); reference djpeg -pnm" % jpeg_ver,
                 "One APP2 ICC_PROFILE chunk.", icc_size=len(icc_small), icc_sha256=sha256(icc_small))
    data = cjpeg("icc-multichunk.jpg", s37, q + ["-icc", large_path],
                 "cjpeg -quality 85 -icc <make-fixtures.py profile with sampled curves> (%s); reference djpeg -pnm" % jpeg_ver,
                 "", icc_size=len(icc_large), icc_sha256=sha256(icc_large))
    app2 = [s for s in jpeg_segments(data) if s[0] == 0xE2 and data[s[1] + 4:s[1] + 16] == b"ICC_PROFILE\0"]
    check(len(app2) >= 2, "large ICC should span several APP2 markers")
    entries[-1]["notes"] = "ICC profile split over %d APP2 ICC_PROFILE markers (in order)." % len(app2)
    # Same file with the APP2 chunks in reverse order (sequence numbers still correct).
    pieces = [data[s:e] for _, s, e in app2]
    first, last = app2[0][1], app2[-1][2]
    check(last - first == sum(len(p) for p in pieces), "APP2 chunks should be adjacent")
    reordered = data[:first] + b"".join(reversed(pieces)) + data[last:]
    write(os.path.join(out, "icc-multichunk-reordered.jpg"), reordered)
    add_valid("icc-multichunk-reordered.jpg", reordered,
              "icc-multichunk.jpg with its APP2 markers in reverse order; reference djpeg -pnm",
              "ICC chunks out of order; assemble by sequence number.", ref_name="icc-multichunk.pam",
              icc_size=len(icc_large), icc_sha256=sha256(icc_large), derived_from="icc-multichunk.jpg")
    for name in ("icc.jpg", "icc-multichunk.jpg", "icc-multichunk-reordered.jpg"):
        got = Image.open(os.path.join(out, name)).info.get("icc_profile")
        want = icc_small if name == "icc.jpg" else icc_large
        check(got == want, "Pillow reads back the ICC profile of " + name)

    # Invalid files.
    big = read(os.path.join(out, "baseline-420-160x120.jpg"))
    sos = [s for s in jpeg_segments(big) if s[0] == 0xDA][0]
    half = len(big) // 2
    check(half > sos[1] + 20, "half cut must land inside the scan data")
    add_invalid("truncated-half.jpg", big[:half], "incomplete",
                "baseline-420-160x120.jpg cut at 50%", "Cut inside the entropy-coded data; no EOI.",
                derived_from="baseline-420-160x120.jpg")
    prog = read(os.path.join(out, "progressive-160x120.jpg"))
    fourth = [s for s in jpeg_segments(prog) if s[0] == 0xDA][3]
    add_invalid("truncated-progressive.jpg", prog[:fourth[1]], "incomplete",
                "progressive-160x120.jpg cut just before its 4th SOS marker",
                "3 complete scans, no EOI: a preview is possible, the final image is not.",
                derived_from="progressive-160x120.jpg")
    rng = np.random.RandomState(99)
    garbage = bytearray(rng.randint(0, 255, 512).astype(np.uint8).tobytes())  # no 0xFF bytes
    garbage[100:102] = b"\xff\x4e"  # the first marker libjpeg finds is not a JPEG marker
    add_invalid("soi-garbage.jpg", b"\xff\xd8" + bytes(garbage), "corrupt",
                "FF D8 + 512 seeded random bytes (0xFF removed) with FF 4E at offset 102",
                "libjpeg skips the extraneous bytes, then fails on unknown marker 0x4e.")
    sof, s, w, h = sof_info(base)
    zero = bytearray(base)
    zero[s + 7:s + 9] = b"\0\0"
    add_invalid("sof-zero-width.jpg", bytes(zero), "corrupt",
                "baseline-420.jpg with SOF0 width patched to 0", "", derived_from="baseline-420.jpg",
                dims=(0, h))
    add_invalid("soi-only.jpg", b"\xff\xd8", "incomplete", "the two bytes FF D8", "")
    add_invalid("empty.jpg", b"", "corrupt", "zero bytes",
                "Empty input: nothing to sniff; treat as corrupt (not incomplete) once the data is complete.")
    huge = bytearray(base)
    huge[s + 5:s + 9] = struct.pack(">HH", 60000, 60000)
    add_invalid("huge-dimensions.jpg", bytes(huge), "limit",
                "baseline-420.jpg with SOF0 patched to 60000x60000",
                "3.6 gigapixels declared, ~1 KB of data: must fail the default 100 MP limit before "
                "allocating.", derived_from="baseline-420.jpg", dims=(60000, 60000),
                djpeg_args=("-scale", "1/8"))
    return entries


# --------------------------------------------------------------------------------------------
# PNG writer (independent of libpng)
# --------------------------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def pack_row(samples, depth):
    """samples: 1-D int array of one row's samples. Returns the packed bytes."""
    if depth == 16:
        return samples.astype(">u2").tobytes()
    if depth == 8:
        return samples.astype(np.uint8).tobytes()
    per = 8 // depth
    padded = np.zeros(-(-len(samples) // per) * per, dtype=np.int64)
    padded[:len(samples)] = samples
    padded = padded.reshape(-1, per)
    out = np.zeros(len(padded), dtype=np.int64)
    for i in range(per):
        out |= padded[:, i] << (8 - depth * (i + 1))
    return out.astype(np.uint8).tobytes()


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    if pb <= pc:
        return b
    return c


def filter_row(kind, row, prev, bpp):
    out = bytearray(len(row))
    for i in range(len(row)):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if kind == 0:
            p = 0
        elif kind == 1:
            p = a
        elif kind == 2:
            p = b
        elif kind == 3:
            p = (a + b) >> 1
        else:
            p = paeth(a, b, c)
        out[i] = (row[i] - p) & 0xFF
    return bytes([kind]) + bytes(out)


class Filters:
    """Cycles None, Sub, Up, Average, Paeth over all rows of the image (all passes)."""

    def __init__(self, start=0):
        self.n = start

    def next(self):
        k = self.n % 5
        self.n += 1
        return k


def image_data(pixels, depth, interlace, filter_start=0):
    """pixels: (h, w, channels) samples. Returns the uncompressed, filtered scanlines."""
    h, w, ch = pixels.shape
    bpp = max(1, ch * depth // 8)
    filters = Filters(filter_start)
    out = bytearray()
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    for x0, y0, dx, dy in passes:
        sub = pixels[y0::dy, x0::dx]
        if sub.shape[0] == 0 or sub.shape[1] == 0:
            continue
        prev = None
        for row in sub:
            raw = pack_row(row.reshape(-1), depth)
            if prev is None:
                prev = bytes(len(raw))
            out += filter_row(filters.next(), raw, prev, bpp)
            prev = raw
    return bytes(out)


def encode_png(pixels, depth, color_type, interlace=False, palette=None, trns=None, before_plte=(),
               before_idat=(), after_idat=(), idat_size=8192, empty_idat=False, filter_start=0,
               raw_override=None):
    h, w, ch = pixels.shape
    check(ch == CHANNELS[color_type], "channels vs colour type")
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 1 if interlace else 0)
    out = PNG_SIGNATURE + chunk(b"IHDR", ihdr)
    for c in before_plte:
        out += c
    if palette is not None:
        out += chunk(b"PLTE", bytes(np.asarray(palette, dtype=np.uint8).reshape(-1)))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    for c in before_idat:
        out += c
    raw = image_data(pixels, depth, interlace, filter_start) if raw_override is None else raw_override
    z = zlib.compress(raw, 9)
    pieces = [z[i:i + idat_size] for i in range(0, len(z), idat_size)]
    if empty_idat:
        pieces.insert(len(pieces) // 2 + 1, b"")
    for p in pieces:
        out += chunk(b"IDAT", p)
    for c in after_idat:
        out += c
    out += chunk(b"IEND", b"")
    return out


def scale_to_8(samples, depth):
    """The decoder's default 8-bit output: low depths replicated, 16-bit by png_set_scale_16."""
    if depth == 16:
        return (samples * 255 + 32895) >> 16
    return samples * (255 // ((1 << depth) - 1))


def png_text(keyword, text):
    return chunk(b"zTXt", keyword.encode("latin-1") + b"\0\0" + zlib.compress(text, 9))


# --------------------------------------------------------------------------------------------
# PNG fixtures
# --------------------------------------------------------------------------------------------


def make_png(out, tmp, versions, icc_small):
    jpeg_ver, im_ver, pil_ver = versions
    entries = []
    encoder = ("make-fixtures.py PNG writer (zlib level 9, row filters cycling None/Sub/Up/Average/"
               "Paeth); reference = the encoded source samples")

    def im_pam(path, depth):
        data, _, _ = run([IM_CONVERT, path, "-depth", str(depth), "pam:-"])
        return parse_pnm(data)

    def compare_expanded(a, b):
        """Compares two decodes allowing the grey-vs-RGB choice ImageMagick makes."""
        if a.shape == b.shape:
            return np.array_equal(a, b)
        if a.shape[:2] != b.shape[:2]:
            return False

        def rgba(x):
            d = x.shape[2]
            if d in (1, 2):
                x = np.concatenate([x[..., :1]] * 3 + ([x[..., 1:2]] if d == 2 else []), axis=-1)
            return x

        a, b = rgba(a), rgba(b)
        if a.shape[2] != b.shape[2]:
            # One side has an all-opaque alpha channel the other omitted.
            wide, narrow = (a, b) if a.shape[2] == 4 else (b, a)
            if not np.all(wide[..., 3] == wide[..., 3].max()):
                return False
            wide = wide[..., :3]
            return np.array_equal(wide, narrow)
        return np.array_equal(a, b)

    def pillow_decode(path, depth, color_type):
        """Pillow's decode as 8-bit (or exact 16-bit for 16-bit grey) samples with any alpha
        expanded, independently of our reference construction."""
        im = Image.open(path)
        im.load()
        trns = im.info.get("transparency")
        if im.mode == "P":
            want = "RGBA" if trns is not None else "RGB"
            return np.asarray(im.convert(want)).astype(np.int64).reshape(im.height, im.width, -1), 8
        arr = np.asarray(im).astype(np.int64)
        if im.mode == "1":
            arr = arr * 255
        if arr.ndim == 2:
            arr = arr[..., None]
        bits = 16 if im.mode in ("I;16", "I;16B", "I") else 8
        if color_type == 4 and arr.shape[2] == 4:
            arr = arr[..., [0, 3]]  # Pillow opens 16-bit grey+alpha as RGBA (high bytes)
        if trns is not None and not isinstance(trns, bytes) and not (depth == 16 and bits == 8):
            # Pillow reports the tRNS key as stored; low-depth grey samples come back scaled.
            key = np.array(trns if isinstance(trns, tuple) else (trns,))
            if color_type == 0 and depth < 8:
                key = key * (255 // ((1 << depth) - 1))
            raw = arr
            alpha = np.where(np.all(raw == key, axis=-1), 0, (1 << bits) - 1)[..., None]
            arr = np.concatenate([arr, alpha], axis=-1)
        return arr, bits

    def add(name, pixels, depth, color_type, reference8, reference16=None, made_with=None, notes="",
            data=None, interlaced=False, **kw):
        path = os.path.join(out, name)
        if data is None:
            fail("no data for " + name)
        write(path, data)
        stem = os.path.splitext(name)[0]
        write(os.path.join(out, stem + ".pam"), pam_bytes(reference8, 255))
        ref16_name = None
        if reference16 is not None:
            ref16_name = stem + ".16.pam"
            write(os.path.join(out, ref16_name), pam_bytes(reference16, 65535))
        # Cross-check 1: Pillow (its own PNG decoder; zlib only).
        got, bits = pillow_decode(path, depth, color_type)
        if bits == 16:
            check(reference16 is not None and np.array_equal(got, reference16), "Pillow 16-bit mismatch: " + name)
        elif depth == 16:
            # Pillow keeps the high byte of 16-bit samples; compare with the exact samples.
            # (Pillow drops a 16-bit RGB tRNS key, so only the colour channels are compared then.)
            check(np.array_equal(got, (reference16 >> 8)[..., :got.shape[2]]), "Pillow high-byte mismatch: " + name)
        else:
            check(np.array_equal(got, reference8), "Pillow mismatch: " + name)
        # Cross-check 2: ImageMagick (libpng), 8-bit and, for 16-bit files, 16-bit.
        # (ImageMagick's own 16-to-8 reduction is not png_set_scale_16, so 16-bit files are
        # compared at 16 bits only.)
        if depth <= 8:
            im8, _ = im_pam(path, 8)
            check(compare_expanded(im8, reference8), "ImageMagick 8-bit mismatch: " + name)
        if reference16 is not None:
            im16, _ = im_pam(path, 16)
            check(compare_expanded(im16, reference16), "ImageMagick 16-bit mismatch: " + name)
        h, w = reference8.shape[:2]
        kw.setdefault("orientation", 1)
        entries.append(entry(name, "valid", reference=stem + ".pam", reference16=ref16_name, tolerance=0,
                             width=w, height=h, interlaced=interlaced, lossless=True,
                             made_with=made_with or encoder, notes=notes, declared_width=w,
                             declared_height=h, **kw))

    def add_invalid(name, data, error, made_with, notes, derived_from=None, dims=None):
        path = os.path.join(out, name)
        write(path, data)
        proc = subprocess.run(["pngtopam", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        msg = proc.stderr.decode(errors="replace").strip().replace("\n", " | ")
        verdict = "libpng via pngtopam: exit %d, %s" % (proc.returncode, msg or "no message")
        entries.append(entry(name, "invalid", expected_error=error, lossless=True, made_with=made_with,
                             notes=(notes + " " + verdict).strip(), derived_from=derived_from,
                             declared_width=dims[0] if dims else None,
                             declared_height=dims[1] if dims else None))

    def grey_samples(w, h, seed, depth):
        maxv = (1 << depth) - 1
        f = field(w, h, seed, channels=1, maxval=maxv, noise=4.0 if depth >= 8 else 0.0)
        return quantize(f, maxv)

    def colour_samples(w, h, seed, depth, alpha):
        maxv = (1 << depth) - 1
        px = quantize(field(w, h, seed, channels=3, maxval=maxv), maxv)
        if alpha:
            px = np.concatenate([px, alpha_plane(w, h, maxv)], axis=-1)
        return px

    def grey_alpha(w, h, seed, depth):
        maxv = (1 << depth) - 1
        return np.concatenate([quantize(field(w, h, seed, 1, maxv), maxv), alpha_plane(w, h, maxv)], axis=-1)

    def plain(name, px, depth, ct, interlace=False, notes="", **kw):
        data = encode_png(px, depth, ct, interlace=interlace, **kw)
        ref16 = px if depth == 16 else None
        add(name, px, depth, ct, scale_to_8(px, depth), ref16, data=data, interlaced=interlace, notes=notes)

    # Grey, all depths.
    for depth in (1, 2, 4, 8, 16):
        plain("gray-%d.png" % depth, grey_samples(37, 23, 10 + depth, depth), depth, 0)
    plain("gray-alpha-8.png", grey_alpha(37, 23, 20, 8), 8, 4)
    plain("gray-alpha-16.png", grey_alpha(37, 23, 21, 16), 16, 4)
    plain("rgb-8.png", colour_samples(61, 45, 22, 8, False), 8, 2)
    plain("rgb-16.png", colour_samples(37, 23, 23, 16, False), 16, 2)
    plain("rgba-8.png", colour_samples(61, 45, 24, 8, True), 8, 6)
    plain("rgba-16.png", colour_samples(37, 23, 25, 16, True), 16, 6)
    plain("rgb-8-many-idat.png", colour_samples(37, 23, 26, 8, False), 8, 2,
          notes="IDAT split into 97-byte chunks with one zero-length IDAT in the middle (legal; libpng "
              "reads it, libpng's pngfix 1.6.39 loops forever on it).",
          idat_size=97, empty_idat=True)

    # Palettes.
    def palette_image(w, h, seed, depth, entries_count):
        rng = np.random.RandomState(seed)
        y, x = np.mgrid[0:h, 0:w]
        idx = (x * entries_count) // w
        idx = np.where((x >= w // 5) & (x < w // 2) & (y >= h // 4) & (y < 3 * h // 4), entries_count - 1, idx)
        idx = np.where(rng.rand(h, w) < 0.1, rng.randint(0, entries_count, (h, w)), idx)
        pal = rng.randint(0, 256, (entries_count, 3))
        return idx[..., None].astype(np.int64), pal

    def palette_fixture(name, w, h, seed, depth, count, trns_alpha=None, interlace=False, notes=""):
        idx, pal = palette_image(w, h, seed, depth, count)
        trns = None
        rgb = pal[idx[..., 0]]
        if trns_alpha is not None:
            trns = bytes(trns_alpha)
            alpha = np.full(count, 255)
            alpha[:len(trns_alpha)] = trns_alpha
            ref = np.concatenate([rgb, alpha[idx[..., 0]][..., None]], axis=-1)
        else:
            ref = rgb
        data = encode_png(idx, depth, 3, interlace=interlace, palette=pal, trns=trns)
        add(name, idx, depth, 3, ref, None, data=data, interlaced=interlace, notes=notes)

    palette_fixture("palette-1.png", 37, 23, 30, 1, 2)
    palette_fixture("palette-2.png", 37, 23, 31, 2, 4)
    palette_fixture("palette-4.png", 37, 23, 32, 4, 16)
    palette_fixture("palette-8.png", 61, 45, 33, 8, 200, notes="200-entry palette (not 256).")
    palette_fixture("palette-8-trns.png", 61, 45, 34, 8, 200,
                    trns_alpha=[0, 255, 128, 64, 200, 1, 254] + [i % 256 for i in range(0, 120 * 2, 2)],
                    notes="tRNS covers the first 127 of 200 entries (0, 255 and partial alpha); "
                          "entries past it are opaque.")
    palette_fixture("palette-4-trns.png", 37, 23, 35, 4, 16, trns_alpha=[0, 85, 170],
                    notes="tRNS covers 3 of 16 entries.")

    # Grey and RGB with a tRNS colour key (alpha 0 exactly where the sample equals the key).
    def keyed(name, px, depth, ct, key, notes):
        maxv = (1 << depth) - 1
        match = np.all(px == np.array(key), axis=-1)
        check(match.any() and not match.all(), "tRNS key must appear in " + name)
        alpha16 = np.where(match, 0, maxv)[..., None]
        trns = b"".join(struct.pack(">H", k) for k in key)
        data = encode_png(px, depth, ct, trns=trns)
        ref8 = np.concatenate([scale_to_8(px, depth), np.where(match, 0, 255)[..., None]], axis=-1)
        ref16 = np.concatenate([px, alpha16], axis=-1) if depth == 16 else None
        add(name, px, depth, ct, ref8, ref16, data=data, notes=notes)

    g = grey_samples(37, 23, 40, 8)
    g[2:6, 2:10] = 77
    keyed("gray-trns-8.png", g, 8, 0, (77,), "tRNS grey key 77 (a flat block plus any noise hits).")
    g = grey_samples(37, 23, 41, 16)
    g[2:6, 2:10] = 0x1234
    g[6:8, 2:10] = 0x1235
    g[8:10, 2:10] = 0x1334
    keyed("gray-trns-16.png", g, 16, 0, (0x1234,),
          "tRNS grey key 0x1234; neighbouring blocks 0x1235 and 0x1334 stay opaque (compare the key "
          "at 16 bits, before scaling).")
    g = grey_samples(37, 23, 42, 4)
    keyed("gray-trns-4.png", g, 4, 0, (int(g[0, 0, 0]),), "4-bit grey with tRNS key.")
    c = colour_samples(37, 23, 43, 8, False)
    c[2:6, 2:10] = (10, 200, 30)
    c[6:8, 2:10] = (10, 200, 31)
    keyed("rgb-trns-8.png", c, 8, 2, (10, 200, 30), "tRNS RGB key (10,200,30); (10,200,31) stays opaque.")
    c = colour_samples(37, 23, 44, 16, False)
    c[2:6, 2:10] = (1000, 40000, 65535)
    c[6:8, 2:10] = (1001, 40000, 65535)
    keyed("rgb-trns-16.png", c, 16, 2, (1000, 40000, 65535),
          "tRNS RGB key (1000,40000,65535); (1001,40000,65535) stays opaque.")

    # Adam7.
    plain("adam7-rgba-8.png", colour_samples(37, 23, 50, 8, True), 8, 6, interlace=True)
    plain("adam7-gray-1.png", grey_samples(37, 23, 51, 1), 1, 0, interlace=True)
    palette_fixture("adam7-palette-4.png", 37, 23, 52, 4, 16, interlace=True)
    plain("adam7-rgb-16.png", colour_samples(33, 17, 53, 16, False), 16, 2, interlace=True)
    plain("adam7-rgb-8-160x120.png", colour_samples(160, 120, 54, 8, False), 8, 2, interlace=True,
          notes="For preview tests; several IDAT chunks.", idat_size=4096)
    plain("adam7-rgba-8-3x3.png", colour_samples(3, 3, 55, 8, True), 8, 6, interlace=True,
          notes="Passes 2, 4 and 6 are empty (zero width) and have no rows in the data.")
    plain("adam7-gray-8-1x1.png", grey_samples(1, 1, 56, 8), 8, 0, interlace=True,
          notes="Only pass 1 has data.")

    # Colour information chunks.
    px = colour_samples(37, 23, 60, 8, False)
    chrm = struct.pack(">8I", 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000)
    data = encode_png(px, 8, 2, before_plte=[chunk(b"gAMA", struct.pack(">I", 45455)), chunk(b"cHRM", chrm)])
    add("gama-chrm.png", px, 8, 2, px, data=data, gamma=0.45455,
        notes="gAMA 45455 and cHRM with the sRGB/D65 values; samples are not gamma-corrected.")
    px = colour_samples(37, 23, 61, 8, False)
    data = encode_png(px, 8, 2, before_plte=[chunk(b"sRGB", b"\x00")])
    add("srgb.png", px, 8, 2, px, data=data, srgb_intent=0, notes="sRGB chunk, perceptual intent.")
    px = colour_samples(37, 23, 62, 8, True)
    iccp = chunk(b"iCCP", b"NukeCodecs sRGB\0\0" + zlib.compress(icc_small, 9))
    data = encode_png(px, 8, 6, before_plte=[iccp])
    add("iccp.png", px, 8, 6, px, data=data, icc_size=len(icc_small), icc_sha256=sha256(icc_small),
        notes="iCCP with the same profile bytes as Fixtures/jpeg/icc.jpg.")
    icc_out, _, _ = run([IM_CONVERT, os.path.join(out, "iccp.png"), "icc:-"])
    check(icc_out == icc_small, "libpng (via ImageMagick) should accept and return the iCCP profile")
    got = Image.open(os.path.join(out, "iccp.png")).info.get("icc_profile")
    check(got == icc_small, "Pillow reads back the iCCP profile")

    # eXIf orientation.
    px = colour_samples(37, 23, 63, 8, False)
    _, tiff = exif_segment(6, False)
    data = encode_png(px, 8, 2, before_idat=[chunk(b"eXIf", tiff)])
    add("exif-orientation-6.png", px, 8, 2, px, data=data, orientation=6,
        notes="eXIf chunk (TIFF MM, Orientation 6) before IDAT.")

    # zTXt "bomb": 1 MiB of text from about 1 KB; the image itself is valid.
    px = colour_samples(37, 23, 64, 8, False)
    bomb = png_text("Comment", b"A" * (1 << 20))
    check(len(bomb) < 4096, "zTXt should be small")
    data = encode_png(px, 8, 2, after_idat=[bomb])
    add("ztxt-bomb.png", px, 8, 2, px, data=data,
        notes="zTXt 'Comment' inflating to 1 MiB from %d bytes after IDAT; decode the image, "
              "ignore or bound the text." % len(bomb))

    # ImageMagick-made files; reference = Pillow's decode (and equal to the source).
    px = colour_samples(61, 45, 70, 8, True)
    src = os.path.join(tmp, "im-rgba.pam")
    write(src, pam_bytes(px, 255))
    im_args = ["-strip", "-define", "png:exclude-chunks=date,time,bKGD"]
    dst = os.path.join(out, "im-rgba.png")
    run([IM_CONVERT, src, *im_args, "PNG32:" + dst])
    pil = np.asarray(Image.open(dst).convert("RGBA")).astype(np.int64)
    check(np.array_equal(pil, px), "ImageMagick RGBA PNG should be lossless")
    add("im-rgba.png", px, 8, 6, pil, data=read(dst),
        made_with="%s: convert src.pam -strip -define png:exclude-chunks=date,time,bKGD PNG32:out.png; "
                  "reference = Pillow decode" % im_ver)
    px = colour_samples(61, 45, 71, 8, False)
    src = os.path.join(tmp, "im-adam7.ppm")
    write(src, ppm_bytes(px))
    dst = os.path.join(out, "im-adam7-rgb.png")
    run([IM_CONVERT, src, *im_args, "-interlace", "PNG", "PNG24:" + dst])
    data = read(dst)
    check(data[8 + 8 + 12] == 1, "ImageMagick output should be Adam7")
    pil = np.asarray(Image.open(dst).convert("RGB")).astype(np.int64)
    check(np.array_equal(pil, px), "ImageMagick interlaced PNG should be lossless")
    add("im-adam7-rgb.png", px, 8, 2, pil, data=data, interlaced=True,
        made_with="%s: convert src.ppm -strip -define png:exclude-chunks=date,time,bKGD -interlace PNG "
                  "PNG24:out.png; reference = Pillow decode" % im_ver)
    for e in entries[-2:]:
        chunks = png_chunk_types(read(os.path.join(out, e["file"])))
        e["notes"] = "Chunks: " + " ".join(chunks) + "."
        if "gAMA" in chunks:
            e["gamma"] = png_gamma(read(os.path.join(out, e["file"])))

    # Invalid files.
    base = read(os.path.join(out, "rgb-8.png"))
    idat = [c for c in png_chunks(base) if c[0] == b"IDAT"][0]
    cut = idat[1] + 8 + (idat[2] - idat[1] - 12) // 2
    add_invalid("truncated-idat.png", base[:cut], "incomplete", "rgb-8.png cut in the middle of its IDAT data",
                "", derived_from="rgb-8.png", dims=(61, 45))
    add_invalid("truncated-signature.png", base[:8], "incomplete", "the 8 signature bytes of rgb-8.png", "",
                derived_from="rgb-8.png")
    bad = bytearray(base)
    bad[8 + 8 + 13] ^= 0xFF
    add_invalid("bad-crc-ihdr.png", bytes(bad), "corrupt", "rgb-8.png with the IHDR CRC's first byte flipped",
                "", derived_from="rgb-8.png", dims=(61, 45))
    px = colour_samples(37, 23, 80, 8, False)
    data = encode_png(px, 8, 2, raw_override=b"")
    data = replace_idat(data, b"\x78\x9c" + b"\xff" * 32)
    add_invalid("bad-zlib.png", data, "corrupt", "valid chunks (CRCs correct); IDAT = zlib header + bytes "
                "starting an invalid deflate block (BTYPE 11)",
                "libpng 1.6.39's progressive reader only warns ('IDAT: ADLER32 checksum mismatch' is a "
                "benign error, then 'Extra compression data') and calls the end callback with 0 rows "
                "delivered: count rows, or png_set_benign_errors(png, 0).", dims=(37, 23))
    data = encode_png(px, 8, 2)
    data = replace_ihdr(data, 0, 23)
    add_invalid("ihdr-zero-width.png", data, "corrupt", "IHDR width 0 (CRC correct)", "", dims=(0, 23))
    huge_raw = b"\0" * (1 + 100000)
    data = PNG_SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 0, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(huge_raw, 9)) + chunk(b"IEND", b"")
    add_invalid("huge-dimensions.png", data, "limit", "IHDR 100000x100000 grey 8-bit, IDAT holding one row",
                "10 gigapixels declared: must fail the default 100 MP limit before allocating. (With "
                "png_set_user_limits below 100000 libpng itself fails in IHDR: 'Invalid IHDR data'.)",
                dims=(100000, 100000))
    add_invalid("bad-signature.png", b"\x89PNG\r\n\x1a\x0b" + base[8:], "corrupt",
                "rgb-8.png with the signature's last byte 0x0a changed to 0x0b",
                "Not a PNG to a sniffer; a PNG decoder given it anyway must fail.", derived_from="rgb-8.png")
    raw = image_data(px, 8, False)
    short = raw[:len(raw) // 2]
    data = encode_png(px, 8, 2, raw_override=short)
    add_invalid("idat-too-short.png", data, "corrupt",
                "37x23 RGB whose complete zlib stream holds only the first half of the rows; IEND present",
                "The file is complete, so more data cannot fix it: corrupt. libpng 1.6.39's progressive "
                "reader reports nothing and calls the end callback after 11 of 23 rows (count rows); the "
                "sequential reader says 'Not enough image data'.",
                dims=(37, 23))
    return entries


def png_chunks(data):
    """Yields (type, start, end) for each chunk."""
    out, pos = [], 8
    while pos + 8 <= len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        out.append((data[pos + 4:pos + 8], pos, pos + 12 + n))
        pos += 12 + n
    return out


def png_chunk_types(data):
    return [c[0].decode() for c in png_chunks(data)]


def png_gamma(data):
    for kind, s, e in png_chunks(data):
        if kind == b"gAMA":
            return struct.unpack(">I", data[s + 8:s + 12])[0] / 100000.0
    return None


def replace_idat(data, payload):
    chunks = png_chunks(data)
    head = data[:[c for c in chunks if c[0] == b"IDAT"][0][1]]
    tail = data[[c for c in chunks if c[0] == b"IDAT"][-1][2]:]
    return head + chunk(b"IDAT", payload) + tail


def replace_ihdr(data, w, h):
    ihdr = bytearray(data[16:29])
    ihdr[0:8] = struct.pack(">II", w, h)
    return data[:8] + chunk(b"IHDR", bytes(ihdr)) + data[33:]


# --------------------------------------------------------------------------------------------
# Validation of everything written
# --------------------------------------------------------------------------------------------


def validate(folder):
    doc = json.loads(read(os.path.join(folder, "manifest.json")))
    keys = None
    listed = {"manifest.json"}
    for e in doc["fixtures"]:
        keys = keys or list(e.keys())
        check(list(e.keys()) == keys, "uniform keys")
        check(os.path.exists(os.path.join(folder, e["file"])), "missing " + e["file"])
        listed.add(e["file"])
        for k in ("reference", "reference16"):
            if e[k]:
                listed.add(e[k])
                arr, maxval, t = parse_pam(read(os.path.join(folder, e[k])))
                check(arr.shape[:2] == (e["height"], e["width"]), "reference size " + e[k])
                check(maxval == (65535 if k == "reference16" else 255), "reference maxval " + e[k])
        if e["kind"] == "valid":
            check(e["reference"] is not None and e["tolerance"] is not None, "valid needs reference")
    extra = set(os.listdir(folder)) - listed
    check(not extra, "unlisted files in %s: %s" % (folder, sorted(extra)))


def main():
    if len(sys.argv) != 2:
        fail("usage: make-fixtures.py FIXTURES_DIR")
    root = os.path.abspath(sys.argv[1])
    versions = tool_versions()
    icc_small = make_icc("NukeCodecs sRGB-like (gamma 2.2)", 1)
    icc_large = make_icc("NukeCodecs sRGB-like (sampled curves)", 11000)
    check(len(icc_large) > 65519, "large ICC must need several APP2 markers")
    with tempfile.TemporaryDirectory(prefix="nuke-fixtures-") as tmp:
        for fmt, maker, args in (("jpeg", make_jpeg, (icc_small, icc_large)), ("png", make_png, (icc_small,))):
            folder = os.path.join(root, fmt)
            if os.path.isdir(folder):
                shutil.rmtree(folder)
            os.makedirs(folder)
            entries = maker(folder, tmp, versions, *args)
            write_manifest(folder, fmt, entries)
            validate(folder)
            print("make-fixtures: %s: %d fixtures" % (fmt, len(entries)), flush=True)


if __name__ == "__main__":
    main()

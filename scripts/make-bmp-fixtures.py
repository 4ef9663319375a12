#!/usr/bin/env python3
"""Generates the BMP, ICO, CUR and XBM fixtures (Fixtures/bmp, ico, cur, xbm) with references.

Run through scripts/make-fixtures.sh (or directly: make-bmp-fixtures.py FIXTURES_DIR).

Files: Pillow writes what it can (BMP 1/8/24/32-bit, ICO with PNG or BMP entries, XBM); a small
byte-level writer below writes the rest (2/4-bit palettes, palettes smaller than 2^bits, core and
OS/2 headers, V2-V5 headers, BI_BITFIELDS and BI_ALPHABITFIELDS masks of any width, RLE4, RLE8,
OS/2 RLE24, top-down rows, an embedded ICC profile, ICO/CUR DIB entries with AND masks, X10
bitmaps, questionable and bad files).

References: Pillow's decode (an independent decoder), converted to RGB or RGBA and written as
PAM, wherever Pillow reads the file. Where it cannot (2-bit pixels, 16-byte OS/2 headers, RLE24,
masks other than its few, X10), the reference is the source pixels the writer encoded. Where our
decode legitimately differs from Pillow's, the reference follows browsers and the manifest's
notes say so:
- RLE pixels skipped by a delta or an early end of line: Pillow fills them with palette index 0,
  browsers (and NukeBMP) leave them transparent.
- A V4 file with an alpha mask whose alpha is all zero: Pillow returns a transparent image,
  browsers (and NukeBMP) an opaque one.
- XBM: Pillow's mode "1" makes a set bit 255 (white); X11 (bitmap(1), xv, browsers) draws a set
  bit in the foreground, black. NukeXBM follows X11: the references are Pillow's decode inverted.
Deterministic: a re-run reproduces every file byte for byte with the same Pillow.
"""

import io
import json
import os
import struct
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixturelib import write_pam  # noqa: E402

W, H = 24, 16
MANIFESTS = {}


def source_rgb(w=W, h=H):
    """A gradient with hard edges: every channel takes many values."""
    y, x = np.mgrid[0:h, 0:w]
    r = (x * 255 // max(1, w - 1)).astype(np.uint8)
    g = (y * 255 // max(1, h - 1)).astype(np.uint8)
    b = (((x // 3 + y // 3) % 2) * 200 + 30).astype(np.uint8)
    return np.dstack([r, g, b])


def source_rgba(w=W, h=H):
    rgb = source_rgb(w, h)
    y, x = np.mgrid[0:h, 0:w]
    a = ((x + y) * 255 // (w + h - 2)).astype(np.uint8)
    a[:, :3] = 0          # fully transparent columns
    a[:, -3:] = 255       # fully opaque ones
    return np.dstack([rgb, a])


def indices(bits, w=W, h=H):
    y, x = np.mgrid[0:h, 0:w]
    return ((x // 2 + y * 3) % (1 << bits)).astype(np.uint8)


def palette(count):
    return [((i * 53) % 256, (i * 101 + 40) % 256, (255 - i * 29) % 256) for i in range(count)]


def add(folder, name, kind="valid", reference=None, width=None, height=None, tolerance=0, error=None,
        made_with="", notes="", icc=None, lossless=True):
    import hashlib
    entry = {
        "file": name, "kind": kind, "reference": reference, "reference16": None, "tolerance": tolerance,
        "width": width, "height": height, "progressive": False, "interlaced": False, "scans": None,
        "orientation": 1 if kind == "valid" else None,
        "icc_sha256": hashlib.sha256(icc).hexdigest() if icc else None, "icc_size": len(icc) if icc else None,
        "gamma": None, "srgb_intent": None, "expected_error": error, "lossless": lossless if kind == "valid" else None,
        "made_with": made_with, "notes": notes, "declared_width": width, "declared_height": height, "derived_from": None,
    }
    MANIFESTS.setdefault(folder, []).append(entry)


def pillow_reference(path, mode=None):
    im = Image.open(path)
    im.load()
    if mode is None:
        mode = "RGBA" if ("A" in im.mode or "transparency" in im.info) else "RGB"
    return np.asarray(im.convert(mode))


# ---------------------------------------------------------------------------------------------
# The byte-level BMP writer.

def pack_rows(rows, bits):
    """Rows of values (top first, already in file order) packed at `bits` per pixel, padded to 32 bits."""
    out = b""
    for row in rows:
        if bits >= 8:
            data = bytes(row)
        else:
            data = bytearray()
            per = 8 // bits
            for i in range(0, len(row), per):
                v = 0
                for k, value in enumerate(row[i:i + per]):
                    v |= int(value) << (8 - bits * (k + 1))
                data.append(v)
            data = bytes(data)
        out += data + b"\0" * ((-len(data)) % 4)
    return out


def dib_header(size, w, h, bits, compression=0, image_size=0, colors=0, masks=None, cs_type=0x73524742,
               profile=None, planes=1):
    """A DIB header of `size` bytes (12, 16, 40, 52, 56, 64, 108, 124)."""
    if size == 12:
        return struct.pack("<IHHHH", 12, w, h & 0xFFFF, planes, bits)
    body = struct.pack("<IiiHHIIiiII", size, w, h, planes, bits, compression, image_size, 2835, 2835, colors, 0)
    if size == 16:
        return body[:16]
    if size == 64:
        return body + b"\0" * 24
    masks = masks or (0, 0, 0, 0)
    if size >= 52:
        body += struct.pack("<III", *masks[:3])
    if size >= 56:
        body += struct.pack("<I", masks[3])
    if size >= 108:
        body += struct.pack("<I", cs_type) + b"\0" * 36 + b"\0" * 12
    if size >= 124:
        offset, length = profile or (0, 0)
        body += struct.pack("<IIII", 4, offset, length, 0)
    assert len(body) == size, (size, len(body))
    return body


def write_bmp(path, w, h, bits, pixel_data, header_size=40, compression=0, pal=None, masks=None, extra_masks=None,
              top_down=False, icc=None, cs_type=None, offset_gap=0, file_size=None, colors=None, bits_offset=None):
    entry = 3 if header_size == 12 else 4
    pal_bytes = b""
    if pal is not None:
        for (r, g, b) in pal:
            pal_bytes += bytes([b, g, r]) + (b"\0" if entry == 4 else b"")
    extra = b"".join(struct.pack("<I", m) for m in extra_masks) if extra_masks else b""
    header_len = 14 + header_size + len(extra) + len(pal_bytes) + offset_gap
    profile = (header_size + len(extra) + len(pal_bytes) + offset_gap + len(pixel_data), len(icc)) if icc else None
    dib = dib_header(header_size, w, -h if top_down else h, bits, compression, len(pixel_data),
                     colors if colors is not None else (len(pal) if pal is not None and header_size != 12 else 0),
                     masks, cs_type if cs_type is not None else (0x4D424544 if icc else 0x73524742), profile)
    total = header_len + len(pixel_data) + (len(icc) if icc else 0)
    head = b"BM" + struct.pack("<IHHI", file_size if file_size is not None else total, 0, 0,
                               bits_offset if bits_offset is not None else header_len)
    with open(path, "wb") as f:
        f.write(head + dib + extra + pal_bytes + b"\0" * offset_gap + pixel_data + (icc or b""))


def bottom_up(rows):
    return list(reversed(rows))


def rle8(rows):
    """RLE8 of index rows (file order): runs, one absolute run per row's middle, end of line, end of bitmap."""
    out = bytearray()
    for row in rows:
        row = list(row)
        i = 0
        while i < len(row):
            j = i
            while j < len(row) and row[j] == row[i] and j - i < 255:
                j += 1
            if j - i >= 2:
                out += bytes([j - i, row[i]])
                i = j
            else:
                # an absolute run of the next few distinct values (at least 3)
                k = i
                while k < len(row) and (k + 1 >= len(row) or row[k + 1] != row[k]) and k - i < 255:
                    k += 1
                count = k - i
                if count >= 3:
                    out += bytes([0, count]) + bytes(row[i:k]) + (b"\0" if count % 2 else b"")
                    i = k
                else:
                    out += bytes([1, row[i]])
                    i += 1
        out += b"\0\0"
    out += b"\0\1"
    return bytes(out)


def rle4(rows):
    """RLE4: two-colour runs of up to 8 pixels and absolute runs, end of line, end of bitmap."""
    out = bytearray()
    for row in rows:
        row = list(row)
        i = 0
        toggle = 0
        while i < len(row):
            if toggle % 2 == 0 and i + 6 <= len(row):
                vals = row[i:i + 6]
                out += bytes([0, 6]) + bytes([(vals[0] << 4) | vals[1], (vals[2] << 4) | vals[3], (vals[4] << 4) | vals[5], 0])
                i += 6
            else:
                n = min(4, len(row) - i)
                a = row[i]
                b = row[i + 1] if n > 1 else 0
                ok = all(row[i + k] == (a if k % 2 == 0 else b) for k in range(n))
                if ok:
                    out += bytes([n, (a << 4) | b])
                    i += n
                else:
                    out += bytes([1, a << 4])
                    i += 1
            toggle += 1
        out += b"\0\0"
    out += b"\0\1"
    return bytes(out)


def rle24(rows):
    """OS/2 RLE24 of RGB rows (file order): runs of a colour, absolute runs, end of line/bitmap."""
    out = bytearray()
    for row in rows:
        i = 0
        while i < len(row):
            j = i
            while j < len(row) and tuple(row[j]) == tuple(row[i]) and j - i < 255:
                j += 1
            if j - i >= 2:
                r, g, b = row[i]
                out += bytes([j - i, b, g, r])
                i = j
            else:
                count = min(3, len(row) - i)
                if count >= 3:
                    out += bytes([0, count])
                    for k in range(count):
                        r, g, b = row[i + k]
                        out += bytes([b, g, r])
                    out += b"\0" * ((3 * count) % 2)
                    i += count
                else:
                    r, g, b = row[i]
                    out += bytes([1, b, g, r])
                    i += 1
        out += b"\0\0"
    out += b"\0\1"
    return bytes(out)


def masked(rgba, bits, masks):
    """Pixels packed through `masks` (r, g, b, a), each channel scaled down from 8 bits."""
    h, w, _ = rgba.shape
    out = bytearray()
    for y in range(h):
        row = bytearray()
        for x in range(w):
            v = 0
            for c, m in enumerate(masks):
                if m == 0:
                    continue
                shift = (m & -m).bit_length() - 1
                width = bin(m).count("1")
                value = (int(rgba[y, x, c]) * ((1 << width) - 1) + 127) // 255
                v |= value << shift
            row += struct.pack("<H" if bits == 16 else "<I", v)
        out += row + b"\0" * ((-len(row)) % 4)
    return bytes(out)


def expand(rgba, masks):
    """What a decoder makes of `masked` pixels: each channel back to 8 bits, rounded."""
    out = rgba.copy()
    for c, m in enumerate(masks):
        if m == 0:
            out[:, :, c] = 255 if c == 3 else 0
            continue
        width = bin(m).count("1")
        top = (1 << width) - 1
        value = (rgba[:, :, c].astype(np.int64) * top + 127) // 255
        out[:, :, c] = ((value * 255 + top // 2) // top).astype(np.uint8)
    return out


# ---------------------------------------------------------------------------------------------

def make_bmp(root):
    d = os.path.join(root, "bmp")
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    rgb = source_rgb()
    rgba = source_rgba()

    def valid_pillow(name, notes="", made="", tolerance=0, mode=None, fix=None):
        ref = pillow_reference(os.path.join(d, name), mode)
        if fix is not None:
            ref = fix(ref)
        write_pam(os.path.join(d, name[:-4] + ".pam"), ref)
        add("bmp", name, reference=name[:-4] + ".pam", width=ref.shape[1], height=ref.shape[0], tolerance=tolerance,
            made_with=made or "make-bmp-fixtures.py BMP writer; reference = Pillow's decode", notes=notes)

    def valid_source(name, ref, notes, made="make-bmp-fixtures.py BMP writer; reference = the encoded source pixels (Pillow cannot read it)"):
        write_pam(os.path.join(d, name[:-4] + ".pam"), ref)
        add("bmp", name, reference=name[:-4] + ".pam", width=ref.shape[1], height=ref.shape[0], made_with=made, notes=notes)

    # Pillow's own files.
    Image.fromarray(rgb).convert("1").save(os.path.join(d, "pil-1.bmp"))
    valid_pillow("pil-1.bmp", made="Pillow (mode 1); reference = Pillow's decode")
    Image.fromarray(rgb).convert("L").save(os.path.join(d, "pil-8-gray.bmp"))
    valid_pillow("pil-8-gray.bmp", made="Pillow (mode L, gray palette); reference = Pillow's decode")
    Image.fromarray(rgb).quantize(colors=200, dither=Image.Dither.NONE).save(os.path.join(d, "pil-8-palette.bmp"))
    valid_pillow("pil-8-palette.bmp", made="Pillow (mode P, 200 colours); reference = Pillow's decode")
    Image.fromarray(rgb).save(os.path.join(d, "pil-24.bmp"))
    valid_pillow("pil-24.bmp", made="Pillow (mode RGB); reference = Pillow's decode")
    Image.fromarray(rgba).save(os.path.join(d, "pil-32.bmp"))
    valid_pillow("pil-32.bmp", made="Pillow (mode RGBA: 32-bit BI_RGB); reference = Pillow's decode",
                 notes="32-bit BI_RGB: the fourth byte is unused by the format, so both Pillow and NukeBMP ignore the alpha Pillow wrote")

    # Palettes of 1, 2, 4, 8 bits.
    for bits in (1, 2, 4, 8):
        idx = indices(bits)
        pal = palette(1 << bits)
        data = pack_rows(bottom_up([list(r) for r in idx]), bits)
        name = "pal%d.bmp" % bits
        write_bmp(os.path.join(d, name), W, H, bits, data, pal=pal)
        ref = np.array([[pal[v] for v in row] for row in idx], dtype=np.uint8)
        if bits == 2:
            valid_source(name, ref, "2-bit palette (Windows CE)")
        else:
            valid_pillow(name)
    # A palette smaller than 2^bits (clrUsed 6 of 16).
    idx = indices(4) % 6
    pal = palette(6)
    write_bmp(os.path.join(d, "pal4-6colors.bmp"), W, H, 4, pack_rows(bottom_up([list(r) for r in idx]), 4), pal=pal)
    valid_pillow("pal4-6colors.bmp", notes="clrUsed 6: a palette smaller than 2^bits")
    # Core header (12 bytes, 3-byte palette entries), 8 bits.
    idx = indices(8)
    pal = palette(256)
    write_bmp(os.path.join(d, "core-pal8.bmp"), W, H, 8, pack_rows(bottom_up([list(r) for r in idx]), 8), header_size=12, pal=pal)
    valid_pillow("core-pal8.bmp", notes="BITMAPCOREHEADER")
    # Core header, 24 bits.
    data = pack_rows(bottom_up([list(r[:, ::-1].reshape(-1)) for r in rgb]), 24)
    write_bmp(os.path.join(d, "core-24.bmp"), W, H, 24, data, header_size=12)
    valid_pillow("core-24.bmp", notes="BITMAPCOREHEADER, 24-bit")
    # OS/2 2.x headers: 64 bytes (Pillow reads it) and 16 bytes (it does not).
    pal = palette(16)
    idx = indices(4)
    write_bmp(os.path.join(d, "os2v2-64-pal4.bmp"), W, H, 4, pack_rows(bottom_up([list(r) for r in idx]), 4), header_size=64, pal=pal)
    valid_pillow("os2v2-64-pal4.bmp", notes="OS/2 2.x header of 64 bytes")
    write_bmp(os.path.join(d, "os2v2-16-24.bmp"), W, H, 24, data, header_size=16)
    valid_source("os2v2-16-24.bmp", rgb, "OS/2 2.x header of 16 bytes")
    # Top-down.
    write_bmp(os.path.join(d, "topdown-24.bmp"), W, H, 24, pack_rows([list(r[:, ::-1].reshape(-1)) for r in rgb], 24), top_down=True)
    valid_pillow("topdown-24.bmp", notes="negative height: rows top first")
    idx = indices(8)
    write_bmp(os.path.join(d, "topdown-pal8.bmp"), W, H, 8, pack_rows([list(r) for r in idx], 8), pal=palette(256), top_down=True)
    valid_pillow("topdown-pal8.bmp", notes="negative height, 8-bit palette")

    # 16 bits: BI_RGB 555, BI_BITFIELDS 565 (INFO + masks), 444 with alpha in a V3 header; 32 bits
    # with alpha in a V3 header too (bmpsuite's rgba32h56.bmp has that layout; Pillow reads no V3 alpha).
    opaque = np.dstack([rgb, np.full((H, W), 255, np.uint8)])
    for name, bits, masks, header, comp, pillow in [
        ("rgb16-555.bmp", 16, (0x7C00, 0x03E0, 0x001F, 0), 40, 0, True),
        ("rgb16-565.bmp", 16, (0xF800, 0x07E0, 0x001F, 0), 40, 3, True),
        ("rgb16-v3-565.bmp", 16, (0xF800, 0x07E0, 0x001F, 0), 56, 3, True),
        ("rgba16-4444.bmp", 16, (0x0F00, 0x00F0, 0x000F, 0xF000), 56, 3, False),
        ("rgb32-bitfields.bmp", 32, (0xFF0000, 0xFF00, 0xFF, 0), 40, 3, True),
        ("rgb32-101010.bmp", 32, (0x3FF00000, 0x000FFC00, 0x000003FF, 0), 40, 3, False),
        ("rgba32-v3.bmp", 32, (0xFF0000, 0xFF00, 0xFF, 0xFF000000), 56, 3, False),
        ("rgba32-v4.bmp", 32, (0xFF0000, 0xFF00, 0xFF, 0xFF000000), 108, 3, True),
        ("rgba32-v5.bmp", 32, (0xFF0000, 0xFF00, 0xFF, 0xFF000000), 124, 3, True),
        ("rgba32-abgr-v5.bmp", 32, (0xFF, 0xFF00, 0xFF0000, 0xFF000000), 124, 3, True),
        ("rgba32-alphabitfields.bmp", 32, (0xFF0000, 0xFF00, 0xFF, 0xFF000000), 40, 6, False),
        ("rgba16-1555-alphabitfields.bmp", 16, (0x7C00, 0x03E0, 0x001F, 0x8000), 40, 6, False),
    ]:
        pixels = rgba if masks[3] else opaque
        body = masked(pixels, bits, masks)
        if comp == 0:
            write_bmp(os.path.join(d, name), W, H, bits, pack_bottom(body, W, H, bits))
        elif header == 40:
            count = 4 if comp == 6 else 3
            write_bmp(os.path.join(d, name), W, H, bits, pack_bottom(body, W, H, bits), compression=comp, extra_masks=masks[:count])
        else:
            write_bmp(os.path.join(d, name), W, H, bits, pack_bottom(body, W, H, bits), header_size=header, compression=comp, masks=masks)
        expected = expand(pixels, masks)
        if not masks[3]:
            expected = expected[:, :, :3]
        tol = 1 if bits == 16 else 0
        if pillow:
            # Pillow scales 5- and 6-bit channels with truncation (v * 255 / 31), NukeBMP rounds:
            # within 1.
            valid_pillow(name, tolerance=tol, notes="masks %s" % ", ".join("0x%X" % m for m in masks)
                         + ("; Pillow truncates where NukeBMP rounds (within 1)" if tol else ""),
                         mode="RGBA" if masks[3] else "RGB")
        else:
            valid_source(name, expected, "masks %s (Pillow does not read them): reference = the source scaled to the masks' widths and back" % ", ".join("0x%X" % m for m in masks))
    # A V4 file with an alpha mask and every alpha zero: opaque, as browsers draw it.
    zero = np.dstack([rgb, np.zeros((H, W), np.uint8)])
    masks = (0xFF0000, 0xFF00, 0xFF, 0xFF000000)
    write_bmp(os.path.join(d, "rgba32-v4-zero-alpha.bmp"), W, H, 32, pack_bottom(masked(zero, 32, masks), W, H, 32),
              header_size=108, compression=3, masks=masks)

    def opaque_alpha(ref):
        ref = ref.copy()
        ref[:, :, 3] = 255
        return ref
    valid_pillow("rgba32-v4-zero-alpha.bmp", mode="RGBA", fix=opaque_alpha,
                 notes="every alpha zero: Pillow returns it transparent; browsers and NukeBMP draw it opaque (reference alpha set to 255)")

    # A V4 header with BI_RGB and an alpha mask: browsers (Chromium) use it, Pillow ignores it.
    masks = (0xFF0000, 0xFF00, 0xFF, 0xFF000000)
    write_bmp(os.path.join(d, "rgba32-v4-bi-rgb.bmp"), W, H, 32, pack_bottom(masked(rgba, 32, masks), W, H, 32),
              header_size=108, compression=0, masks=masks)

    def with_source_alpha(ref):
        return np.dstack([ref[:, :, :3], rgba[:, :, 3]])
    valid_pillow("rgba32-v4-bi-rgb.bmp", mode="RGB", fix=with_source_alpha,
                 notes="BI_RGB with a V4 header's alpha mask: Chromium uses the alpha, Pillow ignores it (reference alpha = the encoded alpha)")

    # V5 with an embedded ICC profile (the PNG fixture's profile).
    icc = Image.open(os.path.join(root, "png", "iccp.png")).info["icc_profile"]
    write_bmp(os.path.join(d, "v5-icc.bmp"), W, H, 24, pack_rows(bottom_up([list(r[:, ::-1].reshape(-1)) for r in rgb]), 24),
              header_size=124, icc=icc)
    ref = pillow_reference(os.path.join(d, "v5-icc.bmp"), "RGB")
    write_pam(os.path.join(d, "v5-icc.pam"), ref)
    add("bmp", "v5-icc.bmp", reference="v5-icc.pam", width=W, height=H, icc=icc,
        made_with="make-bmp-fixtures.py BMP writer; reference = Pillow's decode",
        notes="BITMAPV5HEADER with PROFILE_EMBEDDED (the profile of png/iccp.png after the pixels)")

    # RLE8 and RLE4, with every escape but delta.
    idx = indices(8) // 8 * 8
    idx[:, 10:] = indices(8)[:, 10:]
    pal = palette(256)
    write_bmp(os.path.join(d, "rle8.bmp"), W, H, 8, rle8(bottom_up([list(r) for r in idx])), compression=1, pal=pal)
    valid_pillow("rle8.bmp", notes="RLE8: encoded and absolute runs, end of line, end of bitmap")
    idx4 = indices(4)
    pal4 = palette(16)
    write_bmp(os.path.join(d, "rle4.bmp"), W, H, 4, rle4(bottom_up([list(r) for r in idx4])), compression=2, pal=pal4)
    valid_pillow("rle4.bmp", notes="RLE4: two-colour runs, absolute runs, end of line, end of bitmap")
    # RLE8 with a delta and an early end of line: skipped pixels transparent.
    stream = bytearray()
    ref = np.zeros((H, W, 4), np.uint8)
    for r in range(H):       # file row r is displayed at H-1-r
        y = H - 1 - r
        if r == 4:
            stream += bytes([5, 7]) + b"\0\2" + bytes([3, 2])   # 5 pixels, then skip 3 right and 2 up
            for x in range(5):
                ref[y, x] = list(pal[7]) + [255]
            # continue on row r+2 at x = 8
            continue
        if r == 5:
            continue
        if r == 6:
            stream += bytes([W - 8, 9]) + b"\0\0"
            for x in range(8, W):
                ref[y, x] = list(pal[9]) + [255]
            continue
        n = W if r % 3 else W // 2    # every third row ends early
        stream += bytes([n, r + 1]) + b"\0\0"
        for x in range(n):
            ref[y, x] = list(pal[r + 1]) + [255]
    stream += b"\0\1"
    write_bmp(os.path.join(d, "rle8-delta.bmp"), W, H, 8, bytes(stream), compression=1, pal=pal)
    pil = pillow_reference(os.path.join(d, "rle8-delta.bmp"), "RGBA")
    assert (pil[ref[:, :, 3] == 255] == ref[ref[:, :, 3] == 255]).all(), "Pillow disagrees on the written pixels"
    write_pam(os.path.join(d, "rle8-delta.pam"), ref)
    add("bmp", "rle8-delta.bmp", reference="rle8-delta.pam", width=W, height=H,
        made_with="make-bmp-fixtures.py BMP writer; reference = Pillow's decode for the pixels written, transparent for the skipped ones",
        notes="RLE8 delta and early ends of line: Pillow fills skipped pixels with palette index 0, browsers and NukeBMP leave them transparent")
    # OS/2 RLE24 (64-byte header, compression 4).
    rows = bottom_up([[tuple(p) for p in r] for r in rgb // 32 * 32])
    write_bmp(os.path.join(d, "os2-rle24.bmp"), W, H, 24, rle24(rows), header_size=64, compression=4)
    valid_source("os2-rle24.bmp", rgb // 32 * 32, "OS/2 RLE24")

    # Questionable files browsers accept.
    idx = indices(8)
    data = pack_rows(bottom_up([list(r) for r in idx]), 8)
    write_bmp(os.path.join(d, "q-pal8-oversize-palette.bmp"), W, H, 8, data, pal=palette(256) + [(1, 2, 3)] * 44, colors=300)
    ref = np.array([[palette(256)[v] for v in row] for row in idx], dtype=np.uint8)
    valid_source("q-pal8-oversize-palette.bmp", ref, "questionable: clrUsed 300 for 8 bits (the extra entries ignored, a warning)",
                 made="make-bmp-fixtures.py BMP writer; reference = the encoded source pixels (Pillow refuses the palette size)")
    write_bmp(os.path.join(d, "q-bad-file-size.bmp"), W, H, 8, data, pal=palette(256), file_size=123456789)
    valid_pillow("q-bad-file-size.bmp", notes="questionable: bfSize is wrong (not used)")
    write_bmp(os.path.join(d, "q-pixels-offset-gap.bmp"), W, H, 8, data, pal=palette(256), offset_gap=100)
    valid_pillow("q-pixels-offset-gap.bmp", notes="questionable: 100 bytes between the palette and the pixels (bfOffBits honoured)")
    pal_idx = indices(8) % 20
    write_bmp(os.path.join(d, "q-pal8-index-out-of-range.bmp"), W, H, 8, pack_rows(bottom_up([list(r) for r in (pal_idx + (pal_idx > 15) * 200)]), 8),
              pal=palette(16))
    ref = np.array([[palette(16)[v] if v < 16 else (0, 0, 0) for v in row] for row in (pal_idx + (pal_idx > 15) * 200)], dtype=np.uint8)
    valid_source("q-pal8-index-out-of-range.bmp", ref, "questionable: indices past the 16-entry palette drawn black (a warning), as in browsers",
                 made="make-bmp-fixtures.py BMP writer; reference = the source with out-of-range indices black")

    # Bad files.
    full = open(os.path.join(d, "pil-24.bmp"), "rb").read()
    open(os.path.join(d, "bad-truncated-pixels.bmp"), "wb").write(full[:len(full) // 2])
    add("bmp", "bad-truncated-pixels.bmp", kind="invalid", error="incomplete", made_with="pil-24.bmp cut in half")
    open(os.path.join(d, "bad-truncated-header.bmp"), "wb").write(full[:30])
    add("bmp", "bad-truncated-header.bmp", kind="invalid", error="incomplete", made_with="pil-24.bmp cut inside the DIB header")
    bad = bytearray(full)
    bad[14:18] = struct.pack("<I", 41)
    open(os.path.join(d, "bad-header-size.bmp"), "wb").write(bytes(bad))
    add("bmp", "bad-header-size.bmp", kind="invalid", error="corrupt", made_with="pil-24.bmp with a DIB header size of 41")
    bad = bytearray(full)
    bad[18:22] = struct.pack("<i", 0)
    open(os.path.join(d, "bad-zero-width.bmp"), "wb").write(bytes(bad))
    add("bmp", "bad-zero-width.bmp", kind="invalid", error="corrupt", made_with="pil-24.bmp with width 0")
    bad = bytearray(full)
    bad[28:30] = struct.pack("<H", 7)
    open(os.path.join(d, "bad-bit-count.bmp"), "wb").write(bytes(bad))
    add("bmp", "bad-bit-count.bmp", kind="invalid", error="corrupt", made_with="pil-24.bmp with 7 bits per pixel")
    bad = bytearray(full)
    bad[10:14] = struct.pack("<I", 0x7FFFFFF0)
    open(os.path.join(d, "bad-offset-past-end.bmp"), "wb").write(bytes(bad))
    add("bmp", "bad-offset-past-end.bmp", kind="invalid", error="incomplete", made_with="pil-24.bmp with bfOffBits past the end")
    bad = bytearray(full)
    bad[30:34] = struct.pack("<I", 4)
    open(os.path.join(d, "bad-jpeg-compression.bmp"), "wb").write(bytes(bad))
    add("bmp", "bad-jpeg-compression.bmp", kind="invalid", error="unsupported", made_with="pil-24.bmp claiming BI_JPEG")
    bad = bytearray(full)
    bad[18:26] = struct.pack("<ii", 40000, 40000)
    open(os.path.join(d, "bad-huge-dimensions.bmp"), "wb").write(bytes(bad))
    add("bmp", "bad-huge-dimensions.bmp", kind="invalid", error="limit", made_with="pil-24.bmp claiming 40000x40000")


def pack_bottom(body, w, h, bits):
    """`masked` rows (top first, padded) reordered bottom-up."""
    stride = ((w * bits + 31) // 32) * 4
    rows = [body[i * stride:(i + 1) * stride] for i in range(h)]
    return b"".join(reversed(rows))


# ---------------------------------------------------------------------------------------------

def dib_entry(pixels_rgba, bits, pal=None, idx=None, mask=None):
    """An ICO entry's DIB: a 40-byte header with the height doubled, the XOR bitmap, the AND mask."""
    h, w, _ = pixels_rgba.shape
    header = struct.pack("<IiiHHIIiiII", 40, w, 2 * h, 1, bits, 0, 0, 0, 0, len(pal) if pal else 0, 0)
    pal_bytes = b"".join(bytes([b, g, r, 0]) for (r, g, b) in pal) if pal else b""
    if bits <= 8:
        xor = pack_rows(bottom_up([list(r) for r in idx]), bits)
    elif bits == 24:
        xor = pack_rows(bottom_up([list(r[:, [2, 1, 0]].reshape(-1)) for r in pixels_rgba]), 24)
    else:
        xor = pack_rows(bottom_up([list(r[:, [2, 1, 0, 3]].reshape(-1)) for r in pixels_rgba]), 32)
    if mask is None:
        mask = pixels_rgba[:, :, 3] == 0
    andmask = pack_rows(bottom_up([[1 if v else 0 for v in r] for r in mask]), 1)
    return header + pal_bytes + xor + andmask


def write_ico(path, entries, kind=1):
    """entries: (width, height, bits, hotspot or None, bytes)."""
    out = struct.pack("<HHH", 0, kind, len(entries))
    offset = 6 + 16 * len(entries)
    body = b""
    for (w, h, bits, hotspot, data) in entries:
        f1, f2 = hotspot if hotspot else (1, bits)
        out += struct.pack("<BBBBHHII", w % 256, h % 256, 0, 0, f1, f2, len(data), offset + len(body))
        body += data
    open(path, "wb").write(out + body)


def make_ico(root):
    d = os.path.join(root, "ico")
    c = os.path.join(root, "cur")
    for folder in (d, c):
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))

    def valid(folder, name, notes, made="make-bmp-fixtures.py ICO writer; reference = Pillow's decode (the largest entry)", masked=False):
        ref = pillow_reference(os.path.join(root, folder, name), "RGBA")
        if masked:
            # Pixels under the AND mask: transparent black, as browsers (and NukeICO) make them;
            # Pillow keeps the XOR bitmap's colour under them in an ICO.
            ref = ref.copy()
            ref[ref[:, :, 3] == 0] = 0
            notes += "; pixels under the AND mask are transparent black (Pillow keeps their colour in an ICO)"
        write_pam(os.path.join(root, folder, name[:-4] + ".pam"), ref)
        add(folder, name, reference=name[:-4] + ".pam", width=ref.shape[1], height=ref.shape[0], made_with=made, notes=notes)

    big = Image.fromarray(source_rgba(48, 48))
    big.save(os.path.join(d, "pil-png.ico"), sizes=[(16, 16), (32, 32), (48, 48)])
    valid("ico", "pil-png.ico", "three PNG entries (16, 32, 48)", "Pillow (PNG entries); reference = Pillow's decode")
    big.save(os.path.join(d, "pil-bmp.ico"), sizes=[(16, 16), (32, 32), (48, 48)], bitmap_format="bmp")
    valid("ico", "pil-bmp.ico", "three 32-bit DIB entries (16, 32, 48)", "Pillow (bitmap_format bmp); reference = Pillow's decode")

    rgba = source_rgba(W, H)
    rgb = rgba.copy()
    rgb[:, :, 3] = np.where(rgba[:, :, 3] < 128, 0, 255)
    idx = indices(8, W, H)
    pal = palette(256)
    pixels = np.array([[list(pal[v]) + [0] for v in row] for row in idx], dtype=np.uint8)
    mask = (np.mgrid[0:H, 0:W][1] + np.mgrid[0:H, 0:W][0]) % 5 == 0
    write_ico(os.path.join(d, "dib-pal8-andmask.ico"), [(W, H, 8, None, dib_entry(pixels, 8, pal, idx, mask))])
    valid("ico", "dib-pal8-andmask.ico", "8-bit palette entry; its AND mask as alpha", masked=True)
    idx1 = indices(1, W, H)
    pal1 = [(0, 0, 0), (255, 255, 255)]
    px1 = np.array([[list(pal1[v]) + [0] for v in row] for row in idx1], dtype=np.uint8)
    write_ico(os.path.join(d, "dib-pal1.ico"), [(W, H, 1, None, dib_entry(px1, 1, pal1, idx1, mask))])
    valid("ico", "dib-pal1.ico", "1-bit entry with an AND mask", masked=True)
    write_ico(os.path.join(d, "dib-24.ico"), [(W, H, 24, None, dib_entry(rgb, 24, mask=rgb[:, :, 3] == 0))])
    valid("ico", "dib-24.ico", "24-bit entry with an AND mask", masked=True)
    write_ico(os.path.join(d, "dib-32-alpha.ico"), [(W, H, 32, None, dib_entry(rgba, 32))])
    valid("ico", "dib-32-alpha.ico", "32-bit entry whose fourth byte is alpha (the AND mask unused)")
    # Several entries: the decoder picks the largest, the tests pick others by target size.
    small = source_rgba(8, 8)
    write_ico(os.path.join(d, "dib-multi.ico"), [
        (8, 8, 32, None, dib_entry(small, 32)),
        (W, H, 8, None, dib_entry(pixels, 8, pal, idx, mask)),
        (W, H, 32, None, dib_entry(rgba, 32)),
        (16, 16, 32, None, dib_entry(source_rgba(16, 16), 32)),
    ])
    ref = rgba.copy()
    write_pam(os.path.join(d, "dib-multi.pam"), ref)
    pil = pillow_reference(os.path.join(d, "dib-multi.ico"), "RGBA")
    add("ico", "dib-multi.ico", reference="dib-multi.pam", width=W, height=H,
        made_with="make-bmp-fixtures.py ICO writer; reference = the 32-bit 24x16 entry's source pixels",
        notes="four entries (8x8, 24x16 8-bit, 24x16 32-bit, 16x16): the largest, deepest one is decoded; Pillow picks %s" %
              ("the same" if pil.shape[:2] == (H, W) and (pil == ref).all() else "another"))

    # Cursors.
    write_ico(os.path.join(c, "cursor-32.cur"), [(W, H, 32, (5, 7), dib_entry(rgba, 32))], kind=2)
    valid("cur", "cursor-32.cur", "CUR, hotspot (5, 7)")
    write_ico(os.path.join(c, "cursor-pal1.cur"), [(W, H, 1, (0, 0), dib_entry(px1, 1, pal1, idx1, mask))], kind=2)
    valid("cur", "cursor-pal1.cur", "CUR, 1-bit with an AND mask, hotspot (0, 0)", masked=True)

    # Bad files.
    full = open(os.path.join(d, "dib-32-alpha.ico"), "rb").read()
    open(os.path.join(d, "bad-truncated-entry.ico"), "wb").write(full[:len(full) - 200])
    add("ico", "bad-truncated-entry.ico", kind="invalid", error="incomplete", made_with="dib-32-alpha.ico cut short")
    bad = bytearray(full)
    bad[18:22] = struct.pack("<I", 0x7FFF0000)
    open(os.path.join(d, "bad-offset-past-end.ico"), "wb").write(bytes(bad))
    add("ico", "bad-offset-past-end.ico", kind="invalid", error="incomplete", made_with="dib-32-alpha.ico with its entry's offset past the end")
    bad = bytearray(full)
    bad[22:26] = struct.pack("<I", 77)
    open(os.path.join(d, "bad-dib-header.ico"), "wb").write(bytes(bad))
    add("ico", "bad-dib-header.ico", kind="invalid", error="corrupt", made_with="dib-32-alpha.ico with a DIB header size of 77")


# ---------------------------------------------------------------------------------------------

def make_xbm(root):
    d = os.path.join(root, "xbm")
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    bits = (source_rgb(21, 13)[:, :, 2] > 100)   # True = set bit
    notes = "reference = Pillow's decode inverted: X11 draws a set bit black, Pillow's mode 1 makes it 255"

    def ref_from_bits(b):
        g = np.where(b, 0, 255).astype(np.uint8)
        return np.dstack([g, g, g])

    def valid(name, expected_bits, note, pillow=True):
        ref = ref_from_bits(expected_bits)
        if pillow:
            pil = np.asarray(Image.open(os.path.join(d, name)).convert("L"))
            assert (255 - pil == ref[:, :, 0]).all(), name + ": Pillow reads other bits"
        write_pam(os.path.join(d, name[:-4] + ".pam"), ref)
        add("xbm", name, reference=name[:-4] + ".pam", width=ref.shape[1], height=ref.shape[0],
            made_with="make-bmp-fixtures.py XBM writer; " + (notes if pillow else "reference = the encoded bits (Pillow does not read X10)"),
            notes=note)

    Image.fromarray(bits).convert("1").save(os.path.join(d, "pil.xbm"))
    valid("pil.xbm", bits, "written by Pillow (a set bit where Pillow's pixel is 255)")

    def x11(name, b, hot=None, comment=False, decimal=False, upper=False):
        h, w = b.shape
        lines = []
        if comment:
            lines.append("/* Made by make-bmp-fixtures.py: {a comment before the defines} */")
        lines += ["#define img_width %d" % w, "#define img_height %d" % h]
        if hot:
            lines += ["#define img_x_hot %d" % hot[0], "#define img_y_hot %d" % hot[1]]
        values = []
        for row in b:
            for i in range(0, w, 8):
                v = 0
                for k, bit in enumerate(row[i:i + 8]):
                    v |= int(bit) << k
                values.append(str(v) if decimal else ("0X%02X" % v if upper else "0x%02x" % v))
        lines.append("static unsigned char img_bits[] = {")
        body = ""
        for i in range(0, len(values), 12):
            body += "   " + ", ".join(values[i:i + 12]) + ("," if i + 12 < len(values) else "") + ("  /* row data */" if comment and i == 0 else "") + "\n"
        open(os.path.join(d, name), "w").write("\n".join(lines) + "\n" + body + "};\n")

    x11("hotspot.xbm", bits, hot=(3, 4))
    valid("hotspot.xbm", bits, "X11, unsigned char, hotspot (3, 4)")
    x11("comments-upper.xbm", bits, comment=True, upper=True)
    valid("comments-upper.xbm", bits, "comments before the defines and between values, 0X upper-case hex", pillow=False)
    # X10: 16-bit shorts.
    h, w = bits.shape
    values = []
    for row in bits:
        for i in range(0, w, 16):
            v = 0
            for k, bit in enumerate(row[i:i + 16]):
                v |= int(bit) << k
            values.append("0x%04x" % v)
    open(os.path.join(d, "x10.xbm"), "w").write(
        "#define x10_width %d\n#define x10_height %d\nstatic short x10_bits[] = {\n   %s};\n" % (w, h, ", ".join(values)))
    valid("x10.xbm", bits, "X10: short values of 16 bits", pillow=False)

    full = open(os.path.join(d, "hotspot.xbm"), "rb").read()
    open(os.path.join(d, "bad-truncated.xbm"), "wb").write(full[:len(full) // 2])
    add("xbm", "bad-truncated.xbm", kind="invalid", error="incomplete", made_with="hotspot.xbm cut in half")
    open(os.path.join(d, "bad-garbage.xbm"), "wb").write(full.replace(b"0x", b"zz", 3))
    add("xbm", "bad-garbage.xbm", kind="invalid", error="corrupt", made_with="hotspot.xbm with letters for numbers")
    open(os.path.join(d, "bad-no-height.xbm"), "wb").write(full.replace(b"img_height", b"img_depth"))
    add("xbm", "bad-no-height.xbm", kind="invalid", error="corrupt", made_with="hotspot.xbm without its height")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "Fixtures")
    make_bmp(root)
    make_ico(root)
    make_xbm(root)
    for folder, fixtures in MANIFESTS.items():
        with open(os.path.join(root, folder, "manifest.json"), "w") as f:
            json.dump({"format": folder, "fixtures": fixtures}, f, indent=2)
            f.write("\n")
        print("make-bmp-fixtures: %s: %d fixtures" % (folder, len(fixtures)))


if __name__ == "__main__":
    main()

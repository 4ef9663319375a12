#!/usr/bin/env python3
"""A HEIC turned by irot with an EXIF Orientation 6 beside it, as phones write (Fixtures/output).

    python3 scripts/make-heif-orientation-fixture.py [Fixtures]

irot-6.heic: the stored pixels of Fixtures/output/upright-1.pam (37x23) encoded by libheif's own
encoder (x265, quality 90) with heif_encoding_options.image_orientation = 6, so libheif writes the
irot/imir boxes; then an EXIF block whose Orientation is 6, added with
heif_context_add_exif_metadata. The writer is a small C program compiled here against libheif
(libheif-dev). irot-6.pam is heif-convert's decode (libheif-examples), which applies irot: 23x37.
Run after make-output-fixtures.py.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixtures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Fixtures")
out = os.path.join(fixtures, "output")

WRITER = r"""
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct heif_error error) {
    if (error.code == heif_error_Ok) return 0;
    fprintf(stderr, "libheif: %s\n", error.message);
    exit(1);
}

int main(int argc, char **argv) {
    int width = atoi(argv[2]), height = atoi(argv[3]);
    unsigned char *rgb = malloc((size_t)width * height * 3);
    FILE *in = fopen(argv[1], "rb");
    if (!in || fread(rgb, 1, (size_t)width * height * 3, in) != (size_t)width * height * 3) return 1;
    fclose(in);
    struct heif_context *context = heif_context_alloc();
    struct heif_encoder *encoder;
    fail(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder));
    fail(heif_encoder_set_lossy_quality(encoder, 90));
    struct heif_image *image;
    fail(heif_image_create(width, height, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image));
    fail(heif_image_add_plane(image, heif_channel_interleaved, width, height, 8));
    int stride;
    uint8_t *plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    for (int y = 0; y < height; y++) memcpy(plane + y * stride, rgb + (size_t)y * width * 3, (size_t)width * 3);
    struct heif_encoding_options *options = heif_encoding_options_alloc();
    options->image_orientation = heif_orientation_rotate_90_cw;
    struct heif_image_handle *handle;
    fail(heif_context_encode_image(context, image, encoder, options, &handle));
    /* A big-endian TIFF header and IFD0 with Orientation 6, as a phone's EXIF says it. */
    unsigned char exif[] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0};
    fail(heif_context_add_exif_metadata(context, handle, exif, sizeof exif));
    fail(heif_context_write_to_file(context, argv[4]));
    return 0;
}
"""


def read_pam(path):
    data = open(path, "rb").read()
    end = data.index(b"ENDHDR\n") + len(b"ENDHDR\n")
    fields = dict(line.split(b" ", 1) for line in data[:end].split(b"\n")[1:-2])
    w, h, depth = int(fields[b"WIDTH"]), int(fields[b"HEIGHT"]), int(fields[b"DEPTH"])
    return np.frombuffer(data[end:], dtype=np.uint8).reshape(h, w, depth)


def write_pam(path, pixels):
    h, w, depth = pixels.shape
    header = "P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n" % (w, h, depth)
    with open(path, "wb") as f:
        f.write(header.encode() + np.ascontiguousarray(pixels, dtype=np.uint8).tobytes())


stored = read_pam(os.path.join(out, "upright-1.pam"))
with tempfile.TemporaryDirectory() as tmp:
    source = os.path.join(tmp, "writer.c")
    open(source, "w").write(WRITER)
    writer = os.path.join(tmp, "writer")
    subprocess.run(["cc", "-O1", "-o", writer, source, "-lheif"], check=True)
    raw = os.path.join(tmp, "stored.rgb")
    open(raw, "wb").write(np.ascontiguousarray(stored).tobytes())
    heic = os.path.join(out, "irot-6.heic")
    subprocess.run([writer, raw, str(stored.shape[1]), str(stored.shape[0]), heic], check=True)
    png = os.path.join(tmp, "decoded.png")
    subprocess.run(["heif-convert", heic, png], check=True, stdout=subprocess.DEVNULL)
    decoded = np.asarray(Image.open(png).convert("RGB"))
    assert decoded.shape[:2] == (stored.shape[1], stored.shape[0]), decoded.shape
    write_pam(os.path.join(out, "irot-6.pam"), decoded)
print("wrote irot-6.heic", os.path.getsize(os.path.join(out, "irot-6.heic")), "bytes and irot-6.pam", decoded.shape)

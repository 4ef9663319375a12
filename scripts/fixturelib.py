"""What the fixture scripts share: PAM files, and a HEIF writer compiled against libheif for what
heif-enc 1.15 cannot write (an irot orientation, an nclx description)."""
import os
import subprocess
import tempfile

import numpy as np


def read_pam(path):
    """A PAM file's samples as a height x width x depth array: uint8, or uint16 when its MAXVAL
    is above 255."""
    data = open(path, "rb").read()
    end = data.index(b"ENDHDR\n") + len(b"ENDHDR\n")
    fields = dict(line.split(b" ", 1) for line in data[:end].split(b"\n")[1:-2])
    w, h, depth = int(fields[b"WIDTH"]), int(fields[b"HEIGHT"]), int(fields[b"DEPTH"])
    wide = int(fields.get(b"MAXVAL", b"255")) > 255
    samples = np.frombuffer(data[end:], dtype=">u2" if wide else np.uint8).reshape(h, w, depth)
    return samples.astype(np.uint16) if wide else samples


def write_pam(path, pixels):
    """Writes a gray, gray+alpha, RGB or RGBA array as PAM: 8-bit for uint8 samples, 16-bit
    (big-endian, MAXVAL 65535) for uint16."""
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    h, w, depth = pixels.shape
    tupltype = {1: "GRAYSCALE", 2: "GRAYSCALE_ALPHA", 3: "RGB", 4: "RGB_ALPHA"}[depth]
    wide = pixels.dtype == np.uint16
    header = "P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL %d\nTUPLTYPE %s\nENDHDR\n" % (w, h, depth, 65535 if wide else 255, tupltype)
    samples = np.ascontiguousarray(pixels, dtype=">u2" if wide else np.uint8)
    with open(path, "wb") as f:
        f.write(header.encode() + samples.tobytes())


def transicc(pixels, source, scale):
    """Each pixel through lcms2's transicc (liblcms2-utils) from the profile `source` to lcms2's
    sRGB, perceptual intent, rounded and clamped to 8 bits; `scale` maps samples to transicc's
    input range (1 for RGB 0-255, 100/255 for CMYK percentages)."""
    flat = pixels.reshape(-1, pixels.shape[-1]).astype(np.float64) * scale
    text = "\n".join(" ".join("%.6f" % v for v in row) for row in flat) + "\n"
    run = subprocess.run(["transicc", "-i", source, "-o", "*sRGB", "-t", "0", "-n"], input=text.encode(),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    values = [line.split() for line in run.stdout.decode().splitlines()]
    values = [v for v in values if len(v) == 3 and all(c.replace(".", "").replace("-", "").isdigit() for c in v)]
    assert len(values) == len(flat), (len(values), len(flat))
    rgb = np.clip(np.rint(np.array(values, dtype=np.float64)), 0, 255).astype(np.uint8)
    return rgb.reshape(pixels.shape[:-1] + (3,))


HEIF_WRITER = r"""
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(struct heif_error error) {
    if (error.code == heif_error_Ok) return;
    fprintf(stderr, "libheif: %s\n", error.message);
    exit(1);
}

/* writer RGB WIDTH HEIGHT OUT hevc|av1 ORIENTATION PRIMARIES TRANSFER MATRIX
   ORIENTATION 1..8 (libheif writes irot/imir; with an EXIF block saying the same);
   PRIMARIES 0 for no nclx description. */
int main(int argc, char **argv) {
    if (argc != 10) return 2;
    int width = atoi(argv[2]), height = atoi(argv[3]), orientation = atoi(argv[6]);
    unsigned char *rgb = malloc((size_t)width * height * 3);
    FILE *in = fopen(argv[1], "rb");
    if (!in || fread(rgb, 1, (size_t)width * height * 3, in) != (size_t)width * height * 3) return 1;
    fclose(in);
    struct heif_context *context = heif_context_alloc();
    struct heif_encoder *encoder;
    fail(heif_context_get_encoder_for_format(context, strcmp(argv[5], "av1") == 0 ? heif_compression_AV1 : heif_compression_HEVC, &encoder));
    fail(heif_encoder_set_lossy_quality(encoder, 90));
    struct heif_image *image;
    fail(heif_image_create(width, height, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image));
    fail(heif_image_add_plane(image, heif_channel_interleaved, width, height, 8));
    int stride;
    uint8_t *plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    for (int y = 0; y < height; y++) memcpy(plane + y * stride, rgb + (size_t)y * width * 3, (size_t)width * 3);
    struct heif_encoding_options *options = heif_encoding_options_alloc();
    options->image_orientation = (enum heif_orientation)orientation;
    if (atoi(argv[7]) != 0) {
        struct heif_color_profile_nclx *nclx = heif_nclx_color_profile_alloc();
        nclx->color_primaries = (enum heif_color_primaries)atoi(argv[7]);
        nclx->transfer_characteristics = (enum heif_transfer_characteristics)atoi(argv[8]);
        nclx->matrix_coefficients = (enum heif_matrix_coefficients)atoi(argv[9]);
        nclx->full_range_flag = 1;
        fail(heif_image_set_nclx_color_profile(image, nclx));
        options->output_nclx_profile = nclx;
    }
    struct heif_image_handle *handle;
    fail(heif_context_encode_image(context, image, encoder, options, &handle));
    if (orientation != 1) {
        /* A big-endian TIFF header and IFD0 with the same Orientation, as a phone's EXIF says it. */
        unsigned char exif[] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, (unsigned char)orientation, 0, 0, 0, 0, 0, 0};
        fail(heif_context_add_exif_metadata(context, handle, exif, sizeof exif));
    }
    fail(heif_context_write_to_file(context, argv[4]));
    return 0;
}
"""


def write_heif(pixels, path, av1=False, orientation=1, nclx=None):
    """Encodes an 8-bit RGB array with libheif's own encoder (x265 or aom, quality 90), with an
    orientation libheif writes as irot/imir (and an EXIF Orientation beside it), and an nclx
    description `(primaries, transfer, matrix)` when given."""
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "writer.c")
        open(source, "w").write(HEIF_WRITER)
        writer = os.path.join(tmp, "writer")
        subprocess.run(["cc", "-O1", "-o", writer, source, "-lheif"], check=True)
        raw = os.path.join(tmp, "pixels.rgb")
        open(raw, "wb").write(np.ascontiguousarray(pixels[..., :3]).tobytes())
        primaries, transfer, matrix = nclx or (0, 0, 0)
        subprocess.run([writer, raw, str(pixels.shape[1]), str(pixels.shape[0]), path, "av1" if av1 else "hevc",
                        str(orientation), str(primaries), str(transfer), str(matrix)], check=True)

#ifndef NUKEHEIF_FFMPEG_HEVC_H
#define NUKEHEIF_FFMPEG_HEVC_H

// HEVC decoding with FFmpeg's libavcodec, opened on first use when it is installed
// (ffmpeg_hevc.c). NukeHEIF's HEVC decoder plugin (shim.c) uses it instead of libde265 for 8-bit
// images: the same pixels (both decoders are conformant), in about half the time.

#include <stddef.h>
#include <stdint.h>

/// A decoded 8-bit picture, its planes owned by FFmpeg until `nukeheif_hevc_picture_release`.
typedef struct nukeheif_hevc_picture {
    void *frame;
    const uint8_t *planes[3];
    int strides[3];
    int width;
    int height;
    /// 0: monochrome (one plane); 420, 422 or 444.
    int chroma;
    /// The sequence parameter set's colour description (video usability information), with the
    /// defaults libde265 reports without one: 2, 2, 2, limited range.
    int primaries;
    int transfer;
    int matrix;
    int full_range;
} nukeheif_hevc_picture;

/// libavcodec's version ("59.37.100") when it is installed, has an HEVC decoder, and
/// NUKE_HEIF_HEVC_DECODER is not "libde265"; NULL otherwise. Opens libavcodec.
const char *nukeheif_ffmpeg_hevc_version(void);

/// Whether decoding `size` bytes of HEVC (or a file of `size` bytes) with FFmpeg repays opening
/// libavcodec: it is open already, the size is 1 MB or more, or NUKE_HEIF_HEVC_DECODER=ffmpeg.
/// Does not open it.
int nukeheif_ffmpeg_hevc_worthwhile(size_t size);

/// Decodes what libheif hands an HEVC decoder plugin (NAL units, each after its 4-byte big-endian
/// length: the hvcC's parameter sets, then the image's). Returns 1 with the last picture decoded,
/// or 0 when there is none, it is not 8-bit YCbCr or monochrome, or FFmpeg is missing (the
/// caller then decodes with libde265). At most `max_pixels` luma samples are allocated.
int nukeheif_ffmpeg_decode_hevc(const uint8_t *data, size_t size, int64_t max_pixels, nukeheif_hevc_picture *picture);

void nukeheif_hevc_picture_release(nukeheif_hevc_picture *picture);

#endif

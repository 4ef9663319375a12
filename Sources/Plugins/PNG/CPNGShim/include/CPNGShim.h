#ifndef NUKE_CPNGSHIM_H
#define NUKE_CPNGSHIM_H

// Our C layer over libpng.
//
// libpng reports fatal errors with png_error, which longjmps. Every libpng call that can
// fail runs inside one of these functions, which set the jump buffer and return a status
// plus libpng's own message, so a longjmp never crosses a Swift frame. The progressive
// reader's callbacks (info, row, end, user chunks) are C functions in shim.c.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The longest message the shim keeps (libpng's own messages are far shorter).
#define NUKEPNG_MESSAGE_CAPACITY 256

/// What a call into the shim did.
typedef enum nukepng_status {
    /// Every byte was consumed; libpng waits for more.
    NUKEPNG_STATUS_NEED_MORE = 0,
    /// The header was read and the reader paused before the first row. The caller reads
    /// the output geometry, allocates the pixel buffer and feeds the unconsumed bytes.
    NUKEPNG_STATUS_HEADER_READY = 1,
    /// libpng saw IEND: the image is complete.
    NUKEPNG_STATUS_DONE = 2,
    /// libpng raised an error (malformed data); the message says why.
    NUKEPNG_STATUS_ERROR = 3,
    /// The image exceeds a limit; the message says which.
    NUKEPNG_STATUS_LIMIT = 4,
    /// Memory ran out (or an internal invariant broke).
    NUKEPNG_STATUS_INTERNAL = 5,
} nukepng_status;

/// Limits and options a decoder is created with.
typedef struct nukepng_decoder_options {
    /// Maximum width or height (libpng's user limits; clamped to 2^31 - 1).
    uint64_t max_dimension;
    /// Maximum width x height.
    uint64_t max_pixel_count;
    /// Maximum bytes of decoded pixels.
    uint64_t max_decoded_bytes;
    /// Maximum bytes of one ancillary chunk, compressed or decompressed (iCCP, eXIf...).
    uint64_t max_metadata_bytes;
    /// Keep 16-bit samples (native endian) instead of scaling them to 8 bits.
    int keep_16_bit;
} nukepng_decoder_options;

/// The output geometry, known once the header is ready.
typedef struct nukepng_header {
    uint32_t width;
    uint32_t height;
    /// 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
    int channels;
    /// 8 or 16.
    int bit_depth;
    /// Bytes per output row.
    size_t row_bytes;
    /// 1 when the file is Adam7-interlaced.
    int interlaced;
    /// The file's own colour type and bit depth (before our transformations).
    int source_color_type;
    int source_bit_depth;
} nukepng_header;

/// Progress of the rows delivered so far.
typedef struct nukepng_progress {
    /// Non-interlaced: rows delivered, 0...height.
    uint32_t rows_done;
    /// Interlaced: Adam7 passes complete, 0...7.
    int passes_done;
    /// 1 once libpng processed IEND.
    int finished;
} nukepng_progress;

/// A libpng progressive reader. Opaque; one owner frees it with nukepng_decoder_destroy.
typedef struct nukepng_decoder nukepng_decoder;

/// Creates a progressive reader with libpng's user limits set. Returns NULL on failure,
/// with the reason in `message` (NUKEPNG_MESSAGE_CAPACITY bytes).
nukepng_decoder *nukepng_decoder_create(const nukepng_decoder_options *options, char *message);

/// Frees the reader.
void nukepng_decoder_destroy(nukepng_decoder *decoder);

/// Feeds bytes to `png_process_data`.
///
/// `pixels` (NULL before the header is ready) receives the rows; it is used only during
/// this call. With `previews`, an interlaced image's rows not yet reached by a pass show the
/// pass's pixels replicated over their Adam7 blocks; without, only the final pixels matter. `*consumed` is how many of `data`'s bytes libpng took: all of them except
/// after NUKEPNG_STATUS_HEADER_READY, when the caller feeds the rest again. After an error
/// every later call returns the same status and message.
nukepng_status nukepng_decoder_feed(nukepng_decoder *decoder, const uint8_t *data, size_t size,
                                    uint8_t *pixels, size_t pixels_size, int previews, size_t *consumed);

/// The last status's message (empty when there is none).
const char *nukepng_decoder_message(const nukepng_decoder *decoder);

/// The output geometry; returns 0 before the header is ready.
int nukepng_decoder_header(const nukepng_decoder *decoder, nukepng_header *header);

/// How far decoding got.
nukepng_progress nukepng_decoder_progress(const nukepng_decoder *decoder);

/// The ICC profile (iCCP), or 0 when the file has none. The bytes live until the decoder is destroyed.
int nukepng_decoder_icc(const nukepng_decoder *decoder, const uint8_t **bytes, size_t *size);

/// The eXIf block, or 0 when the file has none. The bytes live until the decoder is destroyed.
int nukepng_decoder_exif(const nukepng_decoder *decoder, const uint8_t **bytes, size_t *size);

/// The gAMA chunk's gamma (such as 0.45455), or 0 when the file has none.
int nukepng_decoder_gamma(const nukepng_decoder *decoder, double *gamma);

/// The sRGB chunk's rendering intent, or 0 when the file has none.
int nukepng_decoder_srgb_intent(const nukepng_decoder *decoder, int *intent);

/// What to write.
typedef struct nukepng_encode_params {
    uint32_t width;
    uint32_t height;
    /// 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
    int channels;
    /// 8 or 16 (16-bit samples in native byte order).
    int bit_depth;
    const uint8_t *pixels;
    size_t row_bytes;
    /// zlib level 0...9, or -1 for libpng's default.
    int compression_level;
    int interlaced;
    const uint8_t *icc;
    size_t icc_size;
    /// Written as gAMA when > 0.
    double gamma;
    /// Written as sRGB when 0...3.
    int srgb_intent;
    const uint8_t *exif;
    size_t exif_size;
} nukepng_encode_params;

/// Encodes a PNG into a malloc'ed buffer the caller frees with free(). Returns
/// NUKEPNG_STATUS_DONE on success, otherwise an error status with `message` filled in.
nukepng_status nukepng_encode(const nukepng_encode_params *params, uint8_t **output, size_t *output_size,
                              char *message);

/// The version of the libpng in use, such as "1.6.39" (png_get_libpng_ver).
const char *nukepng_version(void);

/// 1 on a little-endian machine.
int nukepng_is_little_endian(void);

#ifdef __cplusplus
}
#endif

#endif

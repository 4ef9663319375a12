#ifndef NUKE_CPNGSHIM_H
#define NUKE_CPNGSHIM_H

// Our C layer over libpng.
//
// libpng reports fatal errors with png_error, which longjmps. Every libpng call that can
// fail runs inside one of these functions, which set the jump buffer and return a
// `nuke_status` (Docs/CShims.md), with libpng's own message and warnings in a
// `nuke_diagnostics`, so a longjmp never crosses a Swift frame. The progressive reader's
// callbacks (info, row, end, user chunks) are C functions in shim.c. libpng has no error
// codes: the shim classifies failures by its own state (its limit checks, its chunk walker,
// its allocator), never by libpng's message text.

#include <stddef.h>
#include <stdint.h>

#include "nuke_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Limits and options a decoder is created with.
typedef struct nukepng_decoder_options {
    /// Maximum width or height (checked by the shim when the header is ready).
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

/// Creates a progressive reader. Returns NULL when memory runs out.
nukepng_decoder *_Nullable nukepng_decoder_create(const nukepng_decoder_options *_Nonnull options);

/// Frees the reader.
void nukepng_decoder_destroy(nukepng_decoder *_Nullable decoder);

/// Feeds bytes to `png_process_data`.
///
/// `pixels` (NULL before the header is ready) receives the rows; it is used only during
/// this call. With `previews`, an interlaced image's rows not yet reached by a pass show the
/// pass's pixels replicated over their Adam7 blocks; without, only the final pixels matter.
/// `*consumed` is how many of `data`'s bytes libpng took: all of them except after
/// NUKE_STATUS_PAUSED, when the caller feeds the rest again.
///
/// Returns NUKE_STATUS_NEED_MORE (every byte consumed, more needed), NUKE_STATUS_PAUSED (the
/// header is ready: read it with nukepng_decoder_header, allocate the pixels, feed the rest),
/// NUKE_STATUS_OK (libpng processed IEND; later bytes are ignored), or a failure, with the
/// message in the diagnostics: NUKE_STATUS_CORRUPT, NUKE_STATUS_LIMIT (a limit of the options;
/// an ancillary chunk longer than `max_metadata_bytes` is refused before libpng buffers it),
/// NUKE_STATUS_INTERNAL (out of memory). After a failure every later call returns it again.
/// Decode to size of a non-interlaced image: rows go to a ring of `ring_rows` rows (row r at
/// slot r % ring_rows of the `pixels` given to each feed, which then holds ring_rows rows) instead
/// of the whole image. The caller takes rows out between feeds and reports it with
/// nukepng_decoder_set_rows_drained; a feed that would overwrite rows not yet taken fails with
/// NUKE_STATUS_INTERNAL ("row ring overflow"), so the caller feeds small enough slices. Set it
/// after the header is ready; 0 (the default) is the whole image.
void nukepng_decoder_set_row_ring(nukepng_decoder *_Nonnull decoder, uint32_t ring_rows);

/// How many rows the caller has taken out of the ring (see nukepng_decoder_set_row_ring).
void nukepng_decoder_set_rows_drained(nukepng_decoder *_Nonnull decoder, uint32_t rows);

nuke_status nukepng_decoder_feed(nukepng_decoder *_Nonnull decoder, const uint8_t *_Nonnull data, size_t size,
                                 uint8_t *_Nullable pixels, size_t pixels_size, int previews, size_t *_Nonnull consumed);

/// libpng's message for the last failure, and the warnings it emitted (a bad ancillary CRC,
/// extra data after the image's compressed stream...). Valid until the decoder is destroyed.
const nuke_diagnostics *_Nonnull nukepng_decoder_diagnostics(const nukepng_decoder *_Nonnull decoder);

/// The output geometry; returns 0 before the header is ready.
int nukepng_decoder_header(const nukepng_decoder *_Nonnull decoder, nukepng_header *_Nonnull header);

/// How far decoding got.
nukepng_progress nukepng_decoder_progress(const nukepng_decoder *_Nonnull decoder);

/// The ICC profile (iCCP), or 0 when the file has none. The bytes live until the decoder is destroyed.
int nukepng_decoder_icc(const nukepng_decoder *_Nonnull decoder, const uint8_t *_Nullable *_Nonnull bytes, size_t *_Nonnull size);

/// The eXIf block, or 0 when the file has none. The bytes live until the decoder is destroyed.
int nukepng_decoder_exif(const nukepng_decoder *_Nonnull decoder, const uint8_t *_Nullable *_Nonnull bytes, size_t *_Nonnull size);

/// The gAMA chunk's gamma (such as 0.45455), or 0 when the file has none.
int nukepng_decoder_gamma(const nukepng_decoder *_Nonnull decoder, double *_Nonnull gamma);

/// The sRGB chunk's rendering intent, or 0 when the file has none.
int nukepng_decoder_srgb_intent(const nukepng_decoder *_Nonnull decoder, int *_Nonnull intent);

/// What to write.
typedef struct nukepng_encode_params {
    uint32_t width;
    uint32_t height;
    /// 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
    int channels;
    /// 8 or 16 (16-bit samples in native byte order).
    int bit_depth;
    /// zlib level 0...9, or -1 for libpng's default.
    int compression_level;
    int interlaced;
    const uint8_t *_Nullable icc;
    size_t icc_size;
    /// Written as gAMA when > 0.
    double gamma;
    /// Written as sRGB when 0...3.
    int srgb_intent;
    const uint8_t *_Nullable exif;
    size_t exif_size;
} nukepng_encode_params;

/// A PNG writer that hands out its output piece by piece: `_start`, then `_write_rows` in
/// batches (every row once per pass: 7 passes for Adam7), then `_finish`, taking the bytes
/// produced with `_take_output` after each call. libpng writes through a C callback into the
/// encoder's own buffer, so no Swift code runs inside libpng. Failures: NUKE_STATUS_CORRUPT for
/// parameters libpng rejects, NUKE_STATUS_INTERNAL when memory ran out or the calls are out of
/// order; after one, every call returns the same status.
typedef struct nukepng_encoder nukepng_encoder;

/// Creates an encoder; NULL when out of memory.
nukepng_encoder *_Nullable nukepng_encoder_create(void);
void nukepng_encoder_destroy(nukepng_encoder *_Nullable encoder);
/// libpng's message for the failure and its warnings. Valid until the encoder is destroyed.
const nuke_diagnostics *_Nonnull nukepng_encoder_diagnostics(const nukepng_encoder *_Nonnull encoder);

/// Writes the signature and the chunks before the image data. `*passes` is the number of
/// times each row is to be written (1, or 7 when interlaced). The parameters' pointers are
/// used only during the call.
nuke_status nukepng_encoder_start(nukepng_encoder *_Nonnull encoder, const nukepng_encode_params *_Nonnull params, int *_Nonnull passes);
/// `png_write_row` for `count` rows, `stride` bytes apart, used only during the call.
nuke_status nukepng_encoder_write_rows(nukepng_encoder *_Nonnull encoder, const uint8_t *_Nonnull rows, size_t stride, uint32_t count);
/// `png_write_end`, once every row of every pass was written.
nuke_status nukepng_encoder_finish(nukepng_encoder *_Nonnull encoder);
/// The bytes produced since the last take (possibly none), valid until the next call on the
/// encoder; they count as taken.
void nukepng_encoder_take_output(nukepng_encoder *_Nonnull encoder, const uint8_t *_Nullable *_Nonnull bytes, size_t *_Nonnull count);

/// Frees a buffer the shim returned. NULL is ignored.
void nukepng_buffer_free(void *_Nullable buffer);

/// The version of the libpng in use, such as "1.6.39" (png_get_libpng_ver).
const char *_Nonnull nukepng_version(void);

/// 1 on a little-endian machine.
int nukepng_is_little_endian(void);

/// The CRC-32 of PNG chunks (zlib's crc32): continues `crc` (0 to start) over `bytes`. Uses
/// carry-less multiplication where the CPU has it; the chunk walker checks critical chunks with it.
uint32_t nukepng_crc32(uint32_t crc, const uint8_t *_Nullable bytes, size_t count);

#ifdef __cplusplus
}
#endif

#endif

#ifndef CTIFFSHIM_H
#define CTIFFSHIM_H

// NukeTIFF's C shim over libtiff 4.5 (Docs/CShims.md). libtiff reports errors and warnings
// through handlers, never with longjmp: the shim installs per-file handlers
// (`TIFFOpenOptionsSetErrorHandlerExtR`) that write into the handle's `nuke_diagnostics`, and
// classifies failures by its own checks: a read past the end of the data is INCOMPLETE, a
// layout libtiff or the shim cannot convert is UNSUPPORTED, anything else CORRUPT.
//
// Files are read from memory (`TIFFClientOpenExt` over the caller's bytes, no copy) and decoded
// a strip, a scanline or a row of tiles at a time, so memory holds one band of the image, not
// the image: a row sink receives each output row in turn (decode to size streams through the
// core's resampler), or the rows go to a full-size buffer.

#include <stddef.h>
#include <stdint.h>
#include "nuke_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// libtiff's version line, such as "LIBTIFF, Version 4.5.0".
const char *_Nonnull nuketiff_version(void);

/// A libtiff file over bytes in memory, one directory (page) selected at a time.
typedef struct nuketiff_decoder nuketiff_decoder;

/// What one directory says, before decoding.
typedef struct nuketiff_info {
    uint32_t width;
    uint32_t height;
    uint16_t bits_per_sample;
    uint16_t samples_per_pixel;
    uint16_t photometric;
    uint16_t planar_config;
    uint16_t compression;
    uint16_t sample_format;
    /// The Orientation tag (1-8, EXIF's numbering).
    uint16_t orientation;
    /// 0 none, 1 associated (premultiplied), 2 unassociated.
    uint16_t alpha;
    int32_t tiled;
    /// The channels the shim delivers: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
    int32_t channels;
    /// 1 when the samples are CMYK: rows go through the CMYK converter to RGB.
    int32_t cmyk;
    /// 1 when 16-bit output is available (16 bits per sample, gray, RGB or CMYK).
    int32_t wide_available;
    /// 1 when the delivered alpha is premultiplied (associated alpha, or libtiff's RGBA reader).
    int32_t premultiplied;
    /// 1 when the shim reads the samples itself; 0 when libtiff's RGBA reader converts them
    /// (YCbCr without JPEG, CIE L*a*b*, LogLuv...).
    int32_t direct;
    /// Rows libtiff decodes at once: a strip's or a tile's height (1 when read by scanline).
    uint32_t band_rows;
} nuketiff_info;

/// A row sink: receives output row `y` (`length` bytes). Returns nonzero to stop the decode
/// (it then returns CANCELLED).
typedef int (*nuketiff_row_sink)(void *_Nullable context, const uint8_t *_Nonnull row, size_t length, uint32_t y);

/// Converts `width` pixels of 8-bit CMYK (0 = no ink) to 8-bit RGB.
typedef void (*nuketiff_cmyk_function)(void *_Nullable context, const uint8_t *_Nullable cmyk, uint8_t *_Nullable rgb, uint32_t width);

/// Where and how the decoded rows go.
typedef struct nuketiff_output {
    /// 1, 2, 3 or 4 channels, as `nuketiff_info.channels` says (the shim drops no channel it
    /// was not asked to and invents none).
    int32_t channels;
    /// 16 bits per channel (native byte order); only when `wide_available`.
    int32_t wide;
    /// Full-size destination rows, or NULL to use `sink`.
    uint8_t *_Nullable pixels;
    size_t stride;
    nuketiff_row_sink _Nullable sink;
    void *_Nullable sink_context;
    /// Required when `cmyk`.
    nuketiff_cmyk_function _Nullable cmyk;
    void *_Nullable cmyk_context;
} nuketiff_output;

/// Creates a decoder; NULL when out of memory.
nuketiff_decoder *_Nullable nuketiff_decoder_create(void);

/// Frees the decoder and closes its file.
void nuketiff_decoder_destroy(nuketiff_decoder *_Nullable decoder);

/// The decoder's diagnostics: libtiff's last error message, its warnings.
const nuke_diagnostics *_Nonnull nuketiff_decoder_diagnostics(const nuketiff_decoder *_Nonnull decoder);

/// libtiff's warnings while it read the selected directory (unknown private tags such as
/// GeoTIFF's, unsorted tags, old-style JPEG): the structure it tolerated, kept apart from the
/// warnings while it decodes pixels (`nuketiff_decoder_diagnostics`), which a strict decode refuses.
const nuke_diagnostics *_Nonnull nuketiff_decoder_directory_diagnostics(const nuketiff_decoder *_Nonnull decoder);

/// Opens `data` (kept by the caller until the decoder is destroyed) and reads its first
/// directory. `max_single_alloc` caps any one allocation libtiff makes (a strip buffer a
/// hostile tag asks for); 0 keeps libtiff's default.
nuke_status nuketiff_decoder_open(nuketiff_decoder *_Nonnull decoder, const uint8_t *_Nonnull data, size_t size,
                                  uint64_t max_single_alloc);

/// Opens the file `fd` (kept open by the caller until the decoder is destroyed; `size` bytes)
/// and reads its first directory, as `nuketiff_decoder_open` does, reading with `pread` only the
/// bytes libtiff asks for: the file is never held whole.
nuke_status nuketiff_decoder_open_file(nuketiff_decoder *_Nonnull decoder, int fd, uint64_t size, uint64_t max_single_alloc);

/// The number of directories (pages) in the file, following the chain from the first
/// (libtiff's `TIFFNumberOfDirectories`, which stops at a loop); 0 when it cannot be read.
uint32_t nuketiff_decoder_page_count(nuketiff_decoder *_Nonnull decoder);

/// Selects directory `index` (0-based) and describes it.
nuke_status nuketiff_decoder_select(nuketiff_decoder *_Nonnull decoder, uint32_t index, nuketiff_info *_Nonnull info);

/// Decodes the selected directory's pixels in file order (the Orientation tag is reported, not
/// applied) into `output`.
nuke_status nuketiff_decoder_read(nuketiff_decoder *_Nonnull decoder, const nuketiff_output *_Nonnull output,
                                  const nuke_cancellation *_Nullable cancellation);

/// The selected directory's ICC profile (owned by libtiff, valid until the next select), or NULL.
const uint8_t *_Nullable nuketiff_decoder_icc(const nuketiff_decoder *_Nonnull decoder, uint32_t *_Nonnull size);

/// A TIFF encoder writing into memory it owns.
typedef struct nuketiff_encoder nuketiff_encoder;

/// What to write for one page.
typedef struct nuketiff_encode_params {
    uint32_t width;
    uint32_t height;
    /// 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
    int32_t channels;
    /// 8 or 16.
    int32_t bits;
    /// 1 when alpha is premultiplied (written as associated alpha).
    int32_t premultiplied;
    /// libtiff's COMPRESSION_* (NONE, LZW, ADOBE_DEFLATE, PACKBITS).
    int32_t compression;
    /// Deflate's level 1-9, or -1 for libtiff's default.
    int32_t level;
    /// The Orientation tag to write (1-8).
    int32_t orientation;
    const uint8_t *_Nullable icc;
    uint32_t icc_size;
} nuketiff_encode_params;

/// Creates an encoder; NULL when out of memory.
nuketiff_encoder *_Nullable nuketiff_encoder_create(void);
void nuketiff_encoder_destroy(nuketiff_encoder *_Nullable encoder);
const nuke_diagnostics *_Nonnull nuketiff_encoder_diagnostics(const nuketiff_encoder *_Nonnull encoder);

/// Starts a page (the first opens the file) with `params`.
nuke_status nuketiff_encoder_start_page(nuketiff_encoder *_Nonnull encoder, const nuketiff_encode_params *_Nonnull params);

/// Writes `count` rows (interleaved samples, 16-bit in native order) of the current page.
nuke_status nuketiff_encoder_write_rows(nuketiff_encoder *_Nonnull encoder, const uint8_t *_Nonnull rows, size_t stride, uint32_t count);

/// Ends the current page (writes its directory).
nuke_status nuketiff_encoder_end_page(nuketiff_encoder *_Nonnull encoder);

/// Closes the file; `nuketiff_encoder_output` then gives its bytes.
nuke_status nuketiff_encoder_finish(nuketiff_encoder *_Nonnull encoder);

/// The encoded file after `finish` (owned by the encoder).
const uint8_t *_Nullable nuketiff_encoder_output(const nuketiff_encoder *_Nonnull encoder, size_t *_Nonnull size);

#ifdef __cplusplus
}
#endif

#endif

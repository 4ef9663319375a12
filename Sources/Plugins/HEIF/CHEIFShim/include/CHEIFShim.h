#ifndef CHEIFSHIM_H
#define CHEIFSHIM_H

// NukeHEIF's C shim over libheif (Docs/CShims.md). libheif reports every failure as a
// `heif_error` (code, subcode, message); the shim classifies failures by code and subcode and
// keeps libheif's message. libheif never longjmps. It reads the whole file: HEIF has no
// progressive decoding in libheif 1.15.

#include <stddef.h>
#include <stdint.h>
#include "nuke_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opens libheif if this process has not yet (it is loaded on first use, not linked): OK, or
/// UNSUPPORTED with the dynamic loader's message in `diagnostics` when it is not installed. Every
/// other function loads it too; a decoder cannot be created without it.
nuke_status nukeheif_load(nuke_diagnostics *_Nullable diagnostics);

/// libheif's version, such as "1.15.1"; "" when libheif cannot be loaded.
const char *_Nonnull nukeheif_version(void);

/// The HEVC decoder NukeHEIF's plugin uses for 8-bit images: "FFmpeg libavcodec 59.37.100" when
/// libavcodec is installed (opened on first use, as libheif is), else the name of the plugin
/// libheif would use ("libde265 HEVC decoder, version 1.0.11"); "" when libheif cannot be loaded.
/// Set NUKE_HEIF_HEVC_DECODER=libde265 to keep to libde265.
const char *_Nonnull nukeheif_hevc_decoder(void);

/// A libheif context over one file, with its primary image (or a thumbnail) decoded on request.
typedef struct nukeheif_decoder nukeheif_decoder;

/// What the file says about its primary image, before decoding.
typedef struct nukeheif_info {
    /// The size after the file's transformations (irot, imir, clap).
    int32_t width;
    int32_t height;
    int32_t has_alpha;
    /// Bits per luma sample (8, 10, 12).
    int32_t bit_depth;
    /// Top-level images in the file (the primary one included).
    int32_t image_count;
    /// Thumbnails of the primary image.
    int32_t thumbnail_count;
    /// 'prof'/'rICC' (an ICC profile), 'nclx', or 0.
    uint32_t color_profile;
    /// nclx: colour primaries, transfer characteristics, matrix coefficients, full range.
    int32_t nclx_primaries;
    int32_t nclx_transfer;
    int32_t nclx_matrix;
    int32_t nclx_full_range;
    /// 1 when the primary image has a depth image.
    int32_t has_depth;
} nukeheif_info;

/// Creates a decoder; NULL when out of memory.
nukeheif_decoder *_Nullable nukeheif_decoder_create(void);

/// Frees the decoder, its context and any decoded image.
void nukeheif_decoder_destroy(nukeheif_decoder *_Nullable decoder);

/// The decoder's diagnostics: libheif's message for the last failure.
const nuke_diagnostics *_Nonnull nukeheif_decoder_diagnostics(const nukeheif_decoder *_Nonnull decoder);

/// Reads the file's boxes and finds the primary image. `data` is not copied and must stay
/// valid as long as the decoder. Images wider or taller than `maximum_dimension` are refused
/// by libheif itself.
///
/// The corresponding libheif functions are `heif_context_read_from_memory_without_copy`,
/// `heif_context_set_maximum_image_size_limit` and `heif_context_get_primary_image_handle`.
nuke_status nukeheif_decoder_open(nukeheif_decoder *_Nonnull decoder, const uint8_t *_Nonnull data, size_t length,
                                  int32_t maximum_dimension, nukeheif_info *_Nonnull info);

/// Names the items of the file that are coded images (`hvc1` or `av01` items, as NukeHEIF's own
/// reading of the `meta` box finds them). Decoding one of them as the primary image or a thumbnail
/// lets NukeHEIF's decoder plugin convert it to RGB itself (see `nukeheif_ycbcr_to_rgb_row`);
/// grids, overlays and derived images are left to libheif. `ids` is copied.
void nukeheif_decoder_set_coded_items(nukeheif_decoder *_Nonnull decoder, const uint32_t *_Nullable ids, int32_t count);

/// The size of thumbnail `index` of the primary image.
nuke_status nukeheif_decoder_thumbnail_size(nukeheif_decoder *_Nonnull decoder, int32_t index,
                                            int32_t *_Nonnull width, int32_t *_Nonnull height);

/// The primary image's ICC profile (malloc'd, freed with `nukeheif_buffer_free`), or NULL.
uint8_t *_Nullable nukeheif_decoder_icc(nukeheif_decoder *_Nonnull decoder, size_t *_Nonnull size);

/// The primary image's EXIF block from the TIFF header on (malloc'd), or NULL.
uint8_t *_Nullable nukeheif_decoder_exif(nukeheif_decoder *_Nonnull decoder, size_t max_size, size_t *_Nonnull size);

/// Decodes the primary image (`thumbnail` < 0) or a thumbnail, with the file's transformations
/// applied, to interleaved RGB or RGBA, 8 bits (`wide` 0) or 16 bits (`wide` 1, samples scaled
/// to the full 16-bit range). The image's size must be `width × height` (from the info or the
/// thumbnail size). With `pixels`, it is written there (`stride` bytes per row); without, each
/// row is written into `row` (`stride` bytes) and handed to `sink`, top to bottom, so that a
/// decoder can shrink the image without a full-size copy of libheif's.
///
/// Cancellation (`cancellation`, may be NULL) is asked before each coded image or tile NukeHEIF's
/// decoder plugins decode on this thread, when libheif returns, and every 64 rows; a coded
/// picture itself (or a grid's tiles on libheif's worker threads) is decoded to the end.
/// Cancelled: `NUKE_STATUS_CANCELLED`.
///
/// The corresponding libheif function is `heif_decode_image`.
nuke_status nukeheif_decoder_decode(nukeheif_decoder *_Nonnull decoder, int32_t thumbnail, int32_t alpha, int32_t wide,
                                    uint8_t *_Nullable pixels, int32_t width, int32_t height, size_t stride,
                                    uint8_t *_Nullable row,
                                    void (*_Nullable sink)(void *_Nullable context, const uint8_t *_Nonnull row, size_t length),
                                    void *_Nullable sink_context, const nuke_cancellation *_Nullable cancellation);

/// The red, green and blue planes of an 8-bit image, each `width × height` samples.
typedef struct nukeheif_planes {
    /// Plane `i`'s first row (red, green, blue) and its bytes per row.
    const uint8_t *_Nullable rows[3];
    int32_t stride[3];
} nukeheif_planes;

/// Decodes the primary image (`thumbnail` < 0) or a thumbnail as ``nukeheif_decoder_decode``
/// does, but to planar RGB, the form libheif 1.15 converts every image to first, so that it
/// does not convert it a second time to interleaved RGB. `planes` points into libheif's image,
/// which the decoder keeps until ``nukeheif_decoder_release_planes``. Only for 8-bit images
/// without alpha; anything else is `NUKE_STATUS_UNSUPPORTED` (the caller decodes to
/// interleaved RGB instead).
///
/// The corresponding libheif function is `heif_decode_image` (`heif_colorspace_RGB`,
/// `heif_chroma_444`).
nuke_status nukeheif_decoder_decode_planes(nukeheif_decoder *_Nonnull decoder, int32_t thumbnail, int32_t width, int32_t height,
                                           nukeheif_planes *_Nonnull planes, const nuke_cancellation *_Nullable cancellation);

/// Releases the image of ``nukeheif_decoder_decode_planes``; its planes are invalid afterwards.
void nukeheif_decoder_release_planes(nukeheif_decoder *_Nonnull decoder);

/// Encoder settings.
typedef struct nukeheif_encode_params {
    /// 0 HEVC (HEIC), 1 AV1 (AVIF).
    int32_t av1;
    /// 0…100.
    int32_t quality;
    int32_t lossless;
    int32_t has_alpha;
    const uint8_t *_Nullable icc;
    size_t icc_size;
    /// > 0: also store a thumbnail fitting this many pixels a side (as cameras do).
    int32_t thumbnail_size;
} nukeheif_encode_params;

/// Encodes 8-bit RGB or RGBA pixels; on OK `*output` holds the file (free with
/// `nukeheif_buffer_free`).
///
/// The corresponding libheif functions are `heif_context_encode_image` and `heif_context_write`.
nuke_status nukeheif_encode(const uint8_t *_Nonnull pixels, int32_t width, int32_t height, size_t stride,
                            const nukeheif_encode_params *_Nonnull params,
                            uint8_t *_Nullable *_Nonnull output, size_t *_Nonnull output_size,
                            nuke_diagnostics *_Nonnull diagnostics);

/// Frees a buffer the shim returned.
void nukeheif_buffer_free(void *_Nullable buffer);

#ifdef __cplusplus
}
#endif

#endif

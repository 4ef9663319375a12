#ifndef CWEBPSHIM_H
#define CWEBPSHIM_H

// NukeWebP's C shim over libwebp (Docs/CShims.md). libwebp reports every failure through a
// `VP8StatusCode` (decoding), a `WebPEncodingError` (encoding) or a `WebPMuxError`; the shim
// classifies failures by those codes and writes libwebp's meaning of them into the
// diagnostics. libwebp never longjmps and has no warnings. The RIFF container (chunks, frames,
// metadata) is parsed in Swift; libwebp decodes bitstreams (`VP8 `/`VP8L`, with `ALPH`).

#include <stddef.h>
#include <stdint.h>
#include "nuke_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The decoder's version, such as "1.2.4".
const char *_Nonnull nukewebp_version(void);

/// The pixel layouts the shim decodes to.
typedef enum nukewebp_layout {
    /// 3 bytes per pixel.
    NUKEWEBP_RGB = 0,
    /// 4 bytes per pixel, straight alpha.
    NUKEWEBP_RGBA = 1,
    /// 4 bytes per pixel, premultiplied alpha.
    NUKEWEBP_RGBA_PREMULTIPLIED = 2,
} nukewebp_layout;

/// What a bitstream declares, read from its first bytes.
typedef struct nukewebp_features {
    int32_t width;
    int32_t height;
    /// 1 when the bitstream has alpha (an `ALPH` chunk or a lossless image with alpha).
    int32_t has_alpha;
    /// 1 for an animated file (VP8X animation flag).
    int32_t has_animation;
    /// 0 undefined or mixed, 1 lossy, 2 lossless.
    int32_t format;
} nukewebp_features;

/// Reads the features of the bitstream or file in `data`.
///
/// - Returns: OK; NEED_MORE when `data` ends before they are known; CORRUPT or UNSUPPORTED.
///
/// The corresponding libwebp function is `WebPGetFeatures`.
nuke_status nukewebp_get_features(const uint8_t *_Nonnull data, size_t length, nukewebp_features *_Nonnull features,
                                  nuke_diagnostics *_Nonnull diagnostics);

/// Decodes a complete bitstream (a still file, or one animation frame's `ALPH`/`VP8 `/`VP8L`
/// chunks) into `pixels`, `stride` bytes per row, `height × stride` bytes in all.
///
/// With `scaled_width` and `scaled_height` above 0, libwebp's own rescaler shrinks the image
/// while decoding and `pixels` holds the scaled size. With a `cancellation`, the input is decoded
/// in steps of 64 KiB and it is asked before each; when it says stop the call returns
/// `NUKE_STATUS_CANCELLED`. Without, one `WebPDecode`.
///
/// The corresponding libwebp functions are `WebPDecode`, or `WebPIDecode` and `WebPIUpdate`
/// (the same pixels, in steps).
nuke_status nukewebp_decode(const uint8_t *_Nonnull data, size_t length, nukewebp_layout layout,
                            uint8_t *_Nonnull pixels, size_t stride, size_t size,
                            int32_t scaled_width, int32_t scaled_height,
                            const nuke_cancellation *_Nullable cancellation, nuke_diagnostics *_Nonnull diagnostics);

/// libwebp's incremental decoder, writing into memory the caller passes to each call.
typedef struct nukewebp_decoder nukewebp_decoder;

/// Creates an incremental decoder for an image of `width × height` in `layout`; NULL when out
/// of memory.
///
/// The corresponding libwebp function is `WebPIDecode`.
nukewebp_decoder *_Nullable nukewebp_decoder_create(nukewebp_layout layout, int32_t width, int32_t height, size_t stride);

/// Frees the decoder (`WebPIDelete`).
void nukewebp_decoder_destroy(nukewebp_decoder *_Nullable decoder);

/// The decoder's diagnostics.
const nuke_diagnostics *_Nonnull nukewebp_decoder_diagnostics(const nukewebp_decoder *_Nonnull decoder);

/// Appends `length` new bytes of the file and decodes as far as they go, writing rows into
/// `pixels` (`height × stride` bytes; it may be a different buffer from one call to the next,
/// holding the rows decoded before).
///
/// - Returns: OK when the image is complete, NEED_MORE, or CORRUPT/UNSUPPORTED/INTERNAL.
///
/// The corresponding libwebp function is `WebPIAppend`.
nuke_status nukewebp_decoder_append(nukewebp_decoder *_Nonnull decoder, const uint8_t *_Nonnull data, size_t length,
                                    uint8_t *_Nonnull pixels, size_t size);

/// The number of rows complete in the output, from the top.
///
/// The corresponding libwebp function is `WebPIDecGetRGB`.
int32_t nukewebp_decoder_rows(const nukewebp_decoder *_Nonnull decoder);

/// Encoder settings.
typedef struct nukewebp_encode_params {
    /// 0…100.
    float quality;
    /// 0 (fast) … 6 (slow, smaller).
    int32_t method;
    /// 1 for lossless.
    int32_t lossless;
    /// 1 when the pixels have an alpha channel (4 bytes per pixel, straight); 0 for RGB.
    int32_t has_alpha;
    const uint8_t *_Nullable icc;
    size_t icc_size;
    const uint8_t *_Nullable exif;
    size_t exif_size;
    const uint8_t *_Nullable xmp;
    size_t xmp_size;
} nukewebp_encode_params;

/// Encodes one image; on OK `*output` holds the file, freed with `nukewebp_buffer_free`.
/// Metadata (ICC, EXIF, XMP) is added with the muxer.
///
/// The corresponding libwebp functions are `WebPEncode` and `WebPMuxAssemble`.
nuke_status nukewebp_encode(const uint8_t *_Nonnull pixels, int32_t width, int32_t height, size_t stride,
                            const nukewebp_encode_params *_Nonnull params,
                            uint8_t *_Nullable *_Nonnull output, size_t *_Nonnull output_size,
                            nuke_diagnostics *_Nonnull diagnostics);

/// An animated WebP writer: each frame's changed rectangle encoded with WebPEncode and appended
/// to the file as an `ANMF` chunk as it arrives, so that only the file, the previous canvas and
/// one frame's encoding are held.
typedef struct nukewebp_anim_encoder nukewebp_anim_encoder;

/// Creates an animation writer for a `width × height` canvas (1…16383 each) looping
/// `loop_count` times (0…65535, 0 = forever); NULL for other sizes, invalid settings or when out
/// of memory.
nukewebp_anim_encoder *_Nullable nukewebp_anim_encoder_create(int32_t width, int32_t height, int32_t loop_count,
                                                              const nukewebp_encode_params *_Nonnull params);

/// Frees the writer and the file it holds (not one `finish` handed over).
void nukewebp_anim_encoder_destroy(nukewebp_anim_encoder *_Nullable encoder);

/// The writer's diagnostics.
const nuke_diagnostics *_Nonnull nukewebp_anim_encoder_diagnostics(const nukewebp_anim_encoder *_Nonnull encoder);

/// Adds a whole-canvas RGBA frame (straight alpha) shown from `timestamp_ms`, which ends the
/// frame before (durations over 2^24 − 1 ms are clamped).
///
/// The rectangle that differs from the previous canvas is encoded (x and y rounded down to even,
/// as `ANMF` stores them), and replaces those pixels when played: no blending, no disposal. The
/// first frame is the whole canvas. A frame the same as the one before adds no `ANMF`: the one
/// before lasts longer instead. Lossy treats fully transparent pixels as the same whatever their
/// colour.
///
/// The corresponding libwebp function is `WebPEncode`.
nuke_status nukewebp_anim_encoder_add(nukewebp_anim_encoder *_Nonnull encoder, const uint8_t *_Nonnull rgba, size_t stride,
                                      int32_t timestamp_ms);

/// The bytes at the front of the file held that no later call changes, except the header's
/// RIFF size and VP8X flags (see `nukewebp_anim_encoder_header`): everything before the last
/// frame's chunk, whose duration is set by the next frame or the end. `*bytes` is valid until
/// the next call on the writer. 0 before the first frame and after `finish`.
size_t nukewebp_anim_encoder_settled(const nukewebp_anim_encoder *_Nonnull encoder, const uint8_t *_Nullable *_Nonnull bytes);

/// Drops the first `count` bytes of the file held (at most what `settled` returned), once the
/// caller has written them out: the writer then holds only the rest. Other counts do nothing.
void nukewebp_anim_encoder_take(nukewebp_anim_encoder *_Nonnull encoder, size_t count);

/// The file's first `*size` bytes as they are once `finish` has run: a caller that took the
/// start of the file writes these over it.
const uint8_t *_Nonnull nukewebp_anim_encoder_header(const nukewebp_anim_encoder *_Nonnull encoder, size_t *_Nonnull size);

/// Ends the last frame at `end_ms` and hands over the file held in `*output` (free with
/// `nukewebp_anim_output_free`): the whole file, or what follows the bytes taken. Later calls fail.
nuke_status nukewebp_anim_encoder_finish(nukewebp_anim_encoder *_Nonnull encoder, int32_t end_ms,
                                         uint8_t *_Nullable *_Nonnull output, size_t *_Nonnull output_size);

/// Frees a file `nukewebp_anim_encoder_finish` handed over.
void nukewebp_anim_output_free(void *_Nullable output);

/// Frees a buffer the shim returned.
void nukewebp_buffer_free(void *_Nullable buffer);

#ifdef __cplusplus
}
#endif

#endif

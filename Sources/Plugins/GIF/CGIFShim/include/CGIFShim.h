#ifndef CGIFSHIM_H
#define CGIFSHIM_H

// NukeGIF's C shim over giflib (Docs/CShims.md). giflib reports errors through
// `GifFileType.Error` (D_GIF_ERR_*, E_GIF_ERR_*), which classify every failure here; its
// messages come from `GifErrorString`. giflib has no limits: Swift checks them before
// calling in, from its own scan of the file's blocks.

#include <stddef.h>
#include <stdint.h>
#include "nuke_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// giflib's version, such as "5.2.1".
const char *_Nonnull nukegif_version(void);

/// A giflib decoding handle reading from memory the caller passes to each call.
typedef struct nukegif_decoder nukegif_decoder;

/// Creates a decoder; NULL when out of memory.
nukegif_decoder *_Nullable nukegif_decoder_create(void);

/// Frees the decoder and giflib's handle (`DGifCloseFile`).
void nukegif_decoder_destroy(nukegif_decoder *_Nullable decoder);

/// The decoder's diagnostics: giflib's message and warnings (damaged frames).
const nuke_diagnostics *_Nonnull nukegif_decoder_diagnostics(const nukegif_decoder *_Nonnull decoder);

/// Opens giflib over `data`, which must hold at least the header, the logical screen
/// descriptor and the global colour table. `data` is read only during the call.
///
/// The corresponding giflib function is `DGifOpen`.
nuke_status nukegif_decoder_open(nukegif_decoder *_Nonnull decoder, const uint8_t *_Nonnull data, size_t length);

/// Decodes the frame whose image descriptor (its 0x2C byte) is at `offset` in `data`, reading
/// no further than `length` (the end of the frame's last data block), into `rgba`
/// (`width × height × 4` bytes for the descriptor's size, straight alpha; the transparent
/// index, when not -1, and indices past the colour table become transparent black; a frame
/// with neither a local nor a global colour table reads index i as grey (i, i, i), as Pillow does).
/// Interlaced frames are de-interlaced. When the LZW data ends early or is damaged, the rows
/// decoded are kept, the rest are transparent, a warning is counted and `*rows_decoded` tells
/// how many rows arrived; the status is still OK. `data` and `rgba` are used only during the call.
///
/// Cancellation: `cancellation` (may be NULL) is asked every 64 rows; when it says stop, the
/// frame stops there and the call returns `NUKE_STATUS_CANCELLED` (the handle stays usable for
/// another frame).
///
/// The corresponding giflib functions are `DGifGetImageDesc` and `DGifGetLine`.
nuke_status nukegif_decoder_decode_frame(
    nukegif_decoder *_Nonnull decoder,
    const uint8_t *_Nonnull data, size_t length, size_t offset,
    uint32_t expected_width, uint32_t expected_height,
    int32_t transparent_index,
    uint8_t *_Nonnull rgba, size_t rgba_length,
    uint32_t *_Nonnull rows_decoded,
    const nuke_cancellation *_Nullable cancellation
);

/// Draws the frame whose image descriptor is at `offset` (as `nukegif_decoder_decode_frame`
/// reads it) straight onto `canvas` (`canvas_width × canvas_height × 4` bytes, straight-alpha
/// RGBA) with its top-left at (`frame_x`, `frame_y`), clipped to the canvas. A GIF pixel is opaque
/// or transparent, so with `over` (source-over) the opaque ones are written and the canvas shows
/// through the transparent ones; without it (source) transparent pixels, and the rows damaged
/// LZW data never delivers, clear the canvas. No frame buffer is allocated. Warnings,
/// cancellation and statuses as for `nukegif_decoder_decode_frame`; a cancelled frame is partly drawn.
///
/// The corresponding giflib functions are `DGifGetImageDesc` and `DGifGetLine`.
nuke_status nukegif_decoder_draw_frame(
    nukegif_decoder *_Nonnull decoder,
    const uint8_t *_Nonnull data, size_t length, size_t offset,
    uint32_t expected_width, uint32_t expected_height,
    int32_t transparent_index,
    int64_t frame_x, int64_t frame_y, int over,
    uint8_t *_Nonnull canvas, uint32_t canvas_width, uint32_t canvas_height, size_t canvas_length,
    uint32_t *_Nonnull rows_decoded,
    const nuke_cancellation *_Nullable cancellation
);

/// Hands the first frame of a GIF, composited on a transparent canvas, to `sink` one canvas row
/// at a time, top to bottom (`canvas_height` calls, each with `row`, `canvas_width × 4` bytes of
/// straight-alpha RGBA, valid during the call), so that a decoder can shrink it while it decodes
/// without the canvas ever existing. The frame at (`frame_x`, `frame_y`) is clipped to the canvas;
/// rows outside it, transparent pixels and the rows damaged LZW data never delivers are
/// transparent. An interlaced frame keeps its even rows as palette indices (one byte a pixel, half
/// the frame) until the last pass brings the odd rows between them. Warnings, cancellation and
/// statuses as for `nukegif_decoder_decode_frame`; after a status other than OK fewer rows
/// may have been handed over.
///
/// The corresponding giflib functions are `DGifGetImageDesc` and `DGifGetLine`.
nuke_status nukegif_decoder_stream_frame(
    nukegif_decoder *_Nonnull decoder,
    const uint8_t *_Nonnull data, size_t length, size_t offset,
    uint32_t expected_width, uint32_t expected_height,
    int32_t transparent_index,
    int64_t frame_x, int64_t frame_y,
    uint8_t *_Nonnull row, uint32_t canvas_width, uint32_t canvas_height, size_t row_length,
    void (*_Nonnull sink)(void *_Nullable context, const uint8_t *_Nonnull row, size_t length), void *_Nullable sink_context,
    uint32_t *_Nonnull rows_decoded,
    const nuke_cancellation *_Nullable cancellation
);

/// A giflib encoding handle writing to memory.
typedef struct nukegif_encoder nukegif_encoder;

/// Creates an encoder for a `width × height` screen. `loop_count` >= 0 writes a NETSCAPE2.0
/// extension (0 = forever); -1 writes none (a still image).
///
/// The corresponding giflib functions are `EGifOpen` and `EGifPutScreenDesc`.
nuke_status nukegif_encoder_create(
    uint32_t width, uint32_t height, int32_t loop_count,
    nukegif_encoder *_Nullable *_Nonnull encoder, nuke_diagnostics *_Nonnull diagnostics
);

/// Frees the encoder without finishing it.
void nukegif_encoder_destroy(nukegif_encoder *_Nullable encoder);

/// Writes one frame: a graphics control extension (delay in centiseconds, disposal 0–3,
/// transparent index or -1) and the image with a local colour table of `palette_count` RGB
/// triplets (1…256). `indices` holds `width × height` bytes, each below `palette_count`.
///
/// The corresponding giflib functions are `EGifPutExtension`, `EGifPutImageDesc` and `EGifPutLine`.
nuke_status nukegif_encoder_add_frame(
    nukegif_encoder *_Nonnull encoder,
    const uint8_t *_Nonnull indices, uint32_t left, uint32_t top, uint32_t width, uint32_t height,
    const uint8_t *_Nonnull palette, uint32_t palette_count,
    int32_t transparent_index, uint32_t delay_centiseconds, int32_t disposal,
    nuke_diagnostics *_Nonnull diagnostics
);

/// The bytes written since the start or the last `nukegif_encoder_take`: final, as GIF never
/// goes back. `*bytes` is valid until the next call on the encoder.
size_t nukegif_encoder_pending(const nukegif_encoder *_Nonnull encoder, const uint8_t *_Nullable *_Nonnull bytes);

/// Drops the pending bytes, once the caller has written them out: the encoder then holds only
/// what it writes next.
void nukegif_encoder_take(nukegif_encoder *_Nonnull encoder);

/// Writes the trailer and hands the file to the caller (what follows the bytes taken), who frees
/// it with `nukegif_buffer_free`. The encoder is freed either way.
///
/// The corresponding giflib function is `EGifCloseFile`.
nuke_status nukegif_encoder_finish(
    nukegif_encoder *_Nonnull encoder,
    uint8_t *_Nullable *_Nonnull output, size_t *_Nonnull output_length,
    nuke_diagnostics *_Nonnull diagnostics
);

/// Reduces `width × height` RGB pixels (three planes) to at most `*color_count` (≤ 256)
/// colours: `indices` receives one byte per pixel, `palette` `*color_count` RGB triplets, and
/// `*color_count` the number used. giflib's median-cut quantiser (Heckbert), no dithering.
///
/// The corresponding giflib function is `GifQuantizeBuffer`.
nuke_status nukegif_quantize(
    uint32_t width, uint32_t height,
    const uint8_t *_Nonnull red, const uint8_t *_Nonnull green, const uint8_t *_Nonnull blue,
    uint8_t *_Nonnull indices, uint8_t *_Nonnull palette, int32_t *_Nonnull color_count,
    nuke_diagnostics *_Nonnull diagnostics
);

/// Frees a buffer this shim returned.
void nukegif_buffer_free(void *_Nullable buffer);

#ifdef __cplusplus
}
#endif

#endif

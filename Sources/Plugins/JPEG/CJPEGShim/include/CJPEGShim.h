#ifndef NUKEJPEG_SHIM_H
#define NUKEJPEG_SHIM_H

// Our C layer over libjpeg-turbo. libjpeg reports fatal errors by calling `error_exit`, which
// here longjmps back into the shim function that made the call, so a longjmp never crosses a
// Swift frame. Every function that can fail returns a `nuke_status` (Docs/CShims.md), classified
// by libjpeg's message code (`msg_code`); libjpeg's own message and its warnings are kept in the
// decoder's or encoder's `nuke_diagnostics` (`nukejpeg_decoder_diagnostics`, `nukejpeg_encoder_diagnostics`).

#include <stddef.h>
#include <stdint.h>

#include "nuke_shim.h"

/// Events of `nukejpeg_decoder_consume` (its status is NUKE_STATUS_OK with any of them).
enum {
    NUKEJPEG_EVENT_SUSPENDED = 0,
    NUKEJPEG_EVENT_REACHED_SOS = 1,
    NUKEJPEG_EVENT_REACHED_EOI = 2,
};

/// Colour spaces as the file declares them (a subset of libjpeg's J_COLOR_SPACE).
enum {
    NUKEJPEG_COLOR_UNKNOWN = 0,
    NUKEJPEG_COLOR_GRAY = 1,
    NUKEJPEG_COLOR_RGB = 2,
    NUKEJPEG_COLOR_YCBCR = 3,
    NUKEJPEG_COLOR_CMYK = 4,
    NUKEJPEG_COLOR_YCCK = 5,
};

/// What `jpeg_read_header` learned.
typedef struct nukejpeg_header {
    uint32_t width;
    uint32_t height;
    int32_t components;
    int32_t color_space;
    int32_t data_precision;
    int32_t is_progressive;
    int32_t has_multiple_scans;
    int32_t is_arithmetic;
    int32_t saw_adobe_marker;
    /// Bytes of the whole-image coefficient buffer a multi-scan decode allocates.
    uint64_t coefficient_bytes;
} nukejpeg_header;

typedef struct nukejpeg_decoder nukejpeg_decoder;

/// Sets the cancellation libjpeg's progress monitor asks once per row group (NULL: none); the
/// pointer must stay valid until it is set again. A cancelled call fails with
/// `NUKE_STATUS_CANCELLED`, which ends the decoder like any failure.
void nukejpeg_decoder_set_cancellation(nukejpeg_decoder *_Nonnull decoder, const nuke_cancellation *_Nullable cancellation);

/// Converts each row of a CMYK or YCCK file's output with `convert(context, cmyk, rgb, width)`
/// instead of the naive `R = C·K/255`: a colour manager's transform (NukeColor's lcms2). The
/// samples it gets are Adobe's inverted convention (255 = no ink) whatever the file stores.
/// `convert` must not longjmp; `context` must stay valid until the decoder is destroyed. NULL
/// restores the naive conversion. Set before the first row is read.
void nukejpeg_decoder_set_cmyk_converter(nukejpeg_decoder *_Nonnull decoder,
                                         void (*_Nullable convert)(void *_Nullable, const uint8_t *_Nullable, uint8_t *_Nullable, uint32_t),
                                         void *_Nullable context);

/// Creates a decompressor. `max_memory` bounds what libjpeg allocates itself
/// (`max_memory_to_use`); `max_scans` caps `input_scan_number`. Returns NULL when out of memory.
nukejpeg_decoder *_Nullable nukejpeg_decoder_create(uint64_t max_memory, uint64_t max_scans);
void nukejpeg_decoder_destroy(nukejpeg_decoder *_Nullable decoder);

/// libjpeg's message for the last failure (`format_message`) and its warnings (tolerated
/// corrupt-data warnings, `emit_message` level -1). Valid until the decoder is destroyed.
const nuke_diagnostics *_Nonnull nukejpeg_decoder_diagnostics(const nukejpeg_decoder *_Nonnull decoder);

/// Reads directly from the caller's bytes, which are all the data (no copy). The pointer is
/// used until `nukejpeg_decoder_clear_memory_source`; call that before the bytes go away.
void nukejpeg_decoder_set_memory_source(nukejpeg_decoder *_Nonnull decoder, const uint8_t *_Nullable bytes, size_t count);
/// Forgets the caller's bytes given to `nukejpeg_decoder_set_memory_source`.
void nukejpeg_decoder_clear_memory_source(nukejpeg_decoder *_Nonnull decoder);

/// Appends bytes to the decoder's own input buffer (incremental decoding). Consumed bytes are
/// dropped and the unconsumed tail compacted first, so the cost is amortised linear.
nuke_status nukejpeg_decoder_append(nukejpeg_decoder *_Nonnull decoder, const uint8_t *_Nullable bytes, size_t count);
/// Declares that no more input will come: running out of bytes is then "Premature end of JPEG file".
void nukejpeg_decoder_set_end_of_input(nukejpeg_decoder *_Nonnull decoder);
/// For arithmetic-coded data (whose decoder in libjpeg cannot suspend): show libjpeg only the
/// bytes up to the last SOS or EOI marker received, so every scan it starts is complete.
void nukejpeg_decoder_set_gated(nukejpeg_decoder *_Nonnull decoder, int gated);

/// `jpeg_read_header`; saves APP1 (EXIF) and APP2 (ICC) markers. NUKE_STATUS_NEED_MORE when incremental input ran out.
nuke_status nukejpeg_decoder_read_header(nukejpeg_decoder *_Nonnull decoder, nukejpeg_header *_Nonnull header);
/// The output size at scale `scale_num`/8 (`jpeg_calc_output_dimensions`).
nuke_status nukejpeg_decoder_output_size(nukejpeg_decoder *_Nonnull decoder, int scale_num, uint32_t *_Nonnull width, uint32_t *_Nonnull height);
/// Sets the output parameters (djpeg defaults, RGB, gray or CMYK output, scale N/8) and calls
/// `jpeg_start_decompress`; `buffered` selects buffered-image mode.
nuke_status nukejpeg_decoder_start(nukejpeg_decoder *_Nonnull decoder, int scale_num, int buffered);
/// Block smoothing (on by default, as djpeg): off before `nukejpeg_decoder_start` when scans
/// were dropped on purpose, so that coefficients never sent stay zero.
void nukejpeg_decoder_set_block_smoothing(nukejpeg_decoder *_Nonnull decoder, int on);
/// The inverse DCT size libjpeg chose for the component with `component_id` at the scale of the
/// last `nukejpeg_decoder_output_size` or `nukejpeg_decoder_start`; -1 when there is none.
int nukejpeg_decoder_component_dct_size(const nukejpeg_decoder *_Nonnull decoder, int component_id);
/// Output size after `nukejpeg_decoder_start`.
uint32_t nukejpeg_decoder_output_width(const nukejpeg_decoder *_Nonnull decoder);
uint32_t nukejpeg_decoder_output_height(const nukejpeg_decoder *_Nonnull decoder);
/// Rows written so far in the current output pass (`output_scanline`).
uint32_t nukejpeg_decoder_output_scanline(const nukejpeg_decoder *_Nonnull decoder);

/// `jpeg_read_scanlines`: writes up to `max_rows` rows, row `y` at `dest + (y - first_row) * stride`
/// (`first_row` 0: `dest` holds the whole image; otherwise a band of rows from `first_row` on,
/// and `max_rows` must not run past its end).
/// Returns NUKE_STATUS_NEED_MORE when incremental input ran out before any row was produced.
nuke_status nukejpeg_decoder_read_rows(nukejpeg_decoder *_Nonnull decoder, uint8_t *_Nonnull dest, size_t stride,
                                       uint32_t first_row, uint32_t max_rows);

/// `jpeg_consume_input` until a new scan starts, the EOI is reached, or input runs out.
nuke_status nukejpeg_decoder_consume(nukejpeg_decoder *_Nonnull decoder, int *_Nonnull event);
/// `input_scan_number`.
int nukejpeg_decoder_input_scan_number(const nukejpeg_decoder *_Nonnull decoder);
/// `jpeg_start_output` (buffered-image mode).
nuke_status nukejpeg_decoder_start_output(nukejpeg_decoder *_Nonnull decoder, int scan_number);
/// `jpeg_finish_output` (buffered-image mode).
nuke_status nukejpeg_decoder_finish_output(nukejpeg_decoder *_Nonnull decoder);
/// `jpeg_finish_decompress`.
nuke_status nukejpeg_decoder_finish(nukejpeg_decoder *_Nonnull decoder);

/// The first APP1 marker starting "Exif\0\0": the bytes after that prefix. Valid until the
/// decoder is destroyed. Returns 0 when there is none.
int nukejpeg_decoder_exif(const nukejpeg_decoder *_Nonnull decoder, const uint8_t *_Nullable *_Nonnull bytes, size_t *_Nonnull count);
/// `jpeg_read_icc_profile`: the reassembled profile, to free with `nukejpeg_buffer_free`;
/// `*bytes` is NULL when there is none.
nuke_status nukejpeg_decoder_icc_profile(nukejpeg_decoder *_Nonnull decoder, uint8_t *_Nullable *_Nonnull bytes, size_t *_Nonnull count);

/// What to encode.
typedef struct nukejpeg_encode_params {
    uint32_t width;
    uint32_t height;
    /// 1 (grayscale) or 3 (RGB).
    int32_t components;
    size_t bytes_per_row;
    /// 0...100.
    int32_t quality;
    int32_t progressive;
    /// Full-resolution chroma (4:4:4) instead of libjpeg's default 4:2:0.
    int32_t full_chroma;
    /// Optimal Huffman tables (libjpeg's `optimize_coding`: a second pass over the coefficients).
    int32_t optimize;
    const uint8_t *_Nullable icc;
    size_t icc_count;
    /// The EXIF block including its "Exif\0\0" prefix, written as APP1.
    const uint8_t *_Nullable exif;
    size_t exif_count;
} nukejpeg_encode_params;

/// A compressor that hands out its output piece by piece: `_start`, then `_write_rows` in
/// batches, then `_finish`, taking the bytes produced with `_take_output` after each call.
/// libjpeg writes into a buffer of the encoder's own (64 KiB, grown only when one call produces
/// more, which a progressive JPEG's `_finish` does), so no Swift code runs inside libjpeg.
typedef struct nukejpeg_encoder nukejpeg_encoder;

/// Creates an encoder; NULL when out of memory.
nukejpeg_encoder *_Nullable nukejpeg_encoder_create(void);
void nukejpeg_encoder_destroy(nukejpeg_encoder *_Nullable encoder);
/// libjpeg's message for the failure and its warnings. Valid until the encoder is destroyed.
const nuke_diagnostics *_Nonnull nukejpeg_encoder_diagnostics(const nukejpeg_encoder *_Nonnull encoder);

/// Sets the parameters, `jpeg_start_compress`, and writes the EXIF (APP1) and ICC (APP2)
/// markers. The parameters' pointers are used only during the call. After a failure every call
/// returns the same status.
nuke_status nukejpeg_encoder_start(nukejpeg_encoder *_Nonnull encoder, const nukejpeg_encode_params *_Nonnull params);
/// `jpeg_write_scanlines` for `count` rows, `stride` bytes apart, used only during the call.
/// Writing more rows than the image has is NUKE_STATUS_INTERNAL.
nuke_status nukejpeg_encoder_write_rows(nukejpeg_encoder *_Nonnull encoder, const uint8_t *_Nonnull rows, size_t stride, uint32_t count);
/// `jpeg_finish_compress`, once every row was written.
nuke_status nukejpeg_encoder_finish(nukejpeg_encoder *_Nonnull encoder);
/// The bytes produced since the last take (possibly none), valid until the next call on the
/// encoder; they count as taken.
void nukejpeg_encoder_take_output(nukejpeg_encoder *_Nonnull encoder, const uint8_t *_Nullable *_Nonnull bytes, size_t *_Nonnull count);

/// Frees a buffer the shim returned (an encoded file, an ICC profile). NULL is ignored.
void nukejpeg_buffer_free(void *_Nullable buffer);

/// libjpeg-turbo's version, from `LIBJPEG_TURBO_VERSION` in jconfig.h (such as "2.1.5").
const char *_Nonnull nukejpeg_library_version(void);

#endif

#ifndef CJXLSHIM_H
#define CJXLSHIM_H

// NukeJXL's C shim over libjxl 0.7 (Docs/CShims.md). libjxl returns status codes
// (`JxlDecoderStatus`, `JxlEncoderStatus`, `JxlEncoderError`) and never longjmps; it has no
// message strings and no warnings, so the shim writes what each failing call means into the
// diagnostics. libjxl runs without a parallel runner: one thread, the caller's. It is opened on
// first use (`nukejxl_load`); every function below that needs it loads it.

#include <stddef.h>
#include <stdint.h>
#include "nuke_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opens libjxl if this process has not yet (it is not linked: Docs/CShims.md).
///
/// - Returns: OK, or UNSUPPORTED with the dynamic loader's message.
nuke_status nukejxl_load(nuke_diagnostics *_Nullable diagnostics);

/// libjxl's decoder version, such as "0.7.0"; "" when libjxl cannot be loaded. Loads it.
const char *_Nonnull nukejxl_version(void);

/// What the codestream's headers declare (libjxl's `JxlBasicInfo`).
typedef struct nukejxl_basic_info {
    /// The size as stored: the orientation is not applied.
    uint32_t width;
    uint32_t height;
    /// Bits per colour sample (for float samples, the float's width: 16 or 32).
    uint32_t bits_per_sample;
    /// 0 for integer samples; the float's exponent bits otherwise.
    uint32_t exponent_bits_per_sample;
    /// 1 (grey) or 3.
    uint32_t num_color_channels;
    /// 0 without alpha.
    uint32_t alpha_bits;
    int32_t alpha_premultiplied;
    /// The EXIF-style orientation, 1…8.
    uint32_t orientation;
    int32_t have_animation;
    uint32_t tps_numerator;
    uint32_t tps_denominator;
    /// 0 = forever.
    uint32_t num_loops;
    /// 1 when the colour is the original's (lossless or non-XYB), 0 for XYB.
    int32_t uses_original_profile;
} nukejxl_basic_info;

/// What the file's colour description is (after the COLOR event).
typedef struct nukejxl_color {
    /// 1 when an ICC profile is available (the file's own, or synthesized by libjxl).
    int32_t has_icc;
    /// 1 when the file's colour is an enum encoding with an nclx equivalent, in `nclx`.
    int32_t has_nclx;
    /// [primaries, transfer, matrix (0: RGB), full range (1)] as ISO/IEC 23091-2 numbers.
    int32_t nclx[4];
    /// 1 when the file describes its colour with an enum encoding (not an ICC profile).
    int32_t is_enum;
} nukejxl_color;

/// Where a `nukejxl_decoder_process` call stopped.
typedef enum nukejxl_event {
    NUKEJXL_EVENT_NONE = 0,
    /// The basic info is ready (`nukejxl_decoder_info`).
    NUKEJXL_EVENT_BASIC_INFO = 1,
    /// The colour description is ready (`nukejxl_decoder_color`, `nukejxl_decoder_icc`).
    NUKEJXL_EVENT_COLOR = 2,
    /// A frame's header is ready (`nukejxl_decoder_frame_duration`).
    NUKEJXL_EVENT_FRAME = 3,
    /// A progressive pass: the output holds the image as decoded so far.
    NUKEJXL_EVENT_PASS = 4,
    /// A frame's pixels are complete in the output.
    NUKEJXL_EVENT_FRAME_COMPLETE = 5,
    /// The whole file is decoded.
    NUKEJXL_EVENT_DONE = 6,
} nukejxl_event;

/// What a decoder reports.
typedef enum nukejxl_decoder_flags {
    /// Pixels: frames' pixels are decoded (otherwise only headers, for frame durations), and the
    /// cancellation is asked inside a frame too, where libjxl reports its progression.
    NUKEJXL_DECODE_PIXELS = 1,
    /// A PASS event per progressive pass (`kPasses`), the output flushed at each.
    NUKEJXL_DECODE_PROGRESSIVE = 2,
    /// A file with premultiplied alpha keeps it (otherwise libjxl un-premultiplies it).
    NUKEJXL_DECODE_KEEP_PREMULTIPLIED = 4,
} nukejxl_decoder_flags;

/// One libjxl decoder (`JxlDecoder`), with the input bytes libjxl has not consumed yet.
typedef struct nukejxl_decoder nukejxl_decoder;

/// Creates a decoder. The shim refuses, with LIMIT, an image whose declared `width × height`
/// exceeds `max_pixels` as soon as the basic info is read, before libjxl allocates any frame;
/// (libjxl 0.7 allocates its image planes with its own aligned allocator, which a
/// `JxlMemoryManager` does not see, so the size is the one cap the shim can enforce.)
/// The orientation is never applied (`JxlDecoderSetKeepOrientation`); frames are coalesced.
///
/// The corresponding libjxl functions are `JxlDecoderCreate` and `JxlDecoderSubscribeEvents`.
nukejxl_decoder *_Nullable nukejxl_decoder_create(uint64_t max_pixels, uint32_t flags);
void nukejxl_decoder_destroy(nukejxl_decoder *_Nullable decoder);
nuke_diagnostics *_Nonnull nukejxl_decoder_diagnostics(nukejxl_decoder *_Nonnull decoder);

/// Appends new bytes (copied: libjxl is given them with the unconsumed rest at the next process).
///
/// - Returns: OK, or INTERNAL when out of memory.
nuke_status nukejxl_decoder_append(nukejxl_decoder *_Nonnull decoder, const uint8_t *_Nullable bytes, size_t count);

/// Says no more bytes will come: a file that ends early is then INCOMPLETE.
void nukejxl_decoder_close_input(nukejxl_decoder *_Nonnull decoder);

/// Chooses the output: `channels` 1…4 (grey, grey+alpha, RGB, RGBA) of `bits` 8 or 16 (native
/// `uint16_t`). Call after the BASIC_INFO event, before the frame's pixels.
void nukejxl_decoder_set_output_format(nukejxl_decoder *_Nonnull decoder, uint32_t channels, uint32_t bits);

/// Decodes as far as the bytes go, stopping at the next event.
///
/// Pixels are written into `output` (`stride` bytes per row, `size` bytes). libjxl is given the
/// buffer itself when the frame begins (its fastest path) and keeps it until the frame is
/// complete: every call until then must pass the same buffer (the shim refuses another with
/// INTERNAL), and nothing else may read it as the truth in between (a preview is a copy). A
/// one-shot decode goes from the frame's start to its end in one call. A NULL output drops the
/// frame's pixels.
///
/// - Returns: PAUSED with `*event` set; NEED_MORE when every byte was consumed; OK with
///   `NUKEJXL_EVENT_DONE` at the end; INCOMPLETE (input closed), CORRUPT, LIMIT, INTERNAL,
///   CANCELLED.
///
/// The corresponding libjxl functions are `JxlDecoderSetInput`, `JxlDecoderProcessInput`,
/// `JxlDecoderReleaseInput` and, at each pass, `JxlDecoderFlushImage`.
nuke_status nukejxl_decoder_process(nukejxl_decoder *_Nonnull decoder, uint8_t *_Nullable output, size_t stride, size_t size,
                                    const nuke_cancellation *_Nullable cancellation, nukejxl_event *_Nonnull event);

/// The basic info, valid after the BASIC_INFO event.
const nukejxl_basic_info *_Nonnull nukejxl_decoder_info(nukejxl_decoder *_Nonnull decoder);
/// The colour description, valid after the COLOR event.
const nukejxl_color *_Nonnull nukejxl_decoder_color(nukejxl_decoder *_Nonnull decoder);
/// The ICC profile of the decoded pixels (the file's, or libjxl's for an enum encoding), valid
/// after the COLOR event until the decoder is destroyed; NULL when there is none.
const uint8_t *_Nullable nukejxl_decoder_icc(nukejxl_decoder *_Nonnull decoder, size_t *_Nonnull size);
/// The current frame's duration in ticks, after a FRAME event.
uint32_t nukejxl_decoder_frame_duration(nukejxl_decoder *_Nonnull decoder);
/// How many times the progressive output was flushed (PASS events) in the current frame.
uint32_t nukejxl_decoder_pass_count(nukejxl_decoder *_Nonnull decoder);

// MARK: - Encoding

typedef struct nukejxl_encode_params {
    /// Butteraugli distance: 0 is lossless (with `lossless`), 1 visually lossless, up to 25.
    float distance;
    int32_t lossless;
    /// 1…9.
    int32_t effort;
    /// 1…4 (grey, grey+alpha, RGB, RGBA).
    uint32_t channels;
    /// 8 or 16 (native `uint16_t` samples).
    uint32_t bits;
    const uint8_t *_Nullable icc;
    size_t icc_size;
    /// The EXIF-style orientation written in the header (1…8), which readers apply.
    uint32_t orientation;
    /// 1: progressive AC and responsive (`cjxl -p`), for previews per pass while downloading.
    int32_t progressive;
} nukejxl_encode_params;

/// A libjxl encoder (`JxlEncoder`) for one image or an animation of whole-canvas frames.
typedef struct nukejxl_encoder nukejxl_encoder;

/// Creates an encoder for `width × height` frames of `params->channels` and `params->bits`;
/// `animated` frames carry a duration in milliseconds. NULL when out of memory.
nukejxl_encoder *_Nullable nukejxl_encoder_create(uint32_t width, uint32_t height, const nukejxl_encode_params *_Nonnull params,
                                                  int32_t animated);
void nukejxl_encoder_destroy(nukejxl_encoder *_Nullable encoder);
nuke_diagnostics *_Nonnull nukejxl_encoder_diagnostics(nukejxl_encoder *_Nonnull encoder);

/// Sets the header (size, bits, alpha, colour, orientation, the animation's ticks and loop count)
/// and the frame settings (distance or lossless, effort, progressive).
///
/// The corresponding libjxl functions are `JxlEncoderSetBasicInfo` and `JxlEncoderFrameSettingsCreate`.
nuke_status nukejxl_encoder_start(nukejxl_encoder *_Nonnull encoder, const nukejxl_encode_params *_Nonnull params, uint32_t loop_count);

/// Adds a frame (libjxl copies the pixels).
///
/// The corresponding libjxl functions are `JxlEncoderSetFrameHeader` and `JxlEncoderAddImageFrame`.
nuke_status nukejxl_encoder_add_frame(nukejxl_encoder *_Nonnull encoder, const uint8_t *_Nonnull pixels, size_t stride, uint32_t duration_ms);

/// Encodes what was added into `*output` (free with `nukejxl_buffer_free`).
///
/// The corresponding libjxl functions are `JxlEncoderCloseInput` and `JxlEncoderProcessOutput`.
nuke_status nukejxl_encoder_finish(nukejxl_encoder *_Nonnull encoder, uint8_t *_Nullable *_Nonnull output, size_t *_Nonnull size);

/// Recompresses a JPEG file losslessly into a JPEG XL file that keeps what it takes to
/// reconstruct the JPEG bit for bit (`jbrd`).
///
/// The corresponding libjxl functions are `JxlEncoderStoreJPEGMetadata` and `JxlEncoderAddJPEGFrame`.
nuke_status nukejxl_recompress_jpeg(const uint8_t *_Nonnull jpeg, size_t count, int32_t effort, uint8_t *_Nullable *_Nonnull output,
                                    size_t *_Nonnull size, nuke_diagnostics *_Nonnull diagnostics);

/// Reconstructs the original JPEG from a JPEG XL file made by JPEG recompression.
///
/// - Returns: OK; UNSUPPORTED when the file holds no JPEG reconstruction data; CORRUPT,
///   INCOMPLETE, LIMIT (past `max_bytes` of JPEG).
///
/// The corresponding libjxl functions are `JxlDecoderSetJPEGBuffer` and `JxlDecoderReleaseJPEGBuffer`.
nuke_status nukejxl_reconstruct_jpeg(const uint8_t *_Nonnull jxl, size_t count, uint64_t max_bytes, uint8_t *_Nullable *_Nonnull output,
                                     size_t *_Nonnull size, nuke_diagnostics *_Nonnull diagnostics);

/// Frees a buffer this shim returned.
void nukejxl_buffer_free(void *_Nullable buffer);

#ifdef __cplusplus
}
#endif

#endif

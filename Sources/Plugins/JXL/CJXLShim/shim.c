#include "CJXLShim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jxl/decode.h>
#include <jxl/encode.h>
#include "nuke_library.h"

// libjxl is opened on first use (Docs/CShims.md): loading it costs a process about 3.6 ms (a C
// program linked with libjpeg, libpng, libwebp, lcms2 and libstdc++ starts in 1.6 ms, 5.2 ms with
// libjxl and its libhwy and brotli besides), which every `nuke` process would pay for a format it
// rarely sees. Every libjxl function the shim calls, through `libjxl.<name>`:
#define NUKEJXL_FUNCTIONS(X) \
    X(JxlColorEncodingSetToSRGB) \
    X(JxlDecoderCloseInput) \
    X(JxlDecoderCreate) \
    X(JxlDecoderDestroy) \
    X(JxlDecoderFlushImage) \
    X(JxlDecoderGetBasicInfo) \
    X(JxlDecoderGetColorAsEncodedProfile) \
    X(JxlDecoderGetColorAsICCProfile) \
    X(JxlDecoderGetFrameHeader) \
    X(JxlDecoderGetICCProfileSize) \
    X(JxlDecoderImageOutBufferSize) \
    X(JxlDecoderProcessInput) \
    X(JxlDecoderReleaseInput) \
    X(JxlDecoderReleaseJPEGBuffer) \
    X(JxlDecoderSetImageOutBuffer) \
    X(JxlDecoderSetImageOutCallback) \
    X(JxlDecoderSetInput) \
    X(JxlDecoderSetJPEGBuffer) \
    X(JxlDecoderSetKeepOrientation) \
    X(JxlDecoderSetProgressiveDetail) \
    X(JxlDecoderSetUnpremultiplyAlpha) \
    X(JxlDecoderSubscribeEvents) \
    X(JxlDecoderVersion) \
    X(JxlEncoderAddImageFrame) \
    X(JxlEncoderAddJPEGFrame) \
    X(JxlEncoderCloseInput) \
    X(JxlEncoderCreate) \
    X(JxlEncoderDestroy) \
    X(JxlEncoderFrameSettingsCreate) \
    X(JxlEncoderFrameSettingsSetOption) \
    X(JxlEncoderGetError) \
    X(JxlEncoderInitBasicInfo) \
    X(JxlEncoderInitFrameHeader) \
    X(JxlEncoderProcessOutput) \
    X(JxlEncoderSetBasicInfo) \
    X(JxlEncoderSetColorEncoding) \
    X(JxlEncoderSetFrameDistance) \
    X(JxlEncoderSetFrameHeader) \
    X(JxlEncoderSetFrameLossless) \
    X(JxlEncoderSetICCProfile) \
    X(JxlEncoderStoreJPEGMetadata) \
    X(JxlEncoderUseContainer)

static struct {
    NUKEJXL_FUNCTIONS(NUKE_LIBRARY_FIELD)
} libjxl;
static pthread_once_t libjxl_once = PTHREAD_ONCE_INIT;
static int libjxl_loaded;
static char libjxl_error[NUKE_MESSAGE_CAPACITY];

static void load_libjxl(void) {
    static const char *const names[] = {"libjxl.so.0.7", "libjxl.so", "libjxl.0.7.dylib", "libjxl.dylib", NULL};
#define NUKEJXL_FUNCTION(name) NUKE_LIBRARY_FUNCTION(libjxl, name)
    const nuke_library_function functions[] = {NUKEJXL_FUNCTIONS(NUKEJXL_FUNCTION)};
#undef NUKEJXL_FUNCTION
    if (nuke_library_load(names, functions, sizeof functions / sizeof *functions, libjxl_error, sizeof libjxl_error) == NULL) return;
    libjxl_loaded = 1;
}

nuke_status nukejxl_load(nuke_diagnostics *diagnostics) {
    pthread_once(&libjxl_once, load_libjxl);
    return nuke_library_status(libjxl_loaded, libjxl_error, diagnostics);
}

const char *nukejxl_version(void) {
    static char text[32];
    if (text[0] == 0) {
        if (nukejxl_load(NULL) != NUKE_STATUS_OK) return "";
        uint32_t v = libjxl.JxlDecoderVersion();
        snprintf(text, sizeof text, "%u.%u.%u", v / 1000000, (v / 1000) % 1000, v % 1000);
    }
    return text;
}

void nukejxl_buffer_free(void *buffer) { free(buffer); }

// MARK: - Decoding

struct nukejxl_decoder {
    JxlDecoder *dec;
    nuke_diagnostics diagnostics;
    uint64_t max_pixels;
    uint32_t flags;
    // Bytes not yet consumed by libjxl, then the new ones: input[0..<input_size].
    uint8_t *input;
    size_t input_size;
    size_t input_capacity;
    // Whether libjxl holds `input` (JxlDecoderSetInput without JxlDecoderReleaseInput yet).
    int input_set;
    int input_closed;
    nukejxl_basic_info info;
    int has_info;
    nukejxl_color color;
    uint8_t *icc;
    size_t icc_size;
    JxlPixelFormat format;
    size_t bytes_per_pixel;
    int output_set;
    // The output of the current `nukejxl_decoder_process` call (NULL outside one).
    uint8_t *output;
    // The buffer libjxl writes into directly (`JxlDecoderSetImageOutBuffer`) until the frame is
    // complete, or NULL when it calls `write_pixels` instead.
    uint8_t *bound_output;
    size_t stride;
    size_t output_size;
    uint32_t frame_duration;
    uint32_t passes;
};

nukejxl_decoder *nukejxl_decoder_create(uint64_t max_pixels, uint32_t flags) {
    if (nukejxl_load(NULL) != NUKE_STATUS_OK) return NULL;
    nukejxl_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->dec = libjxl.JxlDecoderCreate(NULL);
    if (d->dec == NULL) { free(d); return NULL; }
    d->max_pixels = max_pixels;
    d->flags = flags;
    int events = JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FRAME;
    // JXL_DEC_FRAME_PROGRESSION without the progressive flag is a point inside a frame where
    // the shim asks the cancellation (libjxl stops there; nothing is flushed, which costs nothing).
    if (flags & NUKEJXL_DECODE_PIXELS) events |= JXL_DEC_FULL_IMAGE | JXL_DEC_FRAME_PROGRESSION;
    if (libjxl.JxlDecoderSubscribeEvents(d->dec, events) != JXL_DEC_SUCCESS
        || libjxl.JxlDecoderSetKeepOrientation(d->dec, JXL_TRUE) != JXL_DEC_SUCCESS
        // A premultiplied file's colours are un-premultiplied unless the caller keeps them.
        || libjxl.JxlDecoderSetUnpremultiplyAlpha(d->dec, (flags & NUKEJXL_DECODE_KEEP_PREMULTIPLIED) ? JXL_FALSE : JXL_TRUE) != JXL_DEC_SUCCESS
        || ((flags & NUKEJXL_DECODE_PROGRESSIVE) && libjxl.JxlDecoderSetProgressiveDetail(d->dec, kPasses) != JXL_DEC_SUCCESS)) {
        libjxl.JxlDecoderDestroy(d->dec);
        free(d);
        return NULL;
    }
    d->format = (JxlPixelFormat){4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    d->bytes_per_pixel = 4;
    return d;
}

void nukejxl_decoder_destroy(nukejxl_decoder *d) {
    if (d == NULL) return;
    libjxl.JxlDecoderDestroy(d->dec);
    free(d->input);
    free(d->icc);
    free(d);
}

nuke_diagnostics *nukejxl_decoder_diagnostics(nukejxl_decoder *d) { return &d->diagnostics; }
const nukejxl_basic_info *nukejxl_decoder_info(nukejxl_decoder *d) { return &d->info; }
const nukejxl_color *nukejxl_decoder_color(nukejxl_decoder *d) { return &d->color; }
uint32_t nukejxl_decoder_pass_count(nukejxl_decoder *d) { return d->passes; }

const uint8_t *nukejxl_decoder_icc(nukejxl_decoder *d, size_t *size) {
    *size = d->icc_size;
    return d->icc;
}

uint32_t nukejxl_decoder_frame_duration(nukejxl_decoder *d) {
    return d->frame_duration;
}

/// Takes back from libjxl the bytes it has not consumed and moves them to the front.
static void release_input(nukejxl_decoder *d) {
    if (!d->input_set) return;
    size_t remaining = libjxl.JxlDecoderReleaseInput(d->dec);
    if (remaining > d->input_size) remaining = d->input_size;
    memmove(d->input, d->input + (d->input_size - remaining), remaining);
    d->input_size = remaining;
    d->input_set = 0;
}

nuke_status nukejxl_decoder_append(nukejxl_decoder *d, const uint8_t *bytes, size_t count) {
    if (count == 0 || bytes == NULL) return NUKE_STATUS_OK;
    if (d->input_closed) {
        nuke_diagnostics_set_message(&d->diagnostics, "bytes appended after the input was closed");
        return NUKE_STATUS_INTERNAL;
    }
    release_input(d);
    if (d->input_size + count > d->input_capacity) {
        size_t capacity = d->input_capacity ? d->input_capacity : 4096;
        while (capacity < d->input_size + count) capacity *= 2;
        uint8_t *grown = realloc(d->input, capacity);
        if (grown == NULL) {
            nuke_diagnostics_set_message(&d->diagnostics, "out of memory for the input");
            return NUKE_STATUS_INTERNAL;
        }
        d->input = grown;
        d->input_capacity = capacity;
    }
    memcpy(d->input + d->input_size, bytes, count);
    d->input_size += count;
    return NUKE_STATUS_OK;
}

void nukejxl_decoder_close_input(nukejxl_decoder *d) {
    // libjxl is not told (JxlDecoderCloseInput): it would then report a truncated file as
    // JXL_DEC_ERROR, like a malformed one. Its NEED_MORE_INPUT after the end is INCOMPLETE.
    d->input_closed = 1;
}

void nukejxl_decoder_set_output_format(nukejxl_decoder *d, uint32_t channels, uint32_t bits) {
    d->format = (JxlPixelFormat){channels, bits == 16 ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    d->bytes_per_pixel = (size_t)channels * (bits == 16 ? 2 : 1);
}

/// libjxl's rows, copied into the output of the call in progress. libjxl calls it for one run
/// of pixels of one row at a time (from one thread: no parallel runner).
static void write_pixels(void *opaque, size_t x, size_t y, size_t num_pixels, const void *pixels) {
    nukejxl_decoder *d = opaque;
    if (d->output == NULL) return;
    size_t offset = y * d->stride + x * d->bytes_per_pixel, count = num_pixels * d->bytes_per_pixel;
    if (offset > d->output_size || count > d->output_size - offset) return;
    memcpy(d->output + offset, pixels, count);
}

/// An enum colour encoding as an nclx description, when it has one.
static int nclx_from(const JxlColorEncoding *e, int32_t nclx[4]) {
    if (e->color_space != JXL_COLOR_SPACE_RGB && e->color_space != JXL_COLOR_SPACE_GRAY) return 0;
    int primaries;
    if (e->color_space == JXL_COLOR_SPACE_GRAY) primaries = 2;  // unspecified: grey has none
    else if (e->primaries == JXL_PRIMARIES_SRGB && e->white_point == JXL_WHITE_POINT_D65) primaries = 1;
    else if (e->primaries == JXL_PRIMARIES_2100 && e->white_point == JXL_WHITE_POINT_D65) primaries = 9;
    else if (e->primaries == JXL_PRIMARIES_P3 && e->white_point == JXL_WHITE_POINT_D65) primaries = 12;
    else if (e->primaries == JXL_PRIMARIES_P3 && e->white_point == JXL_WHITE_POINT_DCI) primaries = 11;
    else return 0;
    if (e->color_space == JXL_COLOR_SPACE_GRAY && e->white_point != JXL_WHITE_POINT_D65) return 0;
    switch (e->transfer_function) {
    case JXL_TRANSFER_FUNCTION_709: case JXL_TRANSFER_FUNCTION_LINEAR: case JXL_TRANSFER_FUNCTION_SRGB:
    case JXL_TRANSFER_FUNCTION_PQ: case JXL_TRANSFER_FUNCTION_DCI: case JXL_TRANSFER_FUNCTION_HLG:
        break;
    default:
        return 0;
    }
    nclx[0] = primaries;
    nclx[1] = (int32_t)e->transfer_function;  // libjxl's numbers are ISO/IEC 23091-2's
    nclx[2] = 0;
    nclx[3] = 1;
    return 1;
}

static nuke_status read_color(nukejxl_decoder *d) {
    memset(&d->color, 0, sizeof d->color);
    JxlColorEncoding encoding;
    if (libjxl.JxlDecoderGetColorAsEncodedProfile(d->dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS) {
        d->color.is_enum = 1;
        d->color.has_nclx = nclx_from(&encoding, d->color.nclx);
    }
    size_t size = 0;
    if (libjxl.JxlDecoderGetICCProfileSize(d->dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS && size > 0) {
        uint8_t *icc = malloc(size);
        if (icc == NULL) {
            nuke_diagnostics_set_message(&d->diagnostics, "out of memory for the ICC profile");
            return NUKE_STATUS_INTERNAL;
        }
        if (libjxl.JxlDecoderGetColorAsICCProfile(d->dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, icc, size) != JXL_DEC_SUCCESS) {
            free(icc);
        } else {
            free(d->icc);
            d->icc = icc;
            d->icc_size = size;
            d->color.has_icc = 1;
        }
    }
    return NUKE_STATUS_OK;
}

nuke_status nukejxl_decoder_process(nukejxl_decoder *d, uint8_t *output, size_t stride, size_t size,
                                    const nuke_cancellation *cancellation, nukejxl_event *event) {
    *event = NUKEJXL_EVENT_NONE;
    if (!d->input_set && d->input_size == 0) {
        if (!d->input_closed) return NUKE_STATUS_NEED_MORE;
        nuke_diagnostics_set_message(&d->diagnostics, "the data is empty");
        return NUKE_STATUS_INCOMPLETE;
    }
    if (!d->input_set) {
        if (libjxl.JxlDecoderSetInput(d->dec, d->input, d->input_size) != JXL_DEC_SUCCESS) {
            nuke_diagnostics_set_message(&d->diagnostics, "JxlDecoderSetInput refused the input");
            return NUKE_STATUS_INTERNAL;
        }
        d->input_set = 1;
    }
    if (d->bound_output != NULL && output != d->bound_output) {
        // libjxl still holds the buffer it was given: a different one would leave it writing
        // into memory the caller may have freed.
        nuke_diagnostics_set_message(&d->diagnostics, "the output buffer moved while libjxl was writing into it");
        return NUKE_STATUS_INTERNAL;
    }
    d->output = output;
    d->stride = stride;
    d->output_size = output != NULL ? size : 0;
    nuke_status result;
    for (;;) {
        if (nuke_is_cancelled(cancellation)) { result = NUKE_STATUS_CANCELLED; break; }
        JxlDecoderStatus status = libjxl.JxlDecoderProcessInput(d->dec);
        if (status == JXL_DEC_ERROR) {
            nuke_diagnostics_set_message(&d->diagnostics, d->has_info
                ? "JXL_DEC_ERROR: the codestream is malformed (JxlDecoderProcessInput)"
                : "JXL_DEC_ERROR: the data is not a valid JPEG XL header (JxlDecoderProcessInput)");
            result = NUKE_STATUS_CORRUPT;
            break;
        }
        if (status == JXL_DEC_NEED_MORE_INPUT) {
            if (d->input_closed) {
                nuke_diagnostics_set_message(&d->diagnostics, "JXL_DEC_NEED_MORE_INPUT: the data ends before the image does");
                result = NUKE_STATUS_INCOMPLETE;
            } else {
                release_input(d);
                result = NUKE_STATUS_NEED_MORE;
            }
            break;
        }
        if (status == JXL_DEC_BASIC_INFO) {
            JxlBasicInfo info;
            if (libjxl.JxlDecoderGetBasicInfo(d->dec, &info) != JXL_DEC_SUCCESS) {
                nuke_diagnostics_set_message(&d->diagnostics, "JxlDecoderGetBasicInfo failed after JXL_DEC_BASIC_INFO");
                result = NUKE_STATUS_CORRUPT;
                break;
            }
            d->info = (nukejxl_basic_info){
                info.xsize, info.ysize, info.bits_per_sample, info.exponent_bits_per_sample, info.num_color_channels,
                info.alpha_bits, info.alpha_premultiplied, (uint32_t)info.orientation, info.have_animation,
                info.animation.tps_numerator, info.animation.tps_denominator, info.animation.num_loops,
                info.uses_original_profile,
            };
            d->has_info = 1;
            // The shim's own check, before libjxl allocates any frame.
            if ((uint64_t)info.xsize * (uint64_t)info.ysize > d->max_pixels) {
                char text[NUKE_MESSAGE_CAPACITY];
                snprintf(text, sizeof text, "the declared %u×%u pixels exceed the maximum %llu", info.xsize, info.ysize,
                         (unsigned long long)d->max_pixels);
                nuke_diagnostics_set_message(&d->diagnostics, text);
                result = NUKE_STATUS_LIMIT;
                break;
            }
            *event = NUKEJXL_EVENT_BASIC_INFO;
            result = NUKE_STATUS_PAUSED;
            break;
        }
        if (status == JXL_DEC_COLOR_ENCODING) {
            result = read_color(d);
            if (result != NUKE_STATUS_OK) break;
            *event = NUKEJXL_EVENT_COLOR;
            result = NUKE_STATUS_PAUSED;
            break;
        }
        if (status == JXL_DEC_FRAME) {
            JxlFrameHeader header;
            if (libjxl.JxlDecoderGetFrameHeader(d->dec, &header) == JXL_DEC_SUCCESS) {
                d->frame_duration = header.duration;
            }
            d->passes = 0;
            d->output_set = 0;
            *event = NUKEJXL_EVENT_FRAME;
            result = NUKE_STATUS_PAUSED;
            break;
        }
        if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            // libjxl writes straight into the caller's buffer (its fastest path: the callback
            // costs a conversion into a row buffer and a copy, a third more on a 12 MP image).
            // Frames nobody wants (output NULL) go to the callback, which drops them.
            JxlDecoderStatus set;
            size_t needed = 0;
            if (output != NULL
                && libjxl.JxlDecoderImageOutBufferSize(d->dec, &d->format, &needed) == JXL_DEC_SUCCESS && needed <= size
                && stride == (size_t)d->info.width * d->bytes_per_pixel) {
                set = libjxl.JxlDecoderSetImageOutBuffer(d->dec, &d->format, output, size);
                d->bound_output = output;
            } else {
                set = libjxl.JxlDecoderSetImageOutCallback(d->dec, &d->format, write_pixels, d);
            }
            if (set != JXL_DEC_SUCCESS) {
                nuke_diagnostics_set_message(&d->diagnostics, "libjxl refused the output pixel format");
                result = NUKE_STATUS_INTERNAL;
                break;
            }
            d->output_set = 1;
            continue;
        }
        if (status == JXL_DEC_FRAME_PROGRESSION) {
            if (!(d->flags & NUKEJXL_DECODE_PROGRESSIVE)) continue;  // a cancellation point only
            if (!d->output_set || libjxl.JxlDecoderFlushImage(d->dec) != JXL_DEC_SUCCESS) continue;  // nothing to show yet
            d->passes++;
            *event = NUKEJXL_EVENT_PASS;
            result = NUKE_STATUS_PAUSED;
            break;
        }
        if (status == JXL_DEC_FULL_IMAGE) {
            d->bound_output = NULL;
            *event = NUKEJXL_EVENT_FRAME_COMPLETE;
            result = NUKE_STATUS_PAUSED;
            break;
        }
        if (status == JXL_DEC_SUCCESS) {
            *event = NUKEJXL_EVENT_DONE;
            result = NUKE_STATUS_OK;
            break;
        }
        // Events not subscribed to, or that need nothing from us.
    }
    d->output = NULL;
    d->output_size = 0;
    return result;
}

// MARK: - Encoding

/// Runs the encoder to the end, into a malloc'ed buffer.
static nuke_status collect_output(JxlEncoder *enc, uint8_t **output, size_t *size, nuke_diagnostics *diagnostics) {
    size_t capacity = 64 * 1024, used = 0;
    uint8_t *buffer = malloc(capacity);
    if (buffer == NULL) { nuke_diagnostics_set_message(diagnostics, "out of memory"); return NUKE_STATUS_INTERNAL; }
    for (;;) {
        uint8_t *next = buffer + used;
        size_t avail = capacity - used;
        JxlEncoderStatus status = libjxl.JxlEncoderProcessOutput(enc, &next, &avail);
        used = (size_t)(next - buffer);
        if (status == JXL_ENC_SUCCESS) break;
        if (status != JXL_ENC_NEED_MORE_OUTPUT) {
            char text[NUKE_MESSAGE_CAPACITY];
            snprintf(text, sizeof text, "JxlEncoderProcessOutput failed (JxlEncoderError %d)", (int)libjxl.JxlEncoderGetError(enc));
            nuke_diagnostics_set_message(diagnostics, text);
            free(buffer);
            return NUKE_STATUS_INTERNAL;
        }
        capacity *= 2;
        uint8_t *grown = realloc(buffer, capacity);
        if (grown == NULL) { free(buffer); nuke_diagnostics_set_message(diagnostics, "out of memory"); return NUKE_STATUS_INTERNAL; }
        buffer = grown;
    }
    *output = buffer;
    *size = used;
    return NUKE_STATUS_OK;
}

static nuke_status encoder_failure(JxlEncoder *enc, const char *call, nuke_diagnostics *diagnostics) {
    char text[NUKE_MESSAGE_CAPACITY];
    JxlEncoderError error = libjxl.JxlEncoderGetError(enc);
    snprintf(text, sizeof text, "%s failed (JxlEncoderError %d)", call, (int)error);
    nuke_diagnostics_set_message(diagnostics, text);
    return error == JXL_ENC_ERR_BAD_INPUT || error == JXL_ENC_ERR_JBRD ? NUKE_STATUS_CORRUPT
         : error == JXL_ENC_ERR_NOT_SUPPORTED ? NUKE_STATUS_UNSUPPORTED : NUKE_STATUS_INTERNAL;
}

struct nukejxl_encoder {
    JxlEncoder *enc;
    JxlEncoderFrameSettings *settings;
    nuke_diagnostics diagnostics;
    uint32_t width, height, channels, bits;
    int animated;
};

nukejxl_encoder *nukejxl_encoder_create(uint32_t width, uint32_t height, const nukejxl_encode_params *params, int32_t animated) {
    if (nukejxl_load(NULL) != NUKE_STATUS_OK) return NULL;
    nukejxl_encoder *e = calloc(1, sizeof *e);
    if (e == NULL) return NULL;
    e->enc = libjxl.JxlEncoderCreate(NULL);
    if (e->enc == NULL) { free(e); return NULL; }
    e->width = width;
    e->height = height;
    e->channels = params->channels;
    e->bits = params->bits == 16 ? 16 : 8;
    e->animated = animated != 0;
    return e;
}

void nukejxl_encoder_destroy(nukejxl_encoder *e) {
    if (e == NULL) return;
    libjxl.JxlEncoderDestroy(e->enc);
    free(e);
}

nuke_diagnostics *nukejxl_encoder_diagnostics(nukejxl_encoder *e) { return &e->diagnostics; }

nuke_status nukejxl_encoder_start(nukejxl_encoder *e, const nukejxl_encode_params *params, uint32_t loop_count) {
    JxlEncoder *enc = e->enc;
    nuke_diagnostics *diagnostics = &e->diagnostics;
    int gray = e->channels <= 2, alpha = e->channels == 2 || e->channels == 4;
    JxlBasicInfo info;
    libjxl.JxlEncoderInitBasicInfo(&info);
    info.xsize = e->width;
    info.ysize = e->height;
    info.bits_per_sample = e->bits;
    info.num_color_channels = gray ? 1 : 3;
    info.num_extra_channels = alpha ? 1 : 0;
    info.alpha_bits = alpha ? e->bits : 0;
    info.uses_original_profile = params->lossless ? JXL_TRUE : JXL_FALSE;
    info.orientation = params->orientation >= 1 && params->orientation <= 8 ? (JxlOrientation)params->orientation : JXL_ORIENT_IDENTITY;
    if (e->animated) {
        // Durations in milliseconds: 1000 ticks a second.
        info.have_animation = JXL_TRUE;
        info.animation.tps_numerator = 1000;
        info.animation.tps_denominator = 1;
        info.animation.num_loops = loop_count;
    }
    if (libjxl.JxlEncoderSetBasicInfo(enc, &info) != JXL_ENC_SUCCESS) return encoder_failure(enc, "JxlEncoderSetBasicInfo", diagnostics);
    if (params->icc != NULL && params->icc_size > 0) {
        if (libjxl.JxlEncoderSetICCProfile(enc, params->icc, params->icc_size) != JXL_ENC_SUCCESS) {
            return encoder_failure(enc, "JxlEncoderSetICCProfile", diagnostics);
        }
    } else {
        JxlColorEncoding color;
        libjxl.JxlColorEncodingSetToSRGB(&color, gray ? JXL_TRUE : JXL_FALSE);
        if (libjxl.JxlEncoderSetColorEncoding(enc, &color) != JXL_ENC_SUCCESS) return encoder_failure(enc, "JxlEncoderSetColorEncoding", diagnostics);
    }
    JxlEncoderFrameSettings *settings = libjxl.JxlEncoderFrameSettingsCreate(enc, NULL);
    if (settings == NULL) return encoder_failure(enc, "JxlEncoderFrameSettingsCreate", diagnostics);
    int effort = params->effort < 1 ? 1 : params->effort > 9 ? 9 : params->effort;
    if (libjxl.JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort) != JXL_ENC_SUCCESS) {
        return encoder_failure(enc, "libjxl.JxlEncoderFrameSettingsSetOption(EFFORT)", diagnostics);
    }
    if (params->progressive
        && (libjxl.JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_PROGRESSIVE_AC, 1) != JXL_ENC_SUCCESS
            || libjxl.JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_RESPONSIVE, 1) != JXL_ENC_SUCCESS)) {
        return encoder_failure(enc, "libjxl.JxlEncoderFrameSettingsSetOption(PROGRESSIVE_AC)", diagnostics);
    }
    if (params->lossless) {
        if (libjxl.JxlEncoderSetFrameLossless(settings, JXL_TRUE) != JXL_ENC_SUCCESS) return encoder_failure(enc, "JxlEncoderSetFrameLossless", diagnostics);
    } else if (libjxl.JxlEncoderSetFrameDistance(settings, params->distance) != JXL_ENC_SUCCESS) {
        return encoder_failure(enc, "JxlEncoderSetFrameDistance", diagnostics);
    }
    e->settings = settings;
    return NUKE_STATUS_OK;
}

nuke_status nukejxl_encoder_add_frame(nukejxl_encoder *e, const uint8_t *pixels, size_t stride, uint32_t duration_ms) {
    if (e->settings == NULL) {
        nuke_diagnostics_set_message(&e->diagnostics, "the encoder was not started");
        return NUKE_STATUS_INTERNAL;
    }
    if (e->animated) {
        JxlFrameHeader header;
        libjxl.JxlEncoderInitFrameHeader(&header);
        header.duration = duration_ms;
        if (libjxl.JxlEncoderSetFrameHeader(e->settings, &header) != JXL_ENC_SUCCESS) {
            return encoder_failure(e->enc, "JxlEncoderSetFrameHeader", &e->diagnostics);
        }
    }
    JxlPixelFormat format = {e->channels, e->bits == 16 ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, stride};
    // libjxl reads rows `align` bytes apart; its size check wants the whole buffer.
    size_t bytes = stride * (e->height - 1) + (size_t)e->width * e->channels * (e->bits / 8);
    if (libjxl.JxlEncoderAddImageFrame(e->settings, &format, pixels, bytes) != JXL_ENC_SUCCESS) {
        return encoder_failure(e->enc, "JxlEncoderAddImageFrame", &e->diagnostics);
    }
    return NUKE_STATUS_OK;
}

nuke_status nukejxl_encoder_finish(nukejxl_encoder *e, uint8_t **output, size_t *size) {
    *output = NULL;
    *size = 0;
    libjxl.JxlEncoderCloseInput(e->enc);
    return collect_output(e->enc, output, size, &e->diagnostics);
}

nuke_status nukejxl_recompress_jpeg(const uint8_t *jpeg, size_t count, int32_t effort, uint8_t **output, size_t *size,
                                    nuke_diagnostics *diagnostics) {
    *output = NULL;
    *size = 0;
    nuke_status loaded = nukejxl_load(diagnostics);
    if (loaded != NUKE_STATUS_OK) return loaded;
    JxlEncoder *enc = libjxl.JxlEncoderCreate(NULL);
    if (enc == NULL) { nuke_diagnostics_set_message(diagnostics, "JxlEncoderCreate failed"); return NUKE_STATUS_INTERNAL; }
    nuke_status result;
    JxlEncoderFrameSettings *settings;
    if (libjxl.JxlEncoderUseContainer(enc, JXL_TRUE) != JXL_ENC_SUCCESS || libjxl.JxlEncoderStoreJPEGMetadata(enc, JXL_TRUE) != JXL_ENC_SUCCESS) {
        result = encoder_failure(enc, "JxlEncoderStoreJPEGMetadata", diagnostics);
        goto done;
    }
    settings = libjxl.JxlEncoderFrameSettingsCreate(enc, NULL);
    if (settings == NULL) { result = encoder_failure(enc, "JxlEncoderFrameSettingsCreate", diagnostics); goto done; }
    libjxl.JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort < 1 ? 1 : effort > 9 ? 9 : effort);
    if (libjxl.JxlEncoderAddJPEGFrame(settings, jpeg, count) != JXL_ENC_SUCCESS) {
        result = encoder_failure(enc, "JxlEncoderAddJPEGFrame", diagnostics);
        if (result == NUKE_STATUS_INTERNAL) result = NUKE_STATUS_CORRUPT;  // the JPEG was refused
        goto done;
    }
    libjxl.JxlEncoderCloseInput(enc);
    result = collect_output(enc, output, size, diagnostics);
done:
    libjxl.JxlEncoderDestroy(enc);
    return result;
}

nuke_status nukejxl_reconstruct_jpeg(const uint8_t *jxl, size_t count, uint64_t max_bytes, uint8_t **output, size_t *size,
                                     nuke_diagnostics *diagnostics) {
    *output = NULL;
    *size = 0;
    nuke_status loaded = nukejxl_load(diagnostics);
    if (loaded != NUKE_STATUS_OK) return loaded;
    JxlDecoder *dec = libjxl.JxlDecoderCreate(NULL);
    if (dec == NULL) { nuke_diagnostics_set_message(diagnostics, "JxlDecoderCreate failed"); return NUKE_STATUS_INTERNAL; }
    nuke_status result = NUKE_STATUS_INTERNAL;
    size_t capacity = 0;
    uint8_t *buffer = NULL;
    int reconstructing = 0;
    if (libjxl.JxlDecoderSubscribeEvents(dec, JXL_DEC_JPEG_RECONSTRUCTION | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS
        || libjxl.JxlDecoderSetInput(dec, jxl, count) != JXL_DEC_SUCCESS) {
        nuke_diagnostics_set_message(diagnostics, "JxlDecoderSubscribeEvents failed");
        goto done;
    }
    libjxl.JxlDecoderCloseInput(dec);
    for (;;) {
        JxlDecoderStatus status = libjxl.JxlDecoderProcessInput(dec);
        if (status == JXL_DEC_ERROR) {
            nuke_diagnostics_set_message(diagnostics, "JXL_DEC_ERROR: the file is malformed (JxlDecoderProcessInput)");
            result = NUKE_STATUS_CORRUPT;
            goto done;
        }
        if (status == JXL_DEC_NEED_MORE_INPUT) {
            nuke_diagnostics_set_message(diagnostics, "JXL_DEC_NEED_MORE_INPUT: the data ends before the image does");
            result = NUKE_STATUS_INCOMPLETE;
            goto done;
        }
        if (status == JXL_DEC_JPEG_RECONSTRUCTION) {
            capacity = count * 2 + 4096;
            if (capacity > max_bytes) capacity = (size_t)max_bytes;
            buffer = malloc(capacity);
            if (buffer == NULL || libjxl.JxlDecoderSetJPEGBuffer(dec, buffer, capacity) != JXL_DEC_SUCCESS) {
                nuke_diagnostics_set_message(diagnostics, "JxlDecoderSetJPEGBuffer failed");
                goto done;
            }
            reconstructing = 1;
            continue;
        }
        if (status == JXL_DEC_JPEG_NEED_MORE_OUTPUT) {
            size_t unused = libjxl.JxlDecoderReleaseJPEGBuffer(dec), used = capacity - unused;
            if (capacity >= max_bytes) {
                nuke_diagnostics_set_message(diagnostics, "the reconstructed JPEG exceeds the maximum size");
                result = NUKE_STATUS_LIMIT;
                goto done;
            }
            size_t grown_capacity = capacity * 2 > max_bytes ? (size_t)max_bytes : capacity * 2;
            uint8_t *grown = realloc(buffer, grown_capacity);
            if (grown == NULL) { nuke_diagnostics_set_message(diagnostics, "out of memory"); goto done; }
            buffer = grown;
            capacity = grown_capacity;
            libjxl.JxlDecoderSetJPEGBuffer(dec, buffer + used, capacity - used);
            continue;
        }
        if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER || (status == JXL_DEC_FULL_IMAGE && !reconstructing)) {
            nuke_diagnostics_set_message(diagnostics, "the JPEG XL file holds no JPEG reconstruction data (it was not made from a JPEG)");
            result = NUKE_STATUS_UNSUPPORTED;
            goto done;
        }
        if (status == JXL_DEC_FULL_IMAGE || status == JXL_DEC_SUCCESS) {
            if (!reconstructing) {
                nuke_diagnostics_set_message(diagnostics, "the JPEG XL file holds no JPEG reconstruction data (it was not made from a JPEG)");
                result = NUKE_STATUS_UNSUPPORTED;
                goto done;
            }
            size_t unused = libjxl.JxlDecoderReleaseJPEGBuffer(dec);
            *output = buffer;
            *size = capacity - unused;
            buffer = NULL;
            result = NUKE_STATUS_OK;
            goto done;
        }
    }
done:
    free(buffer);
    libjxl.JxlDecoderDestroy(dec);
    return result;
}

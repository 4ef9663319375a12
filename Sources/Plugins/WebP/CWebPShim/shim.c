#include "CWebPShim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>

const char *nukewebp_version(void) {
    static char text[32];
    if (text[0] == 0) {
        int v = WebPGetDecoderVersion();
        snprintf(text, sizeof text, "%d.%d.%d", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
    }
    return text;
}

// MARK: - Status

/// libwebp's decoding statuses, with what each means (libwebp has no message strings).
static nuke_status decoding_status(VP8StatusCode code, int at_end, nuke_diagnostics *diagnostics) {
    switch (code) {
    case VP8_STATUS_OK:
        return NUKE_STATUS_OK;
    case VP8_STATUS_SUSPENDED:
        return NUKE_STATUS_NEED_MORE;
    case VP8_STATUS_NOT_ENOUGH_DATA:
        nuke_diagnostics_set_message(diagnostics, "VP8_STATUS_NOT_ENOUGH_DATA: the bitstream ends before the image does");
        return at_end ? NUKE_STATUS_INCOMPLETE : NUKE_STATUS_NEED_MORE;
    case VP8_STATUS_BITSTREAM_ERROR:
        nuke_diagnostics_set_message(diagnostics, "VP8_STATUS_BITSTREAM_ERROR: the bitstream is malformed");
        return NUKE_STATUS_CORRUPT;
    case VP8_STATUS_UNSUPPORTED_FEATURE:
        nuke_diagnostics_set_message(diagnostics, "VP8_STATUS_UNSUPPORTED_FEATURE: the bitstream uses a feature libwebp does not support");
        return NUKE_STATUS_UNSUPPORTED;
    case VP8_STATUS_OUT_OF_MEMORY:
        nuke_diagnostics_set_message(diagnostics, "VP8_STATUS_OUT_OF_MEMORY");
        return NUKE_STATUS_INTERNAL;
    case VP8_STATUS_INVALID_PARAM:
        nuke_diagnostics_set_message(diagnostics, "VP8_STATUS_INVALID_PARAM: the output buffer does not fit the image");
        return NUKE_STATUS_INTERNAL;
    case VP8_STATUS_USER_ABORT:
    default:
        nuke_diagnostics_set_message(diagnostics, "VP8_STATUS_USER_ABORT: libwebp stopped decoding");
        return NUKE_STATUS_INTERNAL;
    }
}

static WEBP_CSP_MODE csp_mode(nukewebp_layout layout) {
    switch (layout) {
    case NUKEWEBP_RGB: return MODE_RGB;
    case NUKEWEBP_RGBA: return MODE_RGBA;
    case NUKEWEBP_RGBA_PREMULTIPLIED: return MODE_rgbA;
    }
    return MODE_RGBA;
}

// MARK: - Decoding

nuke_status nukewebp_get_features(const uint8_t *data, size_t length, nukewebp_features *features,
                                  nuke_diagnostics *diagnostics) {
    WebPBitstreamFeatures f;
    VP8StatusCode code = WebPGetFeatures(data, length, &f);
    if (code != VP8_STATUS_OK) return decoding_status(code, 0, diagnostics);
    features->width = f.width;
    features->height = f.height;
    features->has_alpha = f.has_alpha;
    features->has_animation = f.has_animation;
    features->format = f.format;
    return NUKE_STATUS_OK;
}

/// How many more bytes each step of a one-shot decode shows libwebp, so that cancellation is
/// asked about every few milliseconds of decoding (64 KiB of a photo is a few hundred thousand
/// pixels).
static const size_t NUKEWEBP_DECODE_STEP = 64 << 10;

nuke_status nukewebp_decode(const uint8_t *data, size_t length, nukewebp_layout layout,
                            uint8_t *pixels, size_t stride, size_t size,
                            int32_t scaled_width, int32_t scaled_height,
                            const nuke_cancellation *cancellation, nuke_diagnostics *diagnostics) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        nuke_diagnostics_set_message(diagnostics, "libwebp's decoder ABI does not match its header");
        return NUKE_STATUS_INTERNAL;
    }
    if (scaled_width > 0 && scaled_height > 0) {
        config.options.use_scaling = 1;
        config.options.scaled_width = scaled_width;
        config.options.scaled_height = scaled_height;
    }
    config.output.colorspace = csp_mode(layout);
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = pixels;
    config.output.u.RGBA.stride = (int)stride;
    config.output.u.RGBA.size = size;
    if (cancellation == NULL) {
        VP8StatusCode code = WebPDecode(data, length, &config);
        WebPFreeDecBuffer(&config.output);
        return decoding_status(code, 1, diagnostics);
    }
    // libwebp's incremental decoder over growing prefixes of the caller's bytes (WebPIUpdate
    // reads them in place): the same pixels as WebPDecode, with a cancellation check per step.
    WebPIDecoder *idec = WebPIDecode(NULL, 0, &config);
    if (idec == NULL) {
        nuke_diagnostics_set_message(diagnostics, "VP8_STATUS_OUT_OF_MEMORY: cannot create libwebp's decoder");
        return NUKE_STATUS_INTERNAL;
    }
    VP8StatusCode code = VP8_STATUS_SUSPENDED;
    size_t shown = 0;
    while (code == VP8_STATUS_SUSPENDED && shown < length) {
        if (nuke_is_cancelled(cancellation)) {
            WebPIDelete(idec);
            WebPFreeDecBuffer(&config.output);
            nuke_diagnostics_set_message(diagnostics, "cancelled");
            return NUKE_STATUS_CANCELLED;
        }
        shown = length - shown > NUKEWEBP_DECODE_STEP ? shown + NUKEWEBP_DECODE_STEP : length;
        code = WebPIUpdate(idec, data, shown);
    }
    WebPIDelete(idec);
    WebPFreeDecBuffer(&config.output);
    if (code == VP8_STATUS_SUSPENDED) code = VP8_STATUS_NOT_ENOUGH_DATA;
    return decoding_status(code, 1, diagnostics);
}

struct nukewebp_decoder {
    WebPDecoderConfig config;
    WebPIDecoder *idec;
    nuke_diagnostics diagnostics;
};

nukewebp_decoder *nukewebp_decoder_create(nukewebp_layout layout, int32_t width, int32_t height, size_t stride) {
    nukewebp_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) return NULL;
    if (!WebPInitDecoderConfig(&decoder->config)) {
        free(decoder);
        return NULL;
    }
    // External memory: libwebp writes into `config.output` (kept here, at a stable address)
    // and reads its `rgba` pointer each time it emits rows, so the buffer may change between
    // appends. The pointer is set by every append before libwebp can use it.
    decoder->config.output.colorspace = csp_mode(layout);
    decoder->config.output.is_external_memory = 1;
    decoder->config.output.u.RGBA.stride = (int)stride;
    decoder->config.output.u.RGBA.size = (size_t)height * stride;
    (void)width;
    decoder->idec = WebPIDecode(NULL, 0, &decoder->config);
    if (decoder->idec == NULL) {
        free(decoder);
        return NULL;
    }
    return decoder;
}

void nukewebp_decoder_destroy(nukewebp_decoder *decoder) {
    if (decoder == NULL) return;
    WebPIDelete(decoder->idec);
    free(decoder);
}

const nuke_diagnostics *nukewebp_decoder_diagnostics(const nukewebp_decoder *decoder) {
    return &decoder->diagnostics;
}

nuke_status nukewebp_decoder_append(nukewebp_decoder *decoder, const uint8_t *data, size_t length,
                                    uint8_t *pixels, size_t size) {
    if (size < decoder->config.output.u.RGBA.size) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the output buffer is smaller than the image");
        return NUKE_STATUS_INTERNAL;
    }
    decoder->config.output.u.RGBA.rgba = pixels;
    VP8StatusCode code = WebPIAppend(decoder->idec, data, length);
    return decoding_status(code, 0, &decoder->diagnostics);
}

int32_t nukewebp_decoder_rows(const nukewebp_decoder *decoder) {
    int last_y = 0, width = 0, height = 0, stride = 0;
    if (WebPIDecGetRGB(decoder->idec, &last_y, &width, &height, &stride) == NULL) return 0;
    return last_y;
}

// MARK: - Encoding

static const char *encoding_error_text(WebPEncodingError error) {
    switch (error) {
    case VP8_ENC_ERROR_OUT_OF_MEMORY: return "VP8_ENC_ERROR_OUT_OF_MEMORY";
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY: return "VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY";
    case VP8_ENC_ERROR_NULL_PARAMETER: return "VP8_ENC_ERROR_NULL_PARAMETER";
    case VP8_ENC_ERROR_INVALID_CONFIGURATION: return "VP8_ENC_ERROR_INVALID_CONFIGURATION: invalid settings";
    case VP8_ENC_ERROR_BAD_DIMENSION: return "VP8_ENC_ERROR_BAD_DIMENSION: width and height must be 1…16383";
    case VP8_ENC_ERROR_PARTITION0_OVERFLOW: return "VP8_ENC_ERROR_PARTITION0_OVERFLOW: partition #0 is over 512 KiB";
    case VP8_ENC_ERROR_PARTITION_OVERFLOW: return "VP8_ENC_ERROR_PARTITION_OVERFLOW: a partition is over 16 MiB";
    case VP8_ENC_ERROR_BAD_WRITE: return "VP8_ENC_ERROR_BAD_WRITE";
    case VP8_ENC_ERROR_FILE_TOO_BIG: return "VP8_ENC_ERROR_FILE_TOO_BIG: the file would be over 4 GiB";
    case VP8_ENC_ERROR_USER_ABORT: return "VP8_ENC_ERROR_USER_ABORT";
    default: return "libwebp's encoder failed";
    }
}

static int make_config(WebPConfig *config, const nukewebp_encode_params *params, nuke_diagnostics *diagnostics) {
    if (!WebPConfigInit(config)) {
        nuke_diagnostics_set_message(diagnostics, "libwebp's encoder ABI does not match its header");
        return 0;
    }
    config->lossless = params->lossless ? 1 : 0;
    config->quality = params->quality;
    config->method = params->method;
    // Lossless keeps every pixel, the colour under fully transparent ones included.
    config->exact = params->lossless ? 1 : 0;
    if (!WebPValidateConfig(config)) {
        nuke_diagnostics_set_message(diagnostics, "invalid settings: quality must be 0…100 and method 0…6");
        return 0;
    }
    return 1;
}

static int import_picture(WebPPicture *picture, const uint8_t *pixels, int32_t width, int32_t height, size_t stride,
                          int has_alpha, int use_argb) {
    if (!WebPPictureInit(picture)) return 0;
    picture->width = width;
    picture->height = height;
    picture->use_argb = use_argb;
    return has_alpha ? WebPPictureImportRGBA(picture, pixels, (int)stride)
                     : WebPPictureImportRGB(picture, pixels, (int)stride);
}

/// Adds the metadata chunks to a bitstream with the muxer; on success `*output` replaces it.
static nuke_status add_metadata(const uint8_t *bitstream, size_t bitstream_size, const nukewebp_encode_params *params,
                                uint8_t **output, size_t *output_size, nuke_diagnostics *diagnostics) {
    WebPMux *mux = WebPMuxNew();
    if (mux == NULL) {
        nuke_diagnostics_set_message(diagnostics, "WebPMuxNew: out of memory");
        return NUKE_STATUS_INTERNAL;
    }
    WebPData image = {bitstream, bitstream_size};
    WebPMuxError error = WebPMuxSetImage(mux, &image, 0);
    const struct { const char *fourcc; const uint8_t *bytes; size_t size; } chunks[3] = {
        {"ICCP", params->icc, params->icc_size},
        {"EXIF", params->exif, params->exif_size},
        {"XMP ", params->xmp, params->xmp_size},
    };
    for (int i = 0; i < 3 && error == WEBP_MUX_OK; i++) {
        if (chunks[i].bytes == NULL || chunks[i].size == 0) continue;
        WebPData chunk = {chunks[i].bytes, chunks[i].size};
        error = WebPMuxSetChunk(mux, chunks[i].fourcc, &chunk, 0);
    }
    WebPData assembled = {NULL, 0};
    if (error == WEBP_MUX_OK) error = WebPMuxAssemble(mux, &assembled);
    WebPMuxDelete(mux);
    if (error != WEBP_MUX_OK) {
        char text[NUKE_MESSAGE_CAPACITY];
        snprintf(text, sizeof text, "the muxer failed adding metadata (WebPMuxError %d)", (int)error);
        nuke_diagnostics_set_message(diagnostics, text);
        WebPDataClear(&assembled);
        return NUKE_STATUS_INTERNAL;
    }
    *output = (uint8_t *)assembled.bytes;
    *output_size = assembled.size;
    return NUKE_STATUS_OK;
}

nuke_status nukewebp_encode(const uint8_t *pixels, int32_t width, int32_t height, size_t stride,
                            const nukewebp_encode_params *params, uint8_t **output, size_t *output_size,
                            nuke_diagnostics *diagnostics) {
    *output = NULL;
    *output_size = 0;
    WebPConfig config;
    if (!make_config(&config, params, diagnostics)) return NUKE_STATUS_INTERNAL;
    WebPPicture picture;
    // Lossless encodes ARGB; lossy converts to YUV itself (no ARGB copy needed).
    if (!import_picture(&picture, pixels, width, height, stride, params->has_alpha, config.lossless)) {
        nuke_diagnostics_set_message(diagnostics, "WebPPictureImport: out of memory");
        WebPPictureFree(&picture);
        return NUKE_STATUS_INTERNAL;
    }
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    int ok = WebPEncode(&config, &picture);
    WebPEncodingError error = picture.error_code;
    WebPPictureFree(&picture);
    if (!ok) {
        nuke_diagnostics_set_message(diagnostics, encoding_error_text(error));
        WebPMemoryWriterClear(&writer);
        return NUKE_STATUS_INTERNAL;
    }
    if (params->icc_size == 0 && params->exif_size == 0 && params->xmp_size == 0) {
        *output = writer.mem;
        *output_size = writer.size;
        return NUKE_STATUS_OK;
    }
    nuke_status status = add_metadata(writer.mem, writer.size, params, output, output_size, diagnostics);
    WebPMemoryWriterClear(&writer);
    return status;
}

// MARK: - Animation

// An animated WebP written as the frames arrive (the WebP container specification): `RIFF`
// size `WEBP`, `VP8X` (canvas, flags), `ANIM` (background, loop count), then one `ANMF` per
// frame holding the rectangle that changed since the frame before, encoded on its own with
// WebPEncode. Each frame replaces its rectangle's pixels (no blending, no disposal), so the canvas
// after frame i is frame i. Only the file so far, the previous canvas and one frame's encoding
// are held: no frame is kept once it is in the file. A caller that writes the file out as it
// grows (nukewebp_anim_encoder_settled, _take) holds only the last frame's chunk, whose duration
// is not known yet, and patches the header at the end (nukewebp_anim_encoder_header).

/// The largest value of the container's 24-bit fields (durations in milliseconds).
static const uint32_t NUKEWEBP_UINT24_MAX = (1u << 24) - 1;
/// Where the file's fields are: RIFF header 12 bytes, then `VP8X` (8 + 10) and `ANIM` (8 + 6).
static const size_t NUKEWEBP_VP8X_FLAGS = 12 + 8;
static const size_t NUKEWEBP_HEADER_SIZE = 12 + 8 + 10 + 8 + 6;
/// The ANMF payload's own fields before the frame's chunks: x, y, width, height, duration, flags.
static const size_t NUKEWEBP_ANMF_FIELDS = 16;

struct nukewebp_anim_encoder {
    WebPConfig config;
    int32_t width;
    int32_t height;
    /// The canvas as the frames so far left it, `width × height × 4` bytes (RGBA); NULL before
    /// the first frame.
    uint8_t *previous;
    /// The file so far (malloc'd) from byte `base` on, `size` of `capacity` bytes; NULL once
    /// handed over. The `base` bytes before it were taken by the caller (_take).
    uint8_t *file;
    size_t base;
    size_t size;
    size_t capacity;
    /// The header as it will be once the file is finished: its RIFF size and VP8X flags are set
    /// by _finish, here and (while nothing was taken) in `file`.
    uint8_t header[12 + 8 + 10 + 8 + 6];
    /// The last frame written: its timestamp, where its ANMF chunk starts and where its duration
    /// field is, in `file`. Its duration is known when the next changed frame or the end arrives.
    int32_t last_timestamp;
    size_t last_frame_at;
    size_t last_duration_at;
    int32_t frame_count;
    int has_alpha;
    int finished;
    nuke_diagnostics diagnostics;
};

static void put_le16(uint8_t *at, uint32_t value) {
    at[0] = (uint8_t)value;
    at[1] = (uint8_t)(value >> 8);
}

static void put_le24(uint8_t *at, uint32_t value) {
    put_le16(at, value);
    at[2] = (uint8_t)(value >> 16);
}

static void put_le32(uint8_t *at, uint32_t value) {
    put_le24(at, value);
    at[3] = (uint8_t)(value >> 24);
}

static uint32_t get_le32(const uint8_t *at) {
    return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
}

/// Makes room for `more` bytes at the end of the file; 0 when out of memory or past the 4 GiB
/// a RIFF size can say.
static int reserve(nukewebp_anim_encoder *encoder, size_t more) {
    if (more > UINT32_MAX - encoder->base - encoder->size) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "VP8_ENC_ERROR_FILE_TOO_BIG: the file would be over 4 GiB");
        return 0;
    }
    size_t needed = encoder->size + more;
    if (needed <= encoder->capacity) return 1;
    size_t capacity = encoder->capacity + encoder->capacity / 2;
    if (capacity < needed) capacity = needed;
    uint8_t *grown = realloc(encoder->file, capacity);
    if (grown == NULL) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "out of memory growing the animation's file");
        return 0;
    }
    encoder->file = grown;
    encoder->capacity = capacity;
    return 1;
}

nukewebp_anim_encoder *nukewebp_anim_encoder_create(int32_t width, int32_t height, int32_t loop_count,
                                                    const nukewebp_encode_params *params) {
    // Frame 0 is the whole canvas, encoded by WebPEncode: its limit is the canvas's.
    if (width < 1 || width > WEBP_MAX_DIMENSION || height < 1 || height > WEBP_MAX_DIMENSION) return NULL;
    if (loop_count < 0 || loop_count > 0xffff) return NULL;
    nukewebp_anim_encoder *encoder = calloc(1, sizeof *encoder);
    if (encoder == NULL) return NULL;
    if (!make_config(&encoder->config, params, &encoder->diagnostics)) {
        free(encoder);
        return NULL;
    }
    encoder->width = width;
    encoder->height = height;
    encoder->capacity = 64 << 10;
    encoder->file = malloc(encoder->capacity);
    if (encoder->file == NULL) {
        free(encoder);
        return NULL;
    }
    uint8_t *header = encoder->file;
    memcpy(header, "RIFF\0\0\0\0WEBPVP8X", 16);
    put_le32(header + 16, 10);
    // Flags (animation; alpha is set at the end if a frame has it), 3 reserved bytes, the canvas.
    memset(header + 20, 0, 4);
    header[NUKEWEBP_VP8X_FLAGS + 0] = 0x02;
    put_le24(header + 24, (uint32_t)width - 1);
    put_le24(header + 27, (uint32_t)height - 1);
    memcpy(header + 30, "ANIM", 4);
    put_le32(header + 34, 6);
    // Background colour (B, G, R, A) transparent black, then the loop count (0 = forever).
    memset(header + 38, 0, 4);
    put_le16(header + 42, (uint32_t)loop_count);
    encoder->size = NUKEWEBP_HEADER_SIZE;
    memcpy(encoder->header, header, NUKEWEBP_HEADER_SIZE);
    return encoder;
}

void nukewebp_anim_encoder_destroy(nukewebp_anim_encoder *encoder) {
    if (encoder == NULL) return;
    free(encoder->previous);
    free(encoder->file);
    free(encoder);
}

const nuke_diagnostics *nukewebp_anim_encoder_diagnostics(const nukewebp_anim_encoder *encoder) {
    return &encoder->diagnostics;
}

/// `true` when two RGBA pixels show the same: equal bytes, or (lossy, where the colour under a
/// transparent pixel is not kept) both fully transparent.
static int same_pixel(const uint8_t *a, const uint8_t *b, int lossless) {
    if (memcmp(a, b, 4) == 0) return 1;
    return !lossless && a[3] == 0 && b[3] == 0;
}

/// The rectangle of `rgba` that differs from `previous` (`width × height`, RGBA, `previous`
/// packed), with x and y snapped down to even (ANMF offsets are stored halved) and the size
/// grown to cover. Returns 0 when nothing differs.
static int changed_rect(const uint8_t *previous, const uint8_t *rgba, size_t stride, int32_t width, int32_t height,
                        int lossless, int32_t rect[4]) {
    const size_t packed = (size_t)width * 4;
    int32_t top = -1, bottom = -1, left = width, right = -1;
    for (int32_t y = 0; y < height; y++) {
        const uint8_t *a = previous + (size_t)y * packed, *b = rgba + (size_t)y * stride;
        if (memcmp(a, b, packed) == 0) continue;
        // Lossless: bytes that differ are a change. Lossy: unless only transparent colours do.
        int differs = lossless;
        // Only the columns outside the rectangle found so far need looking at.
        int32_t x = 0;
        while (x < left && same_pixel(a + 4 * (size_t)x, b + 4 * (size_t)x, lossless)) x++;
        if (x < left) left = x, differs = 1;
        x = width - 1;
        while (x > right && same_pixel(a + 4 * (size_t)x, b + 4 * (size_t)x, lossless)) x--;
        if (x > right) right = x, differs = 1;
        for (x = left; !differs && x <= right; x++) differs = !same_pixel(a + 4 * (size_t)x, b + 4 * (size_t)x, lossless);
        if (!differs) continue;
        if (top < 0) top = y;
        bottom = y;
    }
    if (top < 0) return 0;
    rect[0] = left & ~1;
    rect[1] = top & ~1;
    rect[2] = right + 1 - rect[0];
    rect[3] = bottom + 1 - rect[1];
    return 1;
}

/// Sets the duration of the last frame written, ending at `timestamp_ms` (clamped to 0…2^24−1).
static void close_last_frame(nukewebp_anim_encoder *encoder, int32_t timestamp_ms) {
    int64_t duration = (int64_t)timestamp_ms - encoder->last_timestamp;
    if (duration < 0) duration = 0;
    if (duration > NUKEWEBP_UINT24_MAX) duration = NUKEWEBP_UINT24_MAX;
    put_le24(encoder->file + encoder->last_duration_at, (uint32_t)duration);
}

/// Appends an ANMF chunk for the rectangle at `rect` holding the `ALPH`/`VP8 `/`VP8L` chunks of
/// `encoded`, a single-image file from WebPEncode.
static nuke_status append_frame(nukewebp_anim_encoder *encoder, const int32_t rect[4], const uint8_t *encoded, size_t length) {
    if (length < 12 || memcmp(encoded, "RIFF", 4) != 0 || memcmp(encoded + 8, "WEBP", 4) != 0) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "WebPEncode's output does not start with a RIFF WEBP header");
        return NUKE_STATUS_INTERNAL;
    }
    // The image's chunks, which WebPEncode writes together after an optional VP8X.
    size_t end = 8 + (size_t)get_le32(encoded + 4);
    if (end > length) end = length;
    size_t first = 0, last = 0;
    for (size_t at = 12; at + 8 <= end;) {
        size_t size = get_le32(encoded + at + 4);
        if (size > end - at - 8) {
            nuke_diagnostics_set_message(&encoder->diagnostics, "WebPEncode's output has a chunk past its end");
            return NUKE_STATUS_INTERNAL;
        }
        size_t next = at + 8 + size + (size & 1);
        if (next > end) next = end;  // A last odd chunk without its padding byte.
        const uint8_t *fourcc = encoded + at;
        if (memcmp(fourcc, "ALPH", 4) == 0 || memcmp(fourcc, "VP8 ", 4) == 0 || memcmp(fourcc, "VP8L", 4) == 0) {
            if (first == 0) first = at;
            else if (at != last) {
                nuke_diagnostics_set_message(&encoder->diagnostics, "WebPEncode's output has other chunks between the image's");
                return NUKE_STATUS_INTERNAL;
            }
            last = next;
        }
        at = next;
    }
    size_t image = last - first;
    if (first == 0 || image == 0) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "WebPEncode's output holds no VP8 or VP8L chunk");
        return NUKE_STATUS_INTERNAL;
    }
    size_t payload = NUKEWEBP_ANMF_FIELDS + image;
    if (!reserve(encoder, 8 + payload + (payload & 1))) return NUKE_STATUS_INTERNAL;
    uint8_t *chunk = encoder->file + encoder->size;
    memcpy(chunk, "ANMF", 4);
    put_le32(chunk + 4, (uint32_t)payload);
    put_le24(chunk + 8, (uint32_t)rect[0] / 2);
    put_le24(chunk + 11, (uint32_t)rect[1] / 2);
    put_le24(chunk + 14, (uint32_t)rect[2] - 1);
    put_le24(chunk + 17, (uint32_t)rect[3] - 1);
    put_le24(chunk + 20, 0);  // The duration, set when the frame ends.
    // Do not blend, do not dispose: the rectangle replaces the canvas's pixels exactly.
    chunk[23] = 0x02;
    memcpy(chunk + 8 + NUKEWEBP_ANMF_FIELDS, encoded + first, image);
    if (payload & 1) chunk[8 + payload] = 0;
    encoder->last_frame_at = encoder->size;
    encoder->last_duration_at = encoder->size + 20;
    encoder->size += 8 + payload + (payload & 1);
    return NUKE_STATUS_OK;
}

nuke_status nukewebp_anim_encoder_add(nukewebp_anim_encoder *encoder, const uint8_t *rgba, size_t stride, int32_t timestamp_ms) {
    if (encoder->finished) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "the animation was already assembled");
        return NUKE_STATUS_INTERNAL;
    }
    const size_t packed = (size_t)encoder->width * 4;
    int32_t rect[4] = {0, 0, encoder->width, encoder->height};
    if (encoder->frame_count == 0) {
        // The whole canvas: the decoder starts from transparent black, not from our canvas.
        if (encoder->previous == NULL) encoder->previous = malloc(packed * (size_t)encoder->height);
        if (encoder->previous == NULL) {
            nuke_diagnostics_set_message(&encoder->diagnostics, "out of memory for the animation's canvas");
            return NUKE_STATUS_INTERNAL;
        }
    } else if (!changed_rect(encoder->previous, rgba, stride, encoder->width, encoder->height, encoder->config.lossless, rect)) {
        // The same canvas again: the last frame lasts until the next change.
        return NUKE_STATUS_OK;
    }
    const uint8_t *origin = rgba + (size_t)rect[1] * stride + (size_t)rect[0] * 4;
    WebPPicture picture;
    // Lossless encodes ARGB; lossy converts to YUV itself (as for a still image).
    if (!import_picture(&picture, origin, rect[2], rect[3], stride, 1, encoder->config.lossless)) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "WebPPictureImportRGBA: out of memory");
        WebPPictureFree(&picture);
        return NUKE_STATUS_INTERNAL;
    }
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    int ok = WebPEncode(&encoder->config, &picture);
    WebPEncodingError error = picture.error_code;
    WebPPictureFree(&picture);
    if (!ok) {
        nuke_diagnostics_set_message(&encoder->diagnostics, encoding_error_text(error));
        WebPMemoryWriterClear(&writer);
        return NUKE_STATUS_INTERNAL;
    }
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(writer.mem, writer.size, &features) == VP8_STATUS_OK && features.has_alpha) encoder->has_alpha = 1;
    if (encoder->frame_count > 0) close_last_frame(encoder, timestamp_ms);
    nuke_status status = append_frame(encoder, rect, writer.mem, writer.size);
    WebPMemoryWriterClear(&writer);
    if (status != NUKE_STATUS_OK) return status;
    encoder->last_timestamp = timestamp_ms;
    encoder->frame_count += 1;
    for (int32_t y = rect[1]; y < rect[1] + rect[3]; y++) {
        memcpy(encoder->previous + (size_t)y * packed + (size_t)rect[0] * 4, rgba + (size_t)y * stride + (size_t)rect[0] * 4,
               (size_t)rect[2] * 4);
    }
    return NUKE_STATUS_OK;
}

nuke_status nukewebp_anim_encoder_finish(nukewebp_anim_encoder *encoder, int32_t end_ms, uint8_t **output, size_t *output_size) {
    *output = NULL;
    *output_size = 0;
    if (encoder->finished) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "the animation was already assembled");
        return NUKE_STATUS_INTERNAL;
    }
    if (encoder->frame_count == 0) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "an animation needs at least one frame");
        return NUKE_STATUS_INTERNAL;
    }
    close_last_frame(encoder, end_ms);
    if (encoder->has_alpha) encoder->header[NUKEWEBP_VP8X_FLAGS] |= 0x10;
    put_le32(encoder->header + 4, (uint32_t)(encoder->base + encoder->size - 8));
    if (encoder->base == 0) memcpy(encoder->file, encoder->header, NUKEWEBP_HEADER_SIZE);
    // The canvas is not needed any more: free it before the caller holds the file.
    free(encoder->previous);
    encoder->previous = NULL;
    uint8_t *file = encoder->file;
    if (encoder->capacity > encoder->size) {
        uint8_t *shrunk = realloc(file, encoder->size);
        if (shrunk != NULL) file = shrunk;
    }
    encoder->file = NULL;
    encoder->finished = 1;
    *output = file;
    *output_size = encoder->size;
    return NUKE_STATUS_OK;
}

size_t nukewebp_anim_encoder_settled(const nukewebp_anim_encoder *encoder, const uint8_t **bytes) {
    *bytes = encoder->file;
    if (encoder->file == NULL || encoder->finished) return 0;
    return encoder->frame_count > 0 ? encoder->last_frame_at : 0;
}

void nukewebp_anim_encoder_take(nukewebp_anim_encoder *encoder, size_t count) {
    if (encoder->file == NULL || encoder->finished || encoder->frame_count == 0 || count > encoder->last_frame_at) return;
    memmove(encoder->file, encoder->file + count, encoder->size - count);
    encoder->base += count;
    encoder->size -= count;
    encoder->last_frame_at -= count;
    encoder->last_duration_at -= count;
}

const uint8_t *nukewebp_anim_encoder_header(const nukewebp_anim_encoder *encoder, size_t *size) {
    *size = NUKEWEBP_HEADER_SIZE;
    return encoder->header;
}

void nukewebp_anim_output_free(void *output) {
    free(output);
}

void nukewebp_buffer_free(void *buffer) {
    WebPFree(buffer);
}

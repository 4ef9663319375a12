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

struct nukewebp_anim_encoder {
    WebPAnimEncoder *encoder;
    WebPConfig config;
    int32_t width;
    int32_t height;
    nuke_diagnostics diagnostics;
};

nukewebp_anim_encoder *nukewebp_anim_encoder_create(int32_t width, int32_t height, int32_t loop_count,
                                                    const nukewebp_encode_params *params) {
    nukewebp_anim_encoder *encoder = calloc(1, sizeof *encoder);
    if (encoder == NULL) return NULL;
    WebPAnimEncoderOptions options;
    if (!make_config(&encoder->config, params, &encoder->diagnostics) || !WebPAnimEncoderOptionsInit(&options)) {
        free(encoder);
        return NULL;
    }
    options.anim_params.loop_count = loop_count;
    encoder->encoder = WebPAnimEncoderNew(width, height, &options);
    if (encoder->encoder == NULL) {
        free(encoder);
        return NULL;
    }
    encoder->width = width;
    encoder->height = height;
    return encoder;
}

void nukewebp_anim_encoder_destroy(nukewebp_anim_encoder *encoder) {
    if (encoder == NULL) return;
    WebPAnimEncoderDelete(encoder->encoder);
    free(encoder);
}

const nuke_diagnostics *nukewebp_anim_encoder_diagnostics(const nukewebp_anim_encoder *encoder) {
    return &encoder->diagnostics;
}

nuke_status nukewebp_anim_encoder_add(nukewebp_anim_encoder *encoder, const uint8_t *rgba, size_t stride, int32_t timestamp_ms) {
    if (encoder->encoder == NULL) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "the animation was already assembled");
        return NUKE_STATUS_INTERNAL;
    }
    WebPPicture picture;
    if (!import_picture(&picture, rgba, encoder->width, encoder->height, stride, 1, 1)) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "WebPPictureImportRGBA: out of memory");
        WebPPictureFree(&picture);
        return NUKE_STATUS_INTERNAL;
    }
    int ok = WebPAnimEncoderAdd(encoder->encoder, &picture, timestamp_ms, &encoder->config);
    WebPPictureFree(&picture);
    if (!ok) {
        nuke_diagnostics_set_message(&encoder->diagnostics, WebPAnimEncoderGetError(encoder->encoder));
        return NUKE_STATUS_INTERNAL;
    }
    return NUKE_STATUS_OK;
}

nuke_status nukewebp_anim_encoder_finish(nukewebp_anim_encoder *encoder, int32_t end_ms, uint8_t **output, size_t *output_size) {
    *output = NULL;
    *output_size = 0;
    if (encoder->encoder == NULL) {
        nuke_diagnostics_set_message(&encoder->diagnostics, "the animation was already assembled");
        return NUKE_STATUS_INTERNAL;
    }
    WebPData data;
    WebPDataInit(&data);
    if (!WebPAnimEncoderAdd(encoder->encoder, NULL, end_ms, NULL) || !WebPAnimEncoderAssemble(encoder->encoder, &data)) {
        nuke_diagnostics_set_message(&encoder->diagnostics, WebPAnimEncoderGetError(encoder->encoder));
        WebPDataClear(&data);
        return NUKE_STATUS_INTERNAL;
    }
    // The encoded frames are in the file now: free them before the caller holds the file too.
    WebPAnimEncoderDelete(encoder->encoder);
    encoder->encoder = NULL;
    *output = (uint8_t *)data.bytes;
    *output_size = data.size;
    return NUKE_STATUS_OK;
}

void nukewebp_buffer_free(void *buffer) {
    WebPFree(buffer);
}

// Our C layer over libpng: every call that can png_error runs under a setjmp here, and the
// progressive reader's callbacks are C functions, so a longjmp never crosses a Swift frame.

#include "CPNGShim.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Errors and warnings

/// What libpng told us; the error pointer of every png struct points at one.
typedef struct nukepng_report {
    /// The fatal error's message.
    char message[NUKEPNG_MESSAGE_CAPACITY];
    /// The last warning.
    char warning[NUKEPNG_MESSAGE_CAPACITY];
    /// The message of a limit we (or libpng's user limits) enforced.
    char limit_message[NUKEPNG_MESSAGE_CAPACITY];
    /// 1 once a limit was hit: the next error is reported as NUKEPNG_STATUS_LIMIT.
    int limit_hit;
    /// 1 for a read struct: warnings about oversized chunks become limit errors.
    int is_reader;
} nukepng_report;

static void nukepng_copy(char *destination, const char *source) {
    if (source == NULL) source = "unknown libpng error";
    snprintf(destination, NUKEPNG_MESSAGE_CAPACITY, "%s", source);
}

/// libpng's error_fn: keep the message, then jump back to the shim function that called libpng.
static void nukepng_error_fn(png_structp png, png_const_charp message) {
    nukepng_report *report = png_get_error_ptr(png);
    if (report != NULL) nukepng_copy(report->message, message);
    png_longjmp(png, 1);
}

/// libpng's warning_fn: keep the warning. Two warnings are really limits: libpng's user
/// limits warn before "Invalid IHDR data", and a chunk longer than png_set_chunk_malloc_max
/// is only a (benign) warning, after which the progressive reader would buffer the whole
/// chunk. Both end the decode here with a limit error.
static void nukepng_warning_fn(png_structp png, png_const_charp message) {
    nukepng_report *report = png_get_error_ptr(png);
    if (report == NULL) return;
    nukepng_copy(report->warning, message);
    if (!report->is_reader || message == NULL) return;
    if (strstr(message, "exceeds user limit") != NULL) {
        report->limit_hit = 1;
        nukepng_copy(report->limit_message, message);
    } else if (strstr(message, "ADLER32 checksum mismatch") != NULL) {
        // The progressive reader reports every zlib data error in IDAT (an invalid block
        // type as much as a bad checksum) as this benign error and then stops inflating,
        // leaving rows undecoded: fatal here, as the sequential reader makes it.
        png_error(png, "IDAT: invalid compressed data (zlib data error or ADLER32 checksum mismatch)");
    } else if (strstr(message, "Truncated compressed data in IDAT") != NULL) {
        // The same zlib data error after the last row (typically a bad ADLER32 checksum).
        png_error(png, "IDAT: invalid compressed data after the last row (zlib data error or ADLER32 checksum mismatch)");
    } else if (strstr(message, "chunk data is too large") != NULL) {
        report->limit_hit = 1;
        snprintf(report->limit_message, NUKEPNG_MESSAGE_CAPACITY,
                 "chunk data is too large (longer than the metadata limit)");
        png_error(png, report->limit_message);
    }
}

/// The status for the error that just longjmped.
static nukepng_status nukepng_failure(nukepng_report *report) {
    if (report->limit_hit) {
        nukepng_copy(report->message, report->limit_message);
        return NUKEPNG_STATUS_LIMIT;
    }
    if (strncmp(report->message, "Out of memory", 13) == 0 || strncmp(report->message, "Out of Memory", 13) == 0 ||
        strncmp(report->message, "Insufficient memory", 19) == 0) {
        return NUKEPNG_STATUS_INTERNAL;
    }
    return NUKEPNG_STATUS_ERROR;
}

// MARK: - Decoder

struct nukepng_decoder {
    /// First, so that png_get_error_ptr finds it.
    nukepng_report report;
    png_structp png;
    png_infop info;
    nukepng_decoder_options options;
    /// Non-zero after an error: every later feed returns it.
    nukepng_status failed;
    int header_ready;
    nukepng_header header;
    /// Set by the info callback when it paused the reader; remaining = unconsumed bytes.
    int paused;
    size_t remaining;
    /// Valid only during nukepng_decoder_feed.
    uint8_t *pixels;
    size_t pixels_size;
    /// During this feed, fill each pass's Adam7 blocks for previews.
    int previews;
    nukepng_progress progress;
    int have_gamma;
    double gamma;
    int have_srgb;
    int srgb_intent;
    /// A copy of the eXIf chunk (the progressive reader does not process eXIf itself).
    uint8_t *exif;
    size_t exif_size;
};

static int nukepng_little_endian(void) {
    const uint16_t probe = 1;
    return *(const uint8_t *)&probe == 1;
}

static void nukepng_limit_error(png_structp png, nukepng_decoder *decoder, const char *format,
                                unsigned long long a, unsigned long long b, unsigned long long limit) {
    decoder->report.limit_hit = 1;
    snprintf(decoder->report.limit_message, NUKEPNG_MESSAGE_CAPACITY, format, a, b, limit);
    png_error(png, decoder->report.limit_message);
}

/// The info callback: runs when the first IDAT starts. Checks the limits, sets up the
/// output transformations and pauses the reader so that the caller can allocate pixels.
static void nukepng_info_callback(png_structp png, png_infop info) {
    nukepng_decoder *decoder = png_get_progressive_ptr(png);
    if (decoder->header_ready) return;  // IDAT again after other chunks: libpng reports it.

    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);

    const nukepng_decoder_options *o = &decoder->options;
    if (width > o->max_dimension || height > o->max_dimension) {
        nukepng_limit_error(png, decoder, "image size %llu×%llu exceeds the maximum dimension %llu",
                            width, height, o->max_dimension);
    }
    unsigned long long pixels = (unsigned long long)width * height;
    if (pixels > o->max_pixel_count) {
        nukepng_limit_error(png, decoder, "image size %llu×%llu exceeds the maximum pixel count %llu",
                            width, height, o->max_pixel_count);
    }

    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (bit_depth == 16) {
        if (o->keep_16_bit) {
            if (nukepng_little_endian()) png_set_swap(png);
        } else {
            png_set_scale_16(png);
        }
    }
    if (interlace != PNG_INTERLACE_NONE) (void)png_set_interlace_handling(png);
    png_read_update_info(png, info);

    nukepng_header *h = &decoder->header;
    h->width = width;
    h->height = height;
    h->channels = png_get_channels(png, info);
    h->bit_depth = png_get_bit_depth(png, info);
    h->row_bytes = png_get_rowbytes(png, info);
    h->interlaced = interlace != PNG_INTERLACE_NONE;
    h->source_color_type = color_type;
    h->source_bit_depth = bit_depth;
    if (h->channels < 1 || h->channels > 4 || (h->bit_depth != 8 && h->bit_depth != 16) ||
        h->row_bytes != (size_t)width * h->channels * (h->bit_depth / 8)) {
        png_error(png, "unexpected output format after transformations");
    }
    if (h->row_bytes != 0 && (unsigned long long)h->row_bytes * height > o->max_decoded_bytes) {
        nukepng_limit_error(png, decoder, "decoding %llu×%llu needs more than the maximum %llu bytes",
                            width, height, o->max_decoded_bytes);
    }
    decoder->header_ready = 1;
    decoder->paused = 1;
    decoder->remaining = png_process_data_pause(png, 0);
}

/// The row callback: writes a row (or, interlaced, a pass's pixels of it) into the pixels.
static void nukepng_row_callback(png_structp png, png_bytep new_row, png_uint_32 row_number, int pass) {
    nukepng_decoder *decoder = png_get_progressive_ptr(png);
    const nukepng_header *h = &decoder->header;
    if (decoder->pixels == NULL) png_error(png, "internal error: a row arrived before the pixel buffer");
    if (row_number >= h->height) png_error(png, "internal error: row number out of range");
    size_t offset = (size_t)row_number * h->row_bytes;
    if (offset + h->row_bytes > decoder->pixels_size) png_error(png, "internal error: pixel buffer too small");
    uint8_t *row = decoder->pixels + offset;
    if (h->interlaced) {
        // libpng hands each pass's row to every image row of its Adam7 block ("blocky"
        // display: the pass's pixels are replicated over their blocks), which makes
        // previews. Without previews only the pass's own rows are combined.
        static const png_uint_32 y_start[7] = { 0, 0, 4, 0, 2, 0, 1 };
        static const png_uint_32 y_step[7] = { 8, 8, 8, 4, 4, 2, 2 };
        int own_row = pass >= 0 && pass < 7 && row_number >= y_start[pass] &&
                      (row_number - y_start[pass]) % y_step[pass] == 0;
        if (decoder->previews || own_row) png_progressive_combine_row(png, row, new_row);
        int done = pass + (row_number + 1 == h->height ? 1 : 0);
        if (done > decoder->progress.passes_done) decoder->progress.passes_done = done;
    } else {
        if (new_row != NULL) memcpy(row, new_row, h->row_bytes);
        decoder->progress.rows_done = row_number + 1;
    }
}

/// The end callback: libpng processed IEND. The progressive reader does not check that
/// the image data held every row (the sequential reader does), so check it here.
static void nukepng_end_callback(png_structp png, png_infop info) {
    (void)info;
    nukepng_decoder *decoder = png_get_progressive_ptr(png);
    if (!decoder->header_ready) png_error(png, "Missing IDAT before IEND");
    int complete = decoder->header.interlaced ? png_get_current_pass_number(png) > 6
                                              : decoder->progress.rows_done == decoder->header.height;
    if (!complete) png_error(png, "Not enough image data");
    decoder->progress.finished = 1;
    decoder->progress.passes_done = 7;
    decoder->progress.rows_done = decoder->header.height;
}

/// Chunks libpng does not process for us (see nukepng_decoder_create). gAMA and sRGB are
/// read here so that a file's own chunks are reported, not the values libpng derives
/// (libpng makes up a gAMA for an sRGB chunk or an sRGB iCCP). Everything else is
/// discarded; an unknown critical chunk is left to libpng, which raises an error.
static int nukepng_user_chunk_callback(png_structp png, png_unknown_chunkp chunk) {
    nukepng_decoder *decoder = png_get_user_chunk_ptr(png);
    if (memcmp(chunk->name, "gAMA", 4) == 0) {
        if (chunk->size == 4 && !decoder->have_gamma) {
            png_uint_32 value = png_get_uint_32(chunk->data);
            if (value > 0 && value <= PNG_UINT_31_MAX) {
                decoder->have_gamma = 1;
                decoder->gamma = value / 100000.0;
            }
        }
        return 1;
    }
    if (memcmp(chunk->name, "eXIf", 4) == 0) {
        if (decoder->exif == NULL && chunk->size >= 8 && chunk->data != NULL &&
            (memcmp(chunk->data, "MM\0*", 4) == 0 || memcmp(chunk->data, "II*\0", 4) == 0)) {
            decoder->exif = malloc(chunk->size);
            if (decoder->exif != NULL) {
                memcpy(decoder->exif, chunk->data, chunk->size);
                decoder->exif_size = chunk->size;
            }
        }
        return 1;
    }
    if (memcmp(chunk->name, "sRGB", 4) == 0) {
        if (chunk->size == 1 && chunk->data[0] <= 3 && !decoder->have_srgb) {
            decoder->have_srgb = 1;
            decoder->srgb_intent = chunk->data[0];
        }
        return 1;
    }
    if ((chunk->name[0] & 0x20) == 0) return 0;  // critical: libpng errors
    return 1;
}

static png_alloc_size_t nukepng_clamp(uint64_t value, png_alloc_size_t maximum) {
    return value > maximum ? maximum : (png_alloc_size_t)value;
}

nukepng_decoder *nukepng_decoder_create(const nukepng_decoder_options *options, char *message) {
    nukepng_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        nukepng_copy(message, "out of memory");
        return NULL;
    }
    decoder->options = *options;
    decoder->report.is_reader = 1;
    decoder->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &decoder->report, nukepng_error_fn, nukepng_warning_fn);
    if (decoder->png != NULL) decoder->info = png_create_info_struct(decoder->png);
    if (decoder->png == NULL || decoder->info == NULL) {
        nukepng_copy(message, "cannot create the libpng read struct");
        nukepng_decoder_destroy(decoder);
        return NULL;
    }
    if (setjmp(png_jmpbuf(decoder->png))) {
        nukepng_copy(message, decoder->report.message);
        nukepng_decoder_destroy(decoder);
        return NULL;
    }
    png_uint_32 dimension = (png_uint_32)nukepng_clamp(options->max_dimension, PNG_UINT_31_MAX);
    if (dimension == 0) dimension = 1;
    png_set_user_limits(decoder->png, dimension, dimension);
    png_alloc_size_t metadata = nukepng_clamp(options->max_metadata_bytes, PNG_SIZE_MAX);
    png_set_chunk_malloc_max(decoder->png, metadata == 0 ? 1 : metadata);
    png_set_chunk_cache_max(decoder->png, 128);

    // Discard every ancillary chunk we do not report (text, sPLT, bKGD...) without
    // decompressing it: zTXt/iTXt bombs cost nothing. iCCP goes through libpng (which
    // inflates it within png_set_chunk_malloc_max); gAMA, sRGB and eXIf reach
    // nukepng_user_chunk_callback.
    png_set_keep_unknown_chunks(decoder->png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
    static const png_byte handled_by_libpng[] = { 'i', 'C', 'C', 'P', 0 };
    png_set_keep_unknown_chunks(decoder->png, PNG_HANDLE_CHUNK_AS_DEFAULT, handled_by_libpng, 1);
    png_set_read_user_chunk_fn(decoder->png, decoder, nukepng_user_chunk_callback);

    png_set_progressive_read_fn(decoder->png, decoder, nukepng_info_callback, nukepng_row_callback,
                                nukepng_end_callback);
    return decoder;
}

void nukepng_decoder_destroy(nukepng_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->png != NULL) png_destroy_read_struct(&decoder->png, decoder->info ? &decoder->info : NULL, NULL);
    free(decoder->exif);
    free(decoder);
}

nukepng_status nukepng_decoder_feed(nukepng_decoder *decoder, const uint8_t *data, size_t size,
                                    uint8_t *pixels, size_t pixels_size, int previews, size_t *consumed) {
    *consumed = 0;
    if (decoder->failed != 0) return decoder->failed;
    if (decoder->progress.finished) {
        *consumed = size;
        return NUKEPNG_STATUS_DONE;
    }
    if (size == 0) return NUKEPNG_STATUS_NEED_MORE;
    decoder->pixels = pixels;
    decoder->pixels_size = pixels ? pixels_size : 0;
    decoder->previews = previews;
    decoder->paused = 0;
    decoder->report.message[0] = 0;
    if (setjmp(png_jmpbuf(decoder->png))) {
        decoder->pixels = NULL;
        decoder->pixels_size = 0;
        decoder->failed = nukepng_failure(&decoder->report);
        return decoder->failed;
    }
    png_process_data(decoder->png, decoder->info, (png_bytep)data, size);
    decoder->pixels = NULL;
    decoder->pixels_size = 0;
    if (decoder->paused) {
        decoder->paused = 0;
        *consumed = size - (decoder->remaining > size ? size : decoder->remaining);
        return NUKEPNG_STATUS_HEADER_READY;
    }
    *consumed = size;
    return decoder->progress.finished ? NUKEPNG_STATUS_DONE : NUKEPNG_STATUS_NEED_MORE;
}

const char *nukepng_decoder_message(const nukepng_decoder *decoder) {
    return decoder->report.message;
}

int nukepng_decoder_header(const nukepng_decoder *decoder, nukepng_header *header) {
    if (!decoder->header_ready) return 0;
    *header = decoder->header;
    return 1;
}

nukepng_progress nukepng_decoder_progress(const nukepng_decoder *decoder) {
    return decoder->progress;
}

int nukepng_decoder_icc(const nukepng_decoder *decoder, const uint8_t **bytes, size_t *size) {
    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 length = 0;
    if (png_get_iCCP(decoder->png, decoder->info, &name, &compression, &profile, &length) == 0 || profile == NULL || length == 0) {
        return 0;
    }
    *bytes = profile;
    *size = length;
    return 1;
}

int nukepng_decoder_exif(const nukepng_decoder *decoder, const uint8_t **bytes, size_t *size) {
    if (decoder->exif == NULL) return 0;
    *bytes = decoder->exif;
    *size = decoder->exif_size;
    return 1;
}

int nukepng_decoder_gamma(const nukepng_decoder *decoder, double *gamma) {
    if (!decoder->have_gamma) return 0;
    *gamma = decoder->gamma;
    return 1;
}

int nukepng_decoder_srgb_intent(const nukepng_decoder *decoder, int *intent) {
    if (!decoder->have_srgb) return 0;
    *intent = decoder->srgb_intent;
    return 1;
}

// MARK: - Encoder

/// The encoder's state, on the heap so that nothing setjmp must preserve lives in locals.
typedef struct nukepng_writer {
    nukepng_report report;
    png_structp png;
    png_infop info;
    png_bytep *rows;
    uint8_t *data;
    size_t size;
    size_t capacity;
} nukepng_writer;

static void nukepng_write_callback(png_structp png, png_bytep bytes, size_t length) {
    nukepng_writer *writer = png_get_io_ptr(png);
    if (length > SIZE_MAX - writer->size) png_error(png, "Out of memory: output too large");
    if (writer->size + length > writer->capacity) {
        size_t capacity = writer->capacity < 4096 ? 4096 : writer->capacity;
        while (capacity < writer->size + length) {
            capacity = capacity > SIZE_MAX / 2 ? writer->size + length : capacity * 2;
        }
        uint8_t *grown = realloc(writer->data, capacity);
        if (grown == NULL) png_error(png, "Out of memory: cannot grow the output buffer");
        writer->data = grown;
        writer->capacity = capacity;
    }
    memcpy(writer->data + writer->size, bytes, length);
    writer->size += length;
}

static void nukepng_flush_callback(png_structp png) { (void)png; }

static void nukepng_writer_free(nukepng_writer *writer, int keep_data) {
    if (writer->png != NULL) png_destroy_write_struct(&writer->png, writer->info ? &writer->info : NULL);
    free(writer->rows);
    if (!keep_data) free(writer->data);
    free(writer);
}

nukepng_status nukepng_encode(const nukepng_encode_params *p, uint8_t **output, size_t *output_size, char *message) {
    *output = NULL;
    *output_size = 0;
    int color_type;
    switch (p->channels) {
    case 1: color_type = PNG_COLOR_TYPE_GRAY; break;
    case 2: color_type = PNG_COLOR_TYPE_GRAY_ALPHA; break;
    case 3: color_type = PNG_COLOR_TYPE_RGB; break;
    case 4: color_type = PNG_COLOR_TYPE_RGB_ALPHA; break;
    default:
        nukepng_copy(message, "unsupported channel count");
        return NUKEPNG_STATUS_ERROR;
    }
    nukepng_writer *writer = calloc(1, sizeof *writer);
    if (writer == NULL) {
        nukepng_copy(message, "out of memory");
        return NUKEPNG_STATUS_INTERNAL;
    }
    writer->rows = malloc((p->height ? p->height : 1) * sizeof(png_bytep));
    writer->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &writer->report, nukepng_error_fn, nukepng_warning_fn);
    if (writer->png != NULL) writer->info = png_create_info_struct(writer->png);
    if (writer->rows == NULL || writer->png == NULL || writer->info == NULL) {
        nukepng_copy(message, "cannot create the libpng write struct");
        nukepng_writer_free(writer, 0);
        return NUKEPNG_STATUS_INTERNAL;
    }
    if (setjmp(png_jmpbuf(writer->png))) {
        nukepng_status status = nukepng_failure(&writer->report);
        nukepng_copy(message, writer->report.message);
        nukepng_writer_free(writer, 0);
        return status;
    }
    png_set_write_fn(writer->png, writer, nukepng_write_callback, nukepng_flush_callback);
    if (p->compression_level >= 0) png_set_compression_level(writer->png, p->compression_level);
    png_set_IHDR(writer->png, writer->info, p->width, p->height, p->bit_depth, color_type,
                 p->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (p->srgb_intent >= 0 && p->srgb_intent <= 3) png_set_sRGB(writer->png, writer->info, p->srgb_intent);
    if (p->gamma > 0) png_set_gAMA(writer->png, writer->info, p->gamma);
    if (p->icc != NULL && p->icc_size > 0) {
        if (p->icc_size > PNG_UINT_31_MAX) png_error(writer->png, "ICC profile too large");
        png_set_iCCP(writer->png, writer->info, "ICC Profile", PNG_COMPRESSION_TYPE_BASE, p->icc, (png_uint_32)p->icc_size);
    }
    if (p->exif != NULL && p->exif_size > 0) {
        if (p->exif_size > PNG_UINT_31_MAX) png_error(writer->png, "eXIf block too large");
        png_set_eXIf_1(writer->png, writer->info, (png_uint_32)p->exif_size, (png_bytep)p->exif);
    }
    png_write_info(writer->png, writer->info);
    if (p->bit_depth == 16 && nukepng_little_endian()) png_set_swap(writer->png);
    for (png_uint_32 y = 0; y < p->height; y++) {
        writer->rows[y] = (png_bytep)(p->pixels + (size_t)y * p->row_bytes);
    }
    png_write_image(writer->png, writer->rows);
    png_write_end(writer->png, writer->info);
    *output = writer->data;
    *output_size = writer->size;
    nukepng_writer_free(writer, 1);
    return NUKEPNG_STATUS_DONE;
}

// MARK: - Library

const char *nukepng_version(void) {
    return png_get_libpng_ver(NULL);
}

int nukepng_is_little_endian(void) {
    return nukepng_little_endian();
}

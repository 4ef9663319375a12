// Our C layer over libpng: every call that can png_error runs under a setjmp here, and the
// progressive reader's callbacks are C functions, so a longjmp never crosses a Swift frame.

#include "CPNGShimTesting.h"

#include <png.h>
#include <zlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Errors, warnings and memory

/// What libpng told us and what the shim knows about it; the error pointer and the memory
/// pointer of every png struct point at one.
typedef struct nukepng_report {
    nuke_diagnostics diagnostics;
    /// The status of the next png_error, set by our own checks before they call png_error;
    /// NUKE_STATUS_OK means "libpng's own error": corrupt data.
    nuke_status pending;
    /// 1 once an allocation failed: the error that follows is NUKE_STATUS_INTERNAL.
    int out_of_memory;
    /// The reader this report belongs to, or NULL for a writer.
    struct nukepng_decoder *decoder;
} nukepng_report;

/// Sets the status and message of the error our own check is about to raise.
static void nukepng_fail(png_structp png, nukepng_report *report, nuke_status status, const char *message) {
    report->pending = status;
    png_error(png, message);
}

static void nukepng_warning_fn(png_structp png, png_const_charp message);

/// libpng's error_fn: keep the message, then jump back to the shim function that called libpng.
static void nukepng_error_fn(png_structp png, png_const_charp message) {
    nukepng_report *report = png_get_error_ptr(png);
    if (report != NULL) nuke_diagnostics_set_message(&report->diagnostics, message);
    png_longjmp(png, 1);
}

/// libpng's malloc_fn: malloc, remembering a failure so that the error libpng raises next is
/// classified as out of memory.
static png_voidp nukepng_malloc_fn(png_structp png, png_alloc_size_t size) {
    png_voidp pointer = malloc(size == 0 ? 1 : size);
    if (pointer == NULL) {
        nukepng_report *report = png_get_mem_ptr(png);
        if (report != NULL) report->out_of_memory = 1;
    }
    return pointer;
}

static void nukepng_free_fn(png_structp png, png_voidp pointer) {
    (void)png;
    free(pointer);
}

/// The status for the error that just longjmped.
static nuke_status nukepng_failure(const nukepng_report *report) {
    if (report->pending != NUKE_STATUS_OK) return report->pending;
    if (report->out_of_memory) return NUKE_STATUS_INTERNAL;
    return NUKE_STATUS_CORRUPT;
}

// MARK: - Decoder

/// Follows the chunk structure of the bytes fed, ahead of libpng: the decoder feeds libpng
/// one chunk at a time and checks each chunk's declared length before libpng sees it.
typedef struct nukepng_walker {
    /// Bytes of the 8-byte signature still to pass.
    unsigned signature_left;
    /// The current chunk's header as far as it arrived (length, type).
    uint8_t header[8];
    unsigned header_have;
    /// Bytes of the current chunk's data and CRC still to pass, once its header is complete.
    uint64_t body_left;
    /// The current chunk's type, and its number (1 for IHDR).
    uint32_t type;
    uint64_t index;
    /// The first 13 bytes of IHDR's data, for the IDAT size bound.
    uint8_t ihdr[13];
    unsigned ihdr_have;
    /// 1 once IEND (with its CRC) went by: later bytes are not PNG data.
    int after_iend;
    /// IDAT chunks' CRCs are checked here (libpng is told not to compute them): the CRC so far
    /// of the current chunk's type and data, and its stored CRC as far as it arrived.
    int checks_crc;
    uint32_t crc;
    uint8_t stored_crc[4];
    unsigned stored_crc_have;
    /// The current chunk (ancillary, after the image data on our own path) failed its CRC.
    int crc_bad;
} nukepng_walker;

#define NUKEPNG_CHUNK(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))
#define NUKEPNG_IDAT NUKEPNG_CHUNK('I', 'D', 'A', 'T')
#define NUKEPNG_IHDR NUKEPNG_CHUNK('I', 'H', 'D', 'R')
#define NUKEPNG_IEND NUKEPNG_CHUNK('I', 'E', 'N', 'D')

/// The shim's own reading of the image data, from the first IDAT byte on, for non-interlaced
/// 8-bit gray, gray + alpha, RGB and RGBA without tRNS (the photographs' case: no libpng
/// transformation applies). libpng read everything before it (IHDR, PLTE, iCCP...) and is
/// paused at the first IDAT's header; it is given nothing more. zlib inflates into `zbuf`, and
/// the rows are unfiltered here with SSE2 per pixel (libpng 1.6 as Debian builds it unfilters
/// byte by byte: Paeth was a third of a photograph's decode). libpng's verdicts on the data are
/// kept: see nukepng_idat_inflate and nukepng_idat_piece.
typedef struct nukepng_idat {
    /// Chosen by the info callback; `started` once the first IDAT byte came here.
    /// `libpng_only` (tests) leaves every image to libpng.
    int active;
    int libpng_only;
    int started;
    /// Raw deflate: the zlib header and the Adler-32 trailer are read here, and the checksum
    /// computed here with SSE2 (zlib's own adler32 was 6% of a photograph's decode).
    z_stream zs;
    int zs_ready;
    uint8_t zlib_header[2];
    unsigned zlib_header_have;
    uint32_t adler;
    /// The deflate data ended; `trailer_have` bytes of the 4-byte checksum arrived.
    int deflate_ended;
    uint8_t trailer[4];
    unsigned trailer_have;
    /// The zlib stream ended (or libpng would have stopped inflating: an error after the rows).
    int stream_ended;
    /// A chunk other than IDAT followed the image data.
    int after_idat;
    /// Filtered row size (the filter byte and the row), bytes per pixel.
    size_t filtered_bytes;
    int bpp;
    /// Inflated bytes not yet unfiltered: zbuf[0 ..< zbuf_have] of zbuf_capacity.
    uint8_t *zbuf;
    size_t zbuf_have;
    size_t zbuf_capacity;
    /// The previous row, unfiltered (zeros before the first).
    uint8_t *prev;
    /// eXIf after the image data, as it arrives (NULL when not collected).
    uint8_t *exif;
    size_t exif_have;
    size_t exif_size;
} nukepng_idat;

struct nukepng_decoder {
    /// First, so that png_get_error_ptr finds it.
    nukepng_report report;
    png_structp png;
    png_infop info;
    nukepng_decoder_options options;
    /// Non-zero after an error: every later feed returns it.
    nuke_status failed;
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
    /// Non-interlaced decode to size: rows go to a ring of this many rows (0: the whole image),
    /// row r at slot r % ring_rows; the caller drains them between feeds.
    uint32_t ring_rows;
    /// Rows the caller has taken out of the ring.
    uint32_t rows_drained;
    nukepng_progress progress;
    nukepng_walker walker;
    /// 1 while libpng's benign errors are errors (png_set_benign_errors(png, 0)): while it
    /// reads IDAT data.
    int benign_errors_fatal;
    /// The walker's chunk number when the row callback last ran: the IDAT chunk in which the
    /// image's rows ended, once they all arrived.
    uint64_t last_row_chunk;
    int have_gamma;
    double gamma;
    int have_srgb;
    int srgb_intent;
    /// A copy of the eXIf chunk (the progressive reader does not process eXIf itself).
    uint8_t *exif;
    size_t exif_size;
    /// Our own image data path (see "MARK: - Image data"), for the images it covers.
    nukepng_idat idat;
};

/// libpng's warning_fn: count the warning. With benign errors fatal, the progressive reader
/// still only warns about a broken zlib stream once every row is out ("truncated" data, a bad
/// ADLER32 checksum, more image data than rows): such a warning in the IDAT chunk where the
/// rows ended is the same corruption the sequential reader reports, so it ends the decode.
/// The test is on libpng's state (the chunk being read, the rows delivered), not its words.
/// Warnings in later IDAT chunks (data after a complete stream) are tolerated.
static void nukepng_warning_fn(png_structp png, png_const_charp message) {
    nukepng_report *report = png_get_error_ptr(png);
    if (report == NULL) return;
    struct nukepng_decoder *decoder = report->decoder;
    if (decoder != NULL && decoder->header_ready && png_get_io_chunk_type(png) == NUKEPNG_IDAT &&
        decoder->walker.type == NUKEPNG_IDAT && decoder->walker.index == decoder->last_row_chunk) {
        int complete = decoder->header.interlaced ? png_get_current_pass_number(png) > 6
                                                  : png_get_current_row_number(png) >= decoder->header.height;
        if (complete) {
            char text[NUKE_MESSAGE_CAPACITY];
            snprintf(text, sizeof text, "IDAT: invalid compressed data after the last row (%s)",
                     message != NULL ? message : "zlib stream error");
            nukepng_fail(png, report, NUKE_STATUS_CORRUPT, text);
        }
    }
    nuke_diagnostics_add_warning(&report->diagnostics, message);
}

static int nukepng_little_endian(void) {
    const uint16_t probe = 1;
    return *(const uint8_t *)&probe == 1;
}

static void nukepng_limit_error(png_structp png, nukepng_decoder *decoder, const char *format,
                                unsigned long long a, unsigned long long b, unsigned long long limit) {
    char text[NUKE_MESSAGE_CAPACITY];
    snprintf(text, sizeof text, format, a, b, limit);
    nukepng_fail(png, &decoder->report, NUKE_STATUS_LIMIT, text);
}

static int nukepng_idat_covers(const nukepng_decoder *decoder, png_infop info, int color_type, int bit_depth, int interlace);
static int nukepng_idat_prepare(nukepng_decoder *decoder);

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
        nukepng_fail(png, &decoder->report, NUKE_STATUS_INTERNAL, "unexpected output format after transformations");
    }
    if (h->row_bytes != 0 && (unsigned long long)h->row_bytes * height > o->max_decoded_bytes) {
        nukepng_limit_error(png, decoder, "decoding %llu×%llu needs more than the maximum %llu bytes",
                            width, height, o->max_decoded_bytes);
    }
    if (nukepng_idat_covers(decoder, info, color_type, bit_depth, interlace) && !nukepng_idat_prepare(decoder)) {
        nukepng_fail(png, &decoder->report, NUKE_STATUS_INTERNAL, "out of memory: image data buffers");
    }
    decoder->header_ready = 1;
    decoder->paused = 1;
    decoder->remaining = png_process_data_pause(png, 0);
}

/// The row callback: writes a row (or, interlaced, a pass's pixels of it) into the pixels.
static void nukepng_row_callback(png_structp png, png_bytep new_row, png_uint_32 row_number, int pass) {
    nukepng_decoder *decoder = png_get_progressive_ptr(png);
    const nukepng_header *h = &decoder->header;
    nukepng_report *report = &decoder->report;
    if (decoder->pixels == NULL) nukepng_fail(png, report, NUKE_STATUS_INTERNAL, "a row arrived before the pixel buffer");
    if (row_number >= h->height) nukepng_fail(png, report, NUKE_STATUS_INTERNAL, "row number out of range");
    size_t slot = row_number;
    if (decoder->ring_rows > 0 && !h->interlaced) {
        if (row_number >= decoder->rows_drained + decoder->ring_rows) {
            nukepng_fail(png, report, NUKE_STATUS_INTERNAL, "row ring overflow");
        }
        slot = row_number % decoder->ring_rows;
    }
    size_t offset = slot * h->row_bytes;
    if (offset + h->row_bytes > decoder->pixels_size) nukepng_fail(png, report, NUKE_STATUS_INTERNAL, "pixel buffer too small");
    decoder->last_row_chunk = decoder->walker.index;
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
    if (!complete) png_error(png, "IDAT: compressed data ends before the last row");
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

nukepng_decoder *nukepng_decoder_create(const nukepng_decoder_options *options) {
    nukepng_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) return NULL;
    decoder->options = *options;
    decoder->report.decoder = decoder;
    decoder->walker.signature_left = 8;
    decoder->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &decoder->report, nukepng_error_fn, nukepng_warning_fn,
                                            &decoder->report, nukepng_malloc_fn, nukepng_free_fn);
    if (decoder->png != NULL) decoder->info = png_create_info_struct(decoder->png);
    if (decoder->png == NULL || decoder->info == NULL) {
        nukepng_decoder_destroy(decoder);
        return NULL;
    }
    if (setjmp(png_jmpbuf(decoder->png))) {
        nukepng_decoder_destroy(decoder);
        return NULL;
    }
    // Our limits are checked by the info callback (and the chunk walker), not by libpng's
    // user limits, which would refuse IHDR with a warning we could only tell by its text.
    png_set_user_limits(decoder->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_alloc_size_t metadata = nukepng_clamp(options->max_metadata_bytes, PNG_SIZE_MAX);
    png_set_chunk_malloc_max(decoder->png, metadata == 0 ? 1 : metadata);
    png_set_chunk_cache_max(decoder->png, 128);
    // Benign errors are warnings outside the image data (a bad ancillary chunk is reported,
    // and a strict decode refuses it) and errors within it (nukepng_decoder_feed switches per
    // chunk): in IDAT the progressive reader would otherwise warn about bad compressed data
    // and silently stop inflating.
    png_set_benign_errors(decoder->png, 1);

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
    if (decoder->idat.zs_ready) inflateEnd(&decoder->idat.zs);
    free(decoder->idat.zbuf);
    free(decoder->idat.prev);
    free(decoder->idat.exif);
    free(decoder);
}

// MARK: - Chunk walker

static uint32_t nukepng_crc32_update(uint32_t crc, const uint8_t *bytes, size_t count);

static uint32_t nukepng_u32(const uint8_t *bytes) {
    return ((uint32_t)bytes[0] << 24) | ((uint32_t)bytes[1] << 16) | ((uint32_t)bytes[2] << 8) | bytes[3];
}

/// The largest IDAT chunk libpng accepts for the image IHDR declares (the bound
/// png_check_chunk_length computes: the filtered rows plus zlib's overhead), or 2^31 - 1.
static uint64_t nukepng_idat_bound(const nukepng_walker *walker) {
    if (walker->ihdr_have < 13) return PNG_UINT_31_MAX;
    uint64_t width = nukepng_u32(walker->ihdr), height = nukepng_u32(walker->ihdr + 4);
    int bit_depth = walker->ihdr[8], color_type = walker->ihdr[9], interlaced = walker->ihdr[12] != 0;
    uint64_t channels;
    switch (color_type) {
    case 2: channels = 3; break;
    case 4: channels = 2; break;
    case 6: channels = 4; break;
    default: channels = 1; break;
    }
    uint64_t row_factor = width * channels * (bit_depth > 8 ? 2 : 1) + 1 + (interlaced ? 6 : 0);
    uint64_t bound = height > UINT32_MAX / row_factor ? PNG_UINT_31_MAX : height * row_factor;
    uint64_t divisor = row_factor > 32566 ? 32566 : row_factor;
    bound += 6 + 5 * (bound / divisor + 1);
    return bound < PNG_UINT_31_MAX ? bound : PNG_UINT_31_MAX;
}

/// 1 when every byte of the type is an ASCII letter (libpng rejects the chunk otherwise).
static int nukepng_valid_type(const uint8_t *type) {
    for (int i = 0; i < 4; i++) {
        uint8_t c = type[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) return 0;
    }
    return 1;
}

/// Checks a complete chunk header: a chunk longer than libpng would accept for our metadata
/// limit (png_set_chunk_malloc_max), or for IDAT longer than the image can need, is refused
/// here, before libpng buffers it. A malformed header is left to libpng, which rejects it.
static nuke_status nukepng_walker_check(nukepng_decoder *decoder) {
    nukepng_walker *walker = &decoder->walker;
    uint32_t length = nukepng_u32(walker->header);
    if (length > PNG_UINT_31_MAX || !nukepng_valid_type(walker->header + 4)) return NUKE_STATUS_OK;
    uint64_t limit = decoder->options.max_metadata_bytes == 0 ? 1 : decoder->options.max_metadata_bytes;
    if (limit > PNG_UINT_31_MAX) limit = PNG_UINT_31_MAX;
    if (walker->type == NUKEPNG_IDAT) {
        uint64_t bound = nukepng_idat_bound(walker);
        if (bound > limit) limit = bound;
    }
    if (length <= limit) return NUKE_STATUS_OK;
    char text[NUKE_MESSAGE_CAPACITY];
    snprintf(text, sizeof text, "%.4s: chunk data is too large (%lu bytes; the limit is %llu)",
             (const char *)walker->header + 4, (unsigned long)length, (unsigned long long)limit);
    nuke_diagnostics_set_message(&decoder->report.diagnostics, text);
    return NUKE_STATUS_LIMIT;
}

/// How many of the next `size` bytes belong to the current chunk (or the signature), after
/// moving the walker over them; a chunk's header comes in its own step. Sets `*status` to a
/// failure when a complete header is refused (the header's bytes are then not counted).
static size_t nukepng_walker_step(nukepng_decoder *decoder, const uint8_t *data, size_t size, nuke_status *status) {
    nukepng_walker *walker = &decoder->walker;
    const uint8_t *data_bytes = data;
    *status = NUKE_STATUS_OK;
    if (walker->after_iend) return size;
    if (walker->signature_left > 0) {
        size_t n = size < walker->signature_left ? size : walker->signature_left;
        walker->signature_left -= (unsigned)n;
        return n;
    }
    if (walker->header_have < 8) {
        size_t n = 8 - walker->header_have;
        if (n > size) n = size;
        memcpy(walker->header + walker->header_have, data, n);
        walker->header_have += (unsigned)n;
        if (walker->header_have == 8) {
            walker->type = nukepng_u32(walker->header + 4);
            walker->index += 1;
            walker->body_left = (uint64_t)nukepng_u32(walker->header) + 4;
            walker->ihdr_have = walker->type == NUKEPNG_IHDR ? 0 : walker->ihdr_have;
            *status = nukepng_walker_check(decoder);
            if (*status != NUKE_STATUS_OK) return 0;
            // IDAT's CRC is checked here: libpng is told not to compute it (see the feed loop).
            // On our own image data path libpng reads nothing after the first IDAT header, so
            // every later chunk's CRC is checked here.
            walker->checks_crc = walker->type == NUKEPNG_IDAT || decoder->idat.started;
            walker->crc_bad = 0;
            walker->crc = walker->checks_crc ? nukepng_crc32_update(0, walker->header + 4, 4) : 0;
            walker->stored_crc_have = 0;
        }
        return n;
    }
    size_t n = walker->body_left < size ? (size_t)walker->body_left : size;
    if (walker->type == NUKEPNG_IHDR && walker->ihdr_have < 13) {
        size_t copy = 13 - walker->ihdr_have;
        if (copy > n) copy = n;
        memcpy(walker->ihdr + walker->ihdr_have, data, copy);
        walker->ihdr_have += (unsigned)copy;
    }
    if (walker->checks_crc) {
        // The body is the chunk's data, then its 4-byte CRC.
        size_t data = walker->body_left > 4 ? (size_t)(walker->body_left - 4 < n ? walker->body_left - 4 : n) : 0;
        walker->crc = nukepng_crc32_update(walker->crc, data_bytes, data);
        for (size_t i = data; i < n && walker->stored_crc_have < 4; i++) walker->stored_crc[walker->stored_crc_have++] = data_bytes[i];
    }
    walker->body_left -= n;
    if (walker->body_left == 0) {
        walker->header_have = 0;  // the next byte starts a header
        if (walker->type == NUKEPNG_IEND) walker->after_iend = 1;
        if (walker->checks_crc && nukepng_u32(walker->stored_crc) != walker->crc) {
            // libpng's own words for it ("IDAT: CRC error"), and its verdict: a critical chunk
            // whose CRC is wrong ends the decode, an ancillary one is discarded with a warning.
            char text[NUKE_MESSAGE_CAPACITY];
            snprintf(text, sizeof text, "%.4s: CRC error", (const char *)walker->header + 4);
            if ((walker->header[4] & 0x20) != 0) {
                walker->crc_bad = 1;
                nuke_diagnostics_add_warning(&decoder->report.diagnostics, text);
                return n;
            }
            nuke_diagnostics_set_message(&decoder->report.diagnostics, text);
            *status = NUKE_STATUS_CORRUPT;
            return 0;
        }
    }
    return n;
}


// MARK: - Image data

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// 1 when the shim's own image data path reads this image (see nukepng_idat). The environment
/// variable NUKE_PNG_IDAT=libpng leaves every image to libpng (for benchmarks and comparisons).
static int nukepng_idat_covers(const nukepng_decoder *decoder, png_infop info, int color_type, int bit_depth, int interlace) {
    if (decoder->idat.libpng_only) return 0;
    const char *choice = getenv("NUKE_PNG_IDAT");
    if (choice != NULL && strcmp(choice, "libpng") == 0) return 0;
    if (interlace != PNG_INTERLACE_NONE || bit_depth != 8) return 0;
    if (color_type != PNG_COLOR_TYPE_GRAY && color_type != PNG_COLOR_TYPE_GRAY_ALPHA &&
        color_type != PNG_COLOR_TYPE_RGB && color_type != PNG_COLOR_TYPE_RGB_ALPHA) return 0;
    if (png_get_valid(decoder->png, info, PNG_INFO_tRNS)) return 0;
    const nukepng_header *h = &decoder->header;
    return h->bit_depth == 8 && h->row_bytes == (size_t)h->width * (size_t)h->channels;
}

/// Buffers and zlib for our path; 0 when memory runs out.
static int nukepng_idat_prepare(nukepng_decoder *decoder) {
    nukepng_idat *t = &decoder->idat;
    const size_t row_bytes = decoder->header.row_bytes;
    t->bpp = decoder->header.channels;
    t->filtered_bytes = row_bytes + 1;
    // Room for a few rows at least, so that inflate runs in long stretches.
    size_t capacity = (size_t)256 * 1024;
    if (t->filtered_bytes > capacity / 2) capacity = t->filtered_bytes * 2;
    t->zbuf = malloc(capacity);
    t->prev = calloc(1, row_bytes == 0 ? 1 : row_bytes);
    if (t->zbuf == NULL || t->prev == NULL) return 0;
    t->zbuf_capacity = capacity;
    t->adler = 1;
    t->active = 1;
    return 1;
}

/// Adler-32 (RFC 1950) continued over `count` bytes: zlib's adler32. With SSE2, 16 bytes per
/// step: s1 gains the bytes' sum (SAD against zero), s2 gains 16 × s1 so far plus the bytes
/// weighted 16, 15, ... 1 (multiply-add of 16-bit lanes), in blocks short enough that no 32-bit
/// lane overflows before the modulo.
static uint32_t nukepng_adler32(uint32_t adler, const uint8_t *bytes, size_t count) {
    const uint32_t base = 65521;
    uint32_t s1 = adler & 0xffff, s2 = adler >> 16;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i weights_high = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
    const __m128i weights_low = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
    while (count >= 16) {
        // 5552 is zlib's NMAX: at most that many bytes between two reductions keep s2 in 32 bits.
        size_t blocks = (count < 5552 ? count : 5552) / 16;
        count -= blocks * 16;
        __m128i sum = zero, earlier = zero, weighted = zero;
        uint64_t s2_more = (uint64_t)s1 * blocks * 16;
        for (size_t k = 0; k < blocks; k++, bytes += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)bytes);
            earlier = _mm_add_epi32(earlier, sum);
            sum = _mm_add_epi32(sum, _mm_sad_epu8(v, zero));
            weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), weights_high));
            weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), weights_low));
        }
        uint32_t lanes[4];
        _mm_storeu_si128((__m128i *)lanes, sum);
        uint64_t block_sum = (uint64_t)lanes[0] + lanes[2];
        _mm_storeu_si128((__m128i *)lanes, earlier);
        uint64_t earlier_sum = (uint64_t)lanes[0] + lanes[2];
        _mm_storeu_si128((__m128i *)lanes, weighted);
        uint64_t weighted_sum = (uint64_t)lanes[0] + lanes[1] + lanes[2] + lanes[3];
        s1 = (uint32_t)((s1 + block_sum) % base);
        s2 = (uint32_t)((s2 + s2_more + 16 * earlier_sum + weighted_sum) % base);
    }
#endif
    while (count > 0) {
        size_t n = count < 5552 ? count : 5552;
        count -= n;
        for (; n > 0; n--) {
            s1 += *bytes++;
            s2 += s1;
        }
        s1 %= base;
        s2 %= base;
    }
    return (s2 << 16) | s1;
}

uint32_t nukepng_testing_adler32(uint32_t adler, const uint8_t *bytes, size_t count) {
    return nukepng_adler32(adler, bytes, count);
}

/// zlib's `checksum` (crc32 or adler32, which take a uInt length) over any count, in pieces.
static uint32_t nukepng_zlib_checksum(uLong (*checksum)(uLong, const Bytef *, uInt), uint32_t start, const uint8_t *bytes, size_t count) {
    uLong value = start;
    while (count > 0) {
        uInt piece = count > 0x40000000u ? 0x40000000u : (uInt)count;
        value = checksum(value, bytes, piece);
        bytes += piece;
        count -= piece;
    }
    return (uint32_t)value;
}

uint32_t nukepng_adler32_reference(uint32_t adler, const uint8_t *bytes, size_t count) {
    return nukepng_zlib_checksum(adler32, adler, bytes, count);
}

/// libpng's Paeth predictor, byte by byte.
static inline uint8_t nukepng_paeth(int a, int b, int c) {
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    return (uint8_t)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

/// Unfilters one row of `count` bytes, `bpp` bytes per pixel, into `dst` (which may not alias
/// `src` or `prev`), byte by byte: any pixel size.
static void nukepng_unfilter_bytes(int filter, uint8_t *dst, const uint8_t *src, const uint8_t *prev, size_t count, size_t bpp) {
    size_t first = bpp < count ? bpp : count;
    switch (filter) {
    case 1:
        memcpy(dst, src, first);
        for (size_t i = first; i < count; i++) dst[i] = (uint8_t)(src[i] + dst[i - bpp]);
        break;
    case 2:
        for (size_t i = 0; i < count; i++) dst[i] = (uint8_t)(src[i] + prev[i]);
        break;
    case 3:
        for (size_t i = 0; i < first; i++) dst[i] = (uint8_t)(src[i] + (prev[i] >> 1));
        for (size_t i = first; i < count; i++) dst[i] = (uint8_t)(src[i] + ((dst[i - bpp] + prev[i]) >> 1));
        break;
    case 4:
        // With no pixel to the left, a and c are 0 and the predictor is b.
        for (size_t i = 0; i < first; i++) dst[i] = (uint8_t)(src[i] + prev[i]);
        for (size_t i = first; i < count; i++) dst[i] = (uint8_t)(src[i] + nukepng_paeth(dst[i - bpp], prev[i], prev[i - bpp]));
        break;
    default:
        memcpy(dst, src, count);
        break;
    }
}

#if defined(__SSE2__)
/// A pixel of 3 or 4 bytes as 16-bit lanes. `left` is how many bytes the row has from `p` on:
/// a 3-byte pixel is read with 4 bytes where the row has them (lanes are independent; the
/// fourth is never stored).
static inline __attribute__((always_inline)) __m128i nukepng_pixel_load(const uint8_t *p, size_t bpp, size_t left) {
    uint32_t value = 0;
    if (left >= 4) memcpy(&value, p, 4);
    else memcpy(&value, p, bpp);
    return _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)value), _mm_setzero_si128());
}

/// Stores the low byte of each of a pixel's 16-bit lanes; a 3-byte pixel with 4 bytes where the
/// row has them (the next pixel's store overwrites the fourth).
static inline __attribute__((always_inline)) void nukepng_pixel_store(uint8_t *p, __m128i pixel, size_t bpp, size_t left) {
    uint32_t value = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(pixel, pixel));
    if (left >= 4) memcpy(p, &value, 4);
    else memcpy(p, &value, bpp);
}

/// One pixel of Paeth: `x` (the filtered bytes) plus the predictor of `a` (left), `b` (above)
/// and `c` (above left), all 16-bit lanes of 0...255. With p = a + b − c: |p − a| = |b − c| and
/// b − c come from the row above alone, so only d = a − c, |p − b| = |d| and |p − c| =
/// |d + (b − c)| wait on the pixel to the left. The predictor is c + d (a), c + (b − c) (b) or c,
/// and x + c is also known early.
static inline __attribute__((always_inline)) __m128i nukepng_paeth_step(__m128i a, __m128i b, __m128i c, __m128i x) {
    const __m128i zero = _mm_setzero_si128();
    __m128i e = _mm_sub_epi16(b, c);
    __m128i pa = _mm_max_epi16(e, _mm_sub_epi16(zero, e));
    __m128i base = _mm_add_epi16(x, c);
    __m128i d = _mm_sub_epi16(a, c);
    __m128i de = _mm_add_epi16(d, e);
    __m128i pb = _mm_max_epi16(d, _mm_sub_epi16(zero, d));
    __m128i pc = _mm_max_epi16(de, _mm_sub_epi16(zero, de));
    __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
    __m128i b_or_c = _mm_andnot_si128(_mm_cmpgt_epi16(pb, pc), e);
    __m128i offset = _mm_or_si128(_mm_and_si128(not_a, b_or_c), _mm_andnot_si128(not_a, d));
    return _mm_and_si128(_mm_add_epi16(base, offset), _mm_set1_epi16(0xff));
}

/// Paeth on two rows at once, the second's row above being the first's output: pixel i of both
/// rows per step, so the two chains of pixels that each wait on their left neighbour run side by
/// side (a row alone is bound by that chain's latency, not by the work).
static inline __attribute__((always_inline)) void nukepng_paeth_pair(uint8_t *dst0, const uint8_t *src0, const uint8_t *prev0,
                                                                     uint8_t *dst1, const uint8_t *src1, size_t count, size_t bpp) {
    const __m128i zero = _mm_setzero_si128();
    __m128i a0 = zero, c0 = zero, a1 = zero, c1 = zero;
    for (size_t i = 0; i + bpp <= count; i += bpp) {
        __m128i b0 = nukepng_pixel_load(prev0 + i, bpp, count - i);
        a0 = nukepng_paeth_step(a0, b0, c0, nukepng_pixel_load(src0 + i, bpp, count - i));
        nukepng_pixel_store(dst0 + i, a0, bpp, count - i);
        c0 = b0;
        a1 = nukepng_paeth_step(a1, a0, c1, nukepng_pixel_load(src1 + i, bpp, count - i));
        nukepng_pixel_store(dst1 + i, a1, bpp, count - i);
        c1 = a0;
    }
}

/// Sub, Average and Paeth for 3- or 4-byte pixels, one pixel per step in SSE2 (each pixel
/// depends on the one to its left); Up, 16 bytes per step. The same arithmetic as
/// nukepng_unfilter_bytes, lane by lane: Paeth picks a where |b − c| is the least of the three
/// distances, else b where |a − c| is not more than |a + b − 2c|, else c — libpng's order for ties.
static inline __attribute__((always_inline)) void nukepng_unfilter_pixels(int filter, uint8_t *dst, const uint8_t *src,
                                                                          const uint8_t *prev, size_t count, size_t bpp) {
    const __m128i low = _mm_set1_epi16(0xff);
    const __m128i zero = _mm_setzero_si128();
    __m128i a = zero, c = zero;
    switch (filter) {
    case 1:
        for (size_t i = 0; i + bpp <= count; i += bpp) {
            a = _mm_and_si128(_mm_add_epi16(nukepng_pixel_load(src + i, bpp, count - i), a), low);
            nukepng_pixel_store(dst + i, a, bpp, count - i);
        }
        break;
    case 2: {
        size_t i = 0;
        for (; i + 16 <= count; i += 16) {
            __m128i sum = _mm_add_epi8(_mm_loadu_si128((const __m128i *)(src + i)), _mm_loadu_si128((const __m128i *)(prev + i)));
            _mm_storeu_si128((__m128i *)(dst + i), sum);
        }
        for (; i < count; i++) dst[i] = (uint8_t)(src[i] + prev[i]);
        break;
    }
    case 3:
        for (size_t i = 0; i + bpp <= count; i += bpp) {
            __m128i b = nukepng_pixel_load(prev + i, bpp, count - i);
            __m128i average = _mm_srli_epi16(_mm_add_epi16(a, b), 1);
            a = _mm_and_si128(_mm_add_epi16(nukepng_pixel_load(src + i, bpp, count - i), average), low);
            nukepng_pixel_store(dst + i, a, bpp, count - i);
        }
        break;
    case 4:
        for (size_t i = 0; i + bpp <= count; i += bpp) {
            __m128i b = nukepng_pixel_load(prev + i, bpp, count - i);
            a = nukepng_paeth_step(a, b, c, nukepng_pixel_load(src + i, bpp, count - i));
            nukepng_pixel_store(dst + i, a, bpp, count - i);
            c = b;
        }
        break;
    default:
        memcpy(dst, src, count);
        break;
    }
}
#endif

/// Unfilters one row of `count` bytes (`filter` 0...4, checked by the caller).
static void nukepng_unfilter(int filter, uint8_t *dst, const uint8_t *src, const uint8_t *prev, size_t count, int bpp) {
#if defined(__SSE2__)
    if (bpp == 4) {
        nukepng_unfilter_pixels(filter, dst, src, prev, count, 4);
        return;
    }
    if (bpp == 3) {
        nukepng_unfilter_pixels(filter, dst, src, prev, count, 3);
        return;
    }
#endif
    nukepng_unfilter_bytes(filter, dst, src, prev, count, (size_t)bpp);
}

void nukepng_testing_use_libpng_only(nukepng_decoder *decoder) {
    decoder->idat.libpng_only = 1;
}

int nukepng_testing_uses_own_idat(const nukepng_decoder *decoder) {
    return decoder->idat.active;
}

void nukepng_testing_paeth_pair(uint8_t *dst0, const uint8_t *src0, const uint8_t *prev0, uint8_t *dst1, const uint8_t *src1,
                                 size_t count, int bpp) {
#if defined(__SSE2__)
    if (bpp == 3) {
        nukepng_paeth_pair(dst0, src0, prev0, dst1, src1, count, 3);
        return;
    }
    if (bpp == 4) {
        nukepng_paeth_pair(dst0, src0, prev0, dst1, src1, count, 4);
        return;
    }
#endif
    nukepng_unfilter_bytes(4, dst0, src0, prev0, count, (size_t)bpp);
    nukepng_unfilter_bytes(4, dst1, src1, dst0, count, (size_t)bpp);
}

void nukepng_testing_unfilter(int filter, uint8_t *dst, const uint8_t *src, const uint8_t *prev, size_t count, int bpp, int simd) {
    if (simd) nukepng_unfilter(filter, dst, src, prev, count, bpp);
    else nukepng_unfilter_bytes(filter, dst, src, prev, count, (size_t)bpp);
}

/// Ends the decode with `status` and a message.
static nuke_status nukepng_idat_fail(nukepng_decoder *decoder, nuke_status status, const char *message) {
    nuke_diagnostics_set_message(&decoder->report.diagnostics, message);
    return status;
}

/// Something libpng only warns about once every row is out (data after the last row, a stream
/// that breaks or does not end cleanly after it): the same verdict as nukepng_warning_fn, an
/// error in the IDAT chunk where the rows ended, a warning in a later one.
static nuke_status nukepng_idat_anomaly(nukepng_decoder *decoder, const char *what) {
    if (decoder->walker.index == decoder->last_row_chunk) {
        char text[NUKE_MESSAGE_CAPACITY];
        snprintf(text, sizeof text, "IDAT: invalid compressed data after the last row (%s)", what);
        return nukepng_idat_fail(decoder, NUKE_STATUS_CORRUPT, text);
    }
    nuke_diagnostics_add_warning(&decoder->report.diagnostics, what);
    return NUKE_STATUS_OK;
}

/// Where row `row_number` goes: the pixels, or the ring's slot, as the row callback places it.
static nuke_status nukepng_idat_target(nukepng_decoder *decoder, uint32_t row_number, uint8_t **row) {
    const nukepng_header *h = &decoder->header;
    if (decoder->pixels == NULL) return nukepng_idat_fail(decoder, NUKE_STATUS_INTERNAL, "a row arrived before the pixel buffer");
    size_t slot = row_number;
    if (decoder->ring_rows > 0) {
        if (row_number >= decoder->rows_drained + decoder->ring_rows) {
            return nukepng_idat_fail(decoder, NUKE_STATUS_INTERNAL, "row ring overflow");
        }
        slot = row_number % decoder->ring_rows;
    }
    size_t offset = slot * h->row_bytes;
    if (offset + h->row_bytes > decoder->pixels_size) return nukepng_idat_fail(decoder, NUKE_STATUS_INTERNAL, "pixel buffer too small");
    *row = decoder->pixels + offset;
    return NUKE_STATUS_OK;
}

/// Unfilters the next `rows` (1, or 2 when both are Paeth rows of 3- or 4-byte pixels) from
/// `filtered` (each row its filter byte, then its bytes) into their places.
static nuke_status nukepng_idat_rows(nukepng_decoder *decoder, const uint8_t *filtered, int rows) {
    const nukepng_header *h = &decoder->header;
    nukepng_idat *t = &decoder->idat;
    const uint32_t first = decoder->progress.rows_done;
    uint8_t *row = NULL, *second = NULL;
    nuke_status status = nukepng_idat_target(decoder, first, &row);
    if (status == NUKE_STATUS_OK && rows == 2) status = nukepng_idat_target(decoder, first + 1, &second);
    if (status != NUKE_STATUS_OK) return status;
    if (filtered[0] > 4) return nukepng_idat_fail(decoder, NUKE_STATUS_CORRUPT, "IDAT: bad adaptive filter value");
#if defined(__SSE2__)
    if (rows == 2) {
        const uint8_t *next = filtered + t->filtered_bytes;
        if (t->bpp == 3) nukepng_paeth_pair(row, filtered + 1, t->prev, second, next + 1, h->row_bytes, 3);
        else nukepng_paeth_pair(row, filtered + 1, t->prev, second, next + 1, h->row_bytes, 4);
        row = second;
    } else
#endif
    nukepng_unfilter(filtered[0], row, filtered + 1, t->prev, h->row_bytes, t->bpp);
    memcpy(t->prev, row, h->row_bytes);
    decoder->last_row_chunk = decoder->walker.index;
    decoder->progress.rows_done = first + (uint32_t)rows;
    return NUKE_STATUS_OK;
}

/// The stream stopped at `reason`: an anomaly once every row is out, else the end of the decode.
static nuke_status nukepng_idat_broken(nukepng_decoder *decoder, const char *reason) {
    decoder->idat.stream_ended = 1;
    if (decoder->progress.rows_done >= decoder->header.height) return nukepng_idat_anomaly(decoder, reason);
    char text[NUKE_MESSAGE_CAPACITY];
    snprintf(text, sizeof text, "IDAT: %s", reason);
    return nukepng_idat_fail(decoder, NUKE_STATUS_CORRUPT, text);
}

/// Checks the zlib header as zlib's inflate does (its messages), and starts raw inflation with
/// the window it declares (so that a distance beyond it is refused as zlib would).
static nuke_status nukepng_idat_start(nukepng_decoder *decoder) {
    nukepng_idat *t = &decoder->idat;
    const uint8_t cmf = t->zlib_header[0], flags = t->zlib_header[1];
    if (((unsigned)cmf * 256 + flags) % 31 != 0) return nukepng_idat_broken(decoder, "incorrect header check");
    if ((cmf & 0x0f) != 8) return nukepng_idat_broken(decoder, "unknown compression method");
    if ((cmf >> 4) + 8 > 15) return nukepng_idat_broken(decoder, "invalid window size");
    if (flags & 0x20) return nukepng_idat_broken(decoder, "a preset dictionary, which PNG does not have");
    if (inflateInit2(&t->zs, -(int)((cmf >> 4) + 8)) != Z_OK) {
        return nukepng_idat_fail(decoder, NUKE_STATUS_INTERNAL, "out of memory: zlib");
    }
    t->zs_ready = 1;
    return NUKE_STATUS_OK;
}

/// Takes the checksum after the deflate data: at its fourth byte the stream ended (zlib's
/// Z_STREAM_END), or its Adler-32 did not match (zlib's "incorrect data check").
static nuke_status nukepng_idat_trailer(nukepng_decoder *decoder, const uint8_t *bytes, size_t count) {
    nukepng_idat *t = &decoder->idat;
    while (count > 0 && t->trailer_have < 4) {
        t->trailer[t->trailer_have++] = *bytes++;
        count--;
    }
    if (t->trailer_have < 4) return NUKE_STATUS_OK;
    if (nukepng_u32(t->trailer) != t->adler) return nukepng_idat_broken(decoder, "incorrect data check");
    t->stream_ended = 1;
    if (count > 0) return nukepng_idat_anomaly(decoder, "Extra compression data");
    return NUKE_STATUS_OK;
}

/// Inflates `count` bytes of IDAT data and hands out the rows they complete. libpng's verdicts
/// (png_process_IDAT_data): a zlib error before the last row ends the decode with zlib's
/// message; after it, and data beyond the rows or after the stream's end, are anomalies.
static nuke_status nukepng_idat_inflate(nukepng_decoder *decoder, const uint8_t *bytes, size_t count) {
    nukepng_idat *t = &decoder->idat;
    const uint32_t height = decoder->header.height;
    if (count == 0) return NUKE_STATUS_OK;
    if (t->stream_ended) return nukepng_idat_anomaly(decoder, "Extra compression data");
    if (t->zlib_header_have < 2) {
        while (count > 0 && t->zlib_header_have < 2) {
            t->zlib_header[t->zlib_header_have++] = *bytes++;
            count--;
        }
        if (t->zlib_header_have < 2) return NUKE_STATUS_OK;
        nuke_status status = nukepng_idat_start(decoder);
        if (status != NUKE_STATUS_OK || t->stream_ended) return status;
    }
    if (t->deflate_ended) return nukepng_idat_trailer(decoder, bytes, count);
    t->zs.next_in = (Bytef *)bytes;
    t->zs.avail_in = (uInt)count;  // a piece is never longer than its chunk (< 2^31)
    while (t->zs.avail_in > 0) {
        size_t room = t->zbuf_capacity - t->zbuf_have;
        if (room > ((size_t)1 << 30)) room = (size_t)1 << 30;
        uint8_t *out = t->zbuf + t->zbuf_have;
        t->zs.next_out = out;
        t->zs.avail_out = (uInt)room;
        int ret = inflate(&t->zs, Z_NO_FLUSH);
        size_t produced = room - t->zs.avail_out;
        t->adler = nukepng_adler32(t->adler, out, produced);
        t->zbuf_have += produced;
        if (ret != Z_OK && ret != Z_STREAM_END) return nukepng_idat_broken(decoder, t->zs.msg != NULL ? t->zs.msg : "decompression error");
        size_t used = 0;
        while (t->zbuf_have - used >= t->filtered_bytes && decoder->progress.rows_done < height) {
            // Two Paeth rows of 3- or 4-byte pixels together where both are here (SSE2 builds).
            const uint8_t *filtered = t->zbuf + used;
            int rows = 1;
#if defined(__SSE2__)
            if ((t->bpp == 3 || t->bpp == 4) && filtered[0] == 4 && t->zbuf_have - used >= 2 * t->filtered_bytes &&
                decoder->progress.rows_done + 1 < height && filtered[t->filtered_bytes] == 4) rows = 2;
#endif
            nuke_status status = nukepng_idat_rows(decoder, filtered, rows);
            if (status != NUKE_STATUS_OK) return status;
            used += (size_t)rows * t->filtered_bytes;
        }
        if (decoder->progress.rows_done >= height && t->zbuf_have > used) {
            t->stream_ended = 1;
            t->zbuf_have = 0;
            return nukepng_idat_anomaly(decoder, "Extra compressed data in IDAT");
        }
        if (used > 0) {
            memmove(t->zbuf, t->zbuf + used, t->zbuf_have - used);
            t->zbuf_have -= used;
        }
        if (ret == Z_STREAM_END) {
            t->deflate_ended = 1;
            if (decoder->progress.rows_done < height) {
                t->stream_ended = 1;
                return nukepng_idat_fail(decoder, NUKE_STATUS_CORRUPT, "IDAT: compressed data ends before the last row");
            }
            return nukepng_idat_trailer(decoder, t->zs.next_in, t->zs.avail_in);
        }
    }
    return NUKE_STATUS_OK;
}

#define NUKEPNG_EXIF NUKEPNG_CHUNK('e', 'X', 'I', 'f')

/// Our path's share of a feed: `piece` bytes the walker just went over (`before` is where it
/// was). From the first IDAT byte on every chunk comes here, with libpng's rules for what may
/// follow the image data: IDAT in one run (a later one is only warned about: "Too many IDATs
/// found"), a complete zlib stream before the next chunk ("Not enough compressed data"), no other critical chunk but
/// IEND, which needs every row. eXIf after the image data is kept, as libpng's user chunk
/// callback keeps it; other ancillary chunks are skipped.
static nuke_status nukepng_idat_piece(nukepng_decoder *decoder, const nukepng_walker *before, const uint8_t *bytes, size_t piece) {
    nukepng_idat *t = &decoder->idat;
    const nukepng_walker *walker = &decoder->walker;
    if (before->after_iend || before->signature_left > 0) return NUKE_STATUS_OK;
    if (before->header_have < 8) {
        if (walker->header_have < 8) return NUKE_STATUS_OK;  // the header is not complete yet
        if (walker->type == NUKEPNG_IDAT) {
            // libpng's benign error, a warning outside the image data; the stream ended before
            // the chunk between, so this chunk's data is data after the stream.
            if (t->after_idat) nuke_diagnostics_add_warning(&decoder->report.diagnostics, "IDAT: Too many IDATs found");
            return NUKE_STATUS_OK;
        }
        if (!t->after_idat) {
            t->after_idat = 1;
            if (!t->stream_ended) return nukepng_idat_fail(decoder, NUKE_STATUS_CORRUPT, "IDAT: Not enough compressed data");
        }
        if (walker->type == NUKEPNG_IEND) {
            if (decoder->progress.rows_done != decoder->header.height) {
                return nukepng_idat_fail(decoder, NUKE_STATUS_CORRUPT, "IDAT: compressed data ends before the last row");
            }
            return NUKE_STATUS_OK;  // finished once its CRC checked out
        }
        if ((walker->header[4] & 0x20) == 0) {
            char text[NUKE_MESSAGE_CAPACITY];
            snprintf(text, sizeof text, "%.4s: critical chunk after the image data", (const char *)walker->header + 4);
            return nukepng_idat_fail(decoder, NUKE_STATUS_CORRUPT, text);
        }
        uint32_t length = nukepng_u32(walker->header);
        if (walker->type == NUKEPNG_EXIF && decoder->exif == NULL && length >= 8) {
            // The walker refused it already if it is longer than the metadata limit.
            free(t->exif);
            t->exif = malloc(length);
            if (t->exif == NULL) return nukepng_idat_fail(decoder, NUKE_STATUS_INTERNAL, "out of memory: eXIf");
            t->exif_size = length;
            t->exif_have = 0;
        }
        return NUKE_STATUS_OK;
    }
    // The current chunk's body: its data, then its CRC.
    size_t data = before->body_left > 4 ? (size_t)(before->body_left - 4 < piece ? before->body_left - 4 : piece) : 0;
    if (walker->type == NUKEPNG_IDAT) return nukepng_idat_inflate(decoder, bytes, data);
    if (walker->type == NUKEPNG_IEND && walker->after_iend) {
        decoder->progress.finished = 1;
        decoder->progress.passes_done = 7;
        return NUKE_STATUS_OK;
    }
    if (walker->type == NUKEPNG_EXIF && t->exif != NULL) {
        size_t copy = t->exif_size - t->exif_have < data ? t->exif_size - t->exif_have : data;
        memcpy(t->exif + t->exif_have, bytes, copy);
        t->exif_have += copy;
        if (walker->header_have == 0) {  // the chunk ended
            const uint8_t *e = t->exif;
            if (!walker->crc_bad && t->exif_have == t->exif_size &&
                (memcmp(e, "MM\0*", 4) == 0 || memcmp(e, "II*\0", 4) == 0)) {
                decoder->exif = t->exif;
                decoder->exif_size = t->exif_size;
            } else {
                free(t->exif);
            }
            t->exif = NULL;
        }
    }
    return NUKE_STATUS_OK;
}

// MARK: - Feeding

nuke_status nukepng_decoder_feed(nukepng_decoder *decoder, const uint8_t *data, size_t size,
                                 uint8_t *pixels, size_t pixels_size, int previews, size_t *consumed) {
    *consumed = 0;
    if (decoder->failed != NUKE_STATUS_OK) return decoder->failed;
    if (decoder->progress.finished) {
        *consumed = size;
        return NUKE_STATUS_OK;
    }
    if (size == 0) return NUKE_STATUS_NEED_MORE;
    decoder->pixels = pixels;
    decoder->pixels_size = pixels ? pixels_size : 0;
    decoder->previews = previews;
    decoder->paused = 0;
    decoder->report.diagnostics.message[0] = 0;
    // `volatile`: read after a longjmp out of png_process_data.
    volatile size_t offset = 0;
    if (setjmp(png_jmpbuf(decoder->png))) {
        decoder->pixels = NULL;
        decoder->pixels_size = 0;
        decoder->failed = nukepng_failure(&decoder->report);
        return decoder->failed;
    }
    // One chunk (or chunk header) at a time, so that the walker checks each header before
    // libpng reads it, and knows which chunk libpng is in.
    while (offset < size && !decoder->progress.finished) {
        const nukepng_walker *walker = &decoder->walker;
        int idat_data = walker->signature_left == 0 && !walker->after_iend && walker->header_have == 8 &&
                        walker->type == NUKEPNG_IDAT;
        if (decoder->idat.active && (decoder->idat.started || idat_data)) {
            // Our own image data path: libpng is given nothing more.
            decoder->idat.started = 1;
            nuke_status refused;
            const nukepng_walker before = decoder->walker;
            size_t piece = nukepng_walker_step(decoder, data + offset, size - offset, &refused);
            nuke_status status = refused != NUKE_STATUS_OK ? refused : nukepng_idat_piece(decoder, &before, data + offset, piece);
            if (status != NUKE_STATUS_OK) {
                decoder->pixels = NULL;
                decoder->pixels_size = 0;
                decoder->failed = status;
                return status;
            }
            offset += piece;
            continue;
        }
        if (idat_data != decoder->benign_errors_fatal) {
            png_set_benign_errors(decoder->png, !idat_data);
            // IDAT data's CRC is the walker's, with a carry-less multiply where the CPU has one
            // (zlib 1.2's table CRC was 5% of a large PNG's decode): libpng skips it while it
            // reads IDAT data. Only then: libpng decides whether to CRC a chunk's type by the
            // chunk before it, so chunk headers are always read with its default.
            png_set_crc_action(decoder->png, idat_data ? PNG_CRC_QUIET_USE : PNG_CRC_DEFAULT, PNG_CRC_NO_CHANGE);
            decoder->benign_errors_fatal = idat_data;
        }
        nuke_status refused;
        const nukepng_walker before = decoder->walker;
        size_t piece = nukepng_walker_step(decoder, data + offset, size - offset, &refused);
        if (refused != NUKE_STATUS_OK) {
            decoder->pixels = NULL;
            decoder->pixels_size = 0;
            decoder->failed = refused;
            return refused;
        }
        png_process_data(decoder->png, decoder->info, (png_bytep)(data + offset), piece);
        if (decoder->paused) {
            // libpng paused in the info callback, after the first IDAT's header, without
            // consuming `remaining` bytes of this piece: the walker goes over what it did consume.
            size_t remaining = decoder->remaining > piece ? piece : decoder->remaining;
            decoder->walker = before;
            if (piece > remaining) (void)nukepng_walker_step(decoder, data + offset, piece - remaining, &refused);
            offset += piece - remaining;
            break;
        }
        offset += piece;
    }
    decoder->pixels = NULL;
    decoder->pixels_size = 0;
    if (decoder->paused) {
        decoder->paused = 0;
        *consumed = offset;
        return NUKE_STATUS_PAUSED;
    }
    *consumed = size;  // after IEND, the rest is ignored
    return decoder->progress.finished ? NUKE_STATUS_OK : NUKE_STATUS_NEED_MORE;
}

const nuke_diagnostics *nukepng_decoder_diagnostics(const nukepng_decoder *decoder) {
    return &decoder->report.diagnostics;
}

int nukepng_decoder_header(const nukepng_decoder *decoder, nukepng_header *header) {
    if (!decoder->header_ready) return 0;
    *header = decoder->header;
    return 1;
}

void nukepng_decoder_set_row_ring(nukepng_decoder *decoder, uint32_t ring_rows) {
    decoder->ring_rows = ring_rows;
}

void nukepng_decoder_set_rows_drained(nukepng_decoder *decoder, uint32_t rows) {
    decoder->rows_drained = rows;
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
struct nukepng_encoder {
    nukepng_report report;
    png_structp png;
    png_infop info;
    /// Output not yet taken: `data[0 ..< size]`. The buffer keeps its capacity between takes,
    /// so it grows only to the most one call produces.
    uint8_t *data;
    size_t size;
    size_t capacity;
    int started;
    int passes;
    uint32_t height;
    /// Rows written, counting every pass.
    uint64_t rows_written;
    /// The status that ended this encoder; every later call returns it.
    nuke_status failed;
};

static void nukepng_write_callback(png_structp png, png_bytep bytes, size_t length) {
    nukepng_encoder *encoder = png_get_io_ptr(png);
    if (length > SIZE_MAX - encoder->size) nukepng_fail(png, &encoder->report, NUKE_STATUS_INTERNAL, "out of memory: output too large");
    if (encoder->size + length > encoder->capacity) {
        size_t capacity = encoder->capacity < 65536 ? 65536 : encoder->capacity;
        while (capacity < encoder->size + length) {
            capacity = capacity > SIZE_MAX / 2 ? encoder->size + length : capacity * 2;
        }
        uint8_t *grown = realloc(encoder->data, capacity);
        if (grown == NULL) nukepng_fail(png, &encoder->report, NUKE_STATUS_INTERNAL, "out of memory: cannot grow the output buffer");
        encoder->data = grown;
        encoder->capacity = capacity;
    }
    memcpy(encoder->data + encoder->size, bytes, length);
    encoder->size += length;
}

static void nukepng_flush_callback(png_structp png) { (void)png; }

nukepng_encoder *nukepng_encoder_create(void) {
    nukepng_encoder *encoder = calloc(1, sizeof *encoder);
    if (encoder == NULL) return NULL;
    encoder->png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, &encoder->report, nukepng_error_fn, nukepng_warning_fn,
                                             &encoder->report, nukepng_malloc_fn, nukepng_free_fn);
    if (encoder->png != NULL) encoder->info = png_create_info_struct(encoder->png);
    if (encoder->png == NULL || encoder->info == NULL) {
        nukepng_encoder_destroy(encoder);
        return NULL;
    }
    return encoder;
}

void nukepng_encoder_destroy(nukepng_encoder *encoder) {
    if (encoder == NULL) return;
    if (encoder->png != NULL) png_destroy_write_struct(&encoder->png, encoder->info ? &encoder->info : NULL);
    free(encoder->data);
    free(encoder);
}

const nuke_diagnostics *nukepng_encoder_diagnostics(const nukepng_encoder *encoder) {
    return &encoder->report.diagnostics;
}

static nuke_status nukepng_encoder_refuse(nukepng_encoder *encoder, nuke_status status, const char *message) {
    nuke_diagnostics_set_message(&encoder->report.diagnostics, message);
    encoder->failed = status;
    return status;
}

/// Sets the jump buffer for the calling function; a png_error returns its status from it (and
/// from every later call). Statements only: `encoder` must be a parameter.
#define NUKEPNG_ENCODER_PROTECT(encoder)                                  \
    if ((encoder)->failed) return (encoder)->failed;                      \
    if (setjmp(png_jmpbuf((encoder)->png))) {                             \
        (encoder)->failed = nukepng_failure(&(encoder)->report);          \
        return (encoder)->failed;                                         \
    }

nuke_status nukepng_encoder_start(nukepng_encoder *encoder, const nukepng_encode_params *p, int *passes) {
    *passes = 0;
    if (encoder->started) return nukepng_encoder_refuse(encoder, NUKE_STATUS_INTERNAL, "the encoder was already started");
    int color_type;
    switch (p->channels) {
    case 1: color_type = PNG_COLOR_TYPE_GRAY; break;
    case 2: color_type = PNG_COLOR_TYPE_GRAY_ALPHA; break;
    case 3: color_type = PNG_COLOR_TYPE_RGB; break;
    case 4: color_type = PNG_COLOR_TYPE_RGB_ALPHA; break;
    default:
        return nukepng_encoder_refuse(encoder, NUKE_STATUS_UNSUPPORTED, "unsupported channel count");
    }
    NUKEPNG_ENCODER_PROTECT(encoder)
    encoder->started = 1;
    encoder->height = p->height;
    png_set_write_fn(encoder->png, encoder, nukepng_write_callback, nukepng_flush_callback);
    if (p->compression_level >= 0) png_set_compression_level(encoder->png, p->compression_level);
    png_set_IHDR(encoder->png, encoder->info, p->width, p->height, p->bit_depth, color_type,
                 p->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (p->srgb_intent >= 0 && p->srgb_intent <= 3) png_set_sRGB(encoder->png, encoder->info, p->srgb_intent);
    if (p->gamma > 0) png_set_gAMA(encoder->png, encoder->info, p->gamma);
    if (p->icc != NULL && p->icc_size > 0) {
        if (p->icc_size > PNG_UINT_31_MAX) nukepng_fail(encoder->png, &encoder->report, NUKE_STATUS_LIMIT, "ICC profile too large");
        // libpng objects to some profiles with an "app error", fatal by default when writing,
        // among them HP's "known incorrect sRGB profile" that many photographs carry. As
        // warnings: that one is written as the source had it, a malformed one is left out, and
        // the image is written either way.
        png_set_benign_errors(encoder->png, 1);
        png_set_iCCP(encoder->png, encoder->info, "ICC Profile", PNG_COMPRESSION_TYPE_BASE, p->icc, (png_uint_32)p->icc_size);
    }
    if (p->exif != NULL && p->exif_size > 0) {
        if (p->exif_size > PNG_UINT_31_MAX) nukepng_fail(encoder->png, &encoder->report, NUKE_STATUS_LIMIT, "eXIf block too large");
        png_set_eXIf_1(encoder->png, encoder->info, (png_uint_32)p->exif_size, (png_bytep)p->exif);
    }
    png_write_info(encoder->png, encoder->info);
    if (p->bit_depth == 16 && nukepng_little_endian()) png_set_swap(encoder->png);
    encoder->passes = png_set_interlace_handling(encoder->png);
    *passes = encoder->passes;
    return NUKE_STATUS_OK;
}

nuke_status nukepng_encoder_write_rows(nukepng_encoder *encoder, const uint8_t *rows, size_t stride, uint32_t count) {
    if (!encoder->started) return nukepng_encoder_refuse(encoder, NUKE_STATUS_INTERNAL, "rows written before nukepng_encoder_start");
    if (encoder->failed) return encoder->failed;
    if (count > (uint64_t)encoder->height * (uint64_t)encoder->passes - encoder->rows_written) {
        return nukepng_encoder_refuse(encoder, NUKE_STATUS_INTERNAL, "more rows written than the image has");
    }
    NUKEPNG_ENCODER_PROTECT(encoder)
    for (uint32_t i = 0; i < count; i++) {
        png_write_row(encoder->png, (png_const_bytep)(rows + (size_t)i * stride));
        encoder->rows_written += 1;
    }
    return NUKE_STATUS_OK;
}

nuke_status nukepng_encoder_finish(nukepng_encoder *encoder) {
    if (!encoder->started) return nukepng_encoder_refuse(encoder, NUKE_STATUS_INTERNAL, "finish before nukepng_encoder_start");
    if (encoder->failed) return encoder->failed;
    if (encoder->rows_written < (uint64_t)encoder->height * (uint64_t)encoder->passes) {
        return nukepng_encoder_refuse(encoder, NUKE_STATUS_INTERNAL, "finish before every row was written");
    }
    NUKEPNG_ENCODER_PROTECT(encoder)
    png_write_end(encoder->png, encoder->info);
    return NUKE_STATUS_OK;
}

void nukepng_encoder_take_output(nukepng_encoder *encoder, const uint8_t **bytes, size_t *count) {
    *bytes = encoder->data;
    *count = encoder->size;
    encoder->size = 0;
}

void nukepng_buffer_free(void *buffer) {
    free(buffer);
}

// MARK: - Library

const char *nukepng_version(void) {
    return png_get_libpng_ver(NULL);
}

int nukepng_is_little_endian(void) {
    return nukepng_little_endian();
}

// MARK: - CRC

/// CRC-32 (ISO 3309, as PNG and zlib use it) without the final inversion: the register after
/// `count` bytes, one table lookup per byte.
static uint32_t nukepng_crc32_bytes(uint32_t reg, const uint8_t *bytes, size_t count) {
    static uint32_t table[256];
    static int ready = 0;
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        // Racing threads write the same values; the flag only saves rebuilding.
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    for (size_t i = 0; i < count; i++) reg = table[(reg ^ bytes[i]) & 0xff] ^ (reg >> 8);
    return reg;
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
/// The same register, 64 bytes per step with carry-less multiplication (PCLMULQDQ): four 128-bit
/// lanes are folded forward by 512 bits per step (x^(512±32) mod P, bit-reflected), then into one
/// lane by 128 bits at a time (x^(128±32) mod P); the CRC of the message equals the CRC of that
/// last lane's 16 bytes followed by the bytes left over, which the table finishes. Checked against
/// zlib's crc32 for every length up to 4 KiB and random longer ones (NukePNGTests).
__attribute__((target("pclmul,sse2"))) static uint32_t nukepng_crc32_clmul(uint32_t reg, const uint8_t *bytes, size_t count) {
    if (count < 64) return nukepng_crc32_bytes(reg, bytes, count);
    const __m128i by512 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
    const __m128i by128 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
    __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)bytes), _mm_cvtsi32_si128((int)reg));
    __m128i b = _mm_loadu_si128((const __m128i *)(bytes + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(bytes + 32));
    __m128i d = _mm_loadu_si128((const __m128i *)(bytes + 48));
    bytes += 64;
    count -= 64;
#define NUKEPNG_FOLD(lane, k, next) \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), _mm_clmulepi64_si128(lane, k, 0x11)), next)
    for (; count >= 64; bytes += 64, count -= 64) {
        a = NUKEPNG_FOLD(a, by512, _mm_loadu_si128((const __m128i *)bytes));
        b = NUKEPNG_FOLD(b, by512, _mm_loadu_si128((const __m128i *)(bytes + 16)));
        c = NUKEPNG_FOLD(c, by512, _mm_loadu_si128((const __m128i *)(bytes + 32)));
        d = NUKEPNG_FOLD(d, by512, _mm_loadu_si128((const __m128i *)(bytes + 48)));
    }
    a = NUKEPNG_FOLD(a, by128, b);
    a = NUKEPNG_FOLD(a, by128, c);
    a = NUKEPNG_FOLD(a, by128, d);
    for (; count >= 16; bytes += 16, count -= 16) a = NUKEPNG_FOLD(a, by128, _mm_loadu_si128((const __m128i *)bytes));
#undef NUKEPNG_FOLD
    uint8_t lane[16];
    _mm_storeu_si128((__m128i *)lane, a);
    return nukepng_crc32_bytes(nukepng_crc32_bytes(0, lane, 16), bytes, count);
}
#endif

/// zlib's `crc32(crc, bytes, count)`, for any count.
static uint32_t nukepng_crc32_update(uint32_t crc, const uint8_t *bytes, size_t count) {
    if (count == 0) return crc;
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    if (__builtin_cpu_supports("pclmul")) return ~nukepng_crc32_clmul(~crc, bytes, count);
#endif
    return ~nukepng_crc32_bytes(~crc, bytes, count);
}

uint32_t nukepng_crc32(uint32_t crc, const uint8_t *bytes, size_t count) {
    return nukepng_crc32_update(crc, bytes, count);
}

uint32_t nukepng_crc32_reference(uint32_t crc, const uint8_t *bytes, size_t count) {
    return nukepng_zlib_checksum(crc32, crc, bytes, count);
}

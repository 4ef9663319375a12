// The C layer of NukeJPEG: every libjpeg call that can fail runs inside a function here that
// sets a jump buffer first, so libjpeg's `error_exit` longjmps back into this file, never
// across a Swift frame. See CJPEGShim.h for the contract of each function.

#include "CJPEGShim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <jpeglib.h>
#include <jerror.h>

#define NUKEJPEG_STRINGIFY2(x) #x
#define NUKEJPEG_STRINGIFY(x) NUKEJPEG_STRINGIFY2(x)

const char *nukejpeg_library_version(void) {
    return NUKEJPEG_STRINGIFY(LIBJPEG_TURBO_VERSION);
}

void nukejpeg_buffer_free(void *buffer) {
    free(buffer);
}

// MARK: - Errors

struct nukejpeg_error_mgr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    nuke_status status;
    /// Set while decoding: running out of data is fatal (incomplete), not a warning.
    int eof_is_fatal;
    nuke_diagnostics diagnostics;
};

/// libjpeg's message for its current `msg_code`, into the diagnostics' message.
static void nukejpeg_keep_message(j_common_ptr cinfo, struct nukejpeg_error_mgr *err) {
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    if (err->pub.msg_code == JERR_BAD_PRECISION) {
        char noted[NUKE_MESSAGE_CAPACITY];
        snprintf(noted, sizeof noted, "%s (this libjpeg-turbo build decodes 8-bit JPEGs only)", text);
        nuke_diagnostics_set_message(&err->diagnostics, noted);
    } else {
        nuke_diagnostics_set_message(&err->diagnostics, text);
    }
}

/// Maps a libjpeg message code to our status.
static nuke_status nukejpeg_classify(int code) {
    switch (code) {
    case JERR_BAD_PRECISION:
    case JERR_SOF_UNSUPPORTED:
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_BAD_J_COLORSPACE:
        return NUKE_STATUS_UNSUPPORTED;
    case JERR_NO_BACKING_STORE:
    case JERR_WIDTH_OVERFLOW:
    case JERR_IMAGE_TOO_BIG:
        return NUKE_STATUS_LIMIT;
    case JERR_OUT_OF_MEMORY:
    case JERR_BAD_STATE:
    case JERR_VIRTUAL_BUG:
        return NUKE_STATUS_INTERNAL;
    case JERR_INPUT_EOF:
    case JERR_INPUT_EMPTY:
    case JWRN_JPEG_EOF:
        return NUKE_STATUS_INCOMPLETE;
    default:
        return NUKE_STATUS_CORRUPT;
    }
}

static void nukejpeg_error_exit(j_common_ptr cinfo) {
    struct nukejpeg_error_mgr *err = (struct nukejpeg_error_mgr *)cinfo->err;
    nukejpeg_keep_message(cinfo, err);
    err->status = nukejpeg_classify(err->pub.msg_code);
    longjmp(err->jump, 1);
}

static void nukejpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    struct nukejpeg_error_mgr *err = (struct nukejpeg_error_mgr *)cinfo->err;
    if (msg_level >= 0) return;  // trace messages
    if (err->pub.msg_code == JWRN_JPEG_EOF && err->eof_is_fatal) {
        // libjpeg would pad the rest of the image with gray and "succeed": the data was cut.
        nukejpeg_keep_message(cinfo, err);
        err->status = NUKE_STATUS_INCOMPLETE;
        longjmp(err->jump, 1);
    }
    // Level -1: corrupt data libjpeg tolerated.
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    nuke_diagnostics_add_warning(&err->diagnostics, text);
    err->pub.num_warnings += 1;
}

static void nukejpeg_output_message(j_common_ptr cinfo) {
    (void)cinfo;  // never print to stderr
}

static void nukejpeg_init_error(struct nukejpeg_error_mgr *err) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = nukejpeg_error_exit;
    err->pub.emit_message = nukejpeg_emit_message;
    err->pub.output_message = nukejpeg_output_message;
    err->status = NUKE_STATUS_OK;
    memset(&err->diagnostics, 0, sizeof err->diagnostics);
}

// MARK: - Decoder

struct nukejpeg_decoder {
    struct jpeg_decompress_struct cinfo;  // first: a j_decompress_ptr is a nukejpeg_decoder *
    struct nukejpeg_error_mgr err;
    struct jpeg_source_mgr src;
    struct jpeg_progress_mgr progress;
    uint64_t max_scans;
    /// The caller's cancellation, asked by the progress monitor (set for the duration of a call).
    const nuke_cancellation *cancellation;
    /// The status that ended this decoder; every later call returns it.
    nuke_status failed;
    int created;
    /// Output parameters were set (jpeg_start_decompress may be resumed after a suspension).
    int configured;
    /// Block smoothing of incomplete coefficients is off (scans were dropped on purpose).
    int no_block_smoothing;
    // Incremental input: the unconsumed tail plus appended bytes.
    uint8_t *buffer;
    size_t capacity;
    /// Valid bytes in `buffer` (consumed, exposed to libjpeg, and not yet exposed).
    size_t data_length;
    /// Arithmetic-coded data: expose bytes only up to the last SOS or EOI marker, so that
    /// libjpeg's arithmetic decoder (which cannot suspend) always has a whole scan.
    int gated;
    size_t exposed_end;
    size_t scanned;
    /// Offset of the length field of an SOS segment not yet wholly received, when `has_pending_sos`.
    size_t pending_sos_length;
    int has_pending_sos;
    /// libjpeg is between scans (reading markers, which can suspend), not in entropy data.
    int between_scans;
    int end_of_input;
    uint64_t skip_pending;
    // CMYK output is converted to RGB a row at a time.
    int cmyk;
    int cmyk_inverted;
    uint8_t *row;
    /// A colour manager's CMYK → RGB row conversion, or NULL for the naive one.
    void (*cmyk_convert)(void *, const uint8_t *, uint8_t *, uint32_t);
    void *cmyk_convert_context;
};

/// Records our own failure (not libjpeg's) and jumps back to the protected shim function.
static void nukejpeg_fail(nukejpeg_decoder *d, nuke_status status, const char *format, ...) {
    char text[NUKE_MESSAGE_CAPACITY];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    nuke_diagnostics_set_message(&d->err.diagnostics, text);
    d->err.status = status;
    longjmp(d->err.jump, 1);
}

#define NUKEJPEG_PROTECT(d)                   \
    if ((d)->failed) return (d)->failed;      \
    if (setjmp((d)->err.jump)) {              \
        (d)->failed = (d)->err.status;        \
        if (!(d)->failed) (d)->failed = NUKE_STATUS_INTERNAL; \
        return (d)->failed;                   \
    }

static void nukejpeg_src_init(j_decompress_ptr cinfo) {
    (void)cinfo;
}

static boolean nukejpeg_src_fill(j_decompress_ptr cinfo) {
    static const JOCTET eoi[2] = { 0xFF, JPEG_EOI };
    nukejpeg_decoder *d = (nukejpeg_decoder *)cinfo;
    if (!d->end_of_input) return FALSE;  // suspend: more bytes may come
    WARNMS(cinfo, JWRN_JPEG_EOF);        // fatal while decoding (see nukejpeg_emit_message)
    cinfo->src->next_input_byte = eoi;
    cinfo->src->bytes_in_buffer = 2;
    return TRUE;
}

/// The offset of libjpeg's read position in `buffer` (incremental mode).
static size_t nukejpeg_position(const nukejpeg_decoder *d) {
    const uint8_t *next = d->src.next_input_byte;
    if (!d->buffer || !next || next < d->buffer || next > d->buffer + d->data_length) return d->data_length;
    return (size_t)(next - d->buffer);
}

/// Sets how many bytes libjpeg sees: all of them, or when gated, up to and including the last
/// SOS/EOI marker found (entropy-coded data never holds FF DA or FF D9, FF being stuffed).
static void nukejpeg_expose(nukejpeg_decoder *d) {
    size_t position = nukejpeg_position(d);
    if (!d->gated || d->end_of_input) {
        d->exposed_end = d->data_length;
    } else {
        // Expose through the SOS segment (not just its marker) so that libjpeg can read the
        // next scan's header, and so learn that the previous scan is complete.
        if (d->has_pending_sos && d->pending_sos_length + 2 <= d->data_length) {
            size_t at = d->pending_sos_length;
            size_t end = at + (((size_t)d->buffer[at] << 8) | d->buffer[at + 1]);
            if (end <= d->data_length && end > d->exposed_end) d->exposed_end = end;
            if (end <= d->data_length) d->has_pending_sos = 0;
        }
        size_t i = d->scanned > position + 1 ? d->scanned - 1 : position;
        for (; i + 1 < d->data_length; i++) {
            if (d->buffer[i] != 0xFF) continue;
            if (d->buffer[i + 1] == 0xD9) {
                if (i + 2 > d->exposed_end) d->exposed_end = i + 2;
            } else if (d->buffer[i + 1] == 0xDA) {
                size_t end = i + 2;
                if (i + 4 <= d->data_length) {
                    size_t segment = i + 2 + (((size_t)d->buffer[i + 2] << 8) | d->buffer[i + 3]);
                    if (segment <= d->data_length) end = segment;
                    else { d->pending_sos_length = i + 2; d->has_pending_sos = 1; }
                } else {
                    d->pending_sos_length = i + 2;
                    d->has_pending_sos = 1;
                }
                if (end > d->exposed_end) d->exposed_end = end;
            }
        }
        d->scanned = d->data_length;
    }
    if (d->exposed_end < position) d->exposed_end = position;
    if (d->buffer) d->src.next_input_byte = d->buffer + position;
    d->src.bytes_in_buffer = d->exposed_end - position;
}

/// Gated and nothing exposed: calling into libjpeg now could reach the arithmetic decoder,
/// which fails instead of suspending when it runs out of bytes.
static int nukejpeg_starved(const nukejpeg_decoder *d) {
    return d->gated && !d->end_of_input && !d->between_scans && d->src.bytes_in_buffer == 0;
}

static void nukejpeg_src_skip(j_decompress_ptr cinfo, long num_bytes) {
    nukejpeg_decoder *d = (nukejpeg_decoder *)cinfo;
    struct jpeg_source_mgr *src = cinfo->src;
    if (num_bytes <= 0) return;
    if ((size_t)num_bytes <= src->bytes_in_buffer) {
        src->next_input_byte += num_bytes;
        src->bytes_in_buffer -= (size_t)num_bytes;
        return;
    }
    if (d->gated && d->buffer) {
        // Marker data may lie beyond the exposed bytes.
        size_t position = nukejpeg_position(d);
        size_t available = d->data_length - position;
        if ((size_t)num_bytes <= available) {
            src->next_input_byte = d->buffer + position + (size_t)num_bytes;
        } else {
            d->skip_pending += (uint64_t)num_bytes - available;
            src->next_input_byte = d->buffer + d->data_length;
        }
        nukejpeg_expose(d);
        return;
    }
    // Beyond what we have: drop it all and skip the rest of the bytes when they arrive.
    d->skip_pending += (uint64_t)num_bytes - src->bytes_in_buffer;
    if (src->next_input_byte) src->next_input_byte += src->bytes_in_buffer;
    src->bytes_in_buffer = 0;
}

static void nukejpeg_src_term(j_decompress_ptr cinfo) {
    (void)cinfo;
}

/// Called by libjpeg once per row group while it consumes input or outputs rows (also inside
/// jpeg_start_decompress, which reads every scan of a multi-scan file into its coefficient
/// buffer): the scan cap, and the caller's cancellation.
static void nukejpeg_progress_monitor(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    nukejpeg_decoder *d = (nukejpeg_decoder *)cinfo;
    if (nuke_is_cancelled(d->cancellation)) nukejpeg_fail(d, NUKE_STATUS_CANCELLED, "cancelled");
    if ((uint64_t)d->cinfo.input_scan_number > d->max_scans) {
        nukejpeg_fail(d, NUKE_STATUS_LIMIT, "Scan number %d exceeds maximum scans (%llu)",
                      d->cinfo.input_scan_number, (unsigned long long)d->max_scans);
    }
}

nukejpeg_decoder *nukejpeg_decoder_create(uint64_t max_memory, uint64_t max_scans) {
    nukejpeg_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    nukejpeg_init_error(&d->err);
    d->err.eof_is_fatal = 1;
    d->cinfo.err = &d->err.pub;
    d->max_scans = max_scans;
    if (setjmp(d->err.jump)) {
        if (d->created) jpeg_destroy_decompress(&d->cinfo);
        free(d);
        return NULL;
    }
    jpeg_create_decompress(&d->cinfo);
    d->created = 1;
    d->cinfo.mem->max_memory_to_use = max_memory > (uint64_t)LONG_MAX ? LONG_MAX : (long)max_memory;
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 2, 0xFFFF);
    d->src.init_source = nukejpeg_src_init;
    d->src.fill_input_buffer = nukejpeg_src_fill;
    d->src.skip_input_data = nukejpeg_src_skip;
    d->src.resync_to_restart = jpeg_resync_to_restart;
    d->src.term_source = nukejpeg_src_term;
    d->src.next_input_byte = NULL;
    d->src.bytes_in_buffer = 0;
    d->cinfo.src = &d->src;
    d->progress.progress_monitor = nukejpeg_progress_monitor;
    d->cinfo.progress = &d->progress;
    return d;
}

void nukejpeg_decoder_set_cancellation(nukejpeg_decoder *d, const nuke_cancellation *cancellation) {
    d->cancellation = cancellation;
}

void nukejpeg_decoder_set_cmyk_converter(nukejpeg_decoder *d, void (*convert)(void *, const uint8_t *, uint8_t *, uint32_t), void *context) {
    d->cmyk_convert = convert;
    d->cmyk_convert_context = context;
}

void nukejpeg_decoder_destroy(nukejpeg_decoder *d) {
    if (!d) return;
    if (d->created) jpeg_destroy_decompress(&d->cinfo);
    free(d->buffer);
    free(d->row);
    free(d);
}

const nuke_diagnostics *nukejpeg_decoder_diagnostics(const nukejpeg_decoder *d) {
    return &d->err.diagnostics;
}

void nukejpeg_decoder_set_memory_source(nukejpeg_decoder *d, const uint8_t *bytes, size_t count) {
    d->src.next_input_byte = bytes;
    d->src.bytes_in_buffer = bytes ? count : 0;
    d->end_of_input = 1;
}

void nukejpeg_decoder_clear_memory_source(nukejpeg_decoder *d) {
    d->src.next_input_byte = NULL;
    d->src.bytes_in_buffer = 0;
}

nuke_status nukejpeg_decoder_append(nukejpeg_decoder *d, const uint8_t *bytes, size_t count) {
    if (d->failed) return d->failed;
    if (!bytes || count == 0) return NUKE_STATUS_OK;
    if (d->skip_pending > 0) {
        size_t skipped = d->skip_pending < count ? (size_t)d->skip_pending : count;
        bytes += skipped;
        count -= skipped;
        d->skip_pending -= skipped;
        if (count == 0) return NUKE_STATUS_OK;
    }
    // Drop the consumed bytes: keep the unconsumed tail (exposed or not) at the front.
    size_t position = nukejpeg_position(d);
    size_t tail = d->data_length - position;
    size_t needed = tail + count;
    if (needed > d->capacity) {
        size_t capacity = d->capacity * 2;
        if (capacity < needed) capacity = needed;
        if (capacity < 65536) capacity = 65536;
        uint8_t *buffer = malloc(capacity);
        if (!buffer) {
            char text[NUKE_MESSAGE_CAPACITY];
            snprintf(text, sizeof text, "out of memory for %zu bytes of input", capacity);
            nuke_diagnostics_set_message(&d->err.diagnostics, text);
            d->failed = NUKE_STATUS_INTERNAL;
            return d->failed;
        }
        if (tail) memcpy(buffer, d->buffer + position, tail);
        free(d->buffer);
        d->buffer = buffer;
        d->capacity = capacity;
    } else if (tail && position > 0) {
        memmove(d->buffer, d->buffer + position, tail);
    }
    d->exposed_end = d->exposed_end > position ? d->exposed_end - position : 0;
    d->scanned = d->scanned > position ? d->scanned - position : 0;
    if (d->has_pending_sos) {
        if (d->pending_sos_length >= position) d->pending_sos_length -= position;
        else d->has_pending_sos = 0;
    }
    memcpy(d->buffer + tail, bytes, count);
    d->data_length = needed;
    d->src.next_input_byte = d->buffer;
    nukejpeg_expose(d);
    return NUKE_STATUS_OK;
}

void nukejpeg_decoder_set_end_of_input(nukejpeg_decoder *d) {
    d->end_of_input = 1;
    if (d->buffer) nukejpeg_expose(d);
}

void nukejpeg_decoder_set_gated(nukejpeg_decoder *d, int gated) {
    if (!d->buffer) return;  // memory source: all data is there
    d->gated = gated;
    d->exposed_end = nukejpeg_position(d);
    d->scanned = d->exposed_end;
    nukejpeg_expose(d);
}

static int nukejpeg_color_space(J_COLOR_SPACE space) {
    switch (space) {
    case JCS_GRAYSCALE: return NUKEJPEG_COLOR_GRAY;
    case JCS_RGB: return NUKEJPEG_COLOR_RGB;
    case JCS_YCbCr: return NUKEJPEG_COLOR_YCBCR;
    case JCS_CMYK: return NUKEJPEG_COLOR_CMYK;
    case JCS_YCCK: return NUKEJPEG_COLOR_YCCK;
    default: return NUKEJPEG_COLOR_UNKNOWN;
    }
}

nuke_status nukejpeg_decoder_read_header(nukejpeg_decoder *d, nukejpeg_header *header) {
    NUKEJPEG_PROTECT(d)
    int result = jpeg_read_header(&d->cinfo, TRUE);
    if (result == JPEG_SUSPENDED) return NUKE_STATUS_NEED_MORE;
    j_decompress_ptr cinfo = &d->cinfo;
    header->width = cinfo->image_width;
    header->height = cinfo->image_height;
    header->components = cinfo->num_components;
    header->color_space = nukejpeg_color_space(cinfo->jpeg_color_space);
    header->data_precision = cinfo->data_precision;
    header->is_progressive = cinfo->progressive_mode ? 1 : 0;
    header->has_multiple_scans = jpeg_has_multiple_scans(cinfo) ? 1 : 0;
    header->is_arithmetic = cinfo->arith_code ? 1 : 0;
    header->saw_adobe_marker = cinfo->saw_Adobe_marker ? 1 : 0;
    uint64_t bytes = 0;
    for (int ci = 0; ci < cinfo->num_components; ci++) {
        jpeg_component_info *comp = &cinfo->comp_info[ci];
        uint64_t w = comp->width_in_blocks, h = comp->height_in_blocks;
        uint64_t hs = comp->h_samp_factor > 0 ? (uint64_t)comp->h_samp_factor : 1;
        uint64_t vs = comp->v_samp_factor > 0 ? (uint64_t)comp->v_samp_factor : 1;
        w = (w + hs - 1) / hs * hs;
        h = (h + vs - 1) / vs * vs;
        bytes += w * h * (uint64_t)sizeof(JBLOCK);
    }
    header->coefficient_bytes = bytes;
    return NUKE_STATUS_OK;
}

nuke_status nukejpeg_decoder_output_size(nukejpeg_decoder *d, int scale_num, uint32_t *width, uint32_t *height) {
    NUKEJPEG_PROTECT(d)
    d->cinfo.scale_num = (unsigned)scale_num;
    d->cinfo.scale_denom = 8;
    jpeg_calc_output_dimensions(&d->cinfo);
    *width = d->cinfo.output_width;
    *height = d->cinfo.output_height;
    return NUKE_STATUS_OK;
}

nuke_status nukejpeg_decoder_start(nukejpeg_decoder *d, int scale_num, int buffered) {
    NUKEJPEG_PROTECT(d)
    j_decompress_ptr cinfo = &d->cinfo;
    if (!d->configured) {
        d->configured = 1;
        // djpeg's defaults: accurate integer IDCT, fancy upsampling, block smoothing.
        cinfo->scale_num = (unsigned)scale_num;
        cinfo->scale_denom = 8;
        cinfo->dct_method = JDCT_ISLOW;
        cinfo->do_fancy_upsampling = TRUE;
        cinfo->do_block_smoothing = d->no_block_smoothing ? FALSE : TRUE;
        cinfo->quantize_colors = FALSE;
        cinfo->buffered_image = buffered ? TRUE : FALSE;
        switch (cinfo->jpeg_color_space) {
        case JCS_GRAYSCALE:
            cinfo->out_color_space = JCS_GRAYSCALE;
            break;
        case JCS_CMYK:
        case JCS_YCCK:
            cinfo->out_color_space = JCS_CMYK;
            d->cmyk = 1;
            // Adobe Photoshop writes CMYK inverted (255 = no ink); others store ink amounts.
            d->cmyk_inverted = cinfo->saw_Adobe_marker ? 1 : 0;
            break;
        default:
            cinfo->out_color_space = JCS_RGB;
            break;
        }
    }
    if (!jpeg_start_decompress(cinfo)) return NUKE_STATUS_NEED_MORE;
    if (d->cmyk && !d->row) {
        d->row = malloc((size_t)cinfo->output_width * 4);
        if (!d->row) nukejpeg_fail(d, NUKE_STATUS_INTERNAL, "out of memory for a row of %u pixels", cinfo->output_width);
    }
    return NUKE_STATUS_OK;
}

void nukejpeg_decoder_set_block_smoothing(nukejpeg_decoder *d, int on) {
    d->no_block_smoothing = on ? 0 : 1;
}

int nukejpeg_decoder_component_dct_size(const nukejpeg_decoder *d, int component_id) {
    const struct jpeg_decompress_struct *cinfo = &d->cinfo;
    if (!cinfo->comp_info) return -1;
    for (int ci = 0; ci < cinfo->num_components; ci++) {
        const jpeg_component_info *comp = &cinfo->comp_info[ci];
        if (comp->component_id != component_id) continue;
#if JPEG_LIB_VERSION >= 70
        return comp->DCT_h_scaled_size == comp->DCT_v_scaled_size ? comp->DCT_h_scaled_size : -1;
#else
        return comp->DCT_scaled_size;
#endif
    }
    return -1;
}

uint32_t nukejpeg_decoder_output_width(const nukejpeg_decoder *d) {
    return d->cinfo.output_width;
}

uint32_t nukejpeg_decoder_output_height(const nukejpeg_decoder *d) {
    return d->cinfo.output_height;
}

uint32_t nukejpeg_decoder_output_scanline(const nukejpeg_decoder *d) {
    return d->cinfo.output_scanline;
}

/// R = C×K/255 rounded, on samples where 255 means no ink (Adobe's inverted convention, which
/// is what djpeg assumes); plain CMYK (255 = full ink) is inverted first.
static void nukejpeg_cmyk_to_rgb(const uint8_t *in, uint8_t *out, uint32_t width, int inverted) {
    for (uint32_t x = 0; x < width; x++) {
        unsigned c = in[0], m = in[1], y = in[2], k = in[3];
        if (!inverted) {
            c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k;
        }
        out[0] = (uint8_t)((c * k + 127) / 255);
        out[1] = (uint8_t)((m * k + 127) / 255);
        out[2] = (uint8_t)((y * k + 127) / 255);
        in += 4;
        out += 3;
    }
}

nuke_status nukejpeg_decoder_read_rows(nukejpeg_decoder *d, uint8_t *dest, size_t stride, uint32_t first_row, uint32_t max_rows) {
    NUKEJPEG_PROTECT(d)
    j_decompress_ptr cinfo = &d->cinfo;
    if (cinfo->output_scanline < first_row) return NUKE_STATUS_INTERNAL;   // a band starting below the next row: a bug
    uint32_t done = 0;
    while (done < max_rows && cinfo->output_scanline < cinfo->output_height) {
        if (!cinfo->buffered_image && nukejpeg_starved(d)) return NUKE_STATUS_NEED_MORE;
        uint32_t y = cinfo->output_scanline;
        if (d->cmyk) {
            JSAMPROW row = d->row;
            if (jpeg_read_scanlines(cinfo, &row, 1) == 0) return NUKE_STATUS_NEED_MORE;
            uint8_t *out = dest + (size_t)(y - first_row) * stride;
            if (d->cmyk_convert) {
                if (!d->cmyk_inverted) {
                    for (size_t i = 0; i < (size_t)cinfo->output_width * 4; i++) d->row[i] = (uint8_t)(255 - d->row[i]);
                }
                d->cmyk_convert(d->cmyk_convert_context, d->row, out, cinfo->output_width);
            } else {
                nukejpeg_cmyk_to_rgb(d->row, out, cinfo->output_width, d->cmyk_inverted);
            }
            done += 1;
        } else {
            JSAMPROW rows[16];
            uint32_t count = max_rows - done;
            if (count > 16) count = 16;
            if (count > cinfo->output_height - y) count = cinfo->output_height - y;
            for (uint32_t i = 0; i < count; i++) rows[i] = dest + (size_t)(y - first_row + i) * stride;
            JDIMENSION n = jpeg_read_scanlines(cinfo, rows, count);
            if (n == 0) return NUKE_STATUS_NEED_MORE;
            done += n;
        }
    }
    return NUKE_STATUS_OK;
}

nuke_status nukejpeg_decoder_consume(nukejpeg_decoder *d, int *event) {
    NUKEJPEG_PROTECT(d)
    for (;;) {
        if (nukejpeg_starved(d)) {
            *event = NUKEJPEG_EVENT_SUSPENDED;
            return NUKE_STATUS_OK;
        }
        int result = jpeg_consume_input(&d->cinfo);
        switch (result) {
        case JPEG_SUSPENDED:
            *event = NUKEJPEG_EVENT_SUSPENDED;
            return NUKE_STATUS_OK;
        case JPEG_SCAN_COMPLETED:
            d->between_scans = 1;
            break;
        case JPEG_REACHED_SOS:
            d->between_scans = 0;
            nukejpeg_progress_monitor((j_common_ptr)&d->cinfo);  // the scan cap
            *event = NUKEJPEG_EVENT_REACHED_SOS;
            return NUKE_STATUS_OK;
        case JPEG_REACHED_EOI:
            d->between_scans = 1;
            *event = NUKEJPEG_EVENT_REACHED_EOI;
            return NUKE_STATUS_OK;
        default:
            break;  // a row was completed: keep going
        }
    }
}

int nukejpeg_decoder_input_scan_number(const nukejpeg_decoder *d) {
    return d->cinfo.input_scan_number;
}

nuke_status nukejpeg_decoder_start_output(nukejpeg_decoder *d, int scan_number) {
    NUKEJPEG_PROTECT(d)
    return jpeg_start_output(&d->cinfo, scan_number) ? NUKE_STATUS_OK : NUKE_STATUS_NEED_MORE;
}

nuke_status nukejpeg_decoder_finish_output(nukejpeg_decoder *d) {
    NUKEJPEG_PROTECT(d)
    return jpeg_finish_output(&d->cinfo) ? NUKE_STATUS_OK : NUKE_STATUS_NEED_MORE;
}

nuke_status nukejpeg_decoder_finish(nukejpeg_decoder *d) {
    NUKEJPEG_PROTECT(d)
    return jpeg_finish_decompress(&d->cinfo) ? NUKE_STATUS_OK : NUKE_STATUS_NEED_MORE;
}

int nukejpeg_decoder_exif(const nukejpeg_decoder *d, const uint8_t **bytes, size_t *count) {
    static const uint8_t prefix[6] = { 'E', 'x', 'i', 'f', 0, 0 };
    for (jpeg_saved_marker_ptr marker = d->cinfo.marker_list; marker; marker = marker->next) {
        if (marker->marker == JPEG_APP0 + 1 && marker->data_length >= 6 && memcmp(marker->data, prefix, 6) == 0) {
            *bytes = marker->data + 6;
            *count = marker->data_length - 6;
            return 1;
        }
    }
    *bytes = NULL;
    *count = 0;
    return 0;
}

nuke_status nukejpeg_decoder_icc_profile(nukejpeg_decoder *d, uint8_t **bytes, size_t *count) {
    *bytes = NULL;
    *count = 0;
    NUKEJPEG_PROTECT(d)
    JOCTET *data = NULL;
    unsigned int length = 0;
    if (jpeg_read_icc_profile(&d->cinfo, &data, &length) && data) {
        *bytes = data;
        *count = length;
    }
    return NUKE_STATUS_OK;
}

// MARK: - Encoder

/// The first capacity of the output buffer; it grows only when one call produces more.
#define NUKEJPEG_OUTPUT_CHUNK (64 * 1024)

struct nukejpeg_encoder {
    struct jpeg_compress_struct cinfo;  // first: a j_compress_ptr is a nukejpeg_encoder *
    struct nukejpeg_error_mgr err;
    struct jpeg_destination_mgr dest;
    /// Output not yet taken: `buffer[0 ..< capacity - dest.free_in_buffer]`.
    uint8_t *buffer;
    size_t capacity;
    int created;
    int started;
    /// The status that ended this encoder; every later call returns it.
    nuke_status failed;
};

static void nukejpeg_dest_init(j_compress_ptr cinfo) {
    struct nukejpeg_encoder *e = (struct nukejpeg_encoder *)cinfo;
    e->dest.next_output_byte = e->buffer;
    e->dest.free_in_buffer = e->capacity;
}

/// libjpeg filled the buffer: keep it all (it is taken between calls) and grow the buffer.
static boolean nukejpeg_dest_empty(j_compress_ptr cinfo) {
    struct nukejpeg_encoder *e = (struct nukejpeg_encoder *)cinfo;
    size_t used = e->capacity;
    size_t capacity = e->capacity > SIZE_MAX / 2 ? 0 : e->capacity * 2;
    uint8_t *grown = capacity ? realloc(e->buffer, capacity) : NULL;
    if (!grown) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    e->buffer = grown;
    e->capacity = capacity;
    e->dest.next_output_byte = grown + used;
    e->dest.free_in_buffer = capacity - used;
    return TRUE;
}

static void nukejpeg_dest_term(j_compress_ptr cinfo) {
    (void)cinfo;  // the bytes stay in the buffer until taken
}

nukejpeg_encoder *nukejpeg_encoder_create(void) {
    struct nukejpeg_encoder *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->buffer = malloc(NUKEJPEG_OUTPUT_CHUNK);
    if (!e->buffer) {
        free(e);
        return NULL;
    }
    e->capacity = NUKEJPEG_OUTPUT_CHUNK;
    nukejpeg_init_error(&e->err);
    e->cinfo.err = &e->err.pub;
    e->dest.init_destination = nukejpeg_dest_init;
    e->dest.empty_output_buffer = nukejpeg_dest_empty;
    e->dest.term_destination = nukejpeg_dest_term;
    e->dest.next_output_byte = e->buffer;
    e->dest.free_in_buffer = e->capacity;
    return e;
}

void nukejpeg_encoder_destroy(nukejpeg_encoder *e) {
    if (!e) return;
    if (e->created) jpeg_destroy_compress(&e->cinfo);
    free(e->buffer);
    free(e);
}

const nuke_diagnostics *nukejpeg_encoder_diagnostics(const nukejpeg_encoder *e) {
    return &e->err.diagnostics;
}

/// Sets the jump buffer for the calling function; a libjpeg error returns its status from it
/// (and from every later call). Statements only: `e` must be a parameter.
#define NUKEJPEG_ENCODER_PROTECT(e)                                         \
    if ((e)->failed) return (e)->failed;                                    \
    if (setjmp((e)->err.jump)) {                                            \
        (e)->failed = (e)->err.status ? (e)->err.status : NUKE_STATUS_INTERNAL; \
        return (e)->failed;                                                 \
    }

static nuke_status nukejpeg_encoder_refuse(nukejpeg_encoder *e, nuke_status status, const char *message) {
    nuke_diagnostics_set_message(&e->err.diagnostics, message);
    e->failed = status;
    return status;
}

nuke_status nukejpeg_encoder_start(nukejpeg_encoder *e, const nukejpeg_encode_params *params) {
    if (e->started && !e->failed) return nukejpeg_encoder_refuse(e, NUKE_STATUS_INTERNAL, "the encoder was already started");
    NUKEJPEG_ENCODER_PROTECT(e)
    jpeg_create_compress(&e->cinfo);
    e->created = 1;
    e->started = 1;
    e->cinfo.dest = &e->dest;
    e->cinfo.image_width = params->width;
    e->cinfo.image_height = params->height;
    e->cinfo.input_components = params->components;
    e->cinfo.in_color_space = params->components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&e->cinfo);
    jpeg_set_quality(&e->cinfo, params->quality, TRUE);
    e->cinfo.dct_method = JDCT_ISLOW;
    if (params->full_chroma && params->components == 3) {
        e->cinfo.comp_info[0].h_samp_factor = 1;
        e->cinfo.comp_info[0].v_samp_factor = 1;
    }
    if (params->optimize) e->cinfo.optimize_coding = TRUE;
    if (params->progressive) jpeg_simple_progression(&e->cinfo);
    // EXIF wants its APP1 right after SOI; JFIF and EXIF do not go together.
    if (params->exif && params->exif_count) e->cinfo.write_JFIF_header = FALSE;
    jpeg_start_compress(&e->cinfo, TRUE);
    if (params->exif && params->exif_count) {
        jpeg_write_marker(&e->cinfo, JPEG_APP0 + 1, params->exif, (unsigned)params->exif_count);
    }
    if (params->icc && params->icc_count) {
        jpeg_write_icc_profile(&e->cinfo, params->icc, (unsigned)params->icc_count);
    }
    return NUKE_STATUS_OK;
}

nuke_status nukejpeg_encoder_write_rows(nukejpeg_encoder *e, const uint8_t *rows, size_t stride, uint32_t count) {
    if (!e->started) return nukejpeg_encoder_refuse(e, NUKE_STATUS_INTERNAL, "rows written before nukejpeg_encoder_start");
    NUKEJPEG_ENCODER_PROTECT(e)
    if (count > e->cinfo.image_height - e->cinfo.next_scanline) {
        return nukejpeg_encoder_refuse(e, NUKE_STATUS_INTERNAL, "more rows written than the image has");
    }
    JSAMPROW batch[32];
    uint32_t written = 0;
    while (written < count) {
        uint32_t n = count - written < 32 ? count - written : 32;
        for (uint32_t i = 0; i < n; i++) batch[i] = (JSAMPROW)(rows + (size_t)(written + i) * stride);
        written += jpeg_write_scanlines(&e->cinfo, batch, n);
    }
    return NUKE_STATUS_OK;
}

nuke_status nukejpeg_encoder_finish(nukejpeg_encoder *e) {
    if (!e->started) return nukejpeg_encoder_refuse(e, NUKE_STATUS_INTERNAL, "finish before nukejpeg_encoder_start");
    NUKEJPEG_ENCODER_PROTECT(e)
    if (e->cinfo.next_scanline < e->cinfo.image_height) {
        return nukejpeg_encoder_refuse(e, NUKE_STATUS_INTERNAL, "finish before every row was written");
    }
    jpeg_finish_compress(&e->cinfo);
    return NUKE_STATUS_OK;
}

void nukejpeg_encoder_take_output(nukejpeg_encoder *e, const uint8_t **bytes, size_t *count) {
    *bytes = e->buffer;
    *count = e->capacity - e->dest.free_in_buffer;
    e->dest.next_output_byte = e->buffer;
    e->dest.free_in_buffer = e->capacity;
}

#include "CGIFShim.h"

#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

#define NUKEGIF_STR2(x) #x
#define NUKEGIF_STR(x) NUKEGIF_STR2(x)

const char *nukegif_version(void) {
    return NUKEGIF_STR(GIFLIB_MAJOR) "." NUKEGIF_STR(GIFLIB_MINOR) "." NUKEGIF_STR(GIFLIB_RELEASE);
}

// MARK: - Decoding

/// The memory giflib's read callback reads, valid during one shim call.
typedef struct nukegif_cursor {
    const uint8_t *data;
    size_t length;
    size_t position;
} nukegif_cursor;

struct nukegif_decoder {
    GifFileType *gif;
    nukegif_cursor cursor;
    uint8_t *line;
    size_t line_capacity;
    nuke_diagnostics diagnostics;
};

static int nukegif_read(GifFileType *gif, GifByteType *buffer, int count) {
    nukegif_cursor *cursor = (nukegif_cursor *)gif->UserData;
    if (cursor == NULL || cursor->data == NULL || count <= 0) return 0;
    size_t available = cursor->length > cursor->position ? cursor->length - cursor->position : 0;
    size_t n = (size_t)count < available ? (size_t)count : available;
    memcpy(buffer, cursor->data + cursor->position, n);
    cursor->position += n;
    return (int)n;
}

/// Classifies a giflib decoding error code.
static nuke_status nukegif_decode_status(int error) {
    switch (error) {
    case D_GIF_ERR_READ_FAILED:
    case D_GIF_ERR_EOF_TOO_SOON:
        return NUKE_STATUS_INCOMPLETE;
    case D_GIF_ERR_NOT_ENOUGH_MEM:
        return NUKE_STATUS_INTERNAL;
    default:
        return NUKE_STATUS_CORRUPT;
    }
}

static void nukegif_set_error(nuke_diagnostics *diagnostics, int error) {
    const char *text = GifErrorString(error);
    nuke_diagnostics_set_message(diagnostics, text != NULL ? text : "unknown giflib error");
}

nukegif_decoder *nukegif_decoder_create(void) {
    return (nukegif_decoder *)calloc(1, sizeof(nukegif_decoder));
}

void nukegif_decoder_destroy(nukegif_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->gif != NULL) {
        int error = 0;
        decoder->gif->UserData = NULL;
        DGifCloseFile(decoder->gif, &error);
    }
    free(decoder->line);
    free(decoder);
}

const nuke_diagnostics *nukegif_decoder_diagnostics(const nukegif_decoder *decoder) {
    return &decoder->diagnostics;
}

nuke_status nukegif_decoder_open(nukegif_decoder *decoder, const uint8_t *data, size_t length) {
    if (decoder->gif != NULL) return NUKE_STATUS_OK;
    decoder->cursor = (nukegif_cursor){ data, length, 0 };
    int error = 0;
    GifFileType *gif = DGifOpen(&decoder->cursor, nukegif_read, &error);
    decoder->cursor.data = NULL;
    if (gif == NULL) {
        nukegif_set_error(&decoder->diagnostics, error);
        return nukegif_decode_status(error);
    }
    decoder->gif = gif;
    return NUKE_STATUS_OK;
}

/// Interlaced GIF rows: pass starts and steps.
static const uint32_t nukegif_pass_start[4] = { 0, 4, 2, 1 };
static const uint32_t nukegif_pass_step[4] = { 8, 8, 4, 2 };

/// Where a frame's rows go: its own `width × height` RGBA buffer, or the canvas at the frame's
/// position, clipped to it. With `over` transparent pixels leave what is under them; otherwise
/// every pixel is written, transparent ones as 0.
typedef struct {
    uint8_t *pixels;
    size_t stride;
    int64_t x, y;            // the frame's top-left in `pixels`
    uint32_t width, height;  // the size of `pixels`
    int over;
} nukegif_target;

/// Clears frame rows `from..<to` of a frame `frame_width` wide where they land in `target`.
static void nukegif_clear_rows(nukegif_target target, uint32_t frame_width, uint32_t from, uint32_t to) {
    int64_t first_x = target.x < 0 ? -target.x : 0;
    int64_t last_x = (int64_t)target.width - target.x;
    if (last_x > (int64_t)frame_width) last_x = frame_width;
    if (first_x >= last_x) return;
    for (uint32_t row = from; row < to; row++) {
        int64_t y = target.y + (int64_t)row;
        if (y < 0 || y >= (int64_t)target.height) continue;
        memset(target.pixels + (size_t)y * target.stride + (size_t)(target.x + first_x) * 4, 0, (size_t)(last_x - first_x) * 4);
    }
}

/// A frame giflib has opened: its size, interlacing and palette.
typedef struct {
    uint32_t width, height;
    int interlaced;
    /// Each index's RGBA bytes as one word: the transparent index and indices past the colour
    /// table are transparent (0); with no colour table at all, a grey ramp, as Pillow does
    /// (index 0 is black, as in ImageMagick).
    uint32_t palette[256];
} nukegif_frame;

/// Reads the image descriptor at `offset` and prepares `frame`; on failure sets the diagnostics.
/// Every call is paired with `nukegif_end_frame`, whatever it returns.
static nuke_status nukegif_begin_frame(
    nukegif_decoder *decoder,
    const uint8_t *data, size_t length, size_t offset,
    uint32_t expected_width, uint32_t expected_height,
    int32_t transparent_index,
    nukegif_frame *frame
) {
    GifFileType *gif = decoder->gif;
    frame->width = frame->height = 0;
    if (gif == NULL) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the decoder is not open");
        return NUKE_STATUS_INTERNAL;
    }
    decoder->cursor = (nukegif_cursor){ data, length, offset };
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif, &type) == GIF_ERROR || type != IMAGE_DESC_RECORD_TYPE) {
        nukegif_set_error(&decoder->diagnostics, type != IMAGE_DESC_RECORD_TYPE ? D_GIF_ERR_WRONG_RECORD : gif->Error);
        return type != IMAGE_DESC_RECORD_TYPE ? NUKE_STATUS_CORRUPT : nukegif_decode_status(gif->Error);
    }
    if (DGifGetImageDesc(gif) == GIF_ERROR) {
        nukegif_set_error(&decoder->diagnostics, gif->Error);
        return nukegif_decode_status(gif->Error);
    }
    uint32_t width = (uint32_t)gif->Image.Width, height = (uint32_t)gif->Image.Height;
    if (width != expected_width || height != expected_height) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "giflib read a frame size that differs from the image descriptor");
        return NUKE_STATUS_INTERNAL;
    }
    if (decoder->line_capacity < width) {
        uint8_t *line = (uint8_t *)realloc(decoder->line, width);
        if (line == NULL) {
            nuke_diagnostics_set_message(&decoder->diagnostics, "out of memory");
            return NUKE_STATUS_INTERNAL;
        }
        decoder->line = line;
        decoder->line_capacity = width;
    }
    const ColorMapObject *map = gif->Image.ColorMap != NULL ? gif->Image.ColorMap : gif->SColorMap;
    int colors = map != NULL ? map->ColorCount : 0;
    for (int i = 0; i < 256; i++) {
        uint8_t px[4] = {0, 0, 0, 0};
        if (i != transparent_index) {
            if (map == NULL) {
                px[0] = px[1] = px[2] = (uint8_t)i;
                px[3] = 255;
            } else if (i < colors) {
                px[0] = map->Colors[i].Red; px[1] = map->Colors[i].Green; px[2] = map->Colors[i].Blue;
                px[3] = 255;
            }
        }
        memcpy(&frame->palette[i], px, 4);
    }
    frame->width = width;
    frame->height = height;
    frame->interlaced = gif->Image.Interlace ? 1 : 0;
    return NUKE_STATUS_OK;
}

static void nukegif_end_frame(nukegif_decoder *decoder) {
    // DGifGetImageDesc appends to SavedImages on every frame: drop them so memory stays flat.
    if (decoder->gif != NULL) {
        GifFreeSavedImages(decoder->gif);
        decoder->gif->ImageCount = 0;
    }
    decoder->cursor.data = NULL;
}

/// Reads the frame's next row (in file order) into `decoder->line`; 0 when the LZW data ended
/// early or is damaged (a warning is counted) — the rows read so far stand, as browsers show them.
static int nukegif_read_line(nukegif_decoder *decoder, uint32_t width) {
    if (DGifGetLine(decoder->gif, decoder->line, (int)width) == GIF_ERROR) {
        nuke_diagnostics_add_warning(&decoder->diagnostics, GifErrorString(decoder->gif->Error));
        return 0;
    }
    return 1;
}

/// Checks cancellation every 64 rows; 1 (and the diagnostics set) when cancelled.
static int nukegif_row_cancelled(nukegif_decoder *decoder, uint32_t row, const nuke_cancellation *cancellation) {
    if (row % 64 != 63 || !nuke_is_cancelled(cancellation)) return 0;
    nuke_diagnostics_set_message(&decoder->diagnostics, "cancelled");
    return 1;
}

/// The first row of the interlace pass `*pass` (skipping passes a short frame has not got).
static uint32_t nukegif_pass_first_row(uint32_t *pass, uint32_t height) {
    while (*pass < 3 && nukegif_pass_start[*pass] >= height) (*pass)++;
    return nukegif_pass_start[*pass];
}

/// The frame row after `y` in file order.
static uint32_t nukegif_next_row(const nukegif_frame *frame, uint32_t *pass, uint32_t y) {
    if (!frame->interlaced) return y + 1;
    y += nukegif_pass_step[*pass];
    if (y >= frame->height && *pass < 3) {
        (*pass)++;
        y = nukegif_pass_first_row(pass, frame->height);
    }
    return y;
}

static nuke_status nukegif_decode_rows(
    nukegif_decoder *decoder,
    const uint8_t *data, size_t length, size_t offset,
    uint32_t expected_width, uint32_t expected_height,
    int32_t transparent_index,
    nukegif_target target,
    uint32_t *rows_decoded,
    const nuke_cancellation *cancellation
) {
    *rows_decoded = 0;
    int zeroed = 0;   // the whole frame buffer was cleared before the rows
    nukegif_frame frame;
    nuke_status status = nukegif_begin_frame(decoder, data, length, offset, expected_width, expected_height, transparent_index, &frame);
    if (status != NUKE_STATUS_OK || frame.width == 0 || frame.height == 0) goto done;
    uint32_t width = frame.width, height = frame.height;
    const uint32_t *palette = frame.palette;
    // The columns of the frame that land inside the target.
    int64_t first_x = target.x < 0 ? -target.x : 0;
    int64_t last_x = (int64_t)target.width - target.x;
    if (last_x > (int64_t)width) last_x = width;
    // Without `over` every row is written; the rows damaged data never delivers are transparent.
    // Interlaced frames skip around, so they start from zeros; others clear what is left at the end.
    if (!target.over && frame.interlaced) {
        nukegif_clear_rows(target, width, 0, height);
        zeroed = 1;
    }
    uint32_t pass = 0;
    uint32_t y = frame.interlaced ? nukegif_pass_first_row(&pass, height) : 0;
    for (uint32_t row = 0; row < height; row++) {
        if (nukegif_row_cancelled(decoder, row, cancellation)) {
            status = NUKE_STATUS_CANCELLED;
            break;
        }
        // Every row is read (giflib's LZW state runs through them all), even one outside the target.
        if (!nukegif_read_line(decoder, width)) break;
        int64_t target_y = target.y + (int64_t)y;
        if (target_y >= 0 && target_y < (int64_t)target.height && first_x < last_x) {
            uint8_t *out = target.pixels + (size_t)target_y * target.stride + (size_t)(target.x + first_x) * 4;
            const uint8_t *line = decoder->line;
            if (target.over) {
                for (int64_t x = first_x; x < last_x; x++, out += 4) {
                    uint32_t word = palette[line[x]];
                    if (word != 0) memcpy(out, &word, 4);   // opaque; 0 is the only transparent word
                }
            } else {
                for (int64_t x = first_x; x < last_x; x++, out += 4) memcpy(out, &palette[line[x]], 4);
            }
        }
        *rows_decoded = row + 1;
        y = nukegif_next_row(&frame, &pass, y);
    }
done:
    // Rows in order from the top were written up to `rows_decoded`: without `over` the rest are
    // cleared (all of them when the frame failed before its first row).
    if (!target.over && !zeroed && *rows_decoded < expected_height) {
        nukegif_clear_rows(target, expected_width, *rows_decoded, expected_height);
    }
    nukegif_end_frame(decoder);
    return status;
}

/// Canvas rows handed one at a time, top to bottom, to a sink.
typedef struct {
    uint8_t *row;                       // canvas_width × 4 bytes; columns outside the frame stay 0
    uint32_t canvas_height;
    int64_t frame_y;
    int64_t first_x, last_x;            // the frame's columns inside the canvas
    int64_t frame_x;
    const uint32_t *palette;
    uint32_t next;                      // the next canvas row to hand over
    size_t row_length;
    void (*sink)(void *context, const uint8_t *row, size_t length);
    void *sink_context;
} nukegif_row_stream;

/// Hands over the next canvas row: the frame's `indices` through the palette, or, when NULL, a
/// transparent row.
static void nukegif_stream_row(nukegif_row_stream *stream, const uint8_t *indices) {
    if (stream->first_x < stream->last_x) {
        uint8_t *out = stream->row + (size_t)(stream->frame_x + stream->first_x) * 4;
        if (indices != NULL) {
            for (int64_t x = stream->first_x; x < stream->last_x; x++, out += 4) memcpy(out, &stream->palette[indices[x]], 4);
        } else {
            memset(out, 0, (size_t)(stream->last_x - stream->first_x) * 4);
        }
    }
    stream->sink(stream->sink_context, stream->row, stream->row_length);
    stream->next++;
}

/// Hands over canvas rows up to (not including) `end`, each from the held even frame rows when
/// they were decoded, else transparent.
static void nukegif_stream_until(nukegif_row_stream *stream, uint32_t end, const uint8_t *held, const uint8_t *decoded,
                                 uint32_t frame_width, uint32_t frame_height) {
    if (end > stream->canvas_height) end = stream->canvas_height;
    while (stream->next < end) {
        int64_t y = (int64_t)stream->next - stream->frame_y;
        const uint8_t *indices = NULL;
        if (held != NULL && y >= 0 && y < (int64_t)frame_height && y % 2 == 0 && decoded[y]) {
            indices = held + (size_t)(y / 2) * frame_width;
        }
        nukegif_stream_row(stream, indices);
    }
}

nuke_status nukegif_decoder_stream_frame(
    nukegif_decoder *decoder,
    const uint8_t *data, size_t length, size_t offset,
    uint32_t expected_width, uint32_t expected_height,
    int32_t transparent_index,
    int64_t frame_x, int64_t frame_y,
    uint8_t *row, uint32_t canvas_width, uint32_t canvas_height, size_t row_length,
    void (*sink)(void *context, const uint8_t *row, size_t length), void *sink_context,
    uint32_t *rows_decoded,
    const nuke_cancellation *cancellation
) {
    *rows_decoded = 0;
    if ((size_t)canvas_width * 4 != row_length) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the row buffer does not fit the canvas");
        return NUKE_STATUS_INTERNAL;
    }
    memset(row, 0, row_length);
    nukegif_row_stream stream = { row, canvas_height, frame_y, 0, 0, frame_x, NULL, 0, row_length, sink, sink_context };
    uint8_t *held = NULL, *decoded = NULL;
    nukegif_frame frame;
    nuke_status status = nukegif_begin_frame(decoder, data, length, offset, expected_width, expected_height, transparent_index, &frame);
    if (status != NUKE_STATUS_OK) goto done;
    uint32_t width = frame.width, height = frame.height;
    stream.palette = frame.palette;
    stream.first_x = frame_x < 0 ? -frame_x : 0;
    stream.last_x = (int64_t)canvas_width - frame_x;
    if (stream.last_x > (int64_t)width) stream.last_x = width;
    if (width == 0 || height == 0) goto flush;
    if (frame.interlaced) {
        // Passes 1–3 deliver the even rows, pass 4 the odd ones: the even rows wait as indices
        // (one byte a pixel, half the frame), each odd row lets the rows above it out.
        held = (uint8_t *)malloc((size_t)width * ((height + 1) / 2));
        decoded = (uint8_t *)calloc(height, 1);
        if (held == NULL || decoded == NULL) {
            nuke_diagnostics_set_message(&decoder->diagnostics, "out of memory");
            status = NUKE_STATUS_INTERNAL;
            goto done;
        }
    }
    uint32_t pass = 0;
    uint32_t y = frame.interlaced ? nukegif_pass_first_row(&pass, height) : 0;
    for (uint32_t n = 0; n < height; n++) {
        if (nukegif_row_cancelled(decoder, n, cancellation)) {
            status = NUKE_STATUS_PAUSED;
            goto done;
        }
        if (!nukegif_read_line(decoder, width)) break;
        *rows_decoded = n + 1;
        int64_t canvas_y = frame_y + (int64_t)y;
        if (held != NULL) decoded[y] = 1;
        if (held != NULL && y % 2 == 0) {
            memcpy(held + (size_t)(y / 2) * width, decoder->line, width);
        } else if (canvas_y >= 0 && canvas_y < (int64_t)canvas_height) {
            nukegif_stream_until(&stream, (uint32_t)canvas_y, held, decoded, width, height);
            nukegif_stream_row(&stream, decoder->line);
        }
        y = nukegif_next_row(&frame, &pass, y);
    }
flush:
    nukegif_stream_until(&stream, canvas_height, held, decoded, width, height);
done:
    free(held);
    free(decoded);
    nukegif_end_frame(decoder);
    return status;
}

nuke_status nukegif_decoder_decode_frame(
    nukegif_decoder *decoder,
    const uint8_t *data, size_t length, size_t offset,
    uint32_t expected_width, uint32_t expected_height,
    int32_t transparent_index,
    uint8_t *rgba, size_t rgba_length,
    uint32_t *rows_decoded,
    const nuke_cancellation *cancellation
) {
    *rows_decoded = 0;
    if ((size_t)expected_width * expected_height * 4 != rgba_length) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the pixel buffer does not fit the frame");
        return NUKE_STATUS_INTERNAL;
    }
    nukegif_target target = { rgba, (size_t)expected_width * 4, 0, 0, expected_width, expected_height, 0 };
    return nukegif_decode_rows(decoder, data, length, offset, expected_width, expected_height, transparent_index,
                               target, rows_decoded, cancellation);
}

nuke_status nukegif_decoder_draw_frame(
    nukegif_decoder *decoder,
    const uint8_t *data, size_t length, size_t offset,
    uint32_t expected_width, uint32_t expected_height,
    int32_t transparent_index,
    int64_t frame_x, int64_t frame_y, int over,
    uint8_t *canvas, uint32_t canvas_width, uint32_t canvas_height, size_t canvas_length,
    uint32_t *rows_decoded,
    const nuke_cancellation *cancellation
) {
    *rows_decoded = 0;
    if ((size_t)canvas_width * canvas_height * 4 != canvas_length) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the canvas buffer does not fit the canvas");
        return NUKE_STATUS_INTERNAL;
    }
    nukegif_target target = { canvas, (size_t)canvas_width * 4, frame_x, frame_y, canvas_width, canvas_height, over != 0 };
    return nukegif_decode_rows(decoder, data, length, offset, expected_width, expected_height, transparent_index,
                               target, rows_decoded, cancellation);
}

// MARK: - Encoding

struct nukegif_encoder {
    GifFileType *gif;
    uint8_t *output;
    size_t length;
    size_t capacity;
    int failed;
};

static int nukegif_write(GifFileType *gif, const GifByteType *bytes, int count) {
    struct nukegif_encoder *encoder = (struct nukegif_encoder *)gif->UserData;
    if (encoder == NULL || count < 0) return 0;
    if (encoder->length + (size_t)count > encoder->capacity) {
        size_t capacity = encoder->capacity < 4096 ? 4096 : encoder->capacity;
        while (capacity < encoder->length + (size_t)count) capacity *= 2;
        uint8_t *output = (uint8_t *)realloc(encoder->output, capacity);
        if (output == NULL) {
            encoder->failed = 1;
            return 0;
        }
        encoder->output = output;
        encoder->capacity = capacity;
    }
    memcpy(encoder->output + encoder->length, bytes, (size_t)count);
    encoder->length += (size_t)count;
    return count;
}

static nuke_status nukegif_encode_failure(nuke_diagnostics *diagnostics, int error) {
    nukegif_set_error(diagnostics, error);
    return error == E_GIF_ERR_NOT_ENOUGH_MEM || error == E_GIF_ERR_WRITE_FAILED ? NUKE_STATUS_INTERNAL : NUKE_STATUS_CORRUPT;
}

nuke_status nukegif_encoder_create(uint32_t width, uint32_t height, int32_t loop_count, nukegif_encoder **result, nuke_diagnostics *diagnostics) {
    *result = NULL;
    if (width == 0 || height == 0 || width > 65535 || height > 65535) {
        nuke_diagnostics_set_message(diagnostics, "GIF screens are 1…65535 pixels on each side");
        return NUKE_STATUS_UNSUPPORTED;
    }
    nukegif_encoder *encoder = (nukegif_encoder *)calloc(1, sizeof(nukegif_encoder));
    if (encoder == NULL) {
        nuke_diagnostics_set_message(diagnostics, "out of memory");
        return NUKE_STATUS_INTERNAL;
    }
    int error = 0;
    encoder->gif = EGifOpen(encoder, nukegif_write, &error);
    if (encoder->gif == NULL) {
        free(encoder);
        return nukegif_encode_failure(diagnostics, error);
    }
    EGifSetGifVersion(encoder->gif, true);
    if (EGifPutScreenDesc(encoder->gif, (int)width, (int)height, 8, 0, NULL) == GIF_ERROR) {
        nuke_status status = nukegif_encode_failure(diagnostics, encoder->gif->Error);
        nukegif_encoder_destroy(encoder);
        return status;
    }
    if (loop_count >= 0) {
        unsigned char loop[3] = { 1, (unsigned char)(loop_count & 0xFF), (unsigned char)((loop_count >> 8) & 0xFF) };
        if (EGifPutExtensionLeader(encoder->gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR
            || EGifPutExtensionBlock(encoder->gif, 11, "NETSCAPE2.0") == GIF_ERROR
            || EGifPutExtensionBlock(encoder->gif, 3, loop) == GIF_ERROR
            || EGifPutExtensionTrailer(encoder->gif) == GIF_ERROR) {
            nuke_status status = nukegif_encode_failure(diagnostics, encoder->gif->Error);
            nukegif_encoder_destroy(encoder);
            return status;
        }
    }
    *result = encoder;
    return NUKE_STATUS_OK;
}

void nukegif_encoder_destroy(nukegif_encoder *encoder) {
    if (encoder == NULL) return;
    if (encoder->gif != NULL) {
        int error = 0;
        EGifCloseFile(encoder->gif, &error);
    }
    free(encoder->output);
    free(encoder);
}

nuke_status nukegif_encoder_add_frame(
    nukegif_encoder *encoder,
    const uint8_t *indices, uint32_t left, uint32_t top, uint32_t width, uint32_t height,
    const uint8_t *palette, uint32_t palette_count,
    int32_t transparent_index, uint32_t delay_centiseconds, int32_t disposal,
    nuke_diagnostics *diagnostics
) {
    GifFileType *gif = encoder->gif;
    if (palette_count < 1 || palette_count > 256) {
        nuke_diagnostics_set_message(diagnostics, "a GIF colour table holds 1…256 colours");
        return NUKE_STATUS_INTERNAL;
    }
    GraphicsControlBlock gcb;
    gcb.DisposalMode = disposal;
    gcb.UserInputFlag = false;
    gcb.DelayTime = (int)(delay_centiseconds > 65535 ? 65535 : delay_centiseconds);
    gcb.TransparentColor = transparent_index;
    GifByteType extension[4];
    size_t extension_length = EGifGCBToExtension(&gcb, extension);
    if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, (int)extension_length, extension) == GIF_ERROR) {
        return nukegif_encode_failure(diagnostics, gif->Error);
    }
    // Colour tables hold a power of two entries; pad with black.
    int size = 2;
    while (size < (int)palette_count) size *= 2;
    GifColorType colors[256];
    memset(colors, 0, sizeof(colors));
    for (uint32_t i = 0; i < palette_count; i++) {
        colors[i].Red = palette[i * 3];
        colors[i].Green = palette[i * 3 + 1];
        colors[i].Blue = palette[i * 3 + 2];
    }
    ColorMapObject *map = GifMakeMapObject(size, colors);
    if (map == NULL) {
        nuke_diagnostics_set_message(diagnostics, "out of memory");
        return NUKE_STATUS_INTERNAL;
    }
    int result = EGifPutImageDesc(gif, (int)left, (int)top, (int)width, (int)height, false, map);
    GifFreeMapObject(map);
    if (result == GIF_ERROR) return nukegif_encode_failure(diagnostics, gif->Error);
    for (uint32_t y = 0; y < height; y++) {
        if (EGifPutLine(gif, (GifPixelType *)(indices + (size_t)y * width), (int)width) == GIF_ERROR) {
            return nukegif_encode_failure(diagnostics, gif->Error);
        }
    }
    if (encoder->failed) {
        nuke_diagnostics_set_message(diagnostics, "out of memory");
        return NUKE_STATUS_INTERNAL;
    }
    return NUKE_STATUS_OK;
}

size_t nukegif_encoder_pending(const nukegif_encoder *encoder, const uint8_t **bytes) {
    *bytes = encoder->output;
    return encoder->failed ? 0 : encoder->length;
}

void nukegif_encoder_take(nukegif_encoder *encoder) {
    encoder->length = 0;
}

nuke_status nukegif_encoder_finish(nukegif_encoder *encoder, uint8_t **output, size_t *output_length, nuke_diagnostics *diagnostics) {
    *output = NULL;
    *output_length = 0;
    int error = 0;
    int result = EGifCloseFile(encoder->gif, &error);
    encoder->gif = NULL;
    nuke_status status = NUKE_STATUS_OK;
    if (result == GIF_ERROR) {
        status = nukegif_encode_failure(diagnostics, error);
    } else if (encoder->failed) {
        nuke_diagnostics_set_message(diagnostics, "out of memory");
        status = NUKE_STATUS_INTERNAL;
    } else {
        *output = encoder->output;
        *output_length = encoder->length;
        encoder->output = NULL;
    }
    nukegif_encoder_destroy(encoder);
    return status;
}

nuke_status nukegif_quantize(
    uint32_t width, uint32_t height,
    const uint8_t *red, const uint8_t *green, const uint8_t *blue,
    uint8_t *indices, uint8_t *palette, int32_t *color_count,
    nuke_diagnostics *diagnostics
) {
    GifColorType colors[256];
    memset(colors, 0, sizeof(colors));
    int count = *color_count < 1 ? 1 : (*color_count > 256 ? 256 : *color_count);
    if (GifQuantizeBuffer(width, height, &count, (GifByteType *)red, (GifByteType *)green, (GifByteType *)blue, indices, colors) == GIF_ERROR) {
        nuke_diagnostics_set_message(diagnostics, "giflib's quantiser failed (out of memory)");
        return NUKE_STATUS_INTERNAL;
    }
    for (int i = 0; i < count; i++) {
        palette[i * 3] = colors[i].Red;
        palette[i * 3 + 1] = colors[i].Green;
        palette[i * 3 + 2] = colors[i].Blue;
    }
    *color_count = count;
    return NUKE_STATUS_OK;
}

void nukegif_buffer_free(void *buffer) {
    free(buffer);
}

#include "CTIFFShim.h"
#include "CLibTIFF.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *nuketiff_version(void) { return TIFFGetVersion(); }

// MARK: - Memory I/O

/// The caller's bytes, read through libtiff's client procedures; or, for the encoder, a buffer
/// that grows as libtiff writes (and seeks back to patch offsets).
typedef struct nuketiff_memory {
    const uint8_t *data;
    uint8_t *owned;
    size_t size;
    size_t capacity;
    size_t position;
    /// Set when libtiff asked for bytes past the end: the file is truncated.
    int read_past_end;
    /// Reading an open file (`fd`, `size` bytes) with pread instead of `data`.
    int reads_file;
    int fd;
} nuketiff_memory;

/// Reads `count` bytes at `offset` of the file, retrying after signals and short reads; fewer at
/// the end of the file, -1 on an error.
static tmsize_t file_read(int fd, void *buffer, size_t count, size_t offset) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = pread(fd, (uint8_t *)buffer + done, count - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        done += (size_t)n;
    }
    return (tmsize_t)done;
}

static tmsize_t memory_read(thandle_t handle, void *buffer, tmsize_t count) {
    nuketiff_memory *m = handle;
    if (count < 0) return -1;
    size_t available = m->position < m->size ? m->size - m->position : 0;
    size_t n = (size_t)count < available ? (size_t)count : available;
    if (n < (size_t)count) m->read_past_end = 1;
    if (m->reads_file) {
        tmsize_t read = n > 0 ? file_read(m->fd, buffer, n, m->position) : 0;
        if (read < 0) return -1;
        if ((size_t)read < n) m->read_past_end = 1;  // The file shrank since its size was read.
        n = (size_t)read;
    } else if (n > 0) {
        memcpy(buffer, (m->owned != NULL ? m->owned : m->data) + m->position, n);
    }
    m->position += n;
    return (tmsize_t)n;
}

static tmsize_t memory_write(thandle_t handle, void *buffer, tmsize_t count) {
    nuketiff_memory *m = handle;
    if (count < 0 || m->data != NULL || m->reads_file) return -1;
    size_t end = m->position + (size_t)count;
    if (end < m->position) return -1;
    if (end > m->capacity) {
        size_t capacity = m->capacity < 65536 ? 65536 : m->capacity;
        while (capacity < end) {
            if (capacity > SIZE_MAX / 2) return -1;
            capacity *= 2;
        }
        uint8_t *grown = realloc(m->owned, capacity);
        if (grown == NULL) return -1;
        m->owned = grown;
        m->capacity = capacity;
    }
    if (m->position > m->size) memset(m->owned + m->size, 0, m->position - m->size);
    memcpy(m->owned + m->position, buffer, (size_t)count);
    m->position = end;
    if (end > m->size) m->size = end;
    return count;
}

static toff_t memory_seek(thandle_t handle, toff_t offset, int whence) {
    nuketiff_memory *m = handle;
    uint64_t base = whence == SEEK_CUR ? m->position : whence == SEEK_END ? m->size : 0;
    uint64_t target = base + offset;
    if (target < base && (int64_t)offset >= 0) return (toff_t)-1;
    if (target > (uint64_t)SIZE_MAX / 2) return (toff_t)-1;
    m->position = (size_t)target;
    return target;
}

static int memory_close(thandle_t handle) { (void)handle; return 0; }
static toff_t memory_size(thandle_t handle) { return ((nuketiff_memory *)handle)->size; }
static int memory_map(thandle_t handle, void **base, toff_t *size) { (void)handle; (void)base; (void)size; return 0; }
static void memory_unmap(thandle_t handle, void *base, toff_t size) { (void)handle; (void)base; (void)size; }

// MARK: - Diagnostics

/// Where libtiff's messages go: errors to one diagnostics, warnings to the one the current phase
/// names (the decoder counts warnings while it reads a directory apart from those while it
/// decodes pixels).
typedef struct nuketiff_reporter {
    nuke_diagnostics *errors;
    nuke_diagnostics *warnings;
} nuketiff_reporter;

static int on_error(TIFF *tif, void *user, const char *module, const char *format, va_list arguments) {
    (void)tif;
    nuke_diagnostics *diagnostics = ((nuketiff_reporter *)user)->errors;
    char text[NUKE_MESSAGE_CAPACITY];
    vsnprintf(text, sizeof text, format, arguments);
    // "module: message", unless the message already starts with the module (libtiff's codecs
    // often name themselves). Formatting only: errors are never classified by their text.
    if (module != NULL && module[0] != '\0' && strncmp(text, module, strlen(module)) != 0) {
        char prefixed[NUKE_MESSAGE_CAPACITY];
        snprintf(prefixed, sizeof prefixed, "%s: %s", module, text);
        memcpy(text, prefixed, sizeof text);
    }
    // The first error is the cause; later ones ("Read error on strip") follow from it.
    if (diagnostics->message[0] == '\0') nuke_diagnostics_set_message(diagnostics, text);
    return 1;
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *format, va_list arguments) {
    (void)tif;
    (void)module;
    char text[NUKE_MESSAGE_CAPACITY];
    vsnprintf(text, sizeof text, format, arguments);
    nuke_diagnostics_add_warning(((nuketiff_reporter *)user)->warnings, text);
    return 1;
}

static TIFFOpenOptions *make_options(nuketiff_reporter *reporter, uint64_t max_single_alloc) {
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (options == NULL) return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, reporter);
    TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, reporter);
    if (max_single_alloc > 0) TIFFOpenOptionsSetMaxSingleMemAlloc(options, (tmsize_t)(max_single_alloc > INT64_MAX ? INT64_MAX : max_single_alloc));
    return options;
}

// MARK: - Decoder

struct nuketiff_decoder {
    nuke_diagnostics diagnostics;
    /// Warnings while libtiff reads a directory (unknown private tags, unsorted tags, old-style
    /// JPEG): the file's structure, tolerated; not data a strict decode refuses.
    nuke_diagnostics directory_diagnostics;
    nuketiff_reporter reporter;
    nuketiff_memory memory;
    TIFF *tif;
    nuketiff_info info;
    /// The palette, 8 bits per entry (a 16-bit colour map scaled, as libtiff's RGBA reader does).
    uint8_t palette[256 * 3];
    uint32_t palette_size;
    /// Samples of colour per pixel before any extra sample: 1 (gray, palette), 3, or 4 (CMYK).
    uint32_t color_samples;
};

nuketiff_decoder *nuketiff_decoder_create(void) { return calloc(1, sizeof(nuketiff_decoder)); }

void nuketiff_decoder_destroy(nuketiff_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->tif != NULL) TIFFClose(decoder->tif);
    free(decoder);
}

const nuke_diagnostics *nuketiff_decoder_diagnostics(const nuketiff_decoder *decoder) { return &decoder->diagnostics; }

const nuke_diagnostics *nuketiff_decoder_directory_diagnostics(const nuketiff_decoder *decoder) { return &decoder->directory_diagnostics; }

/// The status of a libtiff failure: INCOMPLETE when it read past the end of the data.
static nuke_status failure(nuketiff_decoder *decoder, const char *fallback) {
    if (decoder->diagnostics.message[0] == '\0') nuke_diagnostics_set_message(&decoder->diagnostics, fallback);
    return decoder->memory.read_past_end ? NUKE_STATUS_INCOMPLETE : NUKE_STATUS_CORRUPT;
}

/// Opens `decoder->memory` with libtiff and reads the first directory.
static nuke_status open_memory(nuketiff_decoder *decoder, uint64_t max_single_alloc) {
    decoder->reporter = (nuketiff_reporter){.errors = &decoder->diagnostics, .warnings = &decoder->directory_diagnostics};
    TIFFOpenOptions *options = make_options(&decoder->reporter, max_single_alloc);
    if (options == NULL) return NUKE_STATUS_INTERNAL;
    // "m": no memory mapping, so every read goes through memory_read and a truncated file is seen.
    decoder->tif = TIFFClientOpenExt("memory", "rm", &decoder->memory, memory_read, memory_write, memory_seek, memory_close,
                                     memory_size, memory_map, memory_unmap, options);
    TIFFOpenOptionsFree(options);
    if (decoder->tif == NULL) return failure(decoder, "not a readable TIFF file");
    return NUKE_STATUS_OK;
}

nuke_status nuketiff_decoder_open(nuketiff_decoder *decoder, const uint8_t *data, size_t size, uint64_t max_single_alloc) {
    decoder->memory = (nuketiff_memory){.data = data, .size = size};
    return open_memory(decoder, max_single_alloc);
}

nuke_status nuketiff_decoder_open_file(nuketiff_decoder *decoder, int fd, uint64_t size, uint64_t max_single_alloc) {
    if (size > (uint64_t)SIZE_MAX / 2) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the file is larger than this machine can address");
        return NUKE_STATUS_LIMIT;
    }
    decoder->memory = (nuketiff_memory){.size = (size_t)size, .reads_file = 1, .fd = fd};
    return open_memory(decoder, max_single_alloc);
}

uint32_t nuketiff_decoder_page_count(nuketiff_decoder *decoder) {
    return decoder->tif != NULL ? (uint32_t)TIFFNumberOfDirectories(decoder->tif) : 0;
}

static uint16_t field16(TIFF *tif, uint32_t tag, uint16_t fallback) {
    uint16_t value = fallback;
    return TIFFGetFieldDefaulted(tif, tag, &value) == 1 ? value : fallback;
}

/// Whether the shim reads the samples itself, and what it delivers.
static nuke_status describe(nuketiff_decoder *decoder, nuketiff_info *info) {
    TIFF *tif = decoder->tif;
    memset(info, 0, sizeof *info);
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &info->width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &info->height)) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the directory has no ImageWidth or ImageLength");
        return NUKE_STATUS_CORRUPT;
    }
    if (info->width == 0 || info->height == 0) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the image is empty (a zero width or height)");
        return NUKE_STATUS_CORRUPT;
    }
    info->bits_per_sample = field16(tif, TIFFTAG_BITSPERSAMPLE, 1);
    info->samples_per_pixel = field16(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
    info->planar_config = field16(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    info->compression = field16(tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
    info->sample_format = field16(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
    info->orientation = field16(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT);
    if (info->orientation < 1 || info->orientation > 8) info->orientation = 1;
    info->tiled = TIFFIsTiled(tif) ? 1 : 0;
    uint16_t photometric = 0;
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) {
        // As libtiff's RGBA reader assumes: black is zero for one sample, RGB for three or more.
        photometric = info->samples_per_pixel >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    }
    info->photometric = photometric;

    uint16_t extra_count = 0;
    uint16_t *extra = NULL;
    TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
    int color_channels;
    switch (photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE:
    case PHOTOMETRIC_PALETTE: color_channels = 1; break;
    case PHOTOMETRIC_SEPARATED: color_channels = 4; break;
    default: color_channels = 3; break;
    }
    decoder->color_samples = (uint32_t)color_channels;
    if (extra_count > 0 && extra != NULL && info->samples_per_pixel > color_channels) {
        if (extra[0] == EXTRASAMPLE_ASSOCALPHA) info->alpha = 1;
        else if (extra[0] == EXTRASAMPLE_UNASSALPHA) info->alpha = 2;
    } else if (extra_count == 0 && photometric == PHOTOMETRIC_RGB && info->samples_per_pixel == 4) {
        // libtiff's RGBA reader takes an undeclared fourth sample as associated alpha.
        info->alpha = 1;
    }

    int bits = info->bits_per_sample;
    int uint_samples = info->sample_format == SAMPLEFORMAT_UINT || info->sample_format == SAMPLEFORMAT_VOID;
    // 32-bit floating-point samples (nominally 0 to 1, as libvips reads them): gray or RGB, to 16 bits.
    int float_samples = info->sample_format == SAMPLEFORMAT_IEEEFP && bits == 32;
    int jpeg_ycbcr = photometric == PHOTOMETRIC_YCBCR && info->compression == COMPRESSION_JPEG;
    if (jpeg_ycbcr) {
        // libtiff's JPEG codec converts YCbCr to RGB itself: the samples read are then RGB.
        TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    }
    int direct = 0;
    if (float_samples && info->samples_per_pixel >= color_channels) {
        direct = photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE || photometric == PHOTOMETRIC_RGB;
    } else if (uint_samples && info->samples_per_pixel >= color_channels) {
        switch (photometric) {
        case PHOTOMETRIC_MINISBLACK:
        case PHOTOMETRIC_MINISWHITE: direct = bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16; break;
        case PHOTOMETRIC_PALETTE: direct = bits == 1 || bits == 2 || bits == 4 || bits == 8; break;
        case PHOTOMETRIC_RGB: direct = bits == 8 || bits == 16; break;
        case PHOTOMETRIC_YCBCR: direct = jpeg_ycbcr && bits == 8; break;
        case PHOTOMETRIC_SEPARATED: direct = (bits == 8 || bits == 16) && field16(tif, TIFFTAG_INKSET, INKSET_CMYK) == INKSET_CMYK; break;
        default: break;
        }
    }
    info->direct = direct;
    if (!direct) {
        if (photometric == PHOTOMETRIC_SEPARATED) {
            nuke_diagnostics_set_message(&decoder->diagnostics, "separated (CMYK) samples other than 8- or 16-bit CMYK ink");
            return NUKE_STATUS_UNSUPPORTED;
        }
        char message[1024] = "";
        if (!TIFFRGBAImageOK(tif, message)) {
            nuke_diagnostics_set_message(&decoder->diagnostics, message);
            return NUKE_STATUS_UNSUPPORTED;
        }
        // libtiff's RGBA reader premultiplies unassociated alpha.
        if (info->alpha != 0) info->premultiplied = 1;
    } else if (info->alpha == 1) {
        info->premultiplied = 1;
    }
    info->cmyk = photometric == PHOTOMETRIC_SEPARATED;
    int gray = photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE;
    info->channels = (gray ? 1 : 3) + (info->alpha != 0 ? 1 : 0);
    info->wide_available = direct && (bits == 16 || float_samples) && !info->cmyk;

    if (photometric == PHOTOMETRIC_PALETTE && direct) {
        uint16_t *red = NULL, *green = NULL, *blue = NULL;
        if (!TIFFGetField(tif, TIFFTAG_COLORMAP, &red, &green, &blue) || red == NULL || green == NULL || blue == NULL) {
            nuke_diagnostics_set_message(&decoder->diagnostics, "a palette image without a ColorMap");
            return NUKE_STATUS_CORRUPT;
        }
        uint32_t entries = 1u << bits;
        // A colour map of 8-bit values (all below 256) is taken as such, as libtiff's tools do.
        int eight = 1;
        for (uint32_t i = 0; i < entries; i++) {
            if (red[i] >= 256 || green[i] >= 256 || blue[i] >= 256) { eight = 0; break; }
        }
        for (uint32_t i = 0; i < entries; i++) {
            decoder->palette[3 * i] = (uint8_t)(eight ? red[i] : red[i] >> 8);
            decoder->palette[3 * i + 1] = (uint8_t)(eight ? green[i] : green[i] >> 8);
            decoder->palette[3 * i + 2] = (uint8_t)(eight ? blue[i] : blue[i] >> 8);
        }
        decoder->palette_size = entries;
    }
    if (info->tiled) {
        uint32_t tile_height = 0;
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &tile_height);
        info->band_rows = tile_height;
    } else if (direct && info->planar_config == PLANARCONFIG_CONTIG) {
        info->band_rows = 1;
    } else {
        uint32_t rows = info->height;
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows);
        info->band_rows = rows == 0 || rows > info->height ? info->height : rows;
    }
    if (info->band_rows == 0) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "a zero TileLength");
        return NUKE_STATUS_CORRUPT;
    }
    return NUKE_STATUS_OK;
}

nuke_status nuketiff_decoder_select(nuketiff_decoder *decoder, uint32_t index, nuketiff_info *info) {
    if (decoder->tif == NULL) return NUKE_STATUS_INTERNAL;
    decoder->reporter.warnings = &decoder->directory_diagnostics;
    if (index > 65535 || !TIFFSetDirectory(decoder->tif, (tdir_t)index)) return failure(decoder, "no such page");
    nuke_status status = describe(decoder, info);
    if (status == NUKE_STATUS_OK) decoder->info = *info;
    return status;
}

const uint8_t *nuketiff_decoder_icc(const nuketiff_decoder *decoder, uint32_t *size) {
    uint32_t length = 0;
    void *bytes = NULL;
    *size = 0;
    if (decoder->tif == NULL || !TIFFGetField(decoder->tif, TIFFTAG_ICCPROFILE, &length, &bytes) || bytes == NULL) return NULL;
    *size = length;
    return bytes;
}

// MARK: Rows

/// One output row from decoded samples: `samples` holds the row's pixels, interleaved (or, for
/// planar files, `planes[p]` holds plane p's row).
typedef struct row_converter {
    const nuketiff_info *info;
    const nuketiff_output *output;
    const uint8_t *palette;
    uint8_t *cmyk_row;    // width × 4, for CMYK
    uint8_t *rgb_row;     // width × 3, the converter's output
} row_converter;

/// Sample `index` (0-based across the row) of `bits` bits.
static inline uint32_t sample_at(const uint8_t *row, uint32_t index, int bits) {
    switch (bits) {
    case 8: return row[index];
    case 16: return ((const uint16_t *)row)[index];
    default: {
        size_t bit = (size_t)index * (size_t)bits;
        uint32_t byte = row[bit >> 3];
        return (byte >> (8 - bits - (bit & 7))) & ((1u << bits) - 1);
    }
    }
}

static inline uint8_t to8(uint32_t value, int bits) {
    switch (bits) {
    case 8: return (uint8_t)value;
    case 16: return (uint8_t)((value * 255u + 32767u) / 65535u);
    default: return (uint8_t)(value * 255u / ((1u << bits) - 1u));
    }
}

/// Sample `s` of pixel `x`: from the interleaved row, or from plane `s`'s row.
static inline uint32_t pixel_sample(const uint8_t *const *planes, int planar, uint32_t x, uint32_t s, uint32_t spp, int bits) {
    return planar ? sample_at(planes[s], x, bits) : sample_at(planes[0], x * spp + s, bits);
}

/// Floating-point samples, in place, to 16-bit ones: clamped to 0…1 (NaN as 0), rounded. Each
/// 2-byte result lands at or before the 4-byte sample it comes from.
static void floats_to_16(uint8_t *row, size_t count) {
    for (size_t i = 0; i < count; i++) {
        float value;
        memcpy(&value, row + 4 * i, 4);
        if (!(value > 0.0f)) value = 0.0f;
        if (value > 1.0f) value = 1.0f;
        uint16_t sample = (uint16_t)(value * 65535.0f + 0.5f);
        memcpy(row + 2 * i, &sample, 2);
    }
}

/// Converts one row of samples into `out` (the output format). Floating-point samples are
/// turned into 16-bit ones in their buffers first (`planes` are the converter's own band rows).
static void convert_row(const row_converter *c, const uint8_t *const *planes, uint8_t *out) {
    const nuketiff_info *info = c->info;
    int bits = info->bits_per_sample;
    if (info->sample_format == SAMPLEFORMAT_IEEEFP && bits == 32) {
        const int separate = info->planar_config == PLANARCONFIG_SEPARATE && info->samples_per_pixel > 1;
        const size_t count = separate ? info->width : (size_t)info->width * info->samples_per_pixel;
        for (uint32_t p = 0; p < (separate ? info->samples_per_pixel : 1u); p++) floats_to_16((uint8_t *)planes[p], count);
        bits = 16;
    }
    const uint32_t spp = info->samples_per_pixel;
    const int planar = info->planar_config == PLANARCONFIG_SEPARATE && spp > 1;
    const uint32_t width = info->width;
    const int channels = c->output->channels;
    const int alpha = info->alpha != 0;
    const int wide = c->output->wide;
    const uint32_t max = (1u << bits) - 1u;
    uint16_t *out16 = (uint16_t *)out;

    if (info->cmyk) {
        for (uint32_t x = 0; x < width; x++) {
            for (uint32_t s = 0; s < 4; s++) c->cmyk_row[4 * x + s] = to8(pixel_sample(planes, planar, x, s, spp, bits), bits);
        }
        c->output->cmyk(c->output->cmyk_context, c->cmyk_row, c->rgb_row, width);
        for (uint32_t x = 0; x < width; x++) {
            uint8_t *p = out + (size_t)x * (size_t)channels;
            p[0] = c->rgb_row[3 * x];
            p[1] = c->rgb_row[3 * x + 1];
            p[2] = c->rgb_row[3 * x + 2];
            if (alpha) p[3] = to8(pixel_sample(planes, planar, x, 4, spp, bits), bits);
        }
        return;
    }
    switch (info->photometric) {
    case PHOTOMETRIC_PALETTE:
        for (uint32_t x = 0; x < width; x++) {
            uint32_t index = pixel_sample(planes, planar, x, 0, spp, bits);
            uint8_t *p = out + (size_t)x * (size_t)channels;
            const uint8_t *entry = c->palette + 3 * (index & 0xFF);
            p[0] = entry[0];
            p[1] = entry[1];
            p[2] = entry[2];
            if (alpha) p[3] = to8(pixel_sample(planes, planar, x, 1, spp, bits), bits);
        }
        break;
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE: {
        const int invert = info->photometric == PHOTOMETRIC_MINISWHITE;
        for (uint32_t x = 0; x < width; x++) {
            uint32_t v = pixel_sample(planes, planar, x, 0, spp, bits);
            if (invert) v = max - v;
            if (wide) {
                out16[(size_t)x * channels] = (uint16_t)v;
                if (alpha) out16[(size_t)x * channels + 1] = (uint16_t)pixel_sample(planes, planar, x, 1, spp, bits);
            } else {
                out[(size_t)x * channels] = to8(v, bits);
                if (alpha) out[(size_t)x * channels + 1] = to8(pixel_sample(planes, planar, x, 1, spp, bits), bits);
            }
        }
        break;
    }
    default:   // RGB, and YCbCr that libtiff's JPEG codec turned into RGB
        if (!planar && !wide && bits == 8 && (uint32_t)channels == spp) {
            memcpy(out, planes[0], (size_t)width * spp);
            break;
        }
        for (uint32_t x = 0; x < width; x++) {
            for (int s = 0; s < channels; s++) {
                uint32_t v = pixel_sample(planes, planar, x, (uint32_t)s, spp, bits);
                if (wide) out16[(size_t)x * channels + s] = (uint16_t)v;
                else out[(size_t)x * channels + s] = to8(v, bits);
            }
        }
        break;
    }
}

/// Hands output row `y` over: into the full-size buffer, or to the sink.
static int deliver(const nuketiff_output *output, const uint8_t *row, size_t length, uint32_t y) {
    if (output->pixels != NULL) {
        memcpy(output->pixels + (size_t)y * output->stride, row, length);
        return 0;
    }
    return output->sink(output->sink_context, row, length, y);
}

/// The shim's own samples: scanlines (contiguous strips), strips of every plane, or rows of tiles.
static nuke_status read_direct(nuketiff_decoder *decoder, const nuketiff_output *output, const nuke_cancellation *cancellation) {
    TIFF *tif = decoder->tif;
    const nuketiff_info *info = &decoder->info;
    const uint32_t spp = info->samples_per_pixel;
    const int planar = info->planar_config == PLANARCONFIG_SEPARATE && spp > 1;
    // The planes the output needs: the colour samples and alpha, not further extra samples.
    const uint32_t needed = decoder->color_samples + (info->alpha != 0 ? 1 : 0);
    const uint32_t planes = planar ? (needed < spp ? needed : spp) : 1;
    const size_t out_length = (size_t)info->width * (size_t)output->channels * (output->wide ? 2 : 1);
    // One row of one plane, in bytes, as libtiff packs it.
    const uint64_t samples_per_row = (uint64_t)info->width * (planar ? 1 : spp);
    const size_t row_bytes = (size_t)((samples_per_row * info->bits_per_sample + 7) / 8);
    nuke_status status = NUKE_STATUS_OK;

    row_converter converter = {.info = info, .output = output, .palette = decoder->palette};
    uint8_t *out_row = malloc(out_length);
    uint8_t *band = NULL;
    if (info->cmyk) {
        converter.cmyk_row = malloc((size_t)info->width * 4);
        converter.rgb_row = malloc((size_t)info->width * 3);
    }
    if (out_row == NULL || (info->cmyk && (converter.cmyk_row == NULL || converter.rgb_row == NULL || output->cmyk == NULL))) {
        status = NUKE_STATUS_INTERNAL;
        goto done;
    }

    // Samples that are already the output (contiguous 8-bit RGB, RGBA, gray, gray+alpha, nothing
    // to invert or drop) skip the conversion: a scanline is read straight into the destination's
    // row, and a scanline or a band's row goes to the sink (the resampler) as libtiff decoded it.
    const int as_stored = !planar && !output->wide && info->bits_per_sample == 8 && !info->cmyk
        && (uint32_t)output->channels == spp
        && (info->photometric == PHOTOMETRIC_MINISBLACK || info->photometric == PHOTOMETRIC_RGB || info->photometric == PHOTOMETRIC_YCBCR)
        && row_bytes == out_length;

    if (!info->tiled && !planar) {
        // Scanline by scanline: libtiff decodes each strip as it goes, holding one row.
        band = malloc((size_t)TIFFScanlineSize(tif) + 16);
        if (band == NULL) { status = NUKE_STATUS_INTERNAL; goto done; }
        for (uint32_t y = 0; y < info->height; y++) {
            if ((y & 15) == 0 && nuke_is_cancelled(cancellation)) { status = NUKE_STATUS_CANCELLED; goto done; }
            if (as_stored && output->pixels != NULL) {
                if (TIFFReadScanline(tif, output->pixels + (size_t)y * output->stride, y, 0) < 0) {
                    status = failure(decoder, "reading a scanline failed");
                    goto done;
                }
                continue;
            }
            if (TIFFReadScanline(tif, band, y, 0) < 0) { status = failure(decoder, "reading a scanline failed"); goto done; }
            if (as_stored) {
                if (deliver(output, band, out_length, y)) { status = NUKE_STATUS_CANCELLED; goto done; }
                continue;
            }
            const uint8_t *rows[1] = {band};
            convert_row(&converter, rows, out_row);
            if (deliver(output, out_row, out_length, y)) { status = NUKE_STATUS_CANCELLED; goto done; }
        }
        goto done;
    }

    // Bands: a strip of every plane, or a row of tiles of every plane, decoded into
    // `planes` buffers of band_rows × row_bytes, then converted row by row.
    const uint32_t band_rows = info->band_rows;
    const uint64_t plane_bytes64 = (uint64_t)band_rows * row_bytes;
    if (plane_bytes64 * planes > (uint64_t)SIZE_MAX / 2) { status = NUKE_STATUS_LIMIT; goto done; }
    const size_t plane_bytes = (size_t)plane_bytes64;
    band = calloc(planes, plane_bytes);
    uint8_t *tile = NULL;
    uint32_t tile_width = 0, tile_height = 0;
    if (band == NULL) { status = NUKE_STATUS_INTERNAL; goto done; }
    if (info->tiled) {
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tile_width);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &tile_height);
        tmsize_t tile_size = TIFFTileSize(tif);
        if (tile_width == 0 || tile_height == 0 || tile_size <= 0) { status = failure(decoder, "an invalid tile size"); goto done; }
        tile = malloc((size_t)tile_size);
        if (tile == NULL) { status = NUKE_STATUS_INTERNAL; goto done; }
    }
    for (uint32_t top = 0; top < info->height; top += band_rows) {
        if (nuke_is_cancelled(cancellation)) { status = NUKE_STATUS_CANCELLED; break; }
        const uint32_t rows_here = info->height - top < band_rows ? info->height - top : band_rows;
        for (uint32_t p = 0; p < planes; p++) {
            uint8_t *plane = band + (size_t)p * plane_bytes;
            if (!info->tiled) {
                tstrip_t strip = TIFFComputeStrip(tif, top, (tsample_t)p);
                if (TIFFReadEncodedStrip(tif, strip, plane, (tmsize_t)((size_t)rows_here * row_bytes)) < 0) {
                    status = failure(decoder, "reading a strip failed");
                    goto tiles_done;
                }
                continue;
            }
            // Each tile's rows go to their place in the band.
            const size_t tile_row_bytes = (size_t)(((uint64_t)tile_width * (planar ? 1 : spp) * info->bits_per_sample + 7) / 8);
            for (uint32_t x = 0; x < info->width; x += tile_width) {
                if (TIFFReadTile(tif, tile, x, top, 0, (tsample_t)p) < 0) {
                    status = failure(decoder, "reading a tile failed");
                    goto tiles_done;
                }
                // Tiles start on whole bytes: x × bits is a whole number of bytes for the
                // tile widths TIFF allows (multiples of 16).
                const size_t offset = (size_t)(((uint64_t)x * (planar ? 1 : spp) * info->bits_per_sample) / 8);
                size_t copy = row_bytes - offset < tile_row_bytes ? row_bytes - offset : tile_row_bytes;
                for (uint32_t r = 0; r < rows_here; r++) {
                    memcpy(plane + (size_t)r * row_bytes + offset, tile + (size_t)r * tile_row_bytes, copy);
                }
            }
        }
        for (uint32_t r = 0; r < rows_here; r++) {
            if (as_stored) {
                if (deliver(output, band + (size_t)r * row_bytes, out_length, top + r)) { status = NUKE_STATUS_CANCELLED; goto tiles_done; }
                continue;
            }
            const uint8_t *rows[5] = {NULL};
            for (uint32_t p = 0; p < planes; p++) rows[p] = band + (size_t)p * plane_bytes + (size_t)r * row_bytes;
            convert_row(&converter, rows, out_row);
            if (deliver(output, out_row, out_length, top + r)) { status = NUKE_STATUS_CANCELLED; goto tiles_done; }
        }
    }
tiles_done:
    free(tile);
done:
    free(band);
    free(out_row);
    free(converter.cmyk_row);
    free(converter.rgb_row);
    return status;
}

/// libtiff's RGBA reader, a band at a time, for what the shim does not read itself.
static nuke_status read_rgba(nuketiff_decoder *decoder, const nuketiff_output *output, const nuke_cancellation *cancellation) {
    TIFF *tif = decoder->tif;
    const nuketiff_info *info = &decoder->info;
    char message[1024] = "";
    TIFFRGBAImage image;
    if (!TIFFRGBAImageBegin(&image, tif, 1, message)) {
        nuke_diagnostics_set_message(&decoder->diagnostics, message);
        return NUKE_STATUS_UNSUPPORTED;
    }
    // Rows in the file's order: the Orientation tag is reported, and applied by the caller.
    image.req_orientation = image.orientation;
    const uint32_t band_rows = info->band_rows;
    const size_t out_length = (size_t)info->width * (size_t)output->channels;
    nuke_status status = NUKE_STATUS_OK;
    uint32_t *band = NULL;
    uint8_t *out_row = malloc(out_length);
    if ((uint64_t)band_rows * info->width > (uint64_t)SIZE_MAX / 8) {
        status = NUKE_STATUS_LIMIT;
    } else {
        band = malloc((size_t)band_rows * info->width * 4);
    }
    if (status == NUKE_STATUS_OK && (band == NULL || out_row == NULL)) status = NUKE_STATUS_INTERNAL;
    for (uint32_t top = 0; status == NUKE_STATUS_OK && top < info->height; top += band_rows) {
        if (nuke_is_cancelled(cancellation)) { status = NUKE_STATUS_CANCELLED; break; }
        const uint32_t rows_here = info->height - top < band_rows ? info->height - top : band_rows;
        image.row_offset = (int)top;
        image.col_offset = 0;
        if (!TIFFRGBAImageGet(&image, band, info->width, rows_here)) { status = failure(decoder, "libtiff's RGBA reader failed"); break; }
        for (uint32_t r = 0; r < rows_here && status == NUKE_STATUS_OK; r++) {
            const uint32_t *pixels = band + (size_t)r * info->width;
            for (uint32_t x = 0; x < info->width; x++) {
                uint32_t v = pixels[x];
                uint8_t *p = out_row + (size_t)x * (size_t)output->channels;
                switch (output->channels) {
                case 1: p[0] = (uint8_t)TIFFGetR(v); break;
                case 2: p[0] = (uint8_t)TIFFGetR(v); p[1] = (uint8_t)TIFFGetA(v); break;
                case 3: p[0] = (uint8_t)TIFFGetR(v); p[1] = (uint8_t)TIFFGetG(v); p[2] = (uint8_t)TIFFGetB(v); break;
                default: p[0] = (uint8_t)TIFFGetR(v); p[1] = (uint8_t)TIFFGetG(v); p[2] = (uint8_t)TIFFGetB(v); p[3] = (uint8_t)TIFFGetA(v); break;
                }
            }
            if (deliver(output, out_row, out_length, top + r)) status = NUKE_STATUS_CANCELLED;
        }
    }
    TIFFRGBAImageEnd(&image);
    free(band);
    free(out_row);
    return status;
}

nuke_status nuketiff_decoder_read(nuketiff_decoder *decoder, const nuketiff_output *output, const nuke_cancellation *cancellation) {
    const nuketiff_info *info = &decoder->info;
    if (decoder->tif == NULL || info->width == 0) return NUKE_STATUS_INTERNAL;
    if (output->channels != info->channels || (output->wide && !info->wide_available) || (output->pixels == NULL && output->sink == NULL)) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "the output does not match the image");
        return NUKE_STATUS_INTERNAL;
    }
    decoder->reporter.warnings = &decoder->diagnostics;
    return info->direct ? read_direct(decoder, output, cancellation) : read_rgba(decoder, output, cancellation);
}

// MARK: - Encoder

struct nuketiff_encoder {
    nuke_diagnostics diagnostics;
    nuketiff_reporter reporter;
    nuketiff_memory memory;
    TIFF *tif;
    nuketiff_encode_params params;
    uint32_t row;
    int page_open;
};

nuketiff_encoder *nuketiff_encoder_create(void) { return calloc(1, sizeof(nuketiff_encoder)); }

void nuketiff_encoder_destroy(nuketiff_encoder *encoder) {
    if (encoder == NULL) return;
    if (encoder->tif != NULL) TIFFClose(encoder->tif);
    free(encoder->memory.owned);
    free(encoder);
}

const nuke_diagnostics *nuketiff_encoder_diagnostics(const nuketiff_encoder *encoder) { return &encoder->diagnostics; }

static nuke_status encode_failure(nuketiff_encoder *encoder, const char *fallback) {
    if (encoder->diagnostics.message[0] == '\0') nuke_diagnostics_set_message(&encoder->diagnostics, fallback);
    return NUKE_STATUS_INTERNAL;
}

nuke_status nuketiff_encoder_start_page(nuketiff_encoder *encoder, const nuketiff_encode_params *params) {
    if (encoder->page_open) return encode_failure(encoder, "a page is already open");
    if (params->channels < 1 || params->channels > 4 || (params->bits != 8 && params->bits != 16) || params->width == 0 || params->height == 0) {
        return encode_failure(encoder, "unsupported image layout");
    }
    if (encoder->tif == NULL) {
        encoder->reporter = (nuketiff_reporter){.errors = &encoder->diagnostics, .warnings = &encoder->diagnostics};
        TIFFOpenOptions *options = make_options(&encoder->reporter, 0);
        if (options == NULL) return NUKE_STATUS_INTERNAL;
        encoder->tif = TIFFClientOpenExt("memory", "w", &encoder->memory, memory_read, memory_write, memory_seek, memory_close,
                                         memory_size, memory_map, memory_unmap, options);
        TIFFOpenOptionsFree(options);
        if (encoder->tif == NULL) return encode_failure(encoder, "libtiff could not start the file");
    }
    TIFF *tif = encoder->tif;
    encoder->params = *params;
    encoder->row = 0;
    const int gray = params->channels <= 2;
    const int alpha = params->channels == 2 || params->channels == 4;
    int ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, params->width)
        && TIFFSetField(tif, TIFFTAG_IMAGELENGTH, params->height)
        && TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)params->channels)
        && TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)params->bits)
        && TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, gray ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB)
        && TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
        && TIFFSetField(tif, TIFFTAG_ORIENTATION, (uint16_t)(params->orientation >= 1 && params->orientation <= 8 ? params->orientation : 1))
        && TIFFSetField(tif, TIFFTAG_COMPRESSION, (uint16_t)params->compression);
    if (ok && alpha) {
        uint16_t extra = params->premultiplied ? EXTRASAMPLE_ASSOCALPHA : EXTRASAMPLE_UNASSALPHA;
        ok = TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    if (ok && (params->compression == COMPRESSION_LZW || params->compression == COMPRESSION_ADOBE_DEFLATE)) {
        ok = TIFFSetField(tif, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL);
        if (ok && params->compression == COMPRESSION_ADOBE_DEFLATE && params->level >= 1 && params->level <= 9) {
            ok = TIFFSetField(tif, TIFFTAG_ZIPQUALITY, params->level);
        }
    }
    if (ok && params->icc != NULL && params->icc_size > 0) ok = TIFFSetField(tif, TIFFTAG_ICCPROFILE, params->icc_size, params->icc);
    if (ok) ok = TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0));
    if (!ok) return encode_failure(encoder, "libtiff refused a tag");
    encoder->page_open = 1;
    return NUKE_STATUS_OK;
}

nuke_status nuketiff_encoder_write_rows(nuketiff_encoder *encoder, const uint8_t *rows, size_t stride, uint32_t count) {
    if (!encoder->page_open || encoder->row + count > encoder->params.height) return encode_failure(encoder, "more rows than the image has");
    // TIFFWriteScanline may modify its buffer (the predictor works in place): give it a copy.
    tmsize_t size = TIFFScanlineSize(encoder->tif);
    uint8_t *line = size > 0 ? malloc((size_t)size) : NULL;
    if (line == NULL) return NUKE_STATUS_INTERNAL;
    nuke_status status = NUKE_STATUS_OK;
    for (uint32_t r = 0; r < count; r++) {
        memcpy(line, rows + (size_t)r * stride, (size_t)size);
        if (TIFFWriteScanline(encoder->tif, line, encoder->row, 0) < 0) {
            status = encode_failure(encoder, "libtiff could not write a row");
            break;
        }
        encoder->row++;
    }
    free(line);
    return status;
}

nuke_status nuketiff_encoder_end_page(nuketiff_encoder *encoder) {
    if (!encoder->page_open || encoder->row != encoder->params.height) return encode_failure(encoder, "the page is missing rows");
    encoder->page_open = 0;
    if (!TIFFWriteDirectory(encoder->tif)) return encode_failure(encoder, "libtiff could not write the directory");
    return NUKE_STATUS_OK;
}

nuke_status nuketiff_encoder_finish(nuketiff_encoder *encoder) {
    if (encoder->tif == NULL || encoder->page_open) return encode_failure(encoder, "no complete page to finish");
    TIFFClose(encoder->tif);
    encoder->tif = NULL;
    return NUKE_STATUS_OK;
}

const uint8_t *nuketiff_encoder_output(const nuketiff_encoder *encoder, size_t *size) {
    *size = encoder->tif == NULL ? encoder->memory.size : 0;
    return encoder->tif == NULL ? encoder->memory.owned : NULL;
}

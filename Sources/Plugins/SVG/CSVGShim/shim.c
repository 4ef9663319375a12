#include "CSVGShimTesting.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "CLibSVG.h"
#include "nuke_library.h"

// librsvg is opened on first use (nuke_library.h): with cairo, glib, pango, fontconfig and the
// rest it brings 42 shared libraries, about 14 M instructions and 9 MB to load in every process
// that links it. cairo's and glib's functions are looked up through librsvg's handle, which
// searches the libraries it depends on.

/// Every librsvg, cairo and glib function this shim calls.
#define NUKESVG_FUNCTIONS(X) \
    X(cairo_create) \
    X(cairo_destroy) \
    X(cairo_format_stride_for_width) \
    X(cairo_image_surface_create_for_data) \
    X(cairo_scale) \
    X(cairo_status) \
    X(cairo_status_to_string) \
    X(cairo_surface_destroy) \
    X(cairo_surface_flush) \
    X(cairo_surface_status) \
    X(g_error_free) \
    X(g_object_unref) \
    X(rsvg_handle_get_intrinsic_dimensions) \
    X(rsvg_handle_get_intrinsic_size_in_pixels) \
    X(rsvg_handle_new_from_data) \
    X(rsvg_handle_render_document) \
    X(rsvg_handle_set_dpi)

static struct {
    NUKESVG_FUNCTIONS(NUKE_LIBRARY_FIELD)
} librsvg;
static pthread_once_t librsvg_once = PTHREAD_ONCE_INIT;
static int librsvg_loaded;
static char librsvg_error[NUKE_MESSAGE_CAPACITY];
static char librsvg_version[32];

static void load_librsvg(void) {
    static const char *const names[] = {"librsvg-2.so.2", "librsvg-2.so", "librsvg-2.2.dylib", "librsvg-2.dylib", NULL};
#define NUKESVG_FUNCTION(name) NUKE_LIBRARY_FUNCTION(librsvg, name)
    const nuke_library_function functions[] = {NUKESVG_FUNCTIONS(NUKESVG_FUNCTION)};
#undef NUKESVG_FUNCTION
    void *handle = nuke_library_load(names, functions, sizeof functions / sizeof *functions, librsvg_error, sizeof librsvg_error);
    if (handle == NULL) return;
    const unsigned int *major = nuke_library_symbol(handle, "rsvg_major_version", librsvg_error, sizeof librsvg_error);
    const unsigned int *minor = nuke_library_symbol(handle, "rsvg_minor_version", librsvg_error, sizeof librsvg_error);
    const unsigned int *micro = nuke_library_symbol(handle, "rsvg_micro_version", librsvg_error, sizeof librsvg_error);
    if (major == NULL || minor == NULL || micro == NULL) return;
    snprintf(librsvg_version, sizeof librsvg_version, "%u.%u.%u", *major, *minor, *micro);
    librsvg_loaded = 1;
}

nuke_status nukesvg_load(nuke_diagnostics *diagnostics) {
    pthread_once(&librsvg_once, load_librsvg);
    return nuke_library_status(librsvg_loaded, librsvg_error, diagnostics);
}

const char *nukesvg_version(void) {
    return nukesvg_load(NULL) == NUKE_STATUS_OK ? librsvg_version : "";
}

struct nukesvg_document {
    RsvgHandle *handle;
    nuke_diagnostics diagnostics;
};

nukesvg_document *nukesvg_document_create(void) {
    return calloc(1, sizeof(nukesvg_document));
}

void nukesvg_document_destroy(nukesvg_document *document) {
    if (document == NULL) return;
    if (document->handle != NULL) librsvg.g_object_unref(document->handle);
    free(document);
}

const nuke_diagnostics *nukesvg_document_diagnostics(const nukesvg_document *document) {
    return &document->diagnostics;
}

static nuke_status fail(nukesvg_document *document, GError *error, const char *fallback) {
    nuke_diagnostics_set_message(&document->diagnostics, error != NULL && error->message != NULL ? error->message : fallback);
    if (error != NULL) librsvg.g_error_free(error);
    return NUKE_STATUS_CORRUPT;
}

nuke_status nukesvg_document_load(nukesvg_document *document, const uint8_t *data, size_t length, double dpi) {
    nuke_status loaded = nukesvg_load(&document->diagnostics);
    if (loaded != NUKE_STATUS_OK) return loaded;
    GError *error = NULL;
    document->handle = librsvg.rsvg_handle_new_from_data(data, length, &error);
    if (document->handle == NULL) return fail(document, error, "librsvg could not parse the document");
    if (dpi > 0) librsvg.rsvg_handle_set_dpi(document->handle, dpi);
    return NUKE_STATUS_OK;
}

void nukesvg_document_size(nukesvg_document *document, nukesvg_size *size) {
    memset(size, 0, sizeof *size);
    double width = 0, height = 0;
    if (librsvg.rsvg_handle_get_intrinsic_size_in_pixels(document->handle, &width, &height)) {
        size->has_size = 1;
        size->width = width;
        size->height = height;
    }
    int has_width = 0, has_height = 0, has_viewbox = 0;
    RsvgLength w, h;
    RsvgRectangle viewbox;
    librsvg.rsvg_handle_get_intrinsic_dimensions(document->handle, &has_width, &w, &has_height, &h, &has_viewbox, &viewbox);
    if (has_viewbox) {
        size->has_viewbox = 1;
        size->viewbox_x = viewbox.x;
        size->viewbox_y = viewbox.y;
        size->viewbox_width = viewbox.width;
        size->viewbox_height = viewbox.height;
    }
}

/// (c * 255 + a / 2) / a for every alpha a (row) and premultiplied channel c ≤ a (column);
/// row 0 is all zeros. Built once; 64 KiB.
static const uint8_t *unpremultiply_table(void) {
    static uint8_t table[256 * 256];
    static int ready = 0;
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        for (uint32_t a = 1; a < 256; a++) {
            for (uint32_t c = 0; c < 256; c++) {
                uint32_t v = c > a ? 255 : (c * 255 + a / 2) / a;
                table[(a << 8) | c] = (uint8_t)v;
            }
        }
        // Racing threads write the same bytes; the flag only saves rebuilding.
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    return table;
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
/// The table's values, eight pixels at a time with AVX2. Blocks of eight opaque pixels only swap
/// bytes and blocks of eight transparent ones become zeros (most of a typical rendering). Other
/// blocks compute q = (c * 255 + a / 2) / a as (c * 255 + a / 2) * (1 / a) in single precision,
/// one division per block instead of one per channel: the numerator is exact (an integer below
/// 2^24), and the product is within 2^-23 relative, under 4e-5, of q ≤ 256. A q that is not an
/// integer is at least 1/a ≥ 1/255 below the next one, so adding 1/1024 before truncating gives
/// floor(q) exactly, as the integer division; a c above a (not a valid premultiplied value) gives
/// q > 255, clamped to 255 as the table does. Checked for every (a, c) and against the table on
/// random words. Little-endian words R | G << 8 | B << 16 | A << 24 are the bytes R, G, B, A.
__attribute__((target("avx2"))) static void unpremultiply_avx2(uint32_t *argb, size_t count) {
    const __m256i swap = _mm256_setr_epi8(2, 1, 0, 3, 6, 5, 4, 7, 10, 9, 8, 11, 14, 13, 12, 15,
                                          2, 1, 0, 3, 6, 5, 4, 7, 10, 9, 8, 11, 14, 13, 12, 15);
    const __m256i low = _mm256_set1_epi32(0xff);
    const __m256i zero = _mm256_setzero_si256();
    const __m256 one = _mm256_set1_ps(1.0f), scale = _mm256_set1_ps(255.0f), nudge = _mm256_set1_ps(1.0f / 1024.0f);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256i p = _mm256_loadu_si256((const __m256i *)(argb + i));
        __m256i a = _mm256_srli_epi32(p, 24);
        if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(a, low)) == -1) {
            _mm256_storeu_si256((__m256i *)(argb + i), _mm256_shuffle_epi8(p, swap));
            continue;
        }
        __m256i transparent = _mm256_cmpeq_epi32(a, zero);
        if (_mm256_movemask_epi8(transparent) == -1) {
            _mm256_storeu_si256((__m256i *)(argb + i), zero);
            continue;
        }
        __m256 reciprocal = _mm256_div_ps(one, _mm256_max_ps(_mm256_cvtepi32_ps(a), one));
        __m256 half = _mm256_cvtepi32_ps(_mm256_srli_epi32(a, 1));
#define NUKESVG_CHANNEL(c) _mm256_min_epi32(low, _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps( \
            _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(c), scale), half), reciprocal), nudge)))
        __m256i r = NUKESVG_CHANNEL(_mm256_and_si256(_mm256_srli_epi32(p, 16), low));
        __m256i g = NUKESVG_CHANNEL(_mm256_and_si256(_mm256_srli_epi32(p, 8), low));
        __m256i b = NUKESVG_CHANNEL(_mm256_and_si256(p, low));
#undef NUKESVG_CHANNEL
        __m256i word = _mm256_or_si256(_mm256_or_si256(r, _mm256_slli_epi32(g, 8)),
                                       _mm256_or_si256(_mm256_slli_epi32(b, 16), _mm256_slli_epi32(a, 24)));
        _mm256_storeu_si256((__m256i *)(argb + i), _mm256_andnot_si256(transparent, word));
    }
    for (; i < count; i++) {
        uint32_t p = argb[i];
        uint32_t a = p >> 24;
        if (a == 0) { argb[i] = 0; continue; }
        uint32_t r = (((p >> 16) & 0xff) * 255 + a / 2) / a, g = (((p >> 8) & 0xff) * 255 + a / 2) / a, b = ((p & 0xff) * 255 + a / 2) / a;
        argb[i] = (r > 255 ? 255 : r) | (g > 255 ? 255 : g) << 8 | (b > 255 ? 255 : b) << 16 | a << 24;
    }
}
#endif

void nukesvg_unpremultiply(uint8_t *pixels, size_t count, int32_t allow_simd) {
    uint32_t *argb = (uint32_t *)pixels;
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    if (allow_simd && __builtin_cpu_supports("avx2")) {
        unpremultiply_avx2(argb, count);
        return;
    }
#endif
    const uint8_t *table = unpremultiply_table();
    for (size_t i = 0; i < count; i++) {
        uint32_t p = argb[i];
        uint32_t a = p >> 24;
        uint8_t *out = pixels + 4 * i;
        if (a == 255) {
            out[0] = (uint8_t)(p >> 16); out[1] = (uint8_t)(p >> 8); out[2] = (uint8_t)p; out[3] = 255;
        } else {
            const uint8_t *row = table + (a << 8);
            out[0] = row[(p >> 16) & 0xff]; out[1] = row[(p >> 8) & 0xff]; out[2] = row[p & 0xff]; out[3] = (uint8_t)a;
        }
    }
}

nuke_status nukesvg_document_render(nukesvg_document *document, uint8_t *pixels, int32_t width, int32_t height,
                                    double document_width, double document_height, int32_t premultiplied) {
    int stride = librsvg.cairo_format_stride_for_width(NUKE_CAIRO_FORMAT_ARGB32, width);
    if (stride != width * 4) {
        nuke_diagnostics_set_message(&document->diagnostics, "cairo wants a different row stride");
        return NUKE_STATUS_INTERNAL;
    }
    memset(pixels, 0, (size_t)stride * (size_t)height);
    cairo_surface_t *surface = librsvg.cairo_image_surface_create_for_data(pixels, NUKE_CAIRO_FORMAT_ARGB32, width, height, stride);
    if (librsvg.cairo_surface_status(surface) != NUKE_CAIRO_STATUS_SUCCESS) {
        nuke_diagnostics_set_message(&document->diagnostics, librsvg.cairo_status_to_string(librsvg.cairo_surface_status(surface)));
        librsvg.cairo_surface_destroy(surface);
        return NUKE_STATUS_INTERNAL;
    }
    cairo_t *cr = librsvg.cairo_create(surface);
    if (document_width > 0 && document_height > 0) librsvg.cairo_scale(cr, width / document_width, height / document_height);
    RsvgRectangle viewport = {0, 0, document_width > 0 ? document_width : width, document_height > 0 ? document_height : height};
    GError *error = NULL;
    int ok = librsvg.rsvg_handle_render_document(document->handle, cr, &viewport, &error);
    int status = librsvg.cairo_status(cr);
    librsvg.cairo_destroy(cr);
    librsvg.cairo_surface_flush(surface);
    librsvg.cairo_surface_destroy(surface);
    if (!ok) return fail(document, error, "librsvg could not render the document");
    if (status != NUKE_CAIRO_STATUS_SUCCESS) {
        nuke_diagnostics_set_message(&document->diagnostics, librsvg.cairo_status_to_string(status));
        return NUKE_STATUS_INTERNAL;
    }
    // Premultiplied native-endian ARGB (a uint32 per pixel) to straight RGBA bytes, in place,
    // rounding as cairo's PNG writer does: c * 255 / a, to nearest. A table of every (a, c)
    // avoids a division per channel (semi-transparent gradients make most pixels need one).
    size_t count = (size_t)width * (size_t)height;
    uint32_t *argb = (uint32_t *)pixels;
    if (premultiplied) {
        // Only the byte order changes: ARGB words to R, G, B, A bytes.
        for (size_t i = 0; i < count; i++) {
            uint32_t p = argb[i];
            argb[i] = ((p >> 16) & 0xff) | (p & 0xff00) | ((p & 0xff) << 16) | (p & 0xff000000u);
        }
        return NUKE_STATUS_OK;
    }
    nukesvg_unpremultiply(pixels, count, 1);
    return NUKE_STATUS_OK;
}

size_t nukesvg_gunzip_prefix(const uint8_t *data, size_t length, uint8_t *out, size_t capacity) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return 0;
    stream.next_in = (Bytef *)data;
    stream.avail_in = (uInt)(length > 1 << 20 ? 1 << 20 : length);
    stream.next_out = out;
    stream.avail_out = (uInt)capacity;
    inflate(&stream, Z_SYNC_FLUSH);
    size_t made = capacity - stream.avail_out;
    inflateEnd(&stream);
    return made;
}

int64_t nukesvg_gunzip(const uint8_t *data, size_t length, uint8_t *out, size_t capacity) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return -1;
    stream.next_out = out;
    stream.avail_out = (uInt)(capacity > UINT32_MAX ? UINT32_MAX : capacity);
    size_t offset = 0;
    int status = Z_OK;
    while (status == Z_OK) {
        if (stream.avail_in == 0 && offset < length) {
            size_t piece = length - offset > (1u << 30) ? (1u << 30) : length - offset;
            stream.next_in = (Bytef *)(data + offset);
            stream.avail_in = (uInt)piece;
            offset += piece;
        }
        if (stream.avail_out == 0) {
            inflateEnd(&stream);
            return -2;
        }
        status = inflate(&stream, Z_NO_FLUSH);
        if (status == Z_BUF_ERROR && stream.avail_in == 0 && offset >= length) break;
    }
    int64_t made = (int64_t)stream.total_out;
    inflateEnd(&stream);
    return status == Z_STREAM_END || status == Z_BUF_ERROR ? made : -1;
}

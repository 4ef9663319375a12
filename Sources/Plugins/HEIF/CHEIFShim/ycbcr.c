#include "CHEIFShimTesting.h"

// libheif 1.15 turns every decoded 8-bit YCbCr image into planar RGB with one scalar loop in
// single-precision floats (Op_YCbCr_to_RGB<uint8_t> in heif_colorconversion.cc): about 80
// instructions a pixel, a quarter of an AVIF thumbnail's time. This file does the same arithmetic,
// operation for operation in the same order, four pixels at a time, so its output is libheif's to
// the bit:
//
//     y' = Y, cb' = Cb - 128, cr' = Cr - 128
//     limited range: y' = (y' - 16) * 1.1689, cb' *= 1.1429, cr' *= 1.1429
//     R = y' + r_cr * cr',  G = (y' + g_cb * cb') + g_cr * cr',  B = y' + b_cb * cb'
//     each truncated after adding 0.5, then clamped to 0…255
//
// Chroma is upsampled by repetition (the sample at x >> 1), as libheif does. No multiply is fused
// with an add: libheif's Debian build targets x86-64 without FMA, and so does this file.

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

int32_t nukeheif_ycbcr_matrix_make(int32_t has_profile, uint16_t matrix_coefficients, int32_t full_range,
                                   nukeheif_ycbcr_matrix *matrix) {
    // libheif's default, also for a matrix it has no Kr and Kb for (get_Kr_Kb returns 0, 0).
    float r_cr = 1.402f, g_cb = -0.344136f, g_cr = -0.714136f, b_cb = 1.772f;
    if (!has_profile) {
        matrix_coefficients = 2;
        full_range = 1;
    }
    float kr = 0, kb = 0;
    switch (matrix_coefficients) {
    case 0:  // GBR, YCgCo and the chromaticity-derived matrices take other paths in libheif
    case 8:
    case 12:
    case 13:
        return 0;
    case 1: kr = 0.2126f; kb = 0.0722f; break;
    case 4: kr = 0.30f; kb = 0.11f; break;
    case 5:
    case 6: kr = 0.299f; kb = 0.114f; break;
    case 7: kr = 0.212f; kb = 0.087f; break;
    case 9:
    case 10: kr = 0.2627f; kb = 0.0593f; break;
    default: break;
    }
    if (kr != 0 || kb != 0) {
        // In libheif's order (get_YCbCr_to_RGB_coefficients), each step rounded to a float.
        r_cr = 2 * (-kr + 1);
        g_cb = 2 * kb * (-kb + 1) / (kb + kr - 1);
        g_cr = 2 * kr * (-kr + 1) / (kb + kr - 1);
        b_cb = 2 * (-kb + 1);
    }
    matrix->r_cr = r_cr;
    matrix->g_cb = g_cb;
    matrix->g_cr = g_cr;
    matrix->b_cb = b_cb;
    matrix->full_range = full_range ? 1 : 0;
    return 1;
}

static inline uint8_t clip(float value) {
    long x = (long)(value + 0.5f);
    return x < 0 ? 0 : x > 255 ? 255 : (uint8_t)x;
}

void nukeheif_ycbcr_to_rgb_row_reference(const uint8_t *y, const uint8_t *cb, const uint8_t *cr, int32_t chroma_shift,
                                         int32_t from, int32_t width, const nukeheif_ycbcr_matrix *m,
                                         uint8_t *r, uint8_t *g, uint8_t *b) {
    for (int32_t x = from; x < width; x++) {
        int32_t cx = x >> chroma_shift;
        float yv = (float)y[x];
        float cbv = (float)(cb[cx] - 128);
        float crv = (float)(cr[cx] - 128);
        if (!m->full_range) {
            yv = (yv - 16.0f) * 1.1689f;
            cbv = cbv * 1.1429f;
            crv = crv * 1.1429f;
        }
        r[x] = clip(yv + m->r_cr * crv);
        g[x] = clip(yv + m->g_cb * cbv + m->g_cr * crv);
        b[x] = clip(yv + m->b_cb * cbv);
    }
}

#if defined(__SSE2__)
/// Four luma samples (already floats, range applied) and their chroma terms to four RGB bytes
/// per channel, in the low 32 bits of each result's lanes packed by the caller.
static inline void rgb4(__m128 yv, __m128 rc, __m128 gb, __m128 gr, __m128 bb, __m128i *r, __m128i *g, __m128i *b) {
    const __m128 half = _mm_set1_ps(0.5f);
    *r = _mm_cvttps_epi32(_mm_add_ps(_mm_add_ps(yv, rc), half));
    *g = _mm_cvttps_epi32(_mm_add_ps(_mm_add_ps(_mm_add_ps(yv, gb), gr), half));
    *b = _mm_cvttps_epi32(_mm_add_ps(_mm_add_ps(yv, bb), half));
}

/// Eight int32 lanes (two vectors) to eight bytes, clamped to 0…255 (saturating packs).
static inline void store8(__m128i lo, __m128i hi, uint8_t *out) {
    __m128i words = _mm_packs_epi32(lo, hi);
    _mm_storel_epi64((__m128i *)out, _mm_packus_epi16(words, words));
}
#endif

void nukeheif_ycbcr_to_rgb_row(const uint8_t *y, const uint8_t *cb, const uint8_t *cr, int32_t chroma_shift,
                               int32_t width, const nukeheif_ycbcr_matrix *m, uint8_t *r, uint8_t *g, uint8_t *b) {
    int32_t x = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i bias = _mm_set1_epi32(128);
    const __m128 r_cr = _mm_set1_ps(m->r_cr), g_cb = _mm_set1_ps(m->g_cb), g_cr = _mm_set1_ps(m->g_cr), b_cb = _mm_set1_ps(m->b_cb);
    const __m128 luma_offset = _mm_set1_ps(16.0f), luma_scale = _mm_set1_ps(1.1689f), chroma_scale = _mm_set1_ps(1.1429f);
    const int limited = !m->full_range;
    for (; x + 8 <= width; x += 8) {
        // Eight luma samples as two vectors of four floats.
        __m128i y16 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(y + x)), zero);
        __m128 y0 = _mm_cvtepi32_ps(_mm_unpacklo_epi16(y16, zero));
        __m128 y1 = _mm_cvtepi32_ps(_mm_unpackhi_epi16(y16, zero));
        if (limited) {
            y0 = _mm_mul_ps(_mm_sub_ps(y0, luma_offset), luma_scale);
            y1 = _mm_mul_ps(_mm_sub_ps(y1, luma_offset), luma_scale);
        }
        // The chroma samples under them: four repeated twice, or eight.
        __m128 cb0, cb1, cr0, cr1;
        if (chroma_shift) {
            int32_t cb4, cr4;
            __builtin_memcpy(&cb4, cb + (x >> 1), 4);
            __builtin_memcpy(&cr4, cr + (x >> 1), 4);
            __m128 cbf = _mm_cvtepi32_ps(_mm_sub_epi32(_mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(cb4), zero), zero), bias));
            __m128 crf = _mm_cvtepi32_ps(_mm_sub_epi32(_mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(cr4), zero), zero), bias));
            cb0 = _mm_unpacklo_ps(cbf, cbf);
            cb1 = _mm_unpackhi_ps(cbf, cbf);
            cr0 = _mm_unpacklo_ps(crf, crf);
            cr1 = _mm_unpackhi_ps(crf, crf);
        } else {
            __m128i cb16 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(cb + x)), zero);
            __m128i cr16 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(cr + x)), zero);
            cb0 = _mm_cvtepi32_ps(_mm_sub_epi32(_mm_unpacklo_epi16(cb16, zero), bias));
            cb1 = _mm_cvtepi32_ps(_mm_sub_epi32(_mm_unpackhi_epi16(cb16, zero), bias));
            cr0 = _mm_cvtepi32_ps(_mm_sub_epi32(_mm_unpacklo_epi16(cr16, zero), bias));
            cr1 = _mm_cvtepi32_ps(_mm_sub_epi32(_mm_unpackhi_epi16(cr16, zero), bias));
        }
        if (limited) {
            cb0 = _mm_mul_ps(cb0, chroma_scale);
            cb1 = _mm_mul_ps(cb1, chroma_scale);
            cr0 = _mm_mul_ps(cr0, chroma_scale);
            cr1 = _mm_mul_ps(cr1, chroma_scale);
        }
        __m128i r0, g0, b0, r1, g1, b1;
        rgb4(y0, _mm_mul_ps(r_cr, cr0), _mm_mul_ps(g_cb, cb0), _mm_mul_ps(g_cr, cr0), _mm_mul_ps(b_cb, cb0), &r0, &g0, &b0);
        rgb4(y1, _mm_mul_ps(r_cr, cr1), _mm_mul_ps(g_cb, cb1), _mm_mul_ps(g_cr, cr1), _mm_mul_ps(b_cb, cb1), &r1, &g1, &b1);
        store8(r0, r1, r + x);
        store8(g0, g1, g + x);
        store8(b0, b1, b + x);
    }
#endif
    nukeheif_ycbcr_to_rgb_row_reference(y, cb, cr, chroma_shift, x, width, m, r, g, b);
}

#ifndef CHEIFSHIM_TESTING_H
#define CHEIFSHIM_TESTING_H

// What the shim's own C shares between its files and its tests reach, in a module of its own
// (CHEIFShimTesting, see module.modulemap): the Swift module imports CHEIFShim only, and
// nothing here is part of its API.

#include "CHEIFShim.h"

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - YCbCr to RGB, as libheif 1.15 does it (ycbcr.c)

/// libheif 1.15's YCbCr → RGB coefficients for one image.
typedef struct nukeheif_ycbcr_matrix {
    float r_cr;
    float g_cb;
    float g_cr;
    float b_cb;
    int32_t full_range;
} nukeheif_ycbcr_matrix;

/// The coefficients libheif 1.15 uses for an image with an nclx profile (`has_profile` 1) or
/// without (0: BT.601, full range). Returns 0 for the matrices it converts another way (0: GBR,
/// 8: YCgCo, 12 and 13: derived from the primaries), which this conversion leaves to libheif.
int32_t nukeheif_ycbcr_matrix_make(int32_t has_profile, uint16_t matrix_coefficients, int32_t full_range,
                                   nukeheif_ycbcr_matrix *_Nonnull matrix);

/// How many decoded images NukeHEIF's decoder plugin has converted to RGB itself on this thread
/// (for tests: the rest were converted by libheif). The primary image and thumbnails are decoded
/// on the thread that calls libheif.
long nukeheif_converted_image_count(void);

/// One row of 8-bit YCbCr to planar RGB, equal to the bit to libheif 1.15's conversion
/// (`Op_YCbCr_to_RGB<uint8_t>`), vectorised. `chroma_shift` is 1 when chroma has half the width
/// (4:2:0, 4:2:2), 0 for 4:4:4; `cb` and `cr` are the chroma row under this luma row.
void nukeheif_ycbcr_to_rgb_row(const uint8_t *_Nonnull y, const uint8_t *_Nonnull cb, const uint8_t *_Nonnull cr,
                               int32_t chroma_shift, int32_t width, const nukeheif_ycbcr_matrix *_Nonnull matrix,
                               uint8_t *_Nonnull r, uint8_t *_Nonnull g, uint8_t *_Nonnull b);

/// The same conversion one pixel at a time, for the pixels from `from` to `width` (the vector
/// loop's tail, and the reference it is tested against).
void nukeheif_ycbcr_to_rgb_row_reference(const uint8_t *_Nonnull y, const uint8_t *_Nonnull cb, const uint8_t *_Nonnull cr,
                                         int32_t chroma_shift, int32_t from, int32_t width,
                                         const nukeheif_ycbcr_matrix *_Nonnull matrix,
                                         uint8_t *_Nonnull r, uint8_t *_Nonnull g, uint8_t *_Nonnull b);

#ifdef __cplusplus
}
#endif

#endif

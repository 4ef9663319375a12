#ifndef CSVGSHIM_TESTING_H
#define CSVGSHIM_TESTING_H

// What the shim's own C shares between its files and its tests reach, in a module of its own
// (CSVGShimTesting, see module.modulemap): the Swift module imports CSVGShim only, and
// nothing here is part of its API.

#include "CSVGShim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Premultiplied native-endian ARGB words to straight-alpha R, G, B, A bytes, in place, with
/// rounding as cairo's PNG writer does: (c * 255 + a / 2) / a, and 0 where a is 0. With
/// `allow_simd`, AVX2 when the processor has it (the same values); else a table of every (a, c).
void nukesvg_unpremultiply(uint8_t *_Nonnull pixels, size_t count, int32_t allow_simd);

#ifdef __cplusplus
}
#endif

#endif

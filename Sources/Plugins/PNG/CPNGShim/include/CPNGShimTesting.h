#ifndef CPNGSHIM_TESTING_H
#define CPNGSHIM_TESTING_H

// What the shim's own C shares between its files and its tests reach, in a module of its own
// (CPNGShimTesting, see module.modulemap): the Swift module imports CPNGShim only, and
// nothing here is part of its API.

#include "CPNGShim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The same CRC computed by zlib's `crc32`, for tests.
uint32_t nukepng_crc32_reference(uint32_t crc, const uint8_t *_Nullable bytes, size_t count);

/// The shim's Adler-32 (SSE2 where built), and zlib's `adler32`, for tests.
uint32_t nukepng_testing_adler32(uint32_t adler, const uint8_t *_Nullable bytes, size_t count);
uint32_t nukepng_adler32_reference(uint32_t adler, const uint8_t *_Nullable bytes, size_t count);

/// Leaves this decoder's image data to libpng (call before the header is ready), so that tests
/// compare the shim's own IDAT path with libpng's on the same file.
void nukepng_testing_use_libpng_only(nukepng_decoder *_Nonnull decoder);

/// 1 once the header is ready when the shim's own IDAT path reads the image data.
int nukepng_testing_uses_own_idat(const nukepng_decoder *_Nonnull decoder);

/// Unfilters two Paeth rows, the second below the first (`prev0` is the row above the first).
void nukepng_testing_paeth_pair(uint8_t *_Nonnull dst0, const uint8_t *_Nonnull src0, const uint8_t *_Nonnull prev0,
                                uint8_t *_Nonnull dst1, const uint8_t *_Nonnull src1, size_t count, int bpp);

/// Unfilters one row (PNG filter 0...4) with the SSE2 path (`simd`, where built) or byte by byte.
void nukepng_testing_unfilter(int filter, uint8_t *_Nonnull dst, const uint8_t *_Nonnull src, const uint8_t *_Nonnull prev,
                              size_t count, int bpp, int simd);

#ifdef __cplusplus
}
#endif

#endif

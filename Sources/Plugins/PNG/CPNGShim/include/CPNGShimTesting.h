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

#ifdef __cplusplus
}
#endif

#endif

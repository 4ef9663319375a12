#ifndef CBENCHMARKBASELINE_H
#define CBENCHMARKBASELINE_H
#include <stddef.h>
#include <stdint.h>

// Direct calls of libjpeg-turbo and libpng, the way a C programmer would write them, so the
// benchmarks can print the framework's cost as a ratio of the C library's own.
// Each returns 0 on success and fills `width`, `height` and `components`; `out` must hold
// width × height × components bytes (call with out == NULL to read the header only).

int baseline_jpeg_decode(const uint8_t *data, size_t size, int scale_num,
                         uint8_t *out, size_t out_size, int *width, int *height, int *components);

// Feeds the JPEG in `chunks` equal pieces through a suspending source in buffered-image
// mode and renders every newly completed scan into `out`, as a progressive viewer does.
// Returns the number of previews rendered (the final image included), or -1 on error.
int baseline_jpeg_progressive(const uint8_t *data, size_t size, int chunks,
                              uint8_t *out, size_t out_size);

int baseline_png_decode(const uint8_t *data, size_t size,
                        uint8_t *out, size_t out_size, int *width, int *height, int *components);

#endif

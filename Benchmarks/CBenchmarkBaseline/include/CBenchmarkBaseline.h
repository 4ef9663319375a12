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

/// libwebp's one-call decoder into `out` (RGBA when `rgba`, else RGB); with `scaled_width` and
/// `scaled_height` above 0, libwebp's scaler. Returns 0 on success.
int baseline_webp_decode(const uint8_t *data, size_t size, int rgba, int scaled_width, int scaled_height,
                         uint8_t *out, size_t out_size, int *width, int *height);

/// libwebp's incremental decoder fed `chunks` equal pieces, asking for the decoded rows after
/// each, as a viewer would. Returns the number of pieces that produced new rows, or -1.
int baseline_webp_incremental(const uint8_t *data, size_t size, int chunks, int rgba, uint8_t *out, size_t out_size);

/// What a viewer without a kept decoder does: for each of `chunks` growing prefixes, a fresh
/// libwebp incremental decoder given the whole prefix, then its rows read. Returns 0, or -1.
int baseline_webp_redecode_prefixes(const uint8_t *data, size_t size, int chunks, int rgba, uint8_t *out, size_t out_size);

/// libwebp's encoder at the same settings as NukeWebP; returns the file size, or 0.
size_t baseline_webp_encode(const uint8_t *pixels, int width, int height, int stride, int rgba,
                            float quality, int lossless, int method);

/// libheif: reads the file and decodes the primary image to interleaved RGB (libheif's own image).
/// Returns 0 on success.
int baseline_heif_decode(const uint8_t *data, size_t size);

/// libheif: encodes 8-bit RGB as HEIC (x265) at `quality`; returns the file size, or 0.
size_t baseline_heif_encode(const uint8_t *rgb, int width, int height, int stride, int quality);

/// Little CMS: opens `icc`, makes a perceptual transform from it to sRGB for 8-bit RGB, and runs
/// `cmsDoTransform` over `width × height` packed pixels into a buffer of its own. Returns 0.
int baseline_lcms_to_srgb(const uint8_t *icc, size_t icc_size, const uint8_t *rgb, int width, int height);

/// librsvg: renders the document into a `width × height` ARGB surface of its own. Returns 0.
int baseline_svg_render(const uint8_t *data, size_t size, int width, int height);
/// librsvg's own way to straight-alpha RGBA: `rsvg_handle_get_pixbuf` renders the document at
/// its intrinsic size and converts cairo's premultiplied pixels to a GdkPixbuf. Returns 0.
int baseline_svg_render_pixbuf(const uint8_t *data, size_t size);

/// giflib: reads the whole GIF from memory (DGifSlurp, which also de-interlaces) and composites
/// every frame onto an RGBA canvas as browsers do: transparent pixels leave the canvas, frames are
/// clipped to the screen, disposal to background clears the rectangle and disposal to previous
/// restores it. Returns the number of frames, or -1.
int baseline_gif_play(const uint8_t *data, size_t size);

/// libtiff's scanline reader over a contiguous 8-bit file (TIFFFdOpen on an in-memory file).
int baseline_tiff_decode(const uint8_t *data, size_t size, uint8_t *out, size_t out_size, int *width, int *height, int *components);

/// libjxl's decoder into `out` (8-bit RGB), one thread, the whole file at once
/// (`JxlDecoderSetImageOutBuffer`, as djxl does). Returns 0, or -1.
int baseline_jxl_decode(const uint8_t *data, size_t size, uint8_t *out, size_t out_size);

#endif

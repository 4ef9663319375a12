#ifndef CSVGSHIM_H
#define CSVGSHIM_H

// NukeSVG's C shim over librsvg and cairo (Docs/CShims.md). librsvg reports failures as a GError
// (kept as the message; every load or render failure is the document's fault, so CORRUPT),
// cairo as a cairo_status_t. Neither longjmps. The shim keeps glib and cairo types out of Swift.

#include <stddef.h>
#include <stdint.h>
#include "nuke_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opens librsvg if this process has not yet (it is loaded on first use, not linked): OK, or
/// UNSUPPORTED with the dynamic loader's message in `diagnostics` when it is not installed.
/// `nukesvg_document_load` loads it too.
nuke_status nukesvg_load(nuke_diagnostics *_Nullable diagnostics);

/// librsvg's version, such as "2.54.7"; "" when librsvg cannot be loaded.
const char *_Nonnull nukesvg_version(void);

/// A parsed SVG document.
typedef struct nukesvg_document nukesvg_document;

/// What the document says about its size.
typedef struct nukesvg_size {
    /// 1 when the root element's width and height resolve to pixels (at the DPI), in `width` and `height`.
    int32_t has_size;
    double width;
    double height;
    /// 1 when the root element has a viewBox.
    int32_t has_viewbox;
    double viewbox_x;
    double viewbox_y;
    double viewbox_width;
    double viewbox_height;
} nukesvg_size;

nukesvg_document *_Nullable nukesvg_document_create(void);
void nukesvg_document_destroy(nukesvg_document *_Nullable document);
const nuke_diagnostics *_Nonnull nukesvg_document_diagnostics(const nukesvg_document *_Nonnull document);

/// Parses `data` (SVG, or gzip-compressed SVGZ) with no base URL, so that references to other
/// files and URLs do not load; physical units resolve at `dpi`.
///
/// The corresponding librsvg functions are `rsvg_handle_new_from_data` and `rsvg_handle_set_dpi`.
nuke_status nukesvg_document_load(nukesvg_document *_Nonnull document, const uint8_t *_Nonnull data, size_t length, double dpi);

/// The document's intrinsic size.
///
/// The corresponding librsvg functions are `rsvg_handle_get_intrinsic_size_in_pixels` and
/// `rsvg_handle_get_intrinsic_dimensions`.
void nukesvg_document_size(nukesvg_document *_Nonnull document, nukesvg_size *_Nonnull size);

/// Renders the document, whose size is `document_width × document_height` pixels, onto a
/// `width × height` transparent canvas (scaled by width / document_width horizontally and
/// height / document_height vertically, as rsvg-convert does, so that rounding to whole pixels
/// leaves no partly covered edge) and writes straight-alpha RGBA into `pixels` (width × 4 bytes
/// per row): cairo's premultiplied native-endian ARGB, unpremultiplied with rounding as cairo's
/// PNG writer does, or kept premultiplied (`premultiplied` 1) and only reordered.
///
/// The corresponding librsvg function is `rsvg_handle_render_document`.
nuke_status nukesvg_document_render(nukesvg_document *_Nonnull document, uint8_t *_Nonnull pixels, int32_t width, int32_t height,
                                    double document_width, double document_height, int32_t premultiplied);

/// Inflates the start of gzip data into `out` (at most `capacity` bytes); returns the bytes made.
size_t nukesvg_gunzip_prefix(const uint8_t *_Nonnull data, size_t length, uint8_t *_Nonnull out, size_t capacity);

/// Decompresses a whole gzip stream into `out`: the bytes made, -2 when they do not fit in
/// `capacity`, -1 for data that is not gzip (or is corrupt before anything could be made).
int64_t nukesvg_gunzip(const uint8_t *_Nonnull data, size_t length, uint8_t *_Nonnull out, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif

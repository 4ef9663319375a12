#ifndef NUKESVG_RSVG_ABI_H
#define NUKESVG_RSVG_ABI_H
// The part of librsvg 2.54, cairo and glib that NukeSVG's shim calls, declared here rather than
// included: their headers need glib's include directories, which come only from pkg-config, and
// pkg-config's flags for glib carry `-pthread`, which SwiftPM refuses with a warning on every
// build. These are the libraries' public, stable C ABIs (librsvg ≥ 2.52, cairo 1.x, glib 2.x).
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

typedef struct _RsvgHandle RsvgHandle;
typedef struct _cairo cairo_t;
typedef struct _cairo_surface cairo_surface_t;

/// glib's GError: the message is what NukeSVG reports.
typedef struct _GError {
    uint32_t domain;
    int code;
    char *message;
} GError;

typedef struct {
    double x;
    double y;
    double width;
    double height;
} RsvgRectangle;

typedef struct {
    double length;
    int unit;
} RsvgLength;

extern const unsigned int rsvg_major_version;
extern const unsigned int rsvg_minor_version;
extern const unsigned int rsvg_micro_version;

RsvgHandle *rsvg_handle_new_from_data(const uint8_t *data, size_t data_len, GError **error);
void rsvg_handle_set_dpi(RsvgHandle *handle, double dpi);
int rsvg_handle_get_intrinsic_size_in_pixels(RsvgHandle *handle, double *out_width, double *out_height);
void rsvg_handle_get_intrinsic_dimensions(RsvgHandle *handle, int *out_has_width, RsvgLength *out_width, int *out_has_height,
                                          RsvgLength *out_height, int *out_has_viewbox, RsvgRectangle *out_viewbox);
int rsvg_handle_render_document(RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport, GError **error);
void g_object_unref(void *object);
void g_error_free(GError *error);

/// cairo_format_t's CAIRO_FORMAT_ARGB32, and cairo_status_t's CAIRO_STATUS_SUCCESS.
#define NUKE_CAIRO_FORMAT_ARGB32 0
#define NUKE_CAIRO_STATUS_SUCCESS 0
int cairo_format_stride_for_width(int format, int width);
cairo_surface_t *cairo_image_surface_create_for_data(unsigned char *data, int format, int width, int height, int stride);
int cairo_surface_status(cairo_surface_t *surface);
void cairo_surface_flush(cairo_surface_t *surface);
void cairo_surface_destroy(cairo_surface_t *surface);
cairo_t *cairo_create(cairo_surface_t *target);
void cairo_scale(cairo_t *cr, double sx, double sy);
int cairo_status(cairo_t *cr);
void cairo_destroy(cairo_t *cr);
const char *cairo_status_to_string(int status);

#endif

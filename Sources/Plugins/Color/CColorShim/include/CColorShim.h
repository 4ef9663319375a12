#ifndef NUKE_COLOR_SHIM_H
#define NUKE_COLOR_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include "nuke_shim.h"

/// NukeColor's shim over Little CMS 2 (Docs/CShims.md). lcms2 reports errors through a log
/// handler, not longjmp: each profile and transform gets its own lcms context whose handler
/// writes into the caller's `nuke_diagnostics`, so messages never cross threads.

/// An opened or built profile, with its own lcms context.
typedef struct nukecolor_profile nukecolor_profile;
/// A transform between two profiles for one pixel layout.
typedef struct nukecolor_transform nukecolor_transform;

/// The data colour space of a profile.
typedef enum nukecolor_space {
    NUKECOLOR_SPACE_OTHER = 0,
    NUKECOLOR_SPACE_RGB = 1,
    NUKECOLOR_SPACE_GRAY = 2,
    NUKECOLOR_SPACE_CMYK = 3,
} nukecolor_space;

/// The pixel layouts a transform converts (input and output alike, alpha copied through).
typedef enum nukecolor_layout {
    NUKECOLOR_RGB8 = 0,
    NUKECOLOR_RGBA8 = 1,
    NUKECOLOR_RGB16 = 2,
    NUKECOLOR_RGBA16 = 3,
    NUKECOLOR_GRAY8 = 4,
    NUKECOLOR_GRAYA8 = 5,
    NUKECOLOR_GRAY16 = 6,
    NUKECOLOR_GRAYA16 = 7,
    /// 8-bit CMYK, ink amounts (255 = full ink).
    NUKECOLOR_CMYK8 = 8,
    /// 8-bit CMYK as Adobe writes it (255 = no ink).
    NUKECOLOR_CMYK8_INVERTED = 9,
} nukecolor_layout;

/// Opens an ICC profile from memory (copied). NULL with the message in `diagnostics`.
nukecolor_profile *_Nullable nukecolor_profile_open(const uint8_t *_Nonnull bytes, size_t count, nuke_diagnostics *_Nonnull diagnostics);

/// lcms2's built-in sRGB profile.
nukecolor_profile *_Nullable nukecolor_profile_srgb(nuke_diagnostics *_Nonnull diagnostics);

/// A gray profile with D65 white and sRGB's tone curve: what gray pixels are in "sRGB".
nukecolor_profile *_Nullable nukecolor_profile_srgb_gray(nuke_diagnostics *_Nonnull diagnostics);

/// An RGB profile from chromaticities (`xy`: white, red, green, blue; 8 values) and a transfer
/// function: 1 sRGB's, 2 BT.709's (also BT.2020's), 3 linear, 4 gamma `gamma`.
nukecolor_profile *_Nullable nukecolor_profile_rgb(const double *_Nonnull xy, int transfer, double gamma, nuke_diagnostics *_Nonnull diagnostics);

/// The profile's data colour space.
nukecolor_space nukecolor_profile_space(const nukecolor_profile *_Nonnull profile);

/// The profile's description (its `desc` tag, English), or "" — written into `text`.
void nukecolor_profile_description(const nukecolor_profile *_Nonnull profile, char *_Nonnull text, size_t capacity);

/// Writes the profile as ICC bytes into a buffer freed with `free`; NULL on failure.
uint8_t *_Nullable nukecolor_profile_save(const nukecolor_profile *_Nonnull profile, size_t *_Nonnull count, nuke_diagnostics *_Nonnull diagnostics);

void nukecolor_profile_free(nukecolor_profile *_Nullable profile);

/// Frees what `nukecolor_profile_save` returned.
void nukecolor_buffer_free(void *_Nullable buffer);

/// A transform from `source` (pixels in `input`) to `target` (pixels in `output`), with
/// lcms2's perceptual intent (as jpgicc and tificc default), alpha copied, and no cache (so
/// one transform may run on several threads at once). NULL with the message in `diagnostics`.
///
/// `exact` asks for lcms2's unoptimised pipeline: no lookup table, so the result is transicc's to
/// the level. Worth it for a CMYK profile (a 4-D table, up to 25 levels off near the gamut's edge)
/// on a small image: making the high-resolution table takes about 90 ms, the exact pipeline
/// about 0.3 µs a pixel more. Matrix-shaper RGB transforms are exact either way.
nukecolor_transform *_Nullable nukecolor_transform_create(const nukecolor_profile *_Nonnull source, nukecolor_layout input,
                                                         const nukecolor_profile *_Nonnull target, nukecolor_layout output,
                                                         int exact, nuke_diagnostics *_Nonnull diagnostics);

/// A transform from an ICC profile (`source_icc`, or lcms2's sRGB when NULL) to sRGB (colour or
/// gray, as `output`), kept for the life of the process: a service that converts the same camera
/// profile again pays for lcms2's set-up once. At most 32 are kept (later ones are made and
/// returned with `*owned` set: the caller frees those). The cache's lookups and insertions hold a
/// pthread mutex; the transforms themselves are made with cmsFLAGS_NOCACHE, which lcms2 documents
/// as safe to run on several threads at once. NULL with the message in `diagnostics`.
const nukecolor_transform *_Nullable nukecolor_transform_to_srgb(const uint8_t *_Nullable source_icc, size_t source_size,
                                                                nukecolor_layout input, nukecolor_layout output,
                                                                int *_Nonnull owned, nuke_diagnostics *_Nonnull diagnostics);

/// Converts `height` rows of `width` pixels; the strides are in bytes.
void nukecolor_transform_rows(const nukecolor_transform *_Nonnull transform, const void *_Nonnull input, size_t input_stride,
                              void *_Nonnull output, size_t output_stride, uint32_t width, uint32_t height);

/// One row, in the shape of NukeCore's `CMYKRowConverter.Function`: `context` is the transform.
void nukecolor_transform_row(void *_Nullable context, const uint8_t *_Nullable input, uint8_t *_Nullable output, uint32_t width);

void nukecolor_transform_free(nukecolor_transform *_Nullable transform);

/// The linked lcms2 version (2.14 → 2140).
int nukecolor_library_version(void);

#endif

#include "CColorShim.h"
#include "CLibColor.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct nukecolor_profile {
    cmsContext context;
    cmsHPROFILE handle;
};

struct nukecolor_transform {
    cmsContext context;
    cmsHTRANSFORM handle;
};

/// lcms2's log handler: the message goes to the diagnostics the context was made with, first
/// one kept.
static void nukecolor_log(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)code;
    nuke_diagnostics *diagnostics = cmsGetContextUserData(context);
    if (diagnostics != NULL && diagnostics->message[0] == '\0') nuke_diagnostics_set_message(diagnostics, text);
}

/// A context whose errors go to `diagnostics` while it is being set up; afterwards the handler
/// is pointed at nothing, since the diagnostics belong to the call, not the object.
static cmsContext nukecolor_context(nuke_diagnostics *diagnostics) {
    cmsContext context = cmsCreateContext(NULL, diagnostics);
    if (context != NULL) cmsSetLogErrorHandlerTHR(context, nukecolor_log);
    return context;
}

static void nukecolor_detach(cmsContext context) {
    cmsSetLogErrorHandlerTHR(context, NULL);
}

static nukecolor_profile *nukecolor_wrap(cmsContext context, cmsHPROFILE handle, nuke_diagnostics *diagnostics, const char *what) {
    if (handle == NULL) {
        if (diagnostics->message[0] == '\0') nuke_diagnostics_set_message(diagnostics, what);
        cmsDeleteContext(context);
        return NULL;
    }
    nukecolor_profile *profile = malloc(sizeof *profile);
    if (profile == NULL) {
        cmsCloseProfile(handle);
        cmsDeleteContext(context);
        nuke_diagnostics_set_message(diagnostics, "out of memory");
        return NULL;
    }
    nukecolor_detach(context);
    profile->context = context;
    profile->handle = handle;
    return profile;
}

nukecolor_profile *nukecolor_profile_open(const uint8_t *bytes, size_t count, nuke_diagnostics *diagnostics) {
    cmsContext context = nukecolor_context(diagnostics);
    if (context == NULL) { nuke_diagnostics_set_message(diagnostics, "lcms2 could not make a context"); return NULL; }
    return nukecolor_wrap(context, cmsOpenProfileFromMemTHR(context, bytes, (cmsUInt32Number)count), diagnostics, "not an ICC profile lcms2 can read");
}

nukecolor_profile *nukecolor_profile_srgb(nuke_diagnostics *diagnostics) {
    cmsContext context = nukecolor_context(diagnostics);
    if (context == NULL) { nuke_diagnostics_set_message(diagnostics, "lcms2 could not make a context"); return NULL; }
    return nukecolor_wrap(context, cmsCreate_sRGBProfileTHR(context), diagnostics, "lcms2 could not build sRGB");
}

/// sRGB's tone curve: lcms2's parametric type 4, as cmsCreate_sRGBProfile builds it.
static cmsToneCurve *nukecolor_srgb_curve(cmsContext context) {
    const cmsFloat64Number parameters[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
    return cmsBuildParametricToneCurve(context, 4, parameters);
}

/// BT.709's (and BT.2020's) inverse OETF as a parametric curve: V = ((L + 0.099) / 1.099)^(1/0.45)
/// above 0.081, L / 4.5 below.
static cmsToneCurve *nukecolor_bt709_curve(cmsContext context) {
    const cmsFloat64Number parameters[5] = {1.0 / 0.45, 1.0 / 1.099, 0.099 / 1.099, 1.0 / 4.5, 0.081};
    return cmsBuildParametricToneCurve(context, 4, parameters);
}

nukecolor_profile *nukecolor_profile_srgb_gray(nuke_diagnostics *diagnostics) {
    cmsContext context = nukecolor_context(diagnostics);
    if (context == NULL) { nuke_diagnostics_set_message(diagnostics, "lcms2 could not make a context"); return NULL; }
    cmsToneCurve *curve = nukecolor_srgb_curve(context);
    cmsHPROFILE handle = curve != NULL ? cmsCreateGrayProfileTHR(context, cmsD50_xyY(), curve) : NULL;
    if (curve != NULL) cmsFreeToneCurve(curve);
    return nukecolor_wrap(context, handle, diagnostics, "lcms2 could not build a gray profile");
}

nukecolor_profile *nukecolor_profile_rgb(const double *xy, int transfer, double gamma, nuke_diagnostics *diagnostics) {
    cmsContext context = nukecolor_context(diagnostics);
    if (context == NULL) { nuke_diagnostics_set_message(diagnostics, "lcms2 could not make a context"); return NULL; }
    cmsCIExyY white = {xy[0], xy[1], 1.0};
    cmsCIExyYTRIPLE primaries = {{xy[2], xy[3], 1.0}, {xy[4], xy[5], 1.0}, {xy[6], xy[7], 1.0}};
    cmsToneCurve *curve = NULL;
    switch (transfer) {
    case 1: curve = nukecolor_srgb_curve(context); break;
    case 2: curve = nukecolor_bt709_curve(context); break;
    case 3: curve = cmsBuildGamma(context, 1.0); break;
    default: curve = cmsBuildGamma(context, gamma); break;
    }
    cmsHPROFILE handle = NULL;
    if (curve != NULL) {
        cmsToneCurve *curves[3] = {curve, curve, curve};
        handle = cmsCreateRGBProfileTHR(context, &white, &primaries, curves);
        cmsFreeToneCurve(curve);
    }
    return nukecolor_wrap(context, handle, diagnostics, "lcms2 could not build an RGB profile");
}

nukecolor_space nukecolor_profile_space(const nukecolor_profile *profile) {
    switch (cmsGetColorSpace(profile->handle)) {
    case cmsSigRgbData: return NUKECOLOR_SPACE_RGB;
    case cmsSigGrayData: return NUKECOLOR_SPACE_GRAY;
    case cmsSigCmykData: return NUKECOLOR_SPACE_CMYK;
    default: return NUKECOLOR_SPACE_OTHER;
    }
}

void nukecolor_profile_description(const nukecolor_profile *profile, char *text, size_t capacity) {
    if (capacity == 0) return;
    text[0] = '\0';
    cmsUInt32Number n = cmsGetProfileInfoASCII(profile->handle, cmsInfoDescription, "en", "US", text, (cmsUInt32Number)capacity);
    if (n == 0) text[0] = '\0';
    text[capacity - 1] = '\0';
}

uint8_t *nukecolor_profile_save(const nukecolor_profile *profile, size_t *count, nuke_diagnostics *diagnostics) {
    cmsUInt32Number size = 0;
    if (!cmsSaveProfileToMem(profile->handle, NULL, &size) || size == 0) {
        nuke_diagnostics_set_message(diagnostics, "lcms2 could not write the profile");
        return NULL;
    }
    uint8_t *bytes = malloc(size);
    if (bytes == NULL) { nuke_diagnostics_set_message(diagnostics, "out of memory"); return NULL; }
    if (!cmsSaveProfileToMem(profile->handle, bytes, &size)) {
        free(bytes);
        nuke_diagnostics_set_message(diagnostics, "lcms2 could not write the profile");
        return NULL;
    }
    *count = size;
    return bytes;
}

void nukecolor_profile_free(nukecolor_profile *profile) {
    if (profile == NULL) return;
    cmsCloseProfile(profile->handle);
    cmsDeleteContext(profile->context);
    free(profile);
}

void nukecolor_buffer_free(void *buffer) {
    free(buffer);
}

static cmsUInt32Number nukecolor_format(nukecolor_layout layout) {
    switch (layout) {
    case NUKECOLOR_RGB8: return TYPE_RGB_8;
    case NUKECOLOR_RGBA8: return TYPE_RGBA_8;
    case NUKECOLOR_RGB16: return TYPE_RGB_16;
    case NUKECOLOR_RGBA16: return TYPE_RGBA_16;
    case NUKECOLOR_GRAY8: return TYPE_GRAY_8;
    case NUKECOLOR_GRAYA8: return TYPE_GRAYA_8;
    case NUKECOLOR_GRAY16: return TYPE_GRAY_16;
    case NUKECOLOR_GRAYA16: return TYPE_GRAYA_16;
    case NUKECOLOR_CMYK8: return TYPE_CMYK_8;
    case NUKECOLOR_CMYK8_INVERTED: return TYPE_CMYK_8_REV;
    }
    return 0;
}

nukecolor_transform *nukecolor_transform_create(const nukecolor_profile *source, nukecolor_layout input,
                                                const nukecolor_profile *target, nukecolor_layout output,
                                                int exact, nuke_diagnostics *diagnostics) {
    cmsContext context = nukecolor_context(diagnostics);
    if (context == NULL) { nuke_diagnostics_set_message(diagnostics, "lcms2 could not make a context"); return NULL; }
    cmsUInt32Number flags = cmsFLAGS_NOCACHE | cmsFLAGS_COPY_ALPHA;
    // CMYK profiles are 4-D lookup tables. The high-resolution precalculation brings lcms2's
    // optimised table closer to the exact transform than its default (what jpgicc uses).
    if (exact) flags |= cmsFLAGS_NOOPTIMIZE;
    else if (input == NUKECOLOR_CMYK8 || input == NUKECOLOR_CMYK8_INVERTED) flags |= cmsFLAGS_HIGHRESPRECALC;
    cmsHTRANSFORM handle = cmsCreateTransformTHR(context, source->handle, nukecolor_format(input), target->handle,
                                                 nukecolor_format(output), INTENT_PERCEPTUAL, flags);
    if (handle == NULL) {
        if (diagnostics->message[0] == '\0') nuke_diagnostics_set_message(diagnostics, "lcms2 could not make the transform");
        cmsDeleteContext(context);
        return NULL;
    }
    nukecolor_transform *transform = malloc(sizeof *transform);
    if (transform == NULL) {
        cmsDeleteTransform(handle);
        cmsDeleteContext(context);
        nuke_diagnostics_set_message(diagnostics, "out of memory");
        return NULL;
    }
    nukecolor_detach(context);
    transform->context = context;
    transform->handle = handle;
    return transform;
}

// MARK: - Transforms to sRGB, kept for the process

enum { NUKECOLOR_CACHE_CAPACITY = 32 };

struct nukecolor_cache_entry {
    uint64_t hash;
    size_t size;
    uint8_t *icc;   /* a copy, compared byte for byte on a hash match */
    nukecolor_layout input, output;
    nukecolor_transform *transform;
};

static pthread_mutex_t nukecolor_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nukecolor_cache_entry nukecolor_cache[NUKECOLOR_CACHE_CAPACITY];
static int nukecolor_cache_count;

static uint64_t nukecolor_fnv1a(const uint8_t *bytes, size_t count) {
    uint64_t hash = 1469598103934665603ULL;
    for (size_t i = 0; i < count; i++) hash = (hash ^ bytes[i]) * 1099511628211ULL;
    return hash;
}

static nukecolor_transform *nukecolor_cache_find(uint64_t hash, const uint8_t *icc, size_t size, nukecolor_layout input, nukecolor_layout output) {
    for (int i = 0; i < nukecolor_cache_count; i++) {
        struct nukecolor_cache_entry *e = &nukecolor_cache[i];
        if (e->hash == hash && e->size == size && e->input == input && e->output == output &&
            (size == 0 || memcmp(e->icc, icc, size) == 0)) return e->transform;
    }
    return NULL;
}

const nukecolor_transform *nukecolor_transform_to_srgb(const uint8_t *source_icc, size_t source_size, nukecolor_layout input,
                                                       nukecolor_layout output, int *owned, nuke_diagnostics *diagnostics) {
    if (source_icc == NULL) source_size = 0;
    uint64_t hash = nukecolor_fnv1a(source_icc, source_size);
    pthread_mutex_lock(&nukecolor_cache_lock);
    nukecolor_transform *found = nukecolor_cache_find(hash, source_icc, source_size, input, output);
    pthread_mutex_unlock(&nukecolor_cache_lock);
    *owned = 0;
    if (found != NULL) return found;

    int gray = output == NUKECOLOR_GRAY8 || output == NUKECOLOR_GRAYA8 || output == NUKECOLOR_GRAY16 || output == NUKECOLOR_GRAYA16;
    nukecolor_profile *source = source_size > 0 ? nukecolor_profile_open(source_icc, source_size, diagnostics) : nukecolor_profile_srgb(diagnostics);
    nukecolor_profile *target = gray ? nukecolor_profile_srgb_gray(diagnostics) : nukecolor_profile_srgb(diagnostics);
    nukecolor_transform *made = NULL;
    if (source != NULL && target != NULL) made = nukecolor_transform_create(source, input, target, output, 0, diagnostics);
    nukecolor_profile_free(source);
    nukecolor_profile_free(target);
    if (made == NULL) return NULL;

    pthread_mutex_lock(&nukecolor_cache_lock);
    /* Another thread may have made the same one meanwhile: keep the first. */
    found = nukecolor_cache_find(hash, source_icc, source_size, input, output);
    if (found == NULL && nukecolor_cache_count < NUKECOLOR_CACHE_CAPACITY) {
        uint8_t *copy = source_size > 0 ? malloc(source_size) : NULL;
        if (source_size == 0 || copy != NULL) {
            if (copy != NULL) memcpy(copy, source_icc, source_size);
            nukecolor_cache[nukecolor_cache_count++] = (struct nukecolor_cache_entry){hash, source_size, copy, input, output, made};
            pthread_mutex_unlock(&nukecolor_cache_lock);
            return made;
        }
    }
    pthread_mutex_unlock(&nukecolor_cache_lock);
    if (found != NULL) {
        nukecolor_transform_free(made);
        return found;
    }
    *owned = 1;
    return made;
}

void nukecolor_transform_rows(const nukecolor_transform *transform, const void *input, size_t input_stride,
                              void *output, size_t output_stride, uint32_t width, uint32_t height) {
    cmsDoTransformLineStride(transform->handle, input, output, width, height,
                             (cmsUInt32Number)input_stride, (cmsUInt32Number)output_stride, 0, 0);
}

void nukecolor_transform_row(void *context, const uint8_t *input, uint8_t *output, uint32_t width) {
    const nukecolor_transform *transform = context;
    if (transform == NULL || input == NULL || output == NULL) return;
    cmsDoTransform(transform->handle, input, output, width);
}

void nukecolor_transform_free(nukecolor_transform *transform) {
    if (transform == NULL) return;
    cmsDeleteTransform(transform->handle);
    cmsDeleteContext(transform->context);
    free(transform);
}

int nukecolor_library_version(void) {
    return cmsGetEncodedCMMversion();
}

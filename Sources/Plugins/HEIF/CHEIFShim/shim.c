#include "CHEIFShimTesting.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libheif/heif.h>
#include <libheif/heif_plugin.h>
#include "ffmpeg_hevc.h"
#include "nuke_library.h"

// libheif is opened on first use (nuke_library.h): loading it runs its static initialisers, which
// build libde265's tables (about 28 M instructions, 5 MB), in every process that links it.

/// Every libheif function this shim calls.
#define NUKEHEIF_FUNCTIONS(X) \
    X(heif_context_alloc) \
    X(heif_context_encode_image) \
    X(heif_context_encode_thumbnail) \
    X(heif_context_free) \
    X(heif_context_get_encoder_for_format) \
    X(heif_context_get_number_of_top_level_images) \
    X(heif_context_get_primary_image_ID) \
    X(heif_context_get_primary_image_handle) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_set_maximum_image_size_limit) \
    X(heif_context_write) \
    X(heif_decode_image) \
    X(heif_decoding_options_alloc) \
    X(heif_decoding_options_free) \
    X(heif_encoder_release) \
    X(heif_encoder_set_lossless) \
    X(heif_encoder_set_lossy_quality) \
    X(heif_encoder_set_parameter_string) \
    X(heif_get_decoder_descriptors) \
    X(heif_get_version) \
    X(heif_get_version_number_major) \
    X(heif_get_version_number_minor) \
    X(heif_image_add_plane) \
    X(heif_image_create) \
    X(heif_image_get_bits_per_pixel_range) \
    X(heif_image_get_chroma_format) \
    X(heif_image_get_colorspace) \
    X(heif_image_get_height) \
    X(heif_image_get_nclx_color_profile) \
    X(heif_image_get_plane) \
    X(heif_image_get_plane_readonly) \
    X(heif_image_get_width) \
    X(heif_image_handle_get_chroma_bits_per_pixel) \
    X(heif_image_handle_get_color_profile_type) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_get_list_of_metadata_block_IDs) \
    X(heif_image_handle_get_list_of_thumbnail_IDs) \
    X(heif_image_handle_get_luma_bits_per_pixel) \
    X(heif_image_handle_get_metadata) \
    X(heif_image_handle_get_metadata_size) \
    X(heif_image_handle_get_nclx_color_profile) \
    X(heif_image_handle_get_number_of_thumbnails) \
    X(heif_image_handle_get_raw_color_profile) \
    X(heif_image_handle_get_raw_color_profile_size) \
    X(heif_image_handle_get_thumbnail) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_has_alpha_channel) \
    X(heif_image_handle_has_depth_image) \
    X(heif_image_handle_release) \
    X(heif_image_release) \
    X(heif_image_set_nclx_color_profile) \
    X(heif_image_set_raw_color_profile) \
    X(heif_nclx_color_profile_alloc) \
    X(heif_nclx_color_profile_free) \
    X(heif_nclx_color_profile_set_color_primaries) \
    X(heif_nclx_color_profile_set_matrix_coefficients) \
    X(heif_nclx_color_profile_set_transfer_characteristics) \
    X(heif_register_decoder_plugin)

static struct {
    NUKEHEIF_FUNCTIONS(NUKE_LIBRARY_FIELD)
} libheif;
static pthread_once_t libheif_once = PTHREAD_ONCE_INIT;
static int libheif_loaded;
static char libheif_error[NUKE_MESSAGE_CAPACITY];

// MARK: - Decoder plugins in front of libheif's own

// NukeHEIF registers one decoder plugin for AV1 and one for HEVC, each in front of the plugin
// libheif would have used (dav1d, libde265), with a higher priority. Each passes every call on to
// the plugin behind it, and adds two things:
//
// - It refuses an AV1 image with no coded data. libheif 1.15 hands dav1d an empty buffer for it
//   (an `iloc` extent whose length field is not 4 or 8 bytes wide reads as 0 bytes, for one), dav1d
//   refuses the buffer, and libheif's dav1d plugin never releases it: 40 bytes leaked per decode
//   (found by the heif fuzz target).
// - When the shim has armed it (`conversion` below), it converts the decoded 8-bit YCbCr image to
//   planar RGB itself, with libheif's own arithmetic (ycbcr.c) at a tenth of the cost, before
//   libheif would. libheif then finds planar RGB, and converts nothing.
//
// libheif 1.15 hands out its plugins themselves as decoder descriptors (heif.cc casts one to the
// other both ways), which is how the plugin behind is found.

/// What the next plugin decode on this thread may do. The shim arms it just before
/// `heif_decode_image` for a handle that is a coded image (not a grid, overlay or derived image),
/// and disarms it after. libheif decodes that handle's coded image first, on the calling thread,
/// and its alpha image after: the first plugin decode is the image, and disarms. (Grid tiles are
/// decoded on libheif's worker threads, which are never armed.)
static _Thread_local struct {
    int armed;
    /// 1: the item's `colr` box gives the nclx below, which libheif uses instead of the coded
    /// stream's; 0: it has none; -1: it has one libheif cannot describe (left to libheif).
    int item_profile;
    uint16_t matrix_coefficients;
    int full_range;
} conversion;

/// The cancellation of the `heif_decode_image` call running on this thread, armed by the shim
/// around it: the wrapper plugins ask it before each coded image or tile they decode on this
/// thread. (A grid's tiles on libheif's worker threads are not asked; the shim asks again when
/// `heif_decode_image` returns.)
static _Thread_local const nuke_cancellation *decode_cancellation;

enum { AV1_PLUGIN, HEVC_PLUGIN, PLUGIN_COUNT };
static const struct heif_decoder_plugin *plugins_behind[PLUGIN_COUNT];
static const enum heif_compression_format plugin_formats[PLUGIN_COUNT] = {heif_compression_AV1, heif_compression_HEVC};
/// Above every plugin libheif 1.15 registers (dav1d 150, aom and libde265 100).
static const int NUKEHEIF_PLUGIN_PRIORITY = 1000;

typedef struct {
    const struct heif_decoder_plugin *behind;
    /// The plugin behind's decoder: created with this one, or for HEVC when FFmpeg is installed,
    /// only if FFmpeg cannot decode the image.
    void *decoder;
    enum heif_compression_format format;
    /// HEVC with FFmpeg: what libheif pushed, kept until the decode.
    uint8_t *data;
    size_t size;
    int strict;
    /// The image is decoded (libheif frees the decoder next).
    int done;
} wrapped_decoder;

static const char *av1_plugin_name(void) { return "NukeHEIF (AV1)"; }
static const char *hevc_plugin_name(void) { return "NukeHEIF (HEVC)"; }
static void plugin_init(void) {}
static void plugin_deinit(void) {}
static int av1_supports(enum heif_compression_format format) { return format == heif_compression_AV1 ? NUKEHEIF_PLUGIN_PRIORITY : 0; }
static int hevc_supports(enum heif_compression_format format) { return format == heif_compression_HEVC ? NUKEHEIF_PLUGIN_PRIORITY : 0; }

static const struct heif_error plugin_ok = {heif_error_Ok, heif_suberror_Unspecified, "Success"};

/// Creates the plugin behind's decoder, if it is not yet.
static struct heif_error create_behind(wrapped_decoder *wrapped) {
    if (wrapped->decoder != NULL) return plugin_ok;
    struct heif_error error = wrapped->behind->new_decoder(&wrapped->decoder);
    if (error.code != heif_error_Ok) {
        wrapped->decoder = NULL;
        return error;
    }
    if (wrapped->behind->plugin_api_version >= 2 && wrapped->behind->set_strict_decoding != NULL) {
        wrapped->behind->set_strict_decoding(wrapped->decoder, wrapped->strict);
    }
    return plugin_ok;
}

/// Unless NUKE_HEIF_HEVC_DECODER=libde265, HEVC data is kept until the decode, which then
/// decides by its size whether FFmpeg decodes it (opening libavcodec if it is installed), and
/// creates libde265's decoder only if not.
static int uses_ffmpeg(const wrapped_decoder *wrapped) {
    return wrapped->format == heif_compression_HEVC && nukeheif_ffmpeg_hevc_worthwhile(SIZE_MAX);
}

static struct heif_error wrapped_new(int which, void **out) {
    *out = NULL;
    wrapped_decoder *wrapped = calloc(1, sizeof *wrapped);
    if (wrapped == NULL) {
        struct heif_error error = {heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory"};
        return error;
    }
    wrapped->behind = plugins_behind[which];
    wrapped->format = plugin_formats[which];
    struct heif_error error = uses_ffmpeg(wrapped) ? plugin_ok : create_behind(wrapped);
    if (error.code != heif_error_Ok) {
        free(wrapped);
        return error;
    }
    *out = wrapped;
    return error;
}

static struct heif_error av1_new(void **out) { return wrapped_new(AV1_PLUGIN, out); }
static struct heif_error hevc_new(void **out) { return wrapped_new(HEVC_PLUGIN, out); }

static void wrapped_free(void *raw) {
    wrapped_decoder *wrapped = raw;
    if (wrapped == NULL) return;
    if (wrapped->decoder != NULL) wrapped->behind->free_decoder(wrapped->decoder);
    free(wrapped->data);
    free(wrapped);
}

static void wrapped_set_strict(void *raw, int flag) {
    wrapped_decoder *wrapped = raw;
    wrapped->strict = flag;
    if (wrapped->decoder != NULL && wrapped->behind->plugin_api_version >= 2 && wrapped->behind->set_strict_decoding != NULL) {
        wrapped->behind->set_strict_decoding(wrapped->decoder, flag);
    }
}

static const struct heif_error decoded_already = {heif_error_Usage_error, heif_suberror_Unspecified, "the decoder has decoded its image"};

static struct heif_error wrapped_push(void *raw, const void *data, size_t size) {
    wrapped_decoder *wrapped = raw;
    if (wrapped->done) return decoded_already;
    if (size == 0 && wrapped->format == heif_compression_AV1) {
        struct heif_error error = {heif_error_Invalid_input, heif_suberror_No_item_data, "the AV1 image has no coded data"};
        return error;
    }
    if (wrapped->decoder == NULL) {
        // HEVC for FFmpeg: kept whole (libheif pushes an image's data once).
        uint8_t *grown = realloc(wrapped->data, wrapped->size + size);
        if (grown == NULL && wrapped->size + size > 0) {
            struct heif_error error = {heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory"};
            return error;
        }
        wrapped->data = grown;
        if (size > 0) memcpy(wrapped->data + wrapped->size, data, size);
        wrapped->size += size;
        return plugin_ok;
    }
    return wrapped->behind->push_data(wrapped->decoder, data, size);
}

/// FFmpeg's picture as the heif_image libheif's libde265 plugin makes of libde265's (planes of
/// the picture's size, the nclx from the stream set through the same validating setters), or NULL
/// when the plugin would describe it differently (a colour value libheif refuses).
static struct heif_image *image_from_ffmpeg(const nukeheif_hevc_picture *picture) {
    struct heif_color_profile_nclx *nclx = libheif.heif_nclx_color_profile_alloc();
    if (nclx == NULL) return NULL;
    int ok = libheif.heif_nclx_color_profile_set_color_primaries(nclx, (uint16_t)picture->primaries).code == heif_error_Ok &&
             libheif.heif_nclx_color_profile_set_transfer_characteristics(nclx, (uint16_t)picture->transfer).code == heif_error_Ok &&
             libheif.heif_nclx_color_profile_set_matrix_coefficients(nclx, (uint16_t)picture->matrix).code == heif_error_Ok;
    nclx->full_range_flag = (uint8_t)(picture->full_range != 0);
    enum heif_chroma chroma = picture->chroma == 420 ? heif_chroma_420 : picture->chroma == 422 ? heif_chroma_422
                            : picture->chroma == 444 ? heif_chroma_444 : heif_chroma_monochrome;
    int planes = picture->chroma == 0 ? 1 : 3;
    struct heif_image *image = NULL;
    ok = ok && libheif.heif_image_create(picture->width, picture->height, planes == 1 ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                         chroma, &image).code == heif_error_Ok;
    static const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    for (int i = 0; ok && i < planes; i++) {
        int width = picture->width, height = picture->height;
        if (i > 0 && picture->chroma != 444) width = (width + 1) / 2;
        if (i > 0 && picture->chroma == 420) height = (height + 1) / 2;
        ok = libheif.heif_image_add_plane(image, channels[i], width, height, 8).code == heif_error_Ok;
        int stride = 0;
        uint8_t *plane = ok ? libheif.heif_image_get_plane(image, channels[i], &stride) : NULL;
        ok = plane != NULL;
        for (int y = 0; ok && y < height; y++) {
            memcpy(plane + (size_t)y * stride, picture->planes[i] + (ptrdiff_t)y * picture->strides[i], (size_t)width);
        }
    }
    ok = ok && libheif.heif_image_set_nclx_color_profile(image, nclx).code == heif_error_Ok;
    libheif.heif_nclx_color_profile_free(nclx);
    if (!ok && image != NULL) {
        libheif.heif_image_release(image);
        image = NULL;
    }
    return image;
}

/// The largest picture HEVC allows (level 6.2: 35,651,584 luma samples), for FFmpeg's allocation.
static const int64_t HEVC_MAX_LUMA_PICTURE_SIZE = 35651584;

/// Decodes a wrapped decoder's image: HEVC with FFmpeg when it is installed and can, else with
/// the plugin behind (libde265, dav1d), given the data FFmpeg would have had.
static struct heif_error decode_behind_or_ffmpeg(wrapped_decoder *wrapped, struct heif_image **out) {
    if (wrapped->decoder == NULL) {
        nukeheif_hevc_picture picture;
        if (nukeheif_ffmpeg_hevc_worthwhile(wrapped->size) &&
            nukeheif_ffmpeg_decode_hevc(wrapped->data, wrapped->size, HEVC_MAX_LUMA_PICTURE_SIZE, &picture)) {
            *out = image_from_ffmpeg(&picture);
            nukeheif_hevc_picture_release(&picture);
            if (*out != NULL) return plugin_ok;
        }
        struct heif_error error = create_behind(wrapped);
        if (error.code != heif_error_Ok) return error;
        error = wrapped->behind->push_data(wrapped->decoder, wrapped->data, wrapped->size);
        if (error.code != heif_error_Ok) return error;
    }
    return wrapped->behind->decode_image(wrapped->decoder, out);
}

/// `image` converted to planar RGB as libheif 1.15 would convert it, or NULL when it is not 8-bit
/// YCbCr or uses a matrix ycbcr.c does not reproduce (libheif converts it then).
static struct heif_image *converted_to_rgb(const struct heif_image *image) {
    if (libheif.heif_image_get_colorspace(image) != heif_colorspace_YCbCr) return NULL;
    enum heif_chroma chroma = libheif.heif_image_get_chroma_format(image);
    int shift_x, shift_y;
    switch (chroma) {
    case heif_chroma_420: shift_x = 1; shift_y = 1; break;
    case heif_chroma_422: shift_x = 1; shift_y = 0; break;
    case heif_chroma_444: shift_x = 0; shift_y = 0; break;
    default: return NULL;
    }
    static const enum heif_channel inputs[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    for (int i = 0; i < 3; i++) {
        if (libheif.heif_image_get_bits_per_pixel_range(image, inputs[i]) != 8) return NULL;
    }
    // The profile libheif converts with: the item's colr nclx, else the coded stream's, else none.
    int has_profile = 0, full_range = 1;
    uint16_t matrix_coefficients = 2;
    struct heif_color_profile_nclx *nclx = NULL;
    if (conversion.item_profile < 0) return NULL;
    if (conversion.item_profile > 0) {
        has_profile = 1;
        matrix_coefficients = conversion.matrix_coefficients;
        full_range = conversion.full_range;
    } else {
        struct heif_error error = libheif.heif_image_get_nclx_color_profile(image, &nclx);
        if (error.code == heif_error_Ok && nclx != NULL) {
            has_profile = 1;
            matrix_coefficients = (uint16_t)nclx->matrix_coefficients;
            full_range = nclx->full_range_flag;
        } else if (error.code != heif_error_Color_profile_does_not_exist) {
            if (nclx != NULL) libheif.heif_nclx_color_profile_free(nclx);
            return NULL;
        }
    }
    nukeheif_ycbcr_matrix matrix;
    if (!nukeheif_ycbcr_matrix_make(has_profile, matrix_coefficients, full_range, &matrix)) {
        if (nclx != NULL) libheif.heif_nclx_color_profile_free(nclx);
        return NULL;
    }
    int width = libheif.heif_image_get_width(image, heif_channel_Y), height = libheif.heif_image_get_height(image, heif_channel_Y);
    struct heif_image *rgb = NULL;
    static const enum heif_channel outputs[3] = {heif_channel_R, heif_channel_G, heif_channel_B};
    int ok = libheif.heif_image_create(width, height, heif_colorspace_RGB, heif_chroma_444, &rgb).code == heif_error_Ok;
    for (int i = 0; ok && i < 3; i++) ok = libheif.heif_image_add_plane(rgb, outputs[i], width, height, 8).code == heif_error_Ok;
    if (ok && nclx != NULL) ok = libheif.heif_image_set_nclx_color_profile(rgb, nclx).code == heif_error_Ok;
    if (nclx != NULL) libheif.heif_nclx_color_profile_free(nclx);
    const uint8_t *in[3];
    uint8_t *out[3];
    int in_stride[3], out_stride[3];
    for (int i = 0; ok && i < 3; i++) {
        in[i] = libheif.heif_image_get_plane_readonly(image, inputs[i], &in_stride[i]);
        out[i] = libheif.heif_image_get_plane(rgb, outputs[i], &out_stride[i]);
        ok = in[i] != NULL && out[i] != NULL;
    }
    // The chroma planes must cover the luma plane as libheif indexes them (x >> shift, y >> shift).
    for (int i = 1; ok && i < 3; i++) {
        ok = libheif.heif_image_get_width(image, inputs[i]) > (width - 1) >> shift_x &&
             libheif.heif_image_get_height(image, inputs[i]) > (height - 1) >> shift_y;
    }
    if (!ok) {
        if (rgb != NULL) libheif.heif_image_release(rgb);
        return NULL;
    }
    for (int y = 0; y < height; y++) {
        size_t chroma_row = (size_t)(y >> shift_y);
        nukeheif_ycbcr_to_rgb_row(in[0] + (size_t)y * in_stride[0], in[1] + chroma_row * in_stride[1], in[2] + chroma_row * in_stride[2],
                                  shift_x, width, &matrix, out[0] + (size_t)y * out_stride[0], out[1] + (size_t)y * out_stride[1],
                                  out[2] + (size_t)y * out_stride[2]);
    }
    return rgb;
}

/// Images converted by `converted_to_rgb` on this thread (`nukeheif_converted_image_count`).
static _Thread_local long converted_images;

long nukeheif_converted_image_count(void) {
    return converted_images;
}

static struct heif_error wrapped_decode(void *raw, struct heif_image **out) {
    if (nuke_is_cancelled(decode_cancellation)) {
        static const struct heif_error cancelled = {heif_error_Decoder_plugin_error, heif_suberror_Unspecified, "cancelled"};
        return cancelled;
    }
    wrapped_decoder *wrapped = raw;
    int convert = conversion.armed;
    conversion.armed = 0;
    *out = NULL;
    if (wrapped->done) return decoded_already;
    wrapped->done = 1;
    struct heif_error error = decode_behind_or_ffmpeg(wrapped, out);
    if (convert && error.code == heif_error_Ok && *out != NULL) {
        // libheif frees the decoder next anyway; freeing it first returns the codec's frame
        // pools before the RGB planes are allocated, as libheif's own order does.
        if (wrapped->decoder != NULL) wrapped->behind->free_decoder(wrapped->decoder);
        wrapped->decoder = NULL;
        free(wrapped->data);
        wrapped->data = NULL;
        struct heif_image *rgb = converted_to_rgb(*out);
        if (rgb != NULL) {
            libheif.heif_image_release(*out);
            *out = rgb;
            converted_images++;
        }
    }
    return error;
}

static const struct heif_decoder_plugin nukeheif_plugins[PLUGIN_COUNT] = {
    {2, av1_plugin_name, plugin_init, plugin_deinit, av1_supports, av1_new, wrapped_free, wrapped_push, wrapped_decode, wrapped_set_strict},
    {2, hevc_plugin_name, plugin_init, plugin_deinit, hevc_supports, hevc_new, wrapped_free, wrapped_push, wrapped_decode, wrapped_set_strict},
};

/// Registers the plugins of this section in front of libheif's best plugin for each format.
/// Without a plugin behind, or before libheif 1.15, none is registered: libheif decodes alone.
static void install_decoder_plugins(void) {
    if (libheif.heif_get_version_number_major() != 1 || libheif.heif_get_version_number_minor() < 15) return;
    for (int which = 0; which < PLUGIN_COUNT; which++) {
        const struct heif_decoder_descriptor *descriptors[1] = {NULL};
        if (libheif.heif_get_decoder_descriptors(plugin_formats[which], descriptors, 1) < 1 || descriptors[0] == NULL) continue;
        const struct heif_decoder_plugin *behind = (const struct heif_decoder_plugin *)descriptors[0];
        if (behind->plugin_api_version < 1 || behind->plugin_api_version > 3) continue;
        plugins_behind[which] = behind;
        if (libheif.heif_register_decoder_plugin(&nukeheif_plugins[which]).code != heif_error_Ok) plugins_behind[which] = NULL;
    }
}

static void load_libheif(void) {
    static const char *const names[] = {"libheif.so.1", "libheif.so", "libheif.1.dylib", "libheif.dylib", NULL};
#define NUKEHEIF_FUNCTION(name) NUKE_LIBRARY_FUNCTION(libheif, name)
    const nuke_library_function functions[] = {NUKEHEIF_FUNCTIONS(NUKEHEIF_FUNCTION)};
#undef NUKEHEIF_FUNCTION
    if (nuke_library_load(names, functions, sizeof functions / sizeof *functions, libheif_error, sizeof libheif_error) == NULL) return;
    libheif_loaded = 1;
    install_decoder_plugins();
}

nuke_status nukeheif_load(nuke_diagnostics *diagnostics) {
    pthread_once(&libheif_once, load_libheif);
    return nuke_library_status(libheif_loaded, libheif_error, diagnostics);
}

const char *nukeheif_version(void) {
    return nukeheif_load(NULL) == NUKE_STATUS_OK ? libheif.heif_get_version() : "";
}

static char hevc_decoder_name[96];
static pthread_once_t hevc_decoder_once = PTHREAD_ONCE_INIT;

static void name_hevc_decoder(void) {
    const struct heif_decoder_plugin *behind = plugins_behind[HEVC_PLUGIN];
    const char *version = behind != NULL ? nukeheif_ffmpeg_hevc_version() : NULL;
    if (version != NULL) {
        snprintf(hevc_decoder_name, sizeof hevc_decoder_name, "FFmpeg libavcodec %s", version);
    } else if (behind != NULL && behind->get_plugin_name != NULL) {
        snprintf(hevc_decoder_name, sizeof hevc_decoder_name, "%s", behind->get_plugin_name());
    } else {
        snprintf(hevc_decoder_name, sizeof hevc_decoder_name, "libheif's");
    }
}

const char *nukeheif_hevc_decoder(void) {
    if (nukeheif_load(NULL) != NUKE_STATUS_OK) return "";
    pthread_once(&hevc_decoder_once, name_hevc_decoder);
    return hevc_decoder_name;
}

/// A libheif error's class, with its message kept.
static nuke_status classify(struct heif_error error, nuke_diagnostics *diagnostics) {
    if (error.code == heif_error_Ok) return NUKE_STATUS_OK;
    char text[NUKE_MESSAGE_CAPACITY];
    snprintf(text, sizeof text, "%s (heif_error %d.%d)", error.message ? error.message : "libheif failed", (int)error.code, (int)error.subcode);
    nuke_diagnostics_set_message(diagnostics, text);
    switch (error.code) {
    case heif_error_Invalid_input:
        return error.subcode == heif_suberror_End_of_data ? NUKE_STATUS_INCOMPLETE : NUKE_STATUS_CORRUPT;
    case heif_error_Unsupported_filetype:
    case heif_error_Unsupported_feature:
        return NUKE_STATUS_UNSUPPORTED;
    case heif_error_Memory_allocation_error:
        return error.subcode == heif_suberror_Security_limit_exceeded ? NUKE_STATUS_LIMIT : NUKE_STATUS_INTERNAL;
    case heif_error_Decoder_plugin_error:
        return NUKE_STATUS_CORRUPT;
    default:
        return NUKE_STATUS_INTERNAL;
    }
}

struct nukeheif_decoder {
    struct heif_context *context;
    struct heif_image_handle *primary;
    /// The image `nukeheif_decoder_decode_planes` decoded, until `nukeheif_decoder_release_planes`.
    struct heif_image *planes;
    /// The items that are coded images (`nukeheif_decoder_set_coded_items`).
    uint32_t *coded_items;
    int32_t coded_count;
    nuke_diagnostics diagnostics;
};

nukeheif_decoder *nukeheif_decoder_create(void) {
    if (nukeheif_load(NULL) != NUKE_STATUS_OK) return NULL;
    nukeheif_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) return NULL;
    decoder->context = libheif.heif_context_alloc();
    if (decoder->context == NULL) {
        free(decoder);
        return NULL;
    }
    return decoder;
}

void nukeheif_decoder_destroy(nukeheif_decoder *decoder) {
    if (decoder == NULL) return;
    libheif.heif_image_release(decoder->planes);
    libheif.heif_image_handle_release(decoder->primary);
    libheif.heif_context_free(decoder->context);
    free(decoder->coded_items);
    free(decoder);
}

void nukeheif_decoder_set_coded_items(nukeheif_decoder *decoder, const uint32_t *ids, int32_t count) {
    free(decoder->coded_items);
    decoder->coded_items = NULL;
    decoder->coded_count = 0;
    if (ids == NULL || count <= 0 || (decoder->coded_items = malloc((size_t)count * sizeof *ids)) == NULL) return;
    memcpy(decoder->coded_items, ids, (size_t)count * sizeof *ids);
    decoder->coded_count = count;
}

const nuke_diagnostics *nukeheif_decoder_diagnostics(const nukeheif_decoder *decoder) {
    return &decoder->diagnostics;
}

nuke_status nukeheif_decoder_open(nukeheif_decoder *decoder, const uint8_t *data, size_t length,
                                  int32_t maximum_dimension, nukeheif_info *info) {
    memset(info, 0, sizeof *info);
    // A file of 1 MB or more repays opening libavcodec even when its HEVC comes in small pieces
    // (a grid's tiles): open it now, and every piece is decoded with it.
    if (nukeheif_ffmpeg_hevc_worthwhile(length)) (void)nukeheif_ffmpeg_hevc_version();
    if (maximum_dimension > 0) libheif.heif_context_set_maximum_image_size_limit(decoder->context, maximum_dimension);
    nuke_status status = classify(libheif.heif_context_read_from_memory_without_copy(decoder->context, data, length, NULL), &decoder->diagnostics);
    if (status != NUKE_STATUS_OK) return status;
    status = classify(libheif.heif_context_get_primary_image_handle(decoder->context, &decoder->primary), &decoder->diagnostics);
    if (status != NUKE_STATUS_OK) return status;
    struct heif_image_handle *handle = decoder->primary;
    info->width = libheif.heif_image_handle_get_width(handle);
    info->height = libheif.heif_image_handle_get_height(handle);
    info->has_alpha = libheif.heif_image_handle_has_alpha_channel(handle);
    info->bit_depth = libheif.heif_image_handle_get_luma_bits_per_pixel(handle);
    info->image_count = libheif.heif_context_get_number_of_top_level_images(decoder->context);
    info->thumbnail_count = libheif.heif_image_handle_get_number_of_thumbnails(handle);
    info->has_depth = libheif.heif_image_handle_has_depth_image(handle);
    enum heif_color_profile_type type = libheif.heif_image_handle_get_color_profile_type(handle);
    info->color_profile = (uint32_t)type;
    if (type == heif_color_profile_type_nclx) {
        struct heif_color_profile_nclx *nclx = NULL;
        if (libheif.heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx != NULL) {
            info->nclx_primaries = nclx->color_primaries;
            info->nclx_transfer = nclx->transfer_characteristics;
            info->nclx_matrix = nclx->matrix_coefficients;
            info->nclx_full_range = nclx->full_range_flag;
        }
        // libheif 1.15 allocates the profile before it validates it: a value it does not support
        // (found by fuzzing: unsupported colour primaries) returns an error with the profile
        // still allocated, so it is freed whatever the result.
        if (nclx != NULL) libheif.heif_nclx_color_profile_free(nclx);
    }
    return NUKE_STATUS_OK;
}

static nuke_status thumbnail_handle(nukeheif_decoder *decoder, int32_t index, struct heif_image_handle **out) {
    int count = libheif.heif_image_handle_get_number_of_thumbnails(decoder->primary);
    if (index < 0 || index >= count) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "no such thumbnail");
        return NUKE_STATUS_INTERNAL;
    }
    heif_item_id ids[64];
    int n = libheif.heif_image_handle_get_list_of_thumbnail_IDs(decoder->primary, ids, count < 64 ? count : 64);
    if (index >= n) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "no such thumbnail");
        return NUKE_STATUS_INTERNAL;
    }
    return classify(libheif.heif_image_handle_get_thumbnail(decoder->primary, ids[index], out), &decoder->diagnostics);
}

nuke_status nukeheif_decoder_thumbnail_size(nukeheif_decoder *decoder, int32_t index, int32_t *width, int32_t *height) {
    struct heif_image_handle *thumbnail = NULL;
    nuke_status status = thumbnail_handle(decoder, index, &thumbnail);
    if (status != NUKE_STATUS_OK) return status;
    *width = libheif.heif_image_handle_get_width(thumbnail);
    *height = libheif.heif_image_handle_get_height(thumbnail);
    libheif.heif_image_handle_release(thumbnail);
    return NUKE_STATUS_OK;
}

uint8_t *nukeheif_decoder_icc(nukeheif_decoder *decoder, size_t *size) {
    *size = 0;
    size_t length = libheif.heif_image_handle_get_raw_color_profile_size(decoder->primary);
    if (length == 0) return NULL;
    uint8_t *bytes = malloc(length);
    if (bytes == NULL) return NULL;
    if (libheif.heif_image_handle_get_raw_color_profile(decoder->primary, bytes).code != heif_error_Ok) {
        free(bytes);
        return NULL;
    }
    *size = length;
    return bytes;
}

uint8_t *nukeheif_decoder_exif(nukeheif_decoder *decoder, size_t max_size, size_t *size) {
    *size = 0;
    heif_item_id id;
    if (libheif.heif_image_handle_get_list_of_metadata_block_IDs(decoder->primary, "Exif", &id, 1) < 1) return NULL;
    size_t length = libheif.heif_image_handle_get_metadata_size(decoder->primary, id);
    if (length <= 4 || length > max_size) return NULL;
    uint8_t *bytes = malloc(length);
    if (bytes == NULL) return NULL;
    if (libheif.heif_image_handle_get_metadata(decoder->primary, id, bytes).code != heif_error_Ok) {
        free(bytes);
        return NULL;
    }
    // The block starts with a big-endian offset from its 5th byte to the TIFF header.
    size_t offset = 4 + ((size_t)bytes[0] << 24 | (size_t)bytes[1] << 16 | (size_t)bytes[2] << 8 | bytes[3]);
    if (offset >= length) {
        free(bytes);
        return NULL;
    }
    memmove(bytes, bytes + offset, length - offset);
    *size = length - offset;
    return bytes;
}

/// The handle to decode: the primary image (`thumbnail` < 0) or thumbnail `thumbnail`, which the
/// caller releases through `*thumb` (NULL for the primary, which the decoder owns).
static nuke_status source_handle(nukeheif_decoder *decoder, int32_t thumbnail, struct heif_image_handle **handle,
                                 struct heif_image_handle **thumb) {
    *thumb = NULL;
    *handle = decoder->primary;
    if (thumbnail < 0) return NUKE_STATUS_OK;
    nuke_status status = thumbnail_handle(decoder, thumbnail, thumb);
    if (status == NUKE_STATUS_OK) *handle = *thumb;
    return status;
}

/// Arms this thread's next plugin decode (`conversion`) to convert to RGB itself when `handle`,
/// the primary image (`thumbnail` < 0) or thumbnail `thumbnail`, is a coded image.
static void arm_conversion(nukeheif_decoder *decoder, int32_t thumbnail, const struct heif_image_handle *handle) {
    conversion.armed = 0;
    heif_item_id id = 0;
    if (thumbnail < 0) {
        if (libheif.heif_context_get_primary_image_ID(decoder->context, &id).code != heif_error_Ok) return;
    } else {
        heif_item_id ids[64];
        int count = libheif.heif_image_handle_get_list_of_thumbnail_IDs(decoder->primary, ids, 64);
        if (thumbnail >= count) return;
        id = ids[thumbnail];
    }
    int coded = 0;
    for (int32_t i = 0; i < decoder->coded_count && !coded; i++) coded = decoder->coded_items[i] == id;
    if (!coded) return;
    struct heif_color_profile_nclx *nclx = NULL;
    struct heif_error error = libheif.heif_image_handle_get_nclx_color_profile(handle, &nclx);
    if (error.code == heif_error_Ok && nclx != NULL) {
        conversion.item_profile = 1;
        conversion.matrix_coefficients = (uint16_t)nclx->matrix_coefficients;
        conversion.full_range = nclx->full_range_flag;
    } else {
        conversion.item_profile = error.code == heif_error_Color_profile_does_not_exist ? 0 : -1;
    }
    // Allocated before it is validated in libheif 1.15: freed whatever the result.
    if (nclx != NULL) libheif.heif_nclx_color_profile_free(nclx);
    conversion.armed = plugins_behind[AV1_PLUGIN] != NULL || plugins_behind[HEVC_PLUGIN] != NULL;
}

/// `heif_decode_image` of `handle` to RGB in `chroma`, with this thread's plugin decode armed to
/// convert (`arm_conversion`) and to ask `cancellation`; CANCELLED (and no image) when it said
/// stop, whatever libheif returned.
static nuke_status decode_armed(nukeheif_decoder *decoder, int32_t thumbnail, struct heif_image_handle *handle,
                                struct heif_image **image, enum heif_chroma chroma, const struct heif_decoding_options *options,
                                const nuke_cancellation *cancellation) {
    arm_conversion(decoder, thumbnail, handle);
    decode_cancellation = cancellation;
    nuke_status status = classify(libheif.heif_decode_image(handle, image, heif_colorspace_RGB, chroma, options), &decoder->diagnostics);
    decode_cancellation = NULL;
    conversion.armed = 0;
    if (!nuke_is_cancelled(cancellation)) return status;
    libheif.heif_image_release(*image);
    *image = NULL;
    nuke_diagnostics_set_message(&decoder->diagnostics, "cancelled");
    return NUKE_STATUS_CANCELLED;
}

nuke_status nukeheif_decoder_decode(nukeheif_decoder *decoder, int32_t thumbnail, int32_t alpha, int32_t wide,
                                    uint8_t *pixels, int32_t width, int32_t height, size_t stride,
                                    uint8_t *row, void (*sink)(void *context, const uint8_t *row, size_t length), void *sink_context,
                                    const nuke_cancellation *cancellation) {
    if (pixels == NULL && (row == NULL || sink == NULL)) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "neither a pixel buffer nor a row sink");
        return NUKE_STATUS_INTERNAL;
    }
    struct heif_image_handle *handle = NULL, *thumb = NULL;
    nuke_status found = source_handle(decoder, thumbnail, &handle, &thumb);
    if (found != NUKE_STATUS_OK) return found;
    enum heif_chroma chroma = wide ? (alpha ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RRGGBB_LE)
                                   : (alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB);
    struct heif_decoding_options *options = libheif.heif_decoding_options_alloc();
    if (options != NULL) options->convert_hdr_to_8bit = wide ? 0 : 1;
    struct heif_image *image = NULL;
    nuke_status status = decode_armed(decoder, thumbnail, handle, &image, chroma, options, cancellation);
    libheif.heif_decoding_options_free(options);
    libheif.heif_image_handle_release(thumb);
    if (status != NUKE_STATUS_OK) return status;
    if (libheif.heif_image_get_width(image, heif_channel_interleaved) != width || libheif.heif_image_get_height(image, heif_channel_interleaved) != height) {
        char text[NUKE_MESSAGE_CAPACITY];
        snprintf(text, sizeof text, "the decoded image is %dx%d, the file declares %dx%d",
                 libheif.heif_image_get_width(image, heif_channel_interleaved), libheif.heif_image_get_height(image, heif_channel_interleaved), width, height);
        nuke_diagnostics_set_message(&decoder->diagnostics, text);
        libheif.heif_image_release(image);
        return NUKE_STATUS_CORRUPT;
    }
    int plane_stride = 0;
    const uint8_t *plane = libheif.heif_image_get_plane_readonly(image, heif_channel_interleaved, &plane_stride);
    if (plane == NULL) {
        nuke_diagnostics_set_message(&decoder->diagnostics, "libheif returned no interleaved plane");
        libheif.heif_image_release(image);
        return NUKE_STATUS_INTERNAL;
    }
    size_t row_bytes = (size_t)width * (alpha ? 4 : 3) * (wide ? 2 : 1);
    // Samples of `bits` bits in 16-bit little-endian containers are scaled to the full range.
    int bits = wide ? libheif.heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved) : 8;
    uint32_t max = bits > 0 && bits < 16 ? (1u << bits) - 1 : 65535;
    size_t samples = (size_t)width * (alpha ? 4 : 3);
    for (int32_t y = 0; y < height; y++) {
        if (y % 64 == 63 && nuke_is_cancelled(cancellation)) {
            libheif.heif_image_release(image);
            nuke_diagnostics_set_message(&decoder->diagnostics, "cancelled");
            return NUKE_STATUS_CANCELLED;
        }
        const uint8_t *src = plane + (size_t)y * plane_stride;
        uint8_t *out = pixels != NULL ? pixels + (size_t)y * stride : row;
        if (!wide) {
            if (pixels == NULL) {
                sink(sink_context, src, row_bytes);   // libheif's own row, no copy
                continue;
            }
            memcpy(out, src, row_bytes);
        } else {
            uint16_t *dst = (uint16_t *)out;
            for (size_t i = 0; i < samples; i++) {
                uint32_t v = (uint32_t)src[2 * i] | (uint32_t)src[2 * i + 1] << 8;
                if (v > max) v = max;
                dst[i] = (uint16_t)((v * 65535u + max / 2) / max);
            }
        }
        if (pixels == NULL) sink(sink_context, out, row_bytes);
    }
    libheif.heif_image_release(image);
    return NUKE_STATUS_OK;
}

nuke_status nukeheif_decoder_decode_planes(nukeheif_decoder *decoder, int32_t thumbnail, int32_t width, int32_t height,
                                           nukeheif_planes *planes, const nuke_cancellation *cancellation) {
    memset(planes, 0, sizeof *planes);
    libheif.heif_image_release(decoder->planes);
    decoder->planes = NULL;
    struct heif_image_handle *handle = NULL, *thumb = NULL;
    nuke_status found = source_handle(decoder, thumbnail, &handle, &thumb);
    if (found != NUKE_STATUS_OK) return found;
    if (libheif.heif_image_handle_has_alpha_channel(handle) || libheif.heif_image_handle_get_luma_bits_per_pixel(handle) != 8 ||
        libheif.heif_image_handle_get_chroma_bits_per_pixel(handle) > 8) {
        libheif.heif_image_handle_release(thumb);
        return NUKE_STATUS_UNSUPPORTED;
    }
    // libheif 1.15 converts every decoded image to planar RGB before anything else
    // (decode_image_planar); asking for exactly that skips its second conversion, to interleaved.
    struct heif_image *image = NULL;
    nuke_status status = decode_armed(decoder, thumbnail, handle, &image, heif_chroma_444, NULL, cancellation);
    libheif.heif_image_handle_release(thumb);
    if (status != NUKE_STATUS_OK) return status;
    static const enum heif_channel channels[3] = {heif_channel_R, heif_channel_G, heif_channel_B};
    for (int i = 0; i < 3; i++) {
        int stride = 0;
        planes->rows[i] = libheif.heif_image_get_plane_readonly(image, channels[i], &stride);
        planes->stride[i] = stride;
        if (planes->rows[i] == NULL || libheif.heif_image_get_bits_per_pixel_range(image, channels[i]) != 8 ||
            libheif.heif_image_get_width(image, channels[i]) != width || libheif.heif_image_get_height(image, channels[i]) != height) {
            memset(planes, 0, sizeof *planes);
            libheif.heif_image_release(image);
            return NUKE_STATUS_UNSUPPORTED;
        }
    }
    decoder->planes = image;
    return NUKE_STATUS_OK;
}

void nukeheif_decoder_release_planes(nukeheif_decoder *decoder) {
    libheif.heif_image_release(decoder->planes);
    decoder->planes = NULL;
}

// MARK: - Encoding

struct output_buffer {
    uint8_t *bytes;
    size_t size;
    size_t capacity;
};

static struct heif_error write_to_buffer(struct heif_context *context, const void *data, size_t size, void *userdata) {
    (void)context;
    struct output_buffer *out = userdata;
    struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
    if (out->size + size > out->capacity) {
        size_t capacity = out->capacity ? out->capacity : 65536;
        while (capacity < out->size + size) capacity *= 2;
        uint8_t *grown = realloc(out->bytes, capacity);
        if (grown == NULL) {
            struct heif_error error = {heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory"};
            return error;
        }
        out->bytes = grown;
        out->capacity = capacity;
    }
    memcpy(out->bytes + out->size, data, size);
    out->size += size;
    return ok;
}

nuke_status nukeheif_encode(const uint8_t *pixels, int32_t width, int32_t height, size_t stride,
                            const nukeheif_encode_params *params, uint8_t **output, size_t *output_size,
                            nuke_diagnostics *diagnostics) {
    *output = NULL;
    *output_size = 0;
    nuke_status loaded = nukeheif_load(diagnostics);
    if (loaded != NUKE_STATUS_OK) return loaded;
    struct heif_context *context = libheif.heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    struct heif_image_handle *handle = NULL;
    struct output_buffer out = {NULL, 0, 0};
    nuke_status status = NUKE_STATUS_OK;
    if (context == NULL) {
        nuke_diagnostics_set_message(diagnostics, "heif_context_alloc: out of memory");
        return NUKE_STATUS_INTERNAL;
    }
    status = classify(libheif.heif_context_get_encoder_for_format(context, params->av1 ? heif_compression_AV1 : heif_compression_HEVC, &encoder), diagnostics);
    if (status == NUKE_STATUS_OK) {
        status = classify(params->lossless ? libheif.heif_encoder_set_lossless(encoder, 1) : libheif.heif_encoder_set_lossy_quality(encoder, params->quality), diagnostics);
    }
    if (status == NUKE_STATUS_OK && params->lossless) {
        // Lossless needs full-resolution chroma; libheif picks 4:4:4 from this parameter.
        (void)libheif.heif_encoder_set_parameter_string(encoder, "chroma", "444");
    }
    if (status == NUKE_STATUS_OK) {
        status = classify(libheif.heif_image_create(width, height, heif_colorspace_RGB,
                                            params->has_alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &image), diagnostics);
    }
    if (status == NUKE_STATUS_OK) {
        status = classify(libheif.heif_image_add_plane(image, heif_channel_interleaved, width, height, 8), diagnostics);
    }
    if (status == NUKE_STATUS_OK) {
        int plane_stride = 0;
        uint8_t *plane = libheif.heif_image_get_plane(image, heif_channel_interleaved, &plane_stride);
        size_t row_bytes = (size_t)width * (params->has_alpha ? 4 : 3);
        for (int32_t y = 0; y < height; y++) memcpy(plane + (size_t)y * plane_stride, pixels + (size_t)y * stride, row_bytes);
        if (params->icc != NULL && params->icc_size > 0) {
            status = classify(libheif.heif_image_set_raw_color_profile(image, "prof", params->icc, params->icc_size), diagnostics);
        }
    }
    if (status == NUKE_STATUS_OK) {
        status = classify(libheif.heif_context_encode_image(context, image, encoder, NULL, &handle), diagnostics);
    }
    if (status == NUKE_STATUS_OK && params->thumbnail_size > 0 &&
        (params->thumbnail_size < width || params->thumbnail_size < height)) {
        struct heif_image_handle *thumbnail = NULL;
        status = classify(libheif.heif_context_encode_thumbnail(context, image, handle, encoder, NULL, params->thumbnail_size, &thumbnail), diagnostics);
        libheif.heif_image_handle_release(thumbnail);
    }
    if (status == NUKE_STATUS_OK) {
        struct heif_writer writer = {1, write_to_buffer};
        status = classify(libheif.heif_context_write(context, &writer, &out), diagnostics);
    }
    libheif.heif_image_handle_release(handle);
    libheif.heif_image_release(image);
    if (encoder != NULL) libheif.heif_encoder_release(encoder);
    libheif.heif_context_free(context);
    if (status != NUKE_STATUS_OK) {
        free(out.bytes);
        return status;
    }
    *output = out.bytes;
    *output_size = out.size;
    return NUKE_STATUS_OK;
}

void nukeheif_buffer_free(void *buffer) {
    free(buffer);
}

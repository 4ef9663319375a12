#include "ffmpeg_hevc.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nuke_library.h"

// libavcodec is optional and opened on first use. Its headers are not needed: the few functions
// called are declared here, and of its structures only the first fields are read, which have not
// moved from FFmpeg 4 (libavcodec 58) to FFmpeg 7 (61). The colour description is read through
// libavcodec's options, not its structure.

typedef struct AVCodec AVCodec;
typedef struct AVCodecContext AVCodecContext;
typedef struct AVPacket AVPacket;
typedef struct AVFrame AVFrame;
typedef struct AVDictionary AVDictionary;

const AVCodec *avcodec_find_decoder_by_name(const char *name);
AVCodecContext *avcodec_alloc_context3(const AVCodec *codec);
int avcodec_open2(AVCodecContext *context, const AVCodec *codec, AVDictionary **options);
void avcodec_free_context(AVCodecContext **context);
int avcodec_send_packet(AVCodecContext *context, const AVPacket *packet);
int avcodec_receive_frame(AVCodecContext *context, AVFrame *frame);
unsigned avcodec_version(void);
AVPacket *av_packet_alloc(void);
void av_packet_free(AVPacket **packet);
AVFrame *av_frame_alloc(void);
void av_frame_free(AVFrame **frame);
void av_frame_unref(AVFrame *frame);
void av_frame_move_ref(AVFrame *destination, AVFrame *source);
int av_opt_set_int(void *object, const char *name, int64_t value, int search_flags);
int av_opt_get_int(void *object, const char *name, int search_flags, int64_t *value);
void av_log_set_level(int level);

/// The first fields of `AVFrame` and `AVPacket`, unchanged since libavcodec 57.
typedef struct {
    uint8_t *data[8];
    int linesize[8];
    uint8_t **extended_data;
    int width;
    int height;
    int nb_samples;
    int format;
} frame_prefix;

typedef struct {
    void *buf;
    int64_t pts;
    int64_t dts;
    uint8_t *data;
    int size;
} packet_prefix;

/// `AVPixelFormat` values (stable since FFmpeg 0.x). The HEVC decoder reports a full-range
/// stream's 8-bit YCbCr as the "J" formats, the same layouts.
enum {
    PIX_FMT_YUV420P = 0, PIX_FMT_YUV422P = 4, PIX_FMT_YUV444P = 5, PIX_FMT_GRAY8 = 8,
    PIX_FMT_YUVJ420P = 12, PIX_FMT_YUVJ422P = 13, PIX_FMT_YUVJ444P = 14
};

#define FFMPEG_FUNCTIONS(X) \
    X(avcodec_find_decoder_by_name) \
    X(avcodec_alloc_context3) \
    X(avcodec_open2) \
    X(avcodec_free_context) \
    X(avcodec_send_packet) \
    X(avcodec_receive_frame) \
    X(avcodec_version) \
    X(av_packet_alloc) \
    X(av_packet_free) \
    X(av_frame_alloc) \
    X(av_frame_free) \
    X(av_frame_unref) \
    X(av_frame_move_ref) \
    X(av_opt_set_int) \
    X(av_opt_get_int) \
    X(av_log_set_level)

static struct {
    FFMPEG_FUNCTIONS(NUKE_LIBRARY_FIELD)
} ffmpeg;
static pthread_once_t ffmpeg_once = PTHREAD_ONCE_INIT;
static const AVCodec *hevc_codec;
static char ffmpeg_version[32];

/// NUKE_HEIF_HEVC_DECODER: "libde265" (never FFmpeg), "ffmpeg" (FFmpeg for every image), or
/// unset (FFmpeg for images of `FFMPEG_MINIMUM_BYTES` or more, and for all once it is loaded).
static int hevc_choice(void) {
    const char *choice = getenv("NUKE_HEIF_HEVC_DECODER");
    if (choice != NULL && strcmp(choice, "libde265") == 0) return -1;
    if (choice != NULL && strcmp(choice, "ffmpeg") == 0) return 1;
    return 0;
}

/// Opening libavcodec costs a process about 18 ms and 17 MB (it brings some 40 libraries, librsvg
/// among them), which decoding a 1 MB HEVC image with it instead of libde265 repays.
static const size_t FFMPEG_MINIMUM_BYTES = 1 << 20;
static _Atomic int ffmpeg_loaded;

static void load_ffmpeg(void) {
    if (hevc_choice() < 0) return;
    static const char *const names[] = {"libavcodec.so.61", "libavcodec.so.60", "libavcodec.so.59", "libavcodec.so.58", NULL};
    char error[NUKE_MESSAGE_CAPACITY];
    // Whether the process opened libavcodec before NukeHEIF: its logging is then the app's.
    int opened_before = 0;
    for (const char *const *name = names; *name != NULL && !opened_before; name++) {
        void *loaded = dlopen(*name, RTLD_NOW | RTLD_NOLOAD);
        if (loaded != NULL) {
            opened_before = 1;
            dlclose(loaded);
        }
    }
#define FFMPEG_FUNCTION(name) NUKE_LIBRARY_FUNCTION(ffmpeg, name)
    const nuke_library_function functions[] = {FFMPEG_FUNCTIONS(FFMPEG_FUNCTION)};
#undef FFMPEG_FUNCTION
    if (nuke_library_load(names, functions, sizeof functions / sizeof *functions, error, sizeof error) == NULL) return;
    // libavcodec writes its complaints about broken streams to standard error, some from helper
    // contexts a codec context's log_level_offset does not reach ("Picture size 0x128 is
    // invalid"). A library must not: when NukeHEIF opened it, its log is silenced (AV_LOG_QUIET).
    if (!opened_before) ffmpeg.av_log_set_level(-8);
    hevc_codec = ffmpeg.avcodec_find_decoder_by_name("hevc");
    if (hevc_codec == NULL) return;
    unsigned version = ffmpeg.avcodec_version();
    snprintf(ffmpeg_version, sizeof ffmpeg_version, "%u.%u.%u", version >> 16, version >> 8 & 0xFF, version & 0xFF);
    ffmpeg_loaded = 1;
}

int nukeheif_ffmpeg_hevc_worthwhile(size_t size) {
    if (ffmpeg_loaded) return 1;
    int choice = hevc_choice();
    return choice > 0 || (choice == 0 && size >= FFMPEG_MINIMUM_BYTES);
}

const char *nukeheif_ffmpeg_hevc_version(void) {
    pthread_once(&ffmpeg_once, load_ffmpeg);
    return hevc_codec != NULL ? ffmpeg_version : NULL;
}

static int64_t option(AVCodecContext *context, const char *name, int64_t otherwise) {
    int64_t value = 0;
    return ffmpeg.av_opt_get_int(context, name, 0, &value) >= 0 ? value : otherwise;
}

int nukeheif_ffmpeg_decode_hevc(const uint8_t *data, size_t size, int64_t max_pixels, nukeheif_hevc_picture *picture) {
    memset(picture, 0, sizeof *picture);
    if (nukeheif_ffmpeg_hevc_version() == NULL || size == 0 || size > INT_MAX) return 0;
    // Annex B: each 4-byte length becomes a 4-byte start code, in a copy.
    uint8_t *stream = malloc(size);
    if (stream == NULL) return 0;
    memcpy(stream, data, size);
    for (size_t at = 0; at < size;) {
        if (size - at < 4) {
            free(stream);
            return 0;
        }
        uint32_t length = (uint32_t)stream[at] << 24 | (uint32_t)stream[at + 1] << 16 | (uint32_t)stream[at + 2] << 8 | stream[at + 3];
        if (length > size - at - 4) {
            free(stream);
            return 0;
        }
        stream[at] = 0, stream[at + 1] = 0, stream[at + 2] = 0, stream[at + 3] = 1;
        at += 4 + (size_t)length;
    }
    AVCodecContext *context = ffmpeg.avcodec_alloc_context3(hevc_codec);
    AVPacket *packet = ffmpeg.av_packet_alloc();
    AVFrame *frame = ffmpeg.av_frame_alloc(), *last = ffmpeg.av_frame_alloc();
    int decoded = 0;
    if (context != NULL && packet != NULL && frame != NULL && last != NULL) {
        // One thread, as libde265 runs in libheif; no larger picture than the limit; and silent:
        // every message's level pushed past the most verbose one (levels are 0…56, read modulo 256).
        ffmpeg.av_opt_set_int(context, "threads", 1, 0);
        ffmpeg.av_opt_set_int(context, "max_pixels", max_pixels, 0);
        ffmpeg.av_opt_set_int(context, "log_level_offset", 100, 0);
        if (ffmpeg.avcodec_open2(context, hevc_codec, NULL) >= 0) {
            packet_prefix *prefix = (packet_prefix *)packet;
            prefix->data = stream;   // not reference-counted: libavcodec copies it, padded
            prefix->size = (int)size;
            if (ffmpeg.avcodec_send_packet(context, packet) >= 0) {
                prefix->data = NULL;
                prefix->size = 0;
                (void)ffmpeg.avcodec_send_packet(context, NULL);
                while (ffmpeg.avcodec_receive_frame(context, frame) >= 0) {
                    ffmpeg.av_frame_unref(last);
                    ffmpeg.av_frame_move_ref(last, frame);
                    decoded = 1;
                }
            } else {
                prefix->data = NULL;
                prefix->size = 0;
            }
        }
    }
    if (decoded) {
        const frame_prefix *result = (const frame_prefix *)last;
        switch (result->format) {
        case PIX_FMT_YUV420P:
        case PIX_FMT_YUVJ420P: picture->chroma = 420; break;
        case PIX_FMT_YUV422P:
        case PIX_FMT_YUVJ422P: picture->chroma = 422; break;
        case PIX_FMT_YUV444P:
        case PIX_FMT_YUVJ444P: picture->chroma = 444; break;
        case PIX_FMT_GRAY8: picture->chroma = 0; break;
        default: decoded = 0; break;   // more than 8 bits, or GBR (matrix 0): libde265's
        }
        decoded = decoded && result->width > 0 && result->height > 0;
    }
    if (decoded) {
        const frame_prefix *result = (const frame_prefix *)last;
        for (int i = 0; i < (picture->chroma == 0 ? 1 : 3); i++) {
            picture->planes[i] = result->data[i];
            picture->strides[i] = result->linesize[i];
        }
        picture->width = result->width;
        picture->height = result->height;
        picture->primaries = (int)option(context, "color_primaries", 2);
        picture->transfer = (int)option(context, "color_trc", 2);
        picture->matrix = (int)option(context, "colorspace", 2);
        picture->full_range = option(context, "color_range", 0) == 2;   // AVCOL_RANGE_JPEG
        picture->frame = last;
        last = NULL;
    }
    if (last != NULL) ffmpeg.av_frame_free(&last);
    if (frame != NULL) ffmpeg.av_frame_free(&frame);
    if (packet != NULL) ffmpeg.av_packet_free(&packet);
    if (context != NULL) ffmpeg.avcodec_free_context(&context);
    free(stream);
    return decoded;
}

void nukeheif_hevc_picture_release(nukeheif_hevc_picture *picture) {
    if (picture->frame != NULL) {
        AVFrame *frame = picture->frame;
        ffmpeg.av_frame_free(&frame);
    }
    memset(picture, 0, sizeof *picture);
}

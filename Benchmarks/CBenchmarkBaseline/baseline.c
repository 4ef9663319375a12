#define _GNU_SOURCE   // memfd_create (the libtiff baseline)
#include "CBenchmarkBaseline.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <png.h>
#include <lcms2.h>

// MARK: - JPEG

struct baseline_jpeg_error {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
};

static void baseline_jpeg_error_exit(j_common_ptr cinfo) {
    struct baseline_jpeg_error *err = (struct baseline_jpeg_error *)cinfo->err;
    longjmp(err->jump, 1);
}

static void baseline_jpeg_silence(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }

/// Errors jump back to the caller's setjmp; warnings (a truncated file's) are ignored.
static void baseline_jpeg_errors(struct jpeg_decompress_struct *cinfo, struct baseline_jpeg_error *err) {
    cinfo->err = jpeg_std_error(&err->pub);
    err->pub.error_exit = baseline_jpeg_error_exit;
    err->pub.emit_message = baseline_jpeg_silence;
}

int baseline_jpeg_decode(const uint8_t *data, size_t size, int scale_num,
                         uint8_t *out, size_t out_size, int *width, int *height, int *components) {
    struct jpeg_decompress_struct cinfo;
    struct baseline_jpeg_error err;
    baseline_jpeg_errors(&cinfo, &err);
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    if (cinfo.jpeg_color_space != JCS_GRAYSCALE) cinfo.out_color_space = JCS_EXT_RGB;
    cinfo.scale_num = (unsigned int)scale_num;
    cinfo.scale_denom = 8;
    jpeg_calc_output_dimensions(&cinfo);
    *width = (int)cinfo.output_width;
    *height = (int)cinfo.output_height;
    *components = cinfo.out_color_components;
    size_t stride = (size_t)cinfo.output_width * (size_t)cinfo.out_color_components;
    if (out == NULL || out_size < stride * cinfo.output_height) {
        jpeg_destroy_decompress(&cinfo);
        return out == NULL ? 0 : -1;
    }
    jpeg_start_decompress(&cinfo);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW rows[8];
        int n = 0;
        for (; n < 8 && cinfo.output_scanline + (unsigned)n < cinfo.output_height; n++)
            rows[n] = out + (cinfo.output_scanline + (size_t)n) * stride;
        jpeg_read_scanlines(&cinfo, rows, (JDIMENSION)n);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

// A suspending source over a buffer that grows as chunks "arrive".
struct baseline_source {
    struct jpeg_source_mgr pub;
    size_t available;   // bytes of `data` delivered so far
    size_t consumed;    // bytes handed to libjpeg so far
    const uint8_t *data;
    size_t skip;        // bytes still to skip once they arrive
};

static void baseline_init_source(j_decompress_ptr cinfo) { (void)cinfo; }
static void baseline_term_source(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean baseline_fill(j_decompress_ptr cinfo) {
    struct baseline_source *src = (struct baseline_source *)cinfo->src;
    // Expose everything delivered past the read position; suspend when there is nothing new.
    size_t position = (size_t)(src->pub.next_input_byte - src->data);
    if (position >= src->available) return FALSE;
    src->pub.bytes_in_buffer = src->available - position;
    return TRUE;
}

static void baseline_skip(j_decompress_ptr cinfo, long count) {
    struct baseline_source *src = (struct baseline_source *)cinfo->src;
    if (count <= 0) return;
    if ((size_t)count <= src->pub.bytes_in_buffer) {
        src->pub.next_input_byte += count;
        src->pub.bytes_in_buffer -= (size_t)count;
    } else {
        src->skip = (size_t)count - src->pub.bytes_in_buffer;
        src->pub.next_input_byte += src->pub.bytes_in_buffer;
        src->pub.bytes_in_buffer = 0;
    }
}

static void baseline_deliver(struct baseline_source *src, size_t available) {
    src->available = available;
    size_t position = (size_t)(src->pub.next_input_byte - src->data);
    if (src->skip > 0) {
        size_t step = available - position - src->pub.bytes_in_buffer;
        if (step > src->skip) step = src->skip;
        position += step;
        src->skip -= step;
        src->pub.next_input_byte = src->data + position;
    }
    src->pub.bytes_in_buffer = available - position;
}

static void baseline_render(j_decompress_ptr cinfo, int scan, uint8_t *out) {
    jpeg_start_output(cinfo, scan);
    size_t stride = (size_t)cinfo->output_width * (size_t)cinfo->out_color_components;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = out + cinfo->output_scanline * stride;
        jpeg_read_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_output(cinfo);
}

int baseline_jpeg_progressive(const uint8_t *data, size_t size, int chunks,
                              uint8_t *out, size_t out_size) {
    struct jpeg_decompress_struct cinfo;
    struct baseline_jpeg_error err;
    struct baseline_source src;
    baseline_jpeg_errors(&cinfo, &err);
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    memset(&src, 0, sizeof src);
    src.data = data;
    src.pub.next_input_byte = data;
    src.pub.init_source = baseline_init_source;
    src.pub.fill_input_buffer = baseline_fill;
    src.pub.skip_input_data = baseline_skip;
    src.pub.resync_to_restart = jpeg_resync_to_restart;
    src.pub.term_source = baseline_term_source;
    cinfo.src = &src.pub;

    int phase = 0;  // 0 header, 1 started, 2 done
    int previews = 0, shown = 0;
    size_t chunk = (size + (size_t)chunks - 1) / (size_t)chunks;
    for (size_t delivered = chunk; phase < 2; delivered += chunk) {
        if (delivered > size) delivered = size;
        baseline_deliver(&src, delivered);
        if (phase == 0) {
            if (jpeg_read_header(&cinfo, TRUE) == JPEG_SUSPENDED) continue;
            if (cinfo.jpeg_color_space != JCS_GRAYSCALE) cinfo.out_color_space = JCS_EXT_RGB;
            cinfo.buffered_image = TRUE;
            jpeg_calc_output_dimensions(&cinfo);
            if ((size_t)cinfo.output_width * cinfo.output_height * (size_t)cinfo.out_color_components > out_size) {
                jpeg_destroy_decompress(&cinfo);
                return -1;
            }
            if (!jpeg_start_decompress(&cinfo)) continue;
            phase = 1;
        }
        // Render every scan as it completes (the next SOS or the EOI has arrived).
        for (;;) {
            int status = jpeg_consume_input(&cinfo);
            if (status == JPEG_SUSPENDED) break;
            if (status == JPEG_REACHED_SOS && cinfo.input_scan_number - 1 > shown) {
                shown = cinfo.input_scan_number - 1;
                baseline_render(&cinfo, shown, out);
                previews++;
            }
            if (status == JPEG_REACHED_EOI) { phase = 2; break; }
        }
        if (phase == 2) {
            baseline_render(&cinfo, cinfo.input_scan_number, out);
            previews++;
        }
        if (delivered == size && phase != 2) break;
    }
    if (phase == 2) jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return phase == 2 ? previews : -1;
}

// MARK: - PNG

struct baseline_png_reader {
    const uint8_t *data;
    size_t size;
    size_t offset;
};

static void baseline_png_read(png_structp png, png_bytep out, size_t length) {
    struct baseline_png_reader *reader = png_get_io_ptr(png);
    if (reader->offset + length > reader->size) png_error(png, "truncated");
    memcpy(out, reader->data + reader->offset, length);
    reader->offset += length;
}

int baseline_png_decode(const uint8_t *data, size_t size,
                        uint8_t *out, size_t out_size, int *width, int *height, int *components) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (!png) return -1;
    png_infop info = png_create_info_struct(png);
    // Set after setjmp and freed after longjmp: volatile, so the jump does not lose it.
    png_bytep *volatile rows = NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    struct baseline_png_reader reader = { data, size, 0 };
    png_set_read_fn(png, &reader, baseline_png_read);
    png_read_info(png, info);
    png_set_expand(png);
    png_set_scale_16(png);
    int passes = png_set_interlace_handling(png);
    (void)passes;
    png_read_update_info(png, info);
    *width = (int)png_get_image_width(png, info);
    *height = (int)png_get_image_height(png, info);
    *components = png_get_channels(png, info);
    size_t stride = png_get_rowbytes(png, info);
    if (out == NULL || out_size < stride * (size_t)*height) {
        png_destroy_read_struct(&png, &info, NULL);
        return out == NULL ? 0 : -1;
    }
    rows = malloc(sizeof(png_bytep) * (size_t)*height);
    for (int y = 0; y < *height; y++) rows[y] = out + (size_t)y * stride;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}

// MARK: - libwebp

#include <webp/decode.h>
#include <webp/encode.h>

int baseline_webp_decode(const uint8_t *data, size_t size, int rgba, int scaled_width, int scaled_height,
                         uint8_t *out, size_t out_size, int *width, int *height) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return -1;
    if (WebPGetFeatures(data, size, &config.input) != VP8_STATUS_OK) return -1;
    *width = scaled_width > 0 ? scaled_width : config.input.width;
    *height = scaled_height > 0 ? scaled_height : config.input.height;
    if (out == NULL) return 0;
    if (scaled_width > 0 && scaled_height > 0) {
        config.options.use_scaling = 1;
        config.options.scaled_width = scaled_width;
        config.options.scaled_height = scaled_height;
    }
    config.output.colorspace = rgba ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = out;
    config.output.u.RGBA.stride = *width * (rgba ? 4 : 3);
    config.output.u.RGBA.size = out_size;
    VP8StatusCode status = WebPDecode(data, size, &config);
    WebPFreeDecBuffer(&config.output);
    return status == VP8_STATUS_OK ? 0 : -1;
}

int baseline_webp_incremental(const uint8_t *data, size_t size, int chunks, int rgba, uint8_t *out, size_t out_size) {
    int width = 0, height = 0;
    if (!WebPGetInfo(data, size, &width, &height)) return -1;
    int stride = width * (rgba ? 4 : 3);
    WebPIDecoder *idec = WebPINewRGB(rgba ? MODE_RGBA : MODE_RGB, out, out_size, stride);
    if (idec == NULL) return -1;
    size_t step = (size + chunks - 1) / chunks;
    int last = 0, updates = 0;
    VP8StatusCode status = VP8_STATUS_SUSPENDED;
    for (size_t at = 0; at < size && status == VP8_STATUS_SUSPENDED; at += step) {
        size_t n = at + step > size ? size - at : step;
        status = WebPIAppend(idec, data + at, n);
        int y = 0;
        if (WebPIDecGetRGB(idec, &y, NULL, NULL, NULL) != NULL && y > last) {
            last = y;
            updates++;
        }
    }
    WebPIDelete(idec);
    return status == VP8_STATUS_OK ? updates : -1;
}

int baseline_webp_redecode_prefixes(const uint8_t *data, size_t size, int chunks, int rgba, uint8_t *out, size_t out_size) {
    int width = 0, height = 0;
    if (!WebPGetInfo(data, size, &width, &height)) return -1;
    int stride = width * (rgba ? 4 : 3);
    size_t step = (size + chunks - 1) / chunks;
    for (size_t end = step; ; end += step) {
        if (end > size) end = size;
        WebPIDecoder *idec = WebPINewRGB(rgba ? MODE_RGBA : MODE_RGB, out, out_size, stride);
        if (idec == NULL) return -1;
        VP8StatusCode status = WebPIAppend(idec, data, end);
        int y = 0;
        (void)WebPIDecGetRGB(idec, &y, NULL, NULL, NULL);
        WebPIDelete(idec);
        if (status != VP8_STATUS_OK && status != VP8_STATUS_SUSPENDED) return -1;
        if (end == size) return status == VP8_STATUS_OK ? 0 : -1;
    }
}

size_t baseline_webp_encode(const uint8_t *pixels, int width, int height, int stride, int rgba,
                            float quality, int lossless, int method) {
    WebPConfig config;
    if (!WebPConfigInit(&config)) return 0;
    config.quality = quality;
    config.lossless = lossless;
    config.method = method;
    config.exact = lossless;
    WebPPicture picture;
    if (!WebPPictureInit(&picture)) return 0;
    picture.width = width;
    picture.height = height;
    picture.use_argb = lossless;
    int ok = rgba ? WebPPictureImportRGBA(&picture, pixels, stride) : WebPPictureImportRGB(&picture, pixels, stride);
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    ok = ok && WebPEncode(&config, &picture);
    size_t result = ok ? writer.size : 0;
    WebPPictureFree(&picture);
    WebPMemoryWriterClear(&writer);
    return result;
}

// MARK: - libheif

#include <libheif/heif.h>

int baseline_heif_decode(const uint8_t *data, size_t size) {
    struct heif_context *context = heif_context_alloc();
    struct heif_image_handle *handle = NULL;
    struct heif_image *image = NULL;
    // libheif's own HEVC plugin: once NukeHEIF has loaded libheif in this process, its plugin
    // (libavcodec for large images, its own YCbCr conversion) is in front of it for every caller.
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    options->decoder_id = "libde265";
    int result = -1;
    if (heif_context_read_from_memory_without_copy(context, data, size, NULL).code == heif_error_Ok &&
        heif_context_get_primary_image_handle(context, &handle).code == heif_error_Ok &&
        heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGB, options).code == heif_error_Ok) {
        result = 0;
    }
    heif_decoding_options_free(options);
    heif_image_release(image);
    heif_image_handle_release(handle);
    heif_context_free(context);
    return result;
}

static struct heif_error count_bytes(struct heif_context *context, const void *data, size_t size, void *userdata) {
    (void)context;
    (void)data;
    *(size_t *)userdata += size;
    struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
    return ok;
}

size_t baseline_heif_encode(const uint8_t *rgb, int width, int height, int stride, int quality) {
    struct heif_context *context = heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    size_t written = 0;
    if (heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder).code == heif_error_Ok &&
        heif_encoder_set_lossy_quality(encoder, quality).code == heif_error_Ok &&
        heif_image_create(width, height, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image).code == heif_error_Ok &&
        heif_image_add_plane(image, heif_channel_interleaved, width, height, 8).code == heif_error_Ok) {
        int plane_stride = 0;
        uint8_t *plane = heif_image_get_plane(image, heif_channel_interleaved, &plane_stride);
        for (int y = 0; y < height; y++) memcpy(plane + (size_t)y * plane_stride, rgb + (size_t)y * stride, (size_t)width * 3);
        struct heif_writer writer = {1, count_bytes};
        if (heif_context_encode_image(context, image, encoder, NULL, NULL).code != heif_error_Ok ||
            heif_context_write(context, &writer, &written).code != heif_error_Ok) {
            written = 0;
        }
    }
    heif_image_release(image);
    if (encoder != NULL) heif_encoder_release(encoder);
    heif_context_free(context);
    return written;
}

// MARK: - librsvg (declared by NukeSVG's shim header: see there why not included)

#include "CLibSVG.h"

int baseline_svg_render(const uint8_t *data, size_t size, int width, int height) {
    GError *error = NULL;
    RsvgHandle *handle = rsvg_handle_new_from_data(data, size, &error);
    if (handle == NULL) {
        if (error != NULL) g_error_free(error);
        return -1;
    }
    double natural_width = 0, natural_height = 0;
    rsvg_handle_get_intrinsic_size_in_pixels(handle, &natural_width, &natural_height);
    unsigned char *pixels = calloc((size_t)width * (size_t)height, 4);
    cairo_surface_t *surface = cairo_image_surface_create_for_data(pixels, NUKE_CAIRO_FORMAT_ARGB32, width, height, width * 4);
    cairo_t *cr = cairo_create(surface);
    cairo_scale(cr, width / natural_width, height / natural_height);
    RsvgRectangle viewport = {0, 0, natural_width, natural_height};
    int ok = rsvg_handle_render_document(handle, cr, &viewport, &error);
    if (error != NULL) g_error_free(error);
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
    free(pixels);
    g_object_unref(handle);
    return ok ? 0 : -1;
}

typedef struct _GdkPixbuf GdkPixbuf;
GdkPixbuf *rsvg_handle_get_pixbuf(RsvgHandle *handle);

int baseline_svg_render_pixbuf(const uint8_t *data, size_t size) {
    GError *error = NULL;
    RsvgHandle *handle = rsvg_handle_new_from_data(data, size, &error);
    if (handle == NULL) {
        if (error != NULL) g_error_free(error);
        return -1;
    }
    GdkPixbuf *pixbuf = rsvg_handle_get_pixbuf(handle);
    g_object_unref(handle);
    if (pixbuf == NULL) return -1;
    g_object_unref(pixbuf);
    return 0;
}

// MARK: - giflib

#include <gif_lib.h>

typedef struct {
    const uint8_t *data;
    size_t size, offset;
} gif_reader;

static int gif_read(GifFileType *gif, GifByteType *out, int length) {
    gif_reader *reader = gif->UserData;
    size_t n = reader->size - reader->offset;
    if ((size_t)length < n) n = (size_t)length;
    memcpy(out, reader->data + reader->offset, n);
    reader->offset += n;
    return (int)n;
}

int baseline_gif_play(const uint8_t *data, size_t size) {
    gif_reader reader = {data, size, 0};
    int error = 0;
    GifFileType *gif = DGifOpen(&reader, gif_read, &error);
    if (gif == NULL) return -1;
    if (DGifSlurp(gif) != GIF_OK || gif->SWidth <= 0 || gif->SHeight <= 0) {
        DGifCloseFile(gif, &error);
        return -1;
    }
    const int width = gif->SWidth, height = gif->SHeight;
    uint8_t *canvas = calloc((size_t)width * height, 4), *saved = malloc((size_t)width * height * 4);
    volatile uint32_t sink = 0;
    for (int f = 0; f < gif->ImageCount; f++) {
        const SavedImage *image = &gif->SavedImages[f];
        GraphicsControlBlock gcb = {DISPOSAL_UNSPECIFIED, 0, 0, NO_TRANSPARENT_COLOR};
        DGifSavedExtensionToGCB(gif, f, &gcb);
        const ColorMapObject *map = image->ImageDesc.ColorMap ? image->ImageDesc.ColorMap : gif->SColorMap;
        const int fx = image->ImageDesc.Left, fy = image->ImageDesc.Top, fw = image->ImageDesc.Width, fh = image->ImageDesc.Height;
        const int x0 = fx < 0 ? 0 : fx, y0 = fy < 0 ? 0 : fy;
        const int x1 = fx + fw > width ? width : fx + fw, y1 = fy + fh > height ? height : fy + fh;
        if (gcb.DisposalMode == DISPOSE_PREVIOUS) memcpy(saved, canvas, (size_t)width * height * 4);
        if (map != NULL) {
            for (int y = y0; y < y1; y++) {
                const GifByteType *row = image->RasterBits + (size_t)(y - fy) * fw;
                uint8_t *out = canvas + ((size_t)y * width + x0) * 4;
                for (int x = x0; x < x1; x++, out += 4) {
                    int index = row[x - fx];
                    if (index == gcb.TransparentColor || index >= map->ColorCount) continue;
                    const GifColorType color = map->Colors[index];
                    out[0] = color.Red; out[1] = color.Green; out[2] = color.Blue; out[3] = 255;
                }
            }
        }
        sink += canvas[((size_t)(height / 2) * width + width / 2) * 4];   // the frame is shown here
        if (gcb.DisposalMode == DISPOSE_BACKGROUND) {
            for (int y = y0; y < y1; y++) memset(canvas + ((size_t)y * width + x0) * 4, 0, (size_t)(x1 - x0) * 4);
        } else if (gcb.DisposalMode == DISPOSE_PREVIOUS) {
            memcpy(canvas, saved, (size_t)width * height * 4);
        }
    }
    int frames = gif->ImageCount;
    free(canvas);
    free(saved);
    DGifCloseFile(gif, &error);
    (void)sink;
    return frames;
}

// MARK: - Little CMS

int baseline_lcms_to_srgb(const uint8_t *icc, size_t icc_size, const uint8_t *rgb, int width, int height) {
    cmsHPROFILE source = cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_size);
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    if (source == NULL || srgb == NULL) return 1;
    cmsHTRANSFORM transform = cmsCreateTransform(source, TYPE_RGB_8, srgb, TYPE_RGB_8, INTENT_PERCEPTUAL, 0);
    size_t count = (size_t)width * height;
    uint8_t *out = malloc(count * 3);
    if (transform == NULL || out == NULL) return 1;
    cmsDoTransform(transform, rgb, out, (cmsUInt32Number)count);
    free(out);
    cmsDeleteTransform(transform);
    cmsCloseProfile(srgb);
    cmsCloseProfile(source);
    return 0;
}

// MARK: - libtiff

#include <sys/mman.h>
#include <unistd.h>
#include <tiffio.h>

int baseline_tiff_decode(const uint8_t *data, size_t size, uint8_t *out, size_t out_size, int *width, int *height, int *components) {
    // libtiff reads a file descriptor: an in-memory file holds the bytes.
    int fd = memfd_create("baseline.tif", 0);
    if (fd < 0) return -1;
    if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) { close(fd); return -1; }
    TIFF *tif = TIFFFdOpen(fd, "baseline.tif", "rm");
    if (tif == NULL) { close(fd); return -1; }
    uint32_t w = 0, h = 0;
    uint16_t spp = 1;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    *width = (int)w;
    *height = (int)h;
    *components = spp;
    int status = 0;
    if (out != NULL) {
        size_t row = (size_t)w * spp;
        if (row * h > out_size) status = -1;
        for (uint32_t y = 0; status == 0 && y < h; y++) {
            if (TIFFReadScanline(tif, out + (size_t)y * row, y, 0) < 0) status = -1;
        }
    }
    TIFFClose(tif);
    close(fd);
    return status;
}

// MARK: - JPEG XL

#include <jxl/decode.h>

int baseline_jxl_decode(const uint8_t *data, size_t size, uint8_t *out, size_t out_size) {
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (dec == NULL) return -1;
    int result = -1;
    JxlPixelFormat format = {3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    if (JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS) goto done;
    if (JxlDecoderSetInput(dec, data, size) != JXL_DEC_SUCCESS) goto done;
    JxlDecoderCloseInput(dec);
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(dec);
        if (status == JXL_DEC_BASIC_INFO) continue;
        if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            if (JxlDecoderSetImageOutBuffer(dec, &format, out, out_size) != JXL_DEC_SUCCESS) goto done;
            continue;
        }
        if (status == JXL_DEC_FULL_IMAGE) { result = 0; break; }
        goto done;
    }
done:
    JxlDecoderDestroy(dec);
    return result;
}

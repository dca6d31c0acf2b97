// The codec floor of a benchmark run: the decodes avatar-cache must do (each source at
// the scale and crop avatar-cache uses) and the encodes of the files it wrote, run alone,
// in one process, on every core, with no colour conversion, resampling, network,
// hashing or bookkeeping. Whatever avatar-cache spends above this is its own overhead.
//
//   JPEG  libjpeg-turbo at the smallest N/8 scale whose short side covers the target,
//         only the centre square's columns (jpeg_crop_scanline) and rows (skip), as
//         Sources/CVipsShim/JPEGCentreDecoder.c does; CMYK/YCCK to CMYK, else RGB
//   HEIC  libheif's primary image to interleaved RGB (RGBA with alpha), its HEVC decoded
//         by the decoder avatar-cache uses (Sources/CVipsShim/HEVCDecoder.c, compiled in:
//         FFmpeg's libavcodec on 4 threads where the system has it, else libde265)
//   PNG   libpng to 8-bit RGB(A)
//   WebP  libwebp at the scale avatar-cache loads it (1/2, 1/4, 1/8 when that covers
//         the target)
//   GIF   giflib, the first frame to indexed pixels
//   encodes: each written file is decoded first (not timed), then encoded again as
//         avatar-cache does: JPEG quality 82 (4:2:0, libjpeg-turbo defaults), PNG at
//         zlib level 3 without row filters (pngsave's defaults), WebP at quality 82 (the quality given with -q)
//
// usage: codec_floor [-t THREADS] [-s TARGET] [-q QUALITY] MANIFEST
//   MANIFEST lines: "decode<TAB>path" (a source) or "encode<TAB>path" (a written file)
// Prints one JSON line: wall and CPU seconds (user + system of the timed phase), the
// decode and encode CPU (per-thread clocks), counts and threads.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <gif_lib.h>
#include <jpeglib.h>
#include <libheif/heif.h>
#include <png.h>
#include "HEIFInternal.h"   // our HEVC decoder plugin (HEVCDecoder.c)
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <webp/decode.h>
#include <webp/encode.h>

enum kind { DECODE, ENCODE };
enum format { F_JPEG, F_PNG, F_WEBP, F_GIF, F_HEIF, F_UNKNOWN };

struct item {
    enum kind kind;
    enum format format;
    char *path;
    unsigned char *data;   // the file's bytes (decode) or its pixels (encode)
    size_t size;
    int width, height, channels;
    int failed;
};

static struct item *items;
static size_t item_count;
static atomic_size_t next_item;
static int target = 900, quality = 82;
static int prepare_phase;

struct thread_result {
    double decode_cpu, encode_cpu;
    unsigned char *buffer;   // reused from one decode to the next
    size_t capacity;
};

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static unsigned char *room(struct thread_result *self, size_t bytes) {
    if (bytes > self->capacity) {
        free(self->buffer);
        self->buffer = malloc(bytes);
        self->capacity = bytes;
    }
    return self->buffer;
}

static enum format sniff(const unsigned char *d, size_t n) {
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return F_JPEG;
    if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) return F_PNG;
    if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0) return F_WEBP;
    if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0)) return F_GIF;
    if (n >= 12 && memcmp(d + 4, "ftyp", 4) == 0) return F_HEIF;
    return F_UNKNOWN;
}

// ---- JPEG ----
struct jpeg_failure { struct jpeg_error_mgr manager; jmp_buf jump; };
static void jpeg_fail(j_common_ptr info) { longjmp(((struct jpeg_failure *) info->err)->jump, 1); }

static int decode_jpeg(struct item *it, struct thread_result *self) {
    struct jpeg_decompress_struct info;
    struct jpeg_failure failure;
    info.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = jpeg_fail;
    if (setjmp(failure.jump)) { jpeg_destroy_decompress(&info); return -1; }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, it->data, it->size);
    jpeg_read_header(&info, TRUE);
    int cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
    unsigned int short_side = info.image_width < info.image_height ? info.image_width : info.image_height;
    unsigned int scale = 8;
    for (unsigned int n = 1; n <= 8; n++) if ((short_side * n + 7) / 8 >= (unsigned int) target) { scale = n; break; }
    info.scale_num = scale;
    info.scale_denom = 8;
    info.out_color_space = cmyk ? JCS_CMYK : (info.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB);
    jpeg_start_decompress(&info);
    unsigned int width = info.output_width, height = info.output_height, side = width < height ? width : height;
    JDIMENSION left = (width - side) / 2, columns = side;
    if (width > side) jpeg_crop_scanline(&info, &left, &columns);
    unsigned int top = (height - side) / 2;
    if (top > 0) jpeg_skip_scanlines(&info, top);
    size_t stride = (size_t) info.output_width * info.output_components;
    unsigned char *pixels = room(self, stride * side);
    for (unsigned int y = 0; y < side; y++) {
        JSAMPROW row = pixels + (size_t) y * stride;
        if (jpeg_read_scanlines(&info, &row, 1) != 1) break;
    }
    jpeg_abort_decompress(&info);
    jpeg_destroy_decompress(&info);
    return 0;
}

static int encode_jpeg(struct item *it, struct thread_result *self) {
    struct jpeg_compress_struct info;
    struct jpeg_failure failure;
    unsigned char *out = NULL;
    unsigned long out_size = 0;
    (void) self;
    info.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = jpeg_fail;
    if (setjmp(failure.jump)) { jpeg_destroy_compress(&info); free(out); return -1; }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, &out, &out_size);
    info.image_width = it->width;
    info.image_height = it->height;
    info.input_components = it->channels;
    info.in_color_space = it->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    jpeg_start_compress(&info, TRUE);
    size_t stride = (size_t) it->width * it->channels;
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = it->data + info.next_scanline * stride;
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    free(out);
    return 0;
}

// The item's bytes give way to their pixels (the encodes' input).
static int adopt_pixels(struct item *it, unsigned char *pixels, int width, int height, int channels) {
    free(it->data);
    it->data = pixels;
    it->width = width;
    it->height = height;
    it->channels = channels;
    return 0;
}

static int pixels_of_jpeg(struct item *it) {
    struct jpeg_decompress_struct info;
    struct jpeg_failure failure;
    info.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = jpeg_fail;
    if (setjmp(failure.jump)) { jpeg_destroy_decompress(&info); return -1; }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, it->data, it->size);
    jpeg_read_header(&info, TRUE);
    info.out_color_space = info.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&info);
    size_t stride = (size_t) info.output_width * info.output_components;
    unsigned char *pixels = malloc(stride * info.output_height);
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + info.output_scanline * stride;
        jpeg_read_scanlines(&info, &row, 1);
    }
    int width = info.output_width, height = info.output_height, channels = info.output_components;
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return adopt_pixels(it, pixels, width, height, channels);
}

// ---- PNG ----
static int decode_png(struct item *it, struct thread_result *self) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, it->data, it->size)) return -1;
    image.format = (image.format & PNG_FORMAT_FLAG_ALPHA) ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
    unsigned char *pixels = room(self, PNG_IMAGE_SIZE(image));
    int ok = png_image_finish_read(&image, NULL, pixels, 0, NULL);
    png_image_free(&image);
    return ok ? 0 : -1;
}

static void png_memory_write(png_structp png, png_bytep data, png_size_t length) {
    size_t *written = png_get_io_ptr(png);
    *written += length;
    (void) data;
}
static void png_memory_flush(png_structp png) { (void) png; }

static int encode_png(struct item *it, struct thread_result *self) {
    (void) self;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    size_t written = 0;
    if (setjmp(png_jmpbuf(png))) { png_destroy_write_struct(&png, &info); return -1; }
    png_set_write_fn(png, &written, png_memory_write, png_memory_flush);
    png_set_compression_level(png, 3);
    png_set_filter(png, 0, PNG_FILTER_NONE);   // pngsave's default filter
    png_set_IHDR(png, info, it->width, it->height, 8, it->channels == 4 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < it->height; y++) png_write_row(png, it->data + (size_t) y * it->width * it->channels);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

static int pixels_of_png(struct item *it) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, it->data, it->size)) return -1;
    int alpha = (image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
    image.format = alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
    unsigned char *pixels = malloc(PNG_IMAGE_SIZE(image));
    if (!png_image_finish_read(&image, NULL, pixels, 0, NULL)) { free(pixels); return -1; }
    png_image_free(&image);
    return adopt_pixels(it, pixels, (int) image.width, (int) image.height, alpha ? 4 : 3);
}

// ---- WebP ----
static int decode_webp(struct item *it, struct thread_result *self) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return -1;
    if (WebPGetFeatures(it->data, it->size, &config.input) != VP8_STATUS_OK) return -1;
    int w = config.input.width, h = config.input.height, short_side = w < h ? w : h, shrink = 1;
    for (int factor = 8; factor >= 2; factor /= 2) if (short_side / factor >= target) { shrink = factor; break; }
    if (shrink > 1) {
        config.options.use_scaling = 1;
        config.options.scaled_width = w / shrink;
        config.options.scaled_height = h / shrink;
        w /= shrink;
        h /= shrink;
    }
    int channels = config.input.has_alpha ? 4 : 3;
    config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.stride = w * channels;
    config.output.u.RGBA.size = (size_t) w * h * channels;
    config.output.u.RGBA.rgba = room(self, config.output.u.RGBA.size);
    int status = WebPDecode(it->data, it->size, &config);
    WebPFreeDecBuffer(&config.output);
    return status == VP8_STATUS_OK ? 0 : -1;
}

static int encode_webp(struct item *it, struct thread_result *self) {
    (void) self;
    uint8_t *out = NULL;
    size_t size = it->channels == 4
        ? WebPEncodeRGBA(it->data, it->width, it->height, it->width * 4, quality, &out)
        : WebPEncodeRGB(it->data, it->width, it->height, it->width * 3, quality, &out);
    WebPFree(out);
    return size > 0 ? 0 : -1;
}

static int pixels_of_webp(struct item *it) {
    int w, h;
    uint8_t *pixels = WebPDecodeRGBA(it->data, it->size, &w, &h);
    if (!pixels) return -1;
    // freed with free(): WebP's default allocator is malloc
    return adopt_pixels(it, pixels, w, h, 4);
}

// ---- GIF ----
struct gif_source { const unsigned char *data; size_t size, at; };
static int gif_read(GifFileType *gif, GifByteType *out, int length) {
    struct gif_source *source = gif->UserData;
    size_t left = source->size - source->at, n = (size_t) length < left ? (size_t) length : left;
    memcpy(out, source->data + source->at, n);
    source->at += n;
    return (int) n;
}

static int decode_gif(struct item *it, struct thread_result *self) {
    struct gif_source source = { it->data, it->size, 0 };
    int error = 0;
    GifFileType *gif = DGifOpen(&source, gif_read, &error);
    if (!gif) return -1;
    GifRecordType record;
    int result = -1;
    while (DGifGetRecordType(gif, &record) == GIF_OK && record != TERMINATE_RECORD_TYPE) {
        if (record == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) != GIF_OK) break;
            int w = gif->Image.Width, h = gif->Image.Height;
            unsigned char *pixels = room(self, (size_t) w * h);
            result = 0;
            for (int y = 0; y < h; y++) if (DGifGetLine(gif, pixels + (size_t) y * w, w) != GIF_OK) { result = -1; break; }
            break;   // the first frame, as avatar-cache takes
        } else if (record == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *extension;
            if (DGifGetExtension(gif, &code, &extension) != GIF_OK) break;
            while (extension) if (DGifGetExtensionNext(gif, &extension) != GIF_OK) break;
        }
    }
    DGifCloseFile(gif, &error);
    return result;
}

// ---- HEIF ----
static int decode_heif(struct item *it, struct thread_result *self) {
    (void) self;
    struct heif_context *context = heif_context_alloc();
    struct heif_image_handle *handle = NULL;
    struct heif_image *image = NULL;
    int result = -1;
    // As avatar-cache decodes it (AvatarRenderer's hevcDecoder and hevcThreads).
    cvipsshim_heif_use_hevc_decoder(context, CVIPSSHIM_HEVC_LIBAVCODEC, 4, 50000000);
    if (heif_context_read_from_memory_without_copy(context, it->data, it->size, NULL).code == heif_error_Ok &&
        heif_context_get_primary_image_handle(context, &handle).code == heif_error_Ok) {
        int alpha = heif_image_handle_has_alpha_channel(handle);
        if (heif_decode_image(handle, &image, heif_colorspace_RGB, alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, NULL).code == heif_error_Ok)
            result = 0;
    }
    if (image) heif_image_release(image);
    if (handle) heif_image_handle_release(handle);
    heif_context_free(context);
    return result;
}

static int run_item(struct item *it, struct thread_result *self) {
    if (it->kind == DECODE) {
        switch (it->format) {
        case F_JPEG: return decode_jpeg(it, self);
        case F_PNG: return decode_png(it, self);
        case F_WEBP: return decode_webp(it, self);
        case F_GIF: return decode_gif(it, self);
        case F_HEIF: return decode_heif(it, self);
        default: return -1;
        }
    }
    switch (it->format) {
    case F_JPEG: return encode_jpeg(it, self);
    case F_PNG: return encode_png(it, self);
    case F_WEBP: return encode_webp(it, self);
    default: return -1;
    }
}

static int prepare_item(struct item *it) {
    if (it->kind == DECODE) return 0;
    switch (it->format) {
    case F_JPEG: return pixels_of_jpeg(it);
    case F_PNG: return pixels_of_png(it);
    case F_WEBP: return pixels_of_webp(it);
    default: return -1;
    }
}

static void *worker(void *argument) {
    struct thread_result *self = argument;
    for (;;) {
        size_t index = atomic_fetch_add(&next_item, 1);
        if (index >= item_count) break;
        struct item *it = &items[index];
        if (it->failed) continue;
        if (prepare_phase) {
            if (prepare_item(it) != 0) it->failed = 1;
            continue;
        }
        double start = now(CLOCK_THREAD_CPUTIME_ID);
        if (run_item(it, self) != 0) it->failed = 1;
        double spent = now(CLOCK_THREAD_CPUTIME_ID) - start;
        if (it->kind == DECODE) self->decode_cpu += spent; else self->encode_cpu += spent;
    }
    return NULL;
}

static void run_threads(int threads, struct thread_result *results) {
    pthread_t ids[64];
    atomic_store(&next_item, 0);
    for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, worker, &results[i]);
    for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    int threads = (int) sysconf(_SC_NPROCESSORS_ONLN), option;
    while ((option = getopt(argc, argv, "t:s:q:")) != -1) {
        if (option == 't') threads = atoi(optarg);
        else if (option == 's') target = atoi(optarg);
        else if (option == 'q') quality = atoi(optarg);
        else { fprintf(stderr, "usage: codec_floor [-t THREADS] [-s TARGET] [-q QUALITY] MANIFEST\n"); return 64; }
    }
    if (optind >= argc || threads < 1 || threads > 64) { fprintf(stderr, "usage: codec_floor [-t THREADS] [-s TARGET] [-q QUALITY] MANIFEST\n"); return 64; }
    FILE *manifest = fopen(argv[optind], "r");
    if (!manifest) { perror(argv[optind]); return 66; }
    size_t capacity = 1024;
    items = calloc(capacity, sizeof *items);
    char line[8192];
    while (fgets(line, sizeof line, manifest)) {
        line[strcspn(line, "\n")] = 0;
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        if (item_count == capacity) { capacity *= 2; items = realloc(items, capacity * sizeof *items); }
        struct item *it = &items[item_count];
        memset(it, 0, sizeof *it);
        it->kind = strcmp(line, "encode") == 0 ? ENCODE : DECODE;
        it->path = strdup(tab + 1);
        FILE *file = fopen(it->path, "rb");
        if (!file) { perror(it->path); return 66; }
        fseek(file, 0, SEEK_END);
        it->size = (size_t) ftell(file);
        fseek(file, 0, SEEK_SET);
        it->data = malloc(it->size ? it->size : 1);
        if (fread(it->data, 1, it->size, file) != it->size) { perror(it->path); return 66; }
        fclose(file);
        it->format = sniff(it->data, it->size);
        item_count++;
    }
    fclose(manifest);
    struct thread_result results[64];
    memset(results, 0, sizeof results);
    prepare_phase = 1;
    run_threads(threads, results);
    prepare_phase = 0;
    double cpu_before = cpu_seconds(), wall_before = now(CLOCK_MONOTONIC);
    run_threads(threads, results);
    double wall = now(CLOCK_MONOTONIC) - wall_before, cpu = cpu_seconds() - cpu_before;
    double decode_cpu = 0, encode_cpu = 0;
    size_t decodes = 0, encodes = 0, failed = 0;
    for (int i = 0; i < threads; i++) { decode_cpu += results[i].decode_cpu; encode_cpu += results[i].encode_cpu; }
    for (size_t i = 0; i < item_count; i++) {
        if (items[i].failed) { failed++; fprintf(stderr, "codec_floor: %s: could not %s\n", items[i].path, items[i].kind == DECODE ? "decode" : "encode"); }
        else if (items[i].kind == DECODE) decodes++; else encodes++;
    }
    printf("{\"threads\": %d, \"wall\": %.4f, \"cpu\": %.4f, \"decodeCPU\": %.4f, \"encodeCPU\": %.4f, \"decodes\": %zu, \"encodes\": %zu, \"failed\": %zu}\n",
           threads, wall, cpu, decode_cpu, encode_cpu, decodes, encodes, failed);
    return 0;
}

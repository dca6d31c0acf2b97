// libheif's HEVC decoding through libde265 with more than one of libde265's worker
// threads (declared in ShimInternal.h).
//
// Debian 12's libheif (1.15) starts libde265 with one worker thread, so a HEIC decodes
// on one core however its picture was encoded. Phones' and x265's HEVC streams use
// wavefront parallel processing (each row of coding blocks can start once the row above
// is two blocks ahead) and libde265 decodes such rows, and its deblocking and SAO passes,
// on as many worker threads as it is given. libheif takes decoder plugins through its
// public plugin interface (heif_plugin.h); this one is registered on the decoding
// context only, at a priority above libheif's own, and does what libheif's libde265
// plugin does — NAL units in, the first decoded picture's planes copied out — with the
// thread count the caller asks for. The same decoder decodes the same picture either
// way: the tests compare both.
#include "ShimInternal.h"
#include <libde265/de265.h>
#include <libheif/heif_plugin.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct cvipsshim_hevc_decoder {
    de265_decoder_context *context;
};

static _Thread_local int cvipsshim_hevc_threads = 1;
static _Thread_local long long cvipsshim_hevc_pictures_decoded;

long long cvipsshim_hevc_pictures(void) {
    return cvipsshim_hevc_pictures_decoded;
}

static const char *cvipsshim_hevc_name(void) {
    return "avatar-cache libde265, several worker threads";
}

static int cvipsshim_hevc_supports(enum heif_compression_format format) {
    // libheif's own plugins ask for 100: this one wins where it is registered.
    return format == heif_compression_HEVC ? 200 : 0;
}

static struct heif_error cvipsshim_hevc_error(enum heif_error_code code, enum heif_suberror_code sub, const char *message) {
    struct heif_error error = { code, sub, message };
    return error;
}

static struct heif_error cvipsshim_hevc_ok(void) {
    return cvipsshim_hevc_error(heif_error_Ok, heif_suberror_Unspecified, "Success");
}

static struct heif_error cvipsshim_hevc_new(void **out) {
    struct cvipsshim_hevc_decoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) return cvipsshim_hevc_error(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory");
    decoder->context = de265_new_decoder();
    if (!decoder->context) {
        free(decoder);
        return cvipsshim_hevc_error(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory");
    }
    // Read on the thread that decodes (libheif calls this from heif_decode_image).
    if (de265_start_worker_threads(decoder->context, cvipsshim_hevc_threads) != DE265_OK) {
        de265_free_decoder(decoder->context);
        free(decoder);
        return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, "libde265 threads did not start");
    }
    *out = decoder;
    return cvipsshim_hevc_ok();
}

static void cvipsshim_hevc_free(void *raw) {
    struct cvipsshim_hevc_decoder *decoder = raw;
    de265_free_decoder(decoder->context);
    free(decoder);
}

// libheif hands over the headers and the picture's data as NAL units, each after its
// size in 4 big-endian bytes.
static struct heif_error cvipsshim_hevc_push(void *raw, const void *data, size_t size) {
    struct cvipsshim_hevc_decoder *decoder = raw;
    const unsigned char *bytes = data;
    size_t at = 0;
    while (at < size) {
        if (size - at < 4)
            return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_End_of_data, "truncated NAL unit size");
        size_t length = ((size_t) bytes[at] << 24) | ((size_t) bytes[at + 1] << 16) | ((size_t) bytes[at + 2] << 8) | bytes[at + 3];
        at += 4;
        if (length > size - at)
            return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_End_of_data, "NAL unit past the end of the data");
        if (length > INT_MAX)   // libde265 takes an int
            return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, "NAL unit too large");
        if (de265_push_NAL(decoder->context, bytes + at, (int) length, 0, NULL) != DE265_OK)
            return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, "libde265 refused a NAL unit");
        at += length;
    }
    return cvipsshim_hevc_ok();
}

// A decoded picture's planes copied into a new heif_image (libde265's chroma formats
// number as libheif's do: monochrome, 4:2:0, 4:2:2, 4:4:4).
static struct heif_error cvipsshim_hevc_picture(const struct de265_image *picture, struct heif_image **out) {
    enum de265_chroma chroma = de265_get_chroma_format(picture);
    int mono = chroma == de265_chroma_mono;
    struct heif_image *image = NULL;
    struct heif_error error = heif_image_create(de265_get_image_width(picture, 0), de265_get_image_height(picture, 0),
                                                mono ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                                (enum heif_chroma) chroma, &image);
    if (error.code != heif_error_Ok) return error;
    static const enum heif_channel channels[3] = { heif_channel_Y, heif_channel_Cb, heif_channel_Cr };
    for (int c = 0; c < (mono ? 1 : 3); c++) {
        int width = de265_get_image_width(picture, c), height = de265_get_image_height(picture, c);
        int bits = de265_get_bits_per_pixel(picture, c), stride = 0, target = 0;
        const uint8_t *plane = de265_get_image_plane(picture, c, &stride);
        if (width <= 0 || height <= 0 || bits <= 0 || bits > 16 || !plane) {
            heif_image_release(image);
            return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, "picture without a plane");
        }
        error = heif_image_add_plane(image, channels[c], width, height, bits);
        if (error.code != heif_error_Ok) { heif_image_release(image); return error; }
        uint8_t *copy = heif_image_get_plane(image, channels[c], &target);
        size_t row = (size_t) width * ((bits + 7) / 8);
        for (int y = 0; y < height; y++) memcpy(copy + (size_t) y * target, plane + (size_t) y * stride, row);
    }
    *out = image;
    return cvipsshim_hevc_ok();
}

static struct heif_error cvipsshim_hevc_decode(void *raw, struct heif_image **out) {
    struct cvipsshim_hevc_decoder *decoder = raw;
    *out = NULL;
    if (de265_flush_data(decoder->context) != DE265_OK)
        return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, "libde265 could not flush");
    int more = 0;
    do {
        more = 0;
        de265_error status = de265_decode(decoder->context, &more);
        if (status != DE265_OK) break;
        const struct de265_image *picture = de265_get_next_picture(decoder->context);
        if (picture) {
            // An image item holds one picture: the first is it.
            struct heif_error error = *out ? cvipsshim_hevc_ok() : cvipsshim_hevc_picture(picture, out);
            if (error.code == heif_error_Ok) cvipsshim_hevc_pictures_decoded++;
            de265_release_next_picture(decoder->context);
            if (error.code != heif_error_Ok) return error;
        }
    } while (more);
    if (!*out) return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, "libde265 decoded no picture");
    return cvipsshim_hevc_ok();
}

static const struct heif_decoder_plugin cvipsshim_hevc_plugin = {
    .plugin_api_version = 1,
    .get_plugin_name = cvipsshim_hevc_name,
    // init_plugin, deinit_plugin: none needed (heif_plugin.h: may be NULL).
    .does_support_format = cvipsshim_hevc_supports,
    .new_decoder = cvipsshim_hevc_new,
    .free_decoder = cvipsshim_hevc_free,
    .push_data = cvipsshim_hevc_push,
    .decode_image = cvipsshim_hevc_decode,
};

int cvipsshim_heif_use_hevc_threads(struct heif_context *context, int threads) {
    if (threads <= 0) return 0;
    cvipsshim_hevc_threads = threads;
    return heif_register_decoder(context, &cvipsshim_hevc_plugin).code == heif_error_Ok;
}

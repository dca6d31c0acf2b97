// HEIC/HEIF straight from libheif into a libvips image (declared in
// include/CVipsShim.h, where the reason is given).
#include "CVipsShim.h"
#include "ShimInternal.h"
#include <libheif/heif.h>
#include <string.h>

struct cvipsshim_heif_pixels {
    struct heif_image *image;
};

static void cvipsshim_release_heif(VipsImage *image, void *data) {
    (void) image;
    struct cvipsshim_heif_pixels *pixels = data;
    heif_image_release(pixels->image);
    g_free(pixels);
}

int cvipsshim_heif_decode(const void *buf, size_t len, long long maxPixels, VipsImage **out, int *codedWidth, int *codedHeight) {
    struct heif_context *context = heif_context_alloc();
    struct heif_image_handle *handle = NULL;
    struct heif_image *decoded = NULL;
    struct heif_error error;
    if (!context) { vips_error("heif", "out of memory"); return -1; }
    // One image per thread is the pipeline's model: libheif's own threads (one per grid
    // tile) would only hand work back and forth on cores that are already busy (0, 1
    // and 4 measured the same on the benchmark's HEICs, within noise).
    heif_context_set_max_decoding_threads(context, 0);
    error = heif_context_read_from_memory_without_copy(context, buf, len, NULL);
    if (error.code == heif_error_Ok) error = heif_context_get_primary_image_handle(context, &handle);
    if (error.code != heif_error_Ok) goto failed;
    // What gets decoded is the coded size (the ispe box), which a crop ('clap') may
    // hide: a small picture cut from a huge coded one is a pixel bomb all the same.
    long long width = heif_image_handle_get_width(handle), height = heif_image_handle_get_height(handle);
    long long ispeWidth = heif_image_handle_get_ispe_width(handle), ispeHeight = heif_image_handle_get_ispe_height(handle);
    if (ispeWidth > width) width = ispeWidth;
    if (ispeHeight > height) height = ispeHeight;
    *codedWidth = (int) width;
    *codedHeight = (int) height;
    if (width <= 0 || height <= 0 || width * height > maxPixels) {
        vips_error("heif", "image is %lld x %lld pixels", width, height);
        heif_image_handle_release(handle);
        heif_context_free(context);
        return width > 0 && height > 0 ? 2 : -1;
    }
    int alpha = heif_image_handle_has_alpha_channel(handle);
    int bands = alpha ? 4 : 3;
    // The image's transformations (rotation, mirror, crop) applied, as heifload does.
    error = heif_decode_image(handle, &decoded, heif_colorspace_RGB, alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, NULL);
    if (error.code != heif_error_Ok) goto failed;
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride);
    int w = heif_image_get_width(decoded, heif_channel_interleaved), h = heif_image_get_height(decoded, heif_channel_interleaved);
    if (!plane || w <= 0 || h <= 0) { vips_error("heif", "no pixels decoded"); goto cleanup; }
    VipsImage *image;
    if ((size_t) stride == (size_t) w * bands) {
        // No copy: the image keeps libheif's plane and releases it when it closes.
        image = vips_image_new_from_memory(plane, (size_t) stride * h, w, h, bands, VIPS_FORMAT_UCHAR);
        if (!image) goto cleanup;
        struct cvipsshim_heif_pixels *owner = g_new(struct cvipsshim_heif_pixels, 1);
        owner->image = decoded;
        g_signal_connect(image, "postclose", G_CALLBACK(cvipsshim_release_heif), owner);
        decoded = NULL;
    } else {
        unsigned char *packed = g_malloc((size_t) w * bands * h);
        for (int y = 0; y < h; y++) memcpy(packed + (size_t) y * w * bands, plane + (size_t) y * stride, (size_t) w * bands);
        image = cvipsshim_image_owning(packed, (size_t) w * bands * h, w, h, bands, VIPS_FORMAT_UCHAR);
        if (!image) goto cleanup;
    }
    image->Type = VIPS_INTERPRETATION_sRGB;
    if (heif_image_handle_get_color_profile_type(handle) == heif_color_profile_type_prof ||
        heif_image_handle_get_color_profile_type(handle) == heif_color_profile_type_rICC) {
        size_t size = heif_image_handle_get_raw_color_profile_size(handle);
        if (size > 0) {
            void *profile = g_malloc(size);
            if (heif_image_handle_get_raw_color_profile(handle, profile).code == heif_error_Ok)
                vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, profile, size);
            g_free(profile);
        }
    }
    if (decoded) heif_image_release(decoded);
    heif_image_handle_release(handle);
    heif_context_free(context);
    *out = image;
    return 0;

failed:
    vips_error("heif", "%s", error.message ? error.message : "decode failed");
cleanup:
    if (decoded) heif_image_release(decoded);
    if (handle) heif_image_handle_release(handle);
    heif_context_free(context);
    return -1;
}

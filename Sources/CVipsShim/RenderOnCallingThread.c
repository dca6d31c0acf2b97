// Memory images: a libvips pipeline evaluated on the calling thread, or copied by libvips,
// and the images the fast paths make over their own pixels (declared in
// include/cvipsshim_render.h, where the reason is given, and RenderInternal.h).
#include "RenderInternal.h"
#include "FastPaths.h"
#include <string.h>

static void cvipsshim_free_owned(VipsImage *image, void *pixels) {
    (void) image;
    g_free(pixels);
}

VipsImage *cvipsshim_image_owning(void *pixels, size_t size, int width, int height, int bands, VipsBandFormat format) {
    VipsImage *image = vips_image_new_from_memory(pixels, size, width, height, bands, format);
    if (!image) {
        g_free(pixels);
        return NULL;
    }
    g_signal_connect(image, "postclose", G_CALLBACK(cvipsshim_free_owned), pixels);
    return image;
}

VipsImage *cvipsshim_image_owning_like(void *pixels, size_t size, int width, int height, VipsImage *like) {
    VipsImage *image = cvipsshim_image_owning(pixels, size, width, height, like->Bands, like->BandFmt);
    if (!image) return NULL;
    image->Type = like->Type;
    image->Xres = like->Xres;
    image->Yres = like->Yres;
    const void *profile = NULL;
    size_t length = 0;
    if (vips_image_get_typeof(like, VIPS_META_ICC_NAME) && !vips_image_get_blob(like, VIPS_META_ICC_NAME, &profile, &length) && profile)
        vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, profile, length);
    return image;
}

cvipsshim_status cvipsshim_render_here(VipsImage *in, VipsImage **out) {
#if !CVIPSSHIM_FAST_RENDER
    return CVIPSSHIM_NOT_APPLICABLE;
#endif
    size_t line = VIPS_IMAGE_SIZEOF_LINE(in), size = line * (size_t) in->Ysize;
    unsigned char *pixels = g_try_malloc(size ? size : 1);
    if (!pixels) {
        vips_error("render", "out of memory for %d x %d pixels", in->Xsize, in->Ysize);
        return CVIPSSHIM_FAILED;
    }
    VipsRegion *region = vips_region_new(in);
    if (!region) { g_free(pixels); return CVIPSSHIM_FAILED; }
    for (int y = 0; y < in->Ysize; y += CVIPSSHIM_STRIP) {
        VipsRect rect = { 0, y, in->Xsize, VIPS_MIN(CVIPSSHIM_STRIP, in->Ysize - y) };
        if (vips_region_prepare(region, &rect)) {
            g_object_unref(region);
            g_free(pixels);
            return CVIPSSHIM_FAILED;
        }
        for (int row = 0; row < rect.height; row++)
            memcpy(pixels + (size_t) (y + row) * line, VIPS_REGION_ADDR(region, 0, y + row), line);
    }
    g_object_unref(region);
    VipsImage *image = cvipsshim_image_owning_like(pixels, size, in->Xsize, in->Ysize, in);
    if (!image) return CVIPSSHIM_FAILED;
    *out = image;
    return CVIPSSHIM_OK;
}

int cvipsshim_is_in_memory(VipsImage *image) {
    return image->dtype == VIPS_IMAGE_SETBUF || image->dtype == VIPS_IMAGE_SETBUF_FOREIGN;
}

// vips_image_copy_memory: the plain path cvipsshim_render_here stands in for.
cvipsshim_status cvipsshim_copy_memory(VipsImage *in, VipsImage **out) {
    *out = vips_image_copy_memory(in);
    return *out ? CVIPSSHIM_OK : CVIPSSHIM_FAILED;
}

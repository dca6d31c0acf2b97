// Embedded ICC profile to sRGB with one 8-bit lcms transform, cached per profile
// (declared in include/cvipsshim_colour.h, where the reason is given).
#include "cvipsshim_colour.h"
#include "RenderInternal.h"
#include "FastPaths.h"
#include <lcms2.h>
#include <pthread.h>
#include <string.h>

#define CVIPSSHIM_TRANSFORMS 16

struct cvipsshim_transform {
    unsigned char *profile;
    size_t length;
    cmsUInt32Number input;
    cmsHTRANSFORM transform;
};

static struct cvipsshim_transform transforms[CVIPSSHIM_TRANSFORMS];
static int transformCount;
static pthread_mutex_t transformLock = PTHREAD_MUTEX_INITIALIZER;

// The transform from `profile` to sRGB for pixels of `input`'s layout: made once per
// profile and layout and kept (the first 16 a process meets; others are made for the
// image and deleted after it, *owned set). Made with cmsFLAGS_NOCACHE, so threads may
// use one transform at once.
static cmsHTRANSFORM cvipsshim_transform_for(const void *profile, size_t length, cmsUInt32Number input, cmsUInt32Number output, int *owned) {
    *owned = 0;
    pthread_mutex_lock(&transformLock);
    for (int i = 0; i < transformCount; i++) {
        struct cvipsshim_transform *known = &transforms[i];
        if (known->input == input && known->length == length && memcmp(known->profile, profile, length) == 0) {
            cmsHTRANSFORM found = known->transform;
            pthread_mutex_unlock(&transformLock);
            return found;
        }
    }
    pthread_mutex_unlock(&transformLock);
    cmsHPROFILE source = cmsOpenProfileFromMem(profile, (cmsUInt32Number) length);
    if (!source) return NULL;
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsUInt32Number flags = cmsFLAGS_NOCACHE | (T_EXTRA(input) ? cmsFLAGS_COPY_ALPHA : 0);
    cmsHTRANSFORM transform = cmsCreateTransform(source, input, srgb, output, INTENT_RELATIVE_COLORIMETRIC, flags);
    cmsCloseProfile(source);
    cmsCloseProfile(srgb);
    if (!transform) return NULL;
    pthread_mutex_lock(&transformLock);
    if (transformCount < CVIPSSHIM_TRANSFORMS) {
        // Another thread may have made the same one meanwhile: kept twice is harmless.
        struct cvipsshim_transform *slot = &transforms[transformCount++];
        slot->profile = g_memdup2(profile, length);
        slot->length = length;
        slot->input = input;
        slot->transform = transform;
    } else {
        *owned = 1;
    }
    pthread_mutex_unlock(&transformLock);
    return transform;
}

cvipsshim_status cvipsshim_icc_to_srgb8(VipsImage *in, VipsImage **out) {
#if !CVIPSSHIM_FAST_RENDER
    return CVIPSSHIM_NOT_APPLICABLE;
#endif
    const void *profile = NULL;
    size_t length = 0;
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE) return CVIPSSHIM_NOT_APPLICABLE;
    if (!vips_image_get_typeof(in, VIPS_META_ICC_NAME) || vips_image_get_blob(in, VIPS_META_ICC_NAME, &profile, &length) || !profile) return CVIPSSHIM_NOT_APPLICABLE;
    cmsUInt32Number input, output;
    int bands;
    if (in->Bands == 4 && in->Type == VIPS_INTERPRETATION_CMYK) { input = TYPE_CMYK_8; output = TYPE_RGB_8; bands = 3; }
    else if (in->Bands == 3) { input = TYPE_RGB_8; output = TYPE_RGB_8; bands = 3; }
    else if (in->Bands == 4) { input = TYPE_RGBA_8; output = TYPE_RGBA_8; bands = 4; }
    else if (in->Bands == 1) { input = TYPE_GRAY_8; output = TYPE_RGB_8; bands = 3; }
    else return CVIPSSHIM_NOT_APPLICABLE;
    int owned;
    cmsHTRANSFORM transform = cvipsshim_transform_for(profile, length, input, output, &owned);
    // A profile lcms cannot use with these pixels (wrong colour space, broken): libvips' path decides.
    if (!transform) return CVIPSSHIM_NOT_APPLICABLE;
    size_t line = (size_t) in->Xsize * bands, size = line * (size_t) in->Ysize;
    unsigned char *pixels = g_try_malloc(size ? size : 1);
    VipsRegion *region = pixels ? vips_region_new(in) : NULL;
    int failed = !pixels || !region;
    if (!pixels) vips_error("icc", "out of memory for %d x %d pixels", in->Xsize, in->Ysize);
    for (int y = 0; !failed && y < in->Ysize; y += 32) {
        VipsRect rect = { 0, y, in->Xsize, VIPS_MIN(32, in->Ysize - y) };
        if (vips_region_prepare(region, &rect)) { failed = 1; break; }
        for (int row = 0; row < rect.height; row++)
            cmsDoTransform(transform, VIPS_REGION_ADDR(region, 0, y + row), pixels + (size_t) (y + row) * line, (cmsUInt32Number) in->Xsize);
    }
    if (region) g_object_unref(region);
    if (owned) cmsDeleteTransform(transform);
    if (failed) { g_free(pixels); return CVIPSSHIM_FAILED; }
    VipsImage *image = cvipsshim_image_owning(pixels, size, in->Xsize, in->Ysize, bands, VIPS_FORMAT_UCHAR);
    if (!image) return CVIPSSHIM_FAILED;
    image->Type = VIPS_INTERPRETATION_sRGB;
    image->Xres = in->Xres;
    image->Yres = in->Yres;
    *out = image;
    return CVIPSSHIM_OK;
}

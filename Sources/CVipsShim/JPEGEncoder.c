// Encoding a libvips image as JPEG with libjpeg-turbo on the calling thread, evaluating
// it strip by strip (declared in include/cvipsshim_jpeg.h, where the reason is given).
#include "JPEGInternal.h"
#include "RenderInternal.h"
#include "FastPaths.h"
#include <setjmp.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>

cvipsshim_status cvipsshim_jpeg_encode(VipsImage *in, int quality, void **buf, size_t *len) {
#if !CVIPSSHIM_FAST_JPEG
    return CVIPSSHIM_NOT_APPLICABLE;
#endif
    if (in->BandFmt != VIPS_FORMAT_UCHAR || (in->Bands != 1 && in->Bands != 3) || in->Coding != VIPS_CODING_NONE) return CVIPSSHIM_NOT_APPLICABLE;
    struct jpeg_compress_struct info;
    struct cvipsshim_jpeg_error error;
    // Most tiers fit in a quarter of a byte per pixel; the buffer doubles when not.
    struct cvipsshim_destination destination = { .buffer = NULL, .size = (size_t) in->Xsize * in->Ysize / 4 + 4096 };
    VipsRegion *volatile region = NULL;
    destination.buffer = g_try_malloc(destination.size);
    if (!destination.buffer) { vips_error("jpeg", "out of memory"); return CVIPSSHIM_FAILED; }
    info.err = cvipsshim_jpeg_errors(&error);
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&info);
        if (region) g_object_unref(region);
        g_free(destination.buffer);
        if (error.message[0]) vips_error("jpeg", "%s", error.message);
        return CVIPSSHIM_FAILED;
    }
    jpeg_create_compress(&info);
    cvipsshim_destination_install(&info, &destination);
    info.image_width = (JDIMENSION) in->Xsize;
    info.image_height = (JDIMENSION) in->Ysize;
    info.input_components = in->Bands;
    info.in_color_space = in->Bands == 1 ? JCS_GRAYSCALE : JCS_RGB;
    // As libvips' jpegsave writes them: libjpeg's defaults (4:2:0, baseline Huffman
    // tables, JFIF header) at the quality asked.
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    jpeg_start_compress(&info, TRUE);
    region = vips_region_new(in);
    if (!region) longjmp(error.jump, 1);
    for (int y = 0; y < in->Ysize; y += CVIPSSHIM_STRIP) {
        VipsRect rect = { 0, y, in->Xsize, VIPS_MIN(CVIPSSHIM_STRIP, in->Ysize - y) };
        // A failed evaluation (vips_error set): the same clean-up as a libjpeg error.
        if (vips_region_prepare(region, &rect)) longjmp(error.jump, 1);
        for (int row = 0; row < rect.height; row++) {
            JSAMPROW pointer = (JSAMPROW) VIPS_REGION_ADDR(region, 0, y + row);
            jpeg_write_scanlines(&info, &pointer, 1);
        }
    }
    g_object_unref(region);
    region = NULL;
    jpeg_finish_compress(&info);
    *len = destination.size - destination.manager.free_in_buffer;
    jpeg_destroy_compress(&info);
    *buf = destination.buffer;   // the caller frees it with g_free
    return CVIPSSHIM_OK;
}

// Evaluating a libvips pipeline on the calling thread, and encoding its JPEGs with
// libjpeg-turbo straight from it (declared in include/CVipsShim.h, where the reason
// is given).
#include "CVipsShim.h"
#include "ShimInternal.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

// Rows asked of the pipeline at a time: small enough that each operation's buffers
// stay in cache, large enough that the per-request overhead does not count.
#define CVIPSSHIM_STRIP 32

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

// A destination that grows one g_malloc'd buffer, which stays ours whatever happens
// (jpeg_mem_dest's buffer moves as it grows, and only a finished image says where).
struct cvipsshim_destination {
    struct jpeg_destination_mgr manager;
    unsigned char *buffer;
    size_t size;
};

static void cvipsshim_destination_init(j_compress_ptr info) {
    struct cvipsshim_destination *destination = (struct cvipsshim_destination *) info->dest;
    destination->manager.next_output_byte = destination->buffer;
    destination->manager.free_in_buffer = destination->size;
}

static boolean cvipsshim_destination_grow(j_compress_ptr info) {
    struct cvipsshim_destination *destination = (struct cvipsshim_destination *) info->dest;
    size_t used = destination->size;
    unsigned char *larger = g_try_realloc(destination->buffer, used * 2);
    if (!larger) ERREXIT1(info, JERR_OUT_OF_MEMORY, 0);
    destination->buffer = larger;
    destination->size = used * 2;
    destination->manager.next_output_byte = larger + used;
    destination->manager.free_in_buffer = destination->size - used;
    return TRUE;
}

static void cvipsshim_destination_term(j_compress_ptr info) {
    (void) info;
}

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
    destination.manager.init_destination = cvipsshim_destination_init;
    destination.manager.empty_output_buffer = cvipsshim_destination_grow;
    destination.manager.term_destination = cvipsshim_destination_term;
    info.err = cvipsshim_jpeg_errors(&error);
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&info);
        if (region) g_object_unref(region);
        g_free(destination.buffer);
        if (error.message[0]) vips_error("jpeg", "%s", error.message);
        return CVIPSSHIM_FAILED;
    }
    jpeg_create_compress(&info);
    info.dest = &destination.manager;
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

cvipsshim_status cvipsshim_monogram_regions(VipsImage *mask, VipsImage *text, VipsRegion **maskRegion, VipsRegion **textRegion) {
    if (mask->BandFmt != VIPS_FORMAT_UCHAR || mask->Bands != 1 || mask->Ysize != mask->Xsize ||
        text->BandFmt != VIPS_FORMAT_UCHAR || text->Bands != 4) return CVIPSSHIM_NOT_APPLICABLE;
    *maskRegion = vips_region_new(mask);
    *textRegion = vips_region_new(text);
    VipsRect whole = { 0, 0, mask->Xsize, mask->Ysize }, glyphs = { 0, 0, text->Xsize, text->Ysize };
    if (!*maskRegion || !*textRegion || vips_region_prepare(*maskRegion, &whole) || vips_region_prepare(*textRegion, &glyphs)) {
        if (*maskRegion) g_object_unref(*maskRegion);
        if (*textRegion) g_object_unref(*textRegion);
        return CVIPSSHIM_FAILED;
    }
    return CVIPSSHIM_OK;
}

cvipsshim_status cvipsshim_monogram_compose(VipsImage *mask, VipsImage *text, int x, int y,
                               int red, int green, int blue, int opaque, VipsImage **out) {
#if !CVIPSSHIM_FAST_RENDER
    return CVIPSSHIM_NOT_APPLICABLE;
#endif
    VipsRegion *maskRegion, *textRegion;
    cvipsshim_status status = cvipsshim_monogram_regions(mask, text, &maskRegion, &textRegion);
    if (status != CVIPSSHIM_OK) return status;
    int side = mask->Xsize;
    int bands = opaque ? 3 : 4;
    size_t line = (size_t) side * bands;
    unsigned char *pixels = g_try_malloc(line * side);
    if (!pixels) {
        g_object_unref(maskRegion);
        g_object_unref(textRegion);
        vips_error("monogram", "out of memory");
        return CVIPSSHIM_FAILED;
    }
    const unsigned char background[3] = { (unsigned char) red, (unsigned char) green, (unsigned char) blue };
    for (int row = 0; row < side; row++) {
        const unsigned char *disc = VIPS_REGION_ADDR(maskRegion, 0, row);
        unsigned char *target = pixels + (size_t) row * line;
        // The disc alone: the colour with the mask's alpha (a JPEG's square is opaque).
        for (int column = 0; column < side; column++) {
            unsigned char *pixel = target + (size_t) column * bands;
            pixel[0] = background[0];
            pixel[1] = background[1];
            pixel[2] = background[2];
            if (!opaque) pixel[3] = disc[column];
        }
        int from, to;
        const unsigned char *glyphRow = cvipsshim_monogram_text_row(textRegion, row, x, y, side, &from, &to);
        if (!glyphRow) continue;
        for (int column = from; column < to; column++) {
            const unsigned char *glyph = glyphRow + (size_t) (column - x) * 4;
            int textAlpha = glyph[3];
            if (textAlpha == 0) continue;
            unsigned char *pixel = target + (size_t) column * bands;
            // The text OVER the disc, straight (not premultiplied) alpha, in 1/255ths:
            // alpha = t + d (1 - t), colour = (g t + b d (1 - t)) / alpha.
            int discAlpha = opaque ? 255 : disc[column];
            int under = discAlpha * (255 - textAlpha);              // in 1/255^2
            int alpha = textAlpha * 255 + under;                      // in 1/255^2
            for (int band = 0; band < 3; band++)
                pixel[band] = (unsigned char) ((glyph[band] * textAlpha * 255 + background[band] * under + alpha / 2) / alpha);
            if (!opaque) pixel[3] = (unsigned char) ((alpha + 127) / 255);
        }
    }
    g_object_unref(maskRegion);
    g_object_unref(textRegion);
    VipsImage *image = cvipsshim_image_owning(pixels, line * side, side, side, bands, VIPS_FORMAT_UCHAR);
    if (!image) return CVIPSSHIM_FAILED;
    image->Type = VIPS_INTERPRETATION_sRGB;
    *out = image;
    return CVIPSSHIM_OK;
}

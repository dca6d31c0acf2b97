// Evaluating a libvips pipeline on the calling thread, and encoding its JPEGs with
// libjpeg-turbo straight from it (declared in include/CVipsShim.h, where the reason
// is given).
#include "CVipsShim.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

// Rows asked of the pipeline at a time: small enough that each operation's buffers
// stay in cache, large enough that the per-request overhead does not count.
#define CVIPSSHIM_STRIP 32

static void cvipsshim_free_buffer(VipsImage *image, void *pixels) {
    (void) image;
    g_free(pixels);
}

int cvipsshim_render_here(VipsImage *in, VipsImage **out) {
    size_t line = VIPS_IMAGE_SIZEOF_LINE(in), size = line * (size_t) in->Ysize;
    unsigned char *pixels = g_try_malloc(size ? size : 1);
    if (!pixels) {
        vips_error("render", "out of memory for %d x %d pixels", in->Xsize, in->Ysize);
        return -1;
    }
    VipsRegion *region = vips_region_new(in);
    if (!region) { g_free(pixels); return -1; }
    for (int y = 0; y < in->Ysize; y += CVIPSSHIM_STRIP) {
        VipsRect rect = { 0, y, in->Xsize, VIPS_MIN(CVIPSSHIM_STRIP, in->Ysize - y) };
        if (vips_region_prepare(region, &rect)) {
            g_object_unref(region);
            g_free(pixels);
            return -1;
        }
        for (int row = 0; row < rect.height; row++)
            memcpy(pixels + (size_t) (y + row) * line, VIPS_REGION_ADDR(region, 0, y + row), line);
    }
    g_object_unref(region);
    VipsImage *image = vips_image_new_from_memory(pixels, size, in->Xsize, in->Ysize, in->Bands, in->BandFmt);
    if (!image) { g_free(pixels); return -1; }
    g_signal_connect(image, "postclose", G_CALLBACK(cvipsshim_free_buffer), pixels);
    image->Type = in->Type;
    image->Xres = in->Xres;
    image->Yres = in->Yres;
    *out = image;
    return 0;
}

struct cvipsshim_encode_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

static void cvipsshim_encode_error_exit(j_common_ptr info) {
    struct cvipsshim_encode_error *error = (struct cvipsshim_encode_error *) info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

int cvipsshim_jpeg_encode(VipsImage *in, int quality, void **buf, size_t *len) {
    if (in->BandFmt != VIPS_FORMAT_UCHAR || (in->Bands != 1 && in->Bands != 3) || in->Coding != VIPS_CODING_NONE) return 1;
    struct jpeg_compress_struct info;
    struct cvipsshim_encode_error error;
    unsigned char *volatile output = NULL;
    unsigned long output_size = 0;
    VipsRegion *volatile region = NULL;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = cvipsshim_encode_error_exit;
    error.message[0] = 0;
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&info);
        free(output);
        if (region) g_object_unref(region);
        vips_error("jpeg", "%s", error.message);
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, (unsigned char **) &output, &output_size);
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
        if (vips_region_prepare(region, &rect)) {
            g_object_unref(region);
            jpeg_destroy_compress(&info);
            free(output);
            return -1;
        }
        for (int row = 0; row < rect.height; row++) {
            JSAMPROW pointer = (JSAMPROW) VIPS_REGION_ADDR(region, 0, y + row);
            jpeg_write_scanlines(&info, &pointer, 1);
        }
    }
    g_object_unref(region);
    region = NULL;
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    // From malloc, which g_free frees (GLib 2.46 and later allocate with malloc), as
    // the callers free the savers' buffers.
    *buf = output;
    *len = output_size;
    return 0;
}

static void cvipsshim_free_monogram(VipsImage *image, void *pixels) {
    (void) image;
    g_free(pixels);
}

int cvipsshim_monogram_compose(VipsImage *mask, VipsImage *text, int x, int y,
                               int red, int green, int blue, int opaque, VipsImage **out) {
    if (mask->BandFmt != VIPS_FORMAT_UCHAR || mask->Bands != 1 || text->BandFmt != VIPS_FORMAT_UCHAR || text->Bands != 4) return 1;
    int side = mask->Xsize;
    if (mask->Ysize != side) return 1;
    int bands = opaque ? 3 : 4;
    size_t line = (size_t) side * bands;
    unsigned char *pixels = g_try_malloc(line * side);
    if (!pixels) { vips_error("monogram", "out of memory"); return -1; }
    VipsRegion *maskRegion = vips_region_new(mask), *textRegion = vips_region_new(text);
    VipsRect whole = { 0, 0, side, side }, glyphs = { 0, 0, text->Xsize, text->Ysize };
    if (!maskRegion || !textRegion || vips_region_prepare(maskRegion, &whole) || vips_region_prepare(textRegion, &glyphs)) {
        if (maskRegion) g_object_unref(maskRegion);
        if (textRegion) g_object_unref(textRegion);
        g_free(pixels);
        return -1;
    }
    const unsigned char background[3] = { (unsigned char) red, (unsigned char) green, (unsigned char) blue };
    for (int row = 0; row < side; row++) {
        const unsigned char *disc = VIPS_REGION_ADDR(maskRegion, 0, row);
        unsigned char *target = pixels + (size_t) row * line;
        int ty = row - y;
        const unsigned char *glyphRow = ty >= 0 && ty < text->Ysize ? VIPS_REGION_ADDR(textRegion, 0, ty) : NULL;
        for (int column = 0; column < side; column++) {
            // The text OVER the disc, straight (not premultiplied) alpha; a JPEG's
            // square is opaque, so there the disc's alpha is 255.
            float discAlpha = opaque ? 1.0f : disc[column] / 255.0f;
            float textAlpha = 0;
            const unsigned char *glyph = NULL;
            int tx = column - x;
            if (glyphRow && tx >= 0 && tx < text->Xsize) {
                glyph = glyphRow + (size_t) tx * 4;
                textAlpha = glyph[3] / 255.0f;
            }
            float alpha = textAlpha + discAlpha * (1 - textAlpha);
            unsigned char *pixel = target + (size_t) column * bands;
            for (int band = 0; band < 3; band++) {
                float colour = alpha > 0
                    ? ((glyph ? glyph[band] * textAlpha : 0) + background[band] * discAlpha * (1 - textAlpha)) / alpha
                    : background[band];
                pixel[band] = (unsigned char) (colour + 0.5f);
            }
            if (!opaque) pixel[3] = (unsigned char) (alpha * 255 + 0.5f);
        }
    }
    g_object_unref(maskRegion);
    g_object_unref(textRegion);
    VipsImage *image = vips_image_new_from_memory(pixels, line * side, side, side, bands, VIPS_FORMAT_UCHAR);
    if (!image) { g_free(pixels); return -1; }
    g_signal_connect(image, "postclose", G_CALLBACK(cvipsshim_free_monogram), pixels);
    image->Type = VIPS_INTERPRETATION_sRGB;
    *out = image;
    return 0;
}

// See include/CVipsShim.h: each function exists only because the libvips call it
// wraps is variadic.
#include "CVipsShim.h"
#include <malloc.h>
#include <string.h>
#include <setjmp.h>
#include <stdio.h>
#include <jpeglib.h>

int cvipsshim_jpegload_buffer(const void *buf, size_t len, int shrink, VipsImage **out) {
    return vips_jpegload_buffer((void *) buf, len, out,
        "shrink", shrink,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

int cvipsshim_pngload_buffer(const void *buf, size_t len, VipsImage **out) {
    return vips_pngload_buffer((void *) buf, len, out,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

int cvipsshim_webpload_buffer(const void *buf, size_t len, double scale, VipsImage **out) {
    return vips_webpload_buffer((void *) buf, len, out,
        "scale", scale,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

int cvipsshim_gifload_buffer(const void *buf, size_t len, VipsImage **out) {
    // The first frame only (the default n = 1): an animated GIF gives its first frame.
    return vips_gifload_buffer((void *) buf, len, out,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

int cvipsshim_heifload_buffer(const void *buf, size_t len, VipsImage **out) {
    return vips_heifload_buffer((void *) buf, len, out,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

int cvipsshim_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int cvipsshim_smartcrop_attention(VipsImage *in, VipsImage **out, int width, int height) {
    return vips_smartcrop(in, out, width, height, "interesting", VIPS_INTERESTING_ATTENTION, NULL);
}

int cvipsshim_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

int cvipsshim_icc_transform_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb",
        "embedded", TRUE,
        "intent", VIPS_INTENT_RELATIVE,
        "depth", 8,
        NULL);
}

int cvipsshim_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

int cvipsshim_flatten(VipsImage *in, VipsImage **out, double red, double green, double blue) {
    double ink[3] = { red, green, blue };
    VipsArrayDouble *background = vips_array_double_new(ink, 3);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

int cvipsshim_premultiply(VipsImage *in, VipsImage **out) {
    return vips_premultiply(in, out, NULL);
}

int cvipsshim_unpremultiply(VipsImage *in, VipsImage **out) {
    return vips_unpremultiply(in, out, NULL);
}

int cvipsshim_cast_uchar(VipsImage *in, VipsImage **out) {
    return vips_cast(in, out, VIPS_FORMAT_UCHAR, NULL);
}

int cvipsshim_resize(VipsImage *in, VipsImage **out, double scale) {
    return vips_resize(in, out, scale, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
}

int cvipsshim_text(VipsImage **out, const char *markup, const char *font, int dpi) {
    return vips_text(out, markup, "font", font, "dpi", dpi, "rgba", TRUE, NULL);
}

int cvipsshim_black(VipsImage **out, int width, int height, int bands) {
    // A blank canvas tagged sRGB (vips_black makes "multiband", which compositing refuses).
    VipsImage *black = NULL;
    if (vips_black(&black, width, height, "bands", bands, NULL)) return -1;
    int result = vips_copy(black, out, "interpretation", VIPS_INTERPRETATION_sRGB, NULL);
    g_object_unref(black);
    return result;
}

int cvipsshim_draw_circle(VipsImage *image, const double *ink, int inkCount, int cx, int cy, int radius) {
    return vips_draw_circle(image, (double *) ink, inkCount, cx, cy, radius, "fill", TRUE, NULL);
}

int cvipsshim_bandjoin(VipsImage *a, VipsImage *b, VipsImage **out) {
    return vips_bandjoin2(a, b, out, NULL);
}

int cvipsshim_extract_band(VipsImage *in, VipsImage **out, int band) {
    return vips_extract_band(in, out, band, NULL);
}

int cvipsshim_composite_over(VipsImage *base, VipsImage *overlay, VipsImage **out, int x, int y) {
    return vips_composite2(base, overlay, out, VIPS_BLEND_MODE_OVER, "x", x, "y", y, NULL);
}

int cvipsshim_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality) {
    return vips_jpegsave_buffer(in, buf, len,
        "Q", quality,
        "strip", TRUE,
        NULL);
}

int cvipsshim_pngsave_buffer(VipsImage *in, void **buf, size_t *len) {
    return vips_pngsave_buffer(in, buf, len,
        "strip", TRUE,
        "compression", 3,
        NULL);
}

int cvipsshim_webpsave_buffer(VipsImage *in, void **buf, size_t *len, int quality) {
    return vips_webpsave_buffer(in, buf, len,
        "Q", quality,
        "strip", TRUE,
        NULL);
}

int cvipsshim_set_malloc_arena_max(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}

int cvipsshim_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

int cvipsshim_malloc_trim(void) {
    return malloc_trim(0);
}

struct cvipsshim_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    int warnings;
    char message[JMSG_LENGTH_MAX];
};

static void cvipsshim_jpeg_error_exit(j_common_ptr info) {
    struct cvipsshim_jpeg_error *error = (struct cvipsshim_jpeg_error *) info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

static void cvipsshim_jpeg_emit_message(j_common_ptr info, int level) {
    // Level -1 is a warning: corrupt data, premature end of file. Treated as failure,
    // as jpegload's fail_on=truncated does, so no half-grey picture is ever cached.
    if (level < 0) {
        struct cvipsshim_jpeg_error *error = (struct cvipsshim_jpeg_error *) info->err;
        if (error->warnings++ == 0) (*info->err->format_message)(info, error->message);
    }
}

static void cvipsshim_free_pixels(VipsImage *image, void *pixels) {
    (void) image;
    g_free(pixels);
}

int cvipsshim_jpeg_decode_centre(const void *buf, size_t len, int target, VipsImage **out) {
    struct jpeg_decompress_struct info;
    struct cvipsshim_jpeg_error error;
    unsigned char *volatile pixels = NULL;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = cvipsshim_jpeg_error_exit;
    error.manager.emit_message = cvipsshim_jpeg_emit_message;
    error.warnings = 0;
    error.message[0] = 0;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        g_free(pixels);
        vips_error("jpeg", "%s", error.message);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, (const unsigned char *) buf, (unsigned long) len);
    jpeg_read_header(&info, TRUE);
    // libjpeg converts YCCK to CMYK itself; Adobe (Photoshop) CMYK is stored inverted,
    // as jpegload knows.
    int cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
    if (cmyk ? info.num_components != 4 : (info.num_components != 1 && info.num_components != 3)) {
        jpeg_destroy_decompress(&info);
        return 1;
    }
    int bands = cmyk ? 4 : 3;
    int invert = cmyk && info.saw_Adobe_marker;
    unsigned int shortSide = info.image_width < info.image_height ? info.image_width : info.image_height;
    unsigned int scale = 8;
    for (unsigned int n = 1; n <= 8; n++) {
        if ((shortSide * n + 7) / 8 >= (unsigned int) target) { scale = n; break; }
    }
    info.scale_num = scale;
    info.scale_denom = 8;
    info.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&info);
    unsigned int width = info.output_width, height = info.output_height;
    unsigned int side = width < height ? width : height;
    JDIMENSION left = (width - side) / 2, columns = side;
    if (width > side) jpeg_crop_scanline(&info, &left, &columns);   // widens to iMCU bounds
    unsigned int wantedLeft = (width - side) / 2 - left;
    unsigned int top = (height - side) / 2;
    if (top > 0) jpeg_skip_scanlines(&info, top);
    size_t stride = (size_t) info.output_width * bands, line = (size_t) side * bands;
    pixels = g_malloc(line * side);
    unsigned char *row = g_malloc(stride);
    for (unsigned int y = 0; y < side; y++) {
        JSAMPROW rows[1] = { row };
        if (jpeg_read_scanlines(&info, rows, 1) != 1) break;
        unsigned char *target = pixels + (size_t) y * line;
        memcpy(target, row + (size_t) wantedLeft * bands, line);
        if (invert) for (size_t x = 0; x < line; x++) target[x] = 255 - target[x];
    }
    g_free(row);
    int warnings = error.warnings;
    jpeg_abort_decompress(&info);
    jpeg_destroy_decompress(&info);
    if (warnings > 0) {
        g_free(pixels);
        vips_error("jpeg", "%s", error.message[0] ? error.message : "corrupt JPEG data");
        return -1;
    }
    // The image takes the pixels over and frees them when it closes: no second copy.
    VipsImage *image = vips_image_new_from_memory(pixels, line * side, side, side, bands, VIPS_FORMAT_UCHAR);
    if (!image) { g_free(pixels); return -1; }
    g_signal_connect(image, "postclose", G_CALLBACK(cvipsshim_free_pixels), pixels);
    image->Type = cmyk ? VIPS_INTERPRETATION_CMYK : VIPS_INTERPRETATION_sRGB;
    *out = image;
    return 0;
}

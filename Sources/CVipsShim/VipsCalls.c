// libvips' variadic operations with fixed options (declared in include/cvipsshim_vips.h,
// where the reason is given).
#include "cvipsshim_vips.h"

static int cvipsshim_jpegload(const void *buf, size_t len, int shrink, VipsFailOn fail_on, VipsImage **out) {
    return vips_jpegload_buffer((void *) buf, len, out,
        "shrink", shrink,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", fail_on,
        NULL);
}

cvipsshim_status cvipsshim_jpegload_buffer(const void *buf, size_t len, int shrink, VipsImage **out) {
    return cvipsshim_jpegload(buf, len, shrink, VIPS_FAIL_ON_TRUNCATED, out);
}

cvipsshim_status cvipsshim_jpegload_buffer_tolerant(const void *buf, size_t len, int shrink, VipsImage **out) {
    return cvipsshim_jpegload(buf, len, shrink, VIPS_FAIL_ON_NONE, out);
}

cvipsshim_status cvipsshim_pngload_buffer(const void *buf, size_t len, VipsImage **out) {
    return vips_pngload_buffer((void *) buf, len, out,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

cvipsshim_status cvipsshim_webpload_buffer(const void *buf, size_t len, double scale, VipsImage **out) {
    return vips_webpload_buffer((void *) buf, len, out,
        "scale", scale,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

cvipsshim_status cvipsshim_tiffload_buffer(const void *buf, size_t len, VipsImage **out) {
    // The first page only (the default).
    return vips_tiffload_buffer((void *) buf, len, out,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

cvipsshim_status cvipsshim_gifload_buffer(const void *buf, size_t len, VipsImage **out) {
    // The first frame only (the default n = 1): an animated GIF gives its first frame.
    return vips_gifload_buffer((void *) buf, len, out,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

cvipsshim_status cvipsshim_heifload_buffer(const void *buf, size_t len, VipsImage **out) {
    return vips_heifload_buffer((void *) buf, len, out,
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", VIPS_FAIL_ON_TRUNCATED,
        NULL);
}

cvipsshim_status cvipsshim_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

cvipsshim_status cvipsshim_smartcrop_attention(VipsImage *in, VipsImage **out, int width, int height) {
    return vips_smartcrop(in, out, width, height, "interesting", VIPS_INTERESTING_ATTENTION, NULL);
}

cvipsshim_status cvipsshim_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

cvipsshim_status cvipsshim_icc_transform_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb",
        "embedded", TRUE,
        "intent", VIPS_INTENT_RELATIVE,
        "depth", 8,
        NULL);
}

cvipsshim_status cvipsshim_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

cvipsshim_status cvipsshim_flatten(VipsImage *in, VipsImage **out, double red, double green, double blue) {
    double ink[3] = { red, green, blue };
    VipsArrayDouble *background = vips_array_double_new(ink, 3);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

cvipsshim_status cvipsshim_premultiply(VipsImage *in, VipsImage **out) {
    return vips_premultiply(in, out, NULL);
}

cvipsshim_status cvipsshim_unpremultiply(VipsImage *in, VipsImage **out) {
    return vips_unpremultiply(in, out, NULL);
}

cvipsshim_status cvipsshim_cast_uchar(VipsImage *in, VipsImage **out) {
    return vips_cast(in, out, VIPS_FORMAT_UCHAR, NULL);
}

cvipsshim_status cvipsshim_resize(VipsImage *in, VipsImage **out, double scale) {
    return vips_resize(in, out, scale, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
}

cvipsshim_status cvipsshim_shrink(VipsImage *in, VipsImage **out, double factor) {
    return vips_shrink(in, out, factor, factor, NULL);
}

cvipsshim_status cvipsshim_reducev_lanczos3(VipsImage *in, VipsImage **out, double shrink) {
    return vips_reducev(in, out, shrink, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
}

cvipsshim_status cvipsshim_rot(VipsImage *in, VipsImage **out, VipsAngle angle) {
    return vips_rot(in, out, angle, NULL);
}

cvipsshim_status cvipsshim_text(VipsImage **out, const char *markup, const char *font, int dpi) {
    return vips_text(out, markup, "font", font, "dpi", dpi, "rgba", TRUE, NULL);
}

cvipsshim_status cvipsshim_black(VipsImage **out, int width, int height, int bands) {
    // A blank canvas tagged sRGB (vips_black makes "multiband", which compositing refuses).
    VipsImage *black = NULL;
    if (vips_black(&black, width, height, "bands", bands, NULL)) return CVIPSSHIM_FAILED;
    int result = vips_copy(black, out, "interpretation", VIPS_INTERPRETATION_sRGB, NULL);
    g_object_unref(black);
    return result;
}

cvipsshim_status cvipsshim_draw_circle(VipsImage *image, const double *ink, int inkCount, int cx, int cy, int radius) {
    return vips_draw_circle(image, (double *) ink, inkCount, cx, cy, radius, "fill", TRUE, NULL);
}

cvipsshim_status cvipsshim_bandjoin(VipsImage *a, VipsImage *b, VipsImage **out) {
    return vips_bandjoin2(a, b, out, NULL);
}

cvipsshim_status cvipsshim_composite_over(VipsImage *base, VipsImage *overlay, VipsImage **out, int x, int y) {
    return vips_composite2(base, overlay, out, VIPS_BLEND_MODE_OVER, "x", x, "y", y, NULL);
}

cvipsshim_status cvipsshim_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality) {
    return vips_jpegsave_buffer(in, buf, len,
        "Q", quality,
        "strip", TRUE,
        NULL);
}

cvipsshim_status cvipsshim_pngsave_buffer(VipsImage *in, void **buf, size_t *len) {
    return vips_pngsave_buffer(in, buf, len,
        "strip", TRUE,
        "compression", 3,
        NULL);
}

cvipsshim_status cvipsshim_webpsave_buffer(VipsImage *in, void **buf, size_t *len, int quality) {
    return vips_webpsave_buffer(in, buf, len,
        "Q", quality,
        "strip", TRUE,
        NULL);
}

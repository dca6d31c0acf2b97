// A monogram composed into an RGBA (or RGB) memory image in one pass on the calling thread
// (declared in include/cvipsshim_monogram.h, where the reason is given), and the
// monogram's inputs read whole, which MonogramPNG.c reads too (MonogramInternal.h).
#include "MonogramInternal.h"
#include "RenderInternal.h"
#include "FastPaths.h"

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

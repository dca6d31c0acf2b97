// What the two monogram writers share (MonogramCompose.c, MonogramPNG.c; internal: not
// part of the public headers).
#ifndef CVIPSSHIM_MONOGRAM_INTERNAL_H
#define CVIPSSHIM_MONOGRAM_INTERNAL_H

#include "cvipsshim_monogram.h"

// A monogram's two inputs read whole (MonogramCompose.c): `mask`, one 8-bit band, side x
// side (the disc's alpha), and `text`, four 8-bit bands (the initials).
// CVIPSSHIM_NOT_APPLICABLE when they are not of those forms, CVIPSSHIM_FAILED when a region
// cannot be made (nothing to free), CVIPSSHIM_OK with both set (the caller unrefs them).
cvipsshim_status cvipsshim_monogram_regions(VipsImage *mask, VipsImage *text, VipsRegion **maskRegion, VipsRegion **textRegion);

// The text's pixels (4 bands) that fall on row `row` of a side x side monogram whose
// text has its top left at (x, y): the text row's first pixel, with the square's
// columns it covers in [*from, *to); NULL when the text does not reach that row.
static inline const unsigned char *cvipsshim_monogram_text_row(VipsRegion *textRegion, int row, int x, int y, int side,
                                                               int *from, int *to) {
    const VipsImage *text = textRegion->im;
    int ty = row - y;
    if (ty < 0 || ty >= text->Ysize) return NULL;
    *from = VIPS_MAX(0, x);
    *to = VIPS_MIN(side, x + text->Xsize);
    return VIPS_REGION_ADDR(textRegion, 0, ty);
}

#endif


// A monogram (the disc, the initials over it) made in one pass on the calling thread:
// composed into an RGBA memory image (MonogramCompose.c), or written as a 4-bit indexed
// PNG (MonogramPNG.c), the disc's rows every monogram of a size shares deflated once.
// libvips' composite2 does the composing in float through its thread pool. C because
// they are loops over the inputs' pixels, reached through libvips' region macros, and
// the PNG is deflated and checksummed with zlib's C API.
#ifndef CVIPSSHIM_MONOGRAM_H
#define CVIPSSHIM_MONOGRAM_H

#include "cvipsshim_status.h"

// A monogram in one pass on the calling thread (MonogramCompose.c): the colour with the disc
// `mask`'s alpha (or an opaque square when `opaque`), the RGBA `text` over it at x, y,
// into a new 8-bit sRGB memory image (RGBA, or RGB when opaque). composite2 does the
// same in float through libvips' thread pool, which was most of a monogram's time. CVIPSSHIM_NOT_APPLICABLE
// when the inputs are not 8-bit one-band and four-band images.
cvipsshim_status cvipsshim_monogram_compose(VipsImage *mask, VipsImage *text, int x, int y,
                               int red, int green, int blue, int opaque, VipsImage **out);

// The same monogram as an indexed PNG of 4 bits a pixel (MonogramPNG.c): a palette of the
// background at 5 levels of alpha and 11 blends of it with the text colour (the mask's
// alpha and the text's are rounded to those levels), deflated by zlib: the disc's rows
// above and below the text once per size and process, the text's band with zlib looking
// `textChain` matches deep, into *buf (the caller frees it with g_free). CVIPSSHIM_NOT_APPLICABLE when the picture is not of two
// colours (a colour emoji, text over the disc's edge): the caller composes RGBA then.
cvipsshim_status cvipsshim_monogram_png(VipsImage *mask, VipsImage *text, int x, int y,
                           int red, int green, int blue, int textRed, int textGreen, int textBlue,
                           int textChain, void **buf, size_t *len);

#endif

// libvips operations with a fixed set of options (VipsCalls.c). Every libvips operation
// is a C variadic function (its optional arguments a NULL-terminated list of names and
// values), which Swift cannot call: each function here makes one such call with the
// options the pipeline uses, and the imaging logic is in Swift (AvatarCacheImaging).
#ifndef CVIPSSHIM_VIPS_H
#define CVIPSSHIM_VIPS_H

#include "cvipsshim_status.h"

// Loaders. All read sequentially and fail on truncated or corrupt data instead of
// returning a half-grey picture. The buffer must outlive the returned image.
cvipsshim_status cvipsshim_jpegload_buffer(const void *buf, size_t len, int shrink, VipsImage **out);
// TIFF, its first page (only for photos an export carries inline: AvatarRenderer).
cvipsshim_status cvipsshim_tiffload_buffer(const void *buf, size_t len, VipsImage **out);
// The same, for a JPEG whose end-of-image marker is there (not truncated): warnings
// libjpeg recovers from (a stray byte, a short data segment) give the picture, as every
// browser shows it, instead of failing.
cvipsshim_status cvipsshim_jpegload_buffer_tolerant(const void *buf, size_t len, int shrink, VipsImage **out);
cvipsshim_status cvipsshim_pngload_buffer(const void *buf, size_t len, VipsImage **out);
cvipsshim_status cvipsshim_webpload_buffer(const void *buf, size_t len, double scale, VipsImage **out);
cvipsshim_status cvipsshim_gifload_buffer(const void *buf, size_t len, VipsImage **out);
cvipsshim_status cvipsshim_heifload_buffer(const void *buf, size_t len, VipsImage **out);

// Geometry and colour.
cvipsshim_status cvipsshim_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height);
cvipsshim_status cvipsshim_smartcrop_attention(VipsImage *in, VipsImage **out, int width, int height);
cvipsshim_status cvipsshim_autorot(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_icc_transform_srgb(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space);
cvipsshim_status cvipsshim_flatten(VipsImage *in, VipsImage **out, double red, double green, double blue);
cvipsshim_status cvipsshim_premultiply(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_unpremultiply(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_cast_uchar(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_resize(VipsImage *in, VipsImage **out, double scale);
// vips_shrink: each `factor` x `factor` block averaged (a box filter, no ringing).
cvipsshim_status cvipsshim_shrink(VipsImage *in, VipsImage **out, double factor);
cvipsshim_status cvipsshim_reducev_lanczos3(VipsImage *in, VipsImage **out, double shrink);
cvipsshim_status cvipsshim_rot(VipsImage *in, VipsImage **out, VipsAngle angle);

// Monograms: text (Pango markup, RGBA so colour emoji keep their colours), a blank
// canvas, a filled circle drawn in place, and alpha compositing.
cvipsshim_status cvipsshim_text(VipsImage **out, const char *markup, const char *font, int dpi);
cvipsshim_status cvipsshim_black(VipsImage **out, int width, int height, int bands);
cvipsshim_status cvipsshim_draw_circle(VipsImage *image, const double *ink, int inkCount, int cx, int cy, int radius);
cvipsshim_status cvipsshim_bandjoin(VipsImage *a, VipsImage *b, VipsImage **out);
cvipsshim_status cvipsshim_composite_over(VipsImage *base, VipsImage *overlay, VipsImage **out, int x, int y);

// Savers. Metadata (EXIF, XMP, ICC, comments) is always stripped; the caller frees
// *buf with g_free.
cvipsshim_status cvipsshim_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality);
cvipsshim_status cvipsshim_pngsave_buffer(VipsImage *in, void **buf, size_t *len);
cvipsshim_status cvipsshim_webpsave_buffer(VipsImage *in, void **buf, size_t *len, int quality);

#endif

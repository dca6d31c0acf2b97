// Loops over the pixels of an 8-bit memory image that make a smaller one: the exact
// Lanczos-3 rows behind the exact centring (ExactResample.c: libvips' reducev cannot
// start at a fractional row) and a placeholder's box average with the whole picture's
// mean, in one pass (Placeholder.c). C because they are tight loops over raw pixel
// bytes, reached through libvips' macros (VIPS_IMAGE_ADDR, VIPS_IMAGE_SIZEOF_LINE), that
// the compiler vectorises.
#ifndef CVIPSSHIM_RESAMPLE_H
#define CVIPSSHIM_RESAMPLE_H

#include "cvipsshim_status.h"

// `height` rows resampled (Lanczos-3, the kernel widened by the shrink) from the rows
// `start` to `start + span` of an 8-bit memory image, both fractional: output row y is
// centred on input row start + (y + 0.5) * span / height - 0.5. Taps outside the span's
// rows repeat its edge rows. The image keeps the input's interpretation and ICC profile.
// With a quarter turn before and after, the same for columns (ExactResample.c).
cvipsshim_status cvipsshim_reducev_exact(VipsImage *in, VipsImage **out, double start, double span, int height);

// The pixels a placeholder is made from, in one pass over an in-memory 8-bit image of 1
// to 4 bands (grey, grey + alpha, RGB, RGBA): `rgba` gets it box-averaged to side × side
// straight RGBA (alpha-weighted, side ≤ the image's sides), `average` the mean R, G, B of
// the whole picture composited on white (0…255). CVIPSSHIM_FAILED for another image.
cvipsshim_status cvipsshim_placeholder_pixels(VipsImage *image, int side, unsigned char *rgba, double average[3]);
// The same for opaque 8-bit pixels (1 or 3 bands) in memory of the caller's, `stride`
// bytes a row: what cvipsshim_placeholder_pixels does for such an image.
cvipsshim_status cvipsshim_placeholder_rgb(const unsigned char *data, int width, int height, int bands, size_t stride, int side,
                                          unsigned char *rgba, double average[3]);

#endif

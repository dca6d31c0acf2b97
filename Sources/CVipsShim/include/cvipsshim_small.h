// A small JPEG from its bytes to its encoded tier in one call (SmallJPEG.c): the account
// photo (a square JPEG of 96-200 px, as Google, Gravatar and apps that resize on upload
// serve it) whose centre square is no larger than the smallest tier, so every tier is
// the square itself and no resampling is needed. It costs a decode and one encode, with
// objects and buffers the calling thread keeps from one photo to the next (no libvips
// image, no allocation per photo), where the general path builds libvips images, reads
// the header three times and encodes once per tier. C because libjpeg's API is C's own
// (an error manager that leaves by longjmp, a destination manager of callbacks).
#ifndef CVIPSSHIM_SMALL_H
#define CVIPSSHIM_SMALL_H

#include "cvipsshim_status.h"

// The side of the box-averaged picture a placeholder is made from (at most).
#define CVIPSSHIM_SMALL_PLACEHOLDER_SIDE 32

typedef struct {
    // The source's size from its header (upright: only orientation 1 is taken).
    int width, height;
    // The side of the square written: the short side.
    int side;
    // The encoded JPEG: the calling thread's buffer, valid until its next call.
    const unsigned char *jpeg;
    size_t jpeg_length;
    // The placeholder's side (its pixels, straight RGBA, are in the caller's buffer) and
    // the mean R, G, B of the square (cvipsshim_placeholder_pixels' definition).
    int placeholder_side;
    double average[3];
} cvipsshim_small_jpeg;

// Renders `buf` when it is a clean 8-bit baseline or progressive JPEG, grey, YCbCr or
// RGB, with no ICC profile, EXIF orientation 1 or none, at most `max_pixels` pixels,
// its short side at most `smallest_tier` and its long side at most 4,096: the centre
// square decoded at full size (as cvipsshim_jpeg_decode_centre decodes it at 8/8) and
// encoded once at `quality` (as cvipsshim_jpeg_encode does), so the bytes are the ones
// the general path writes. CVIPSSHIM_OK with `out` filled; CVIPSSHIM_NOT_APPLICABLE for
// anything else, including any error or warning of libjpeg's: the general path then
// decodes it and gives its reasons (a truncated or damaged file, a lying header, CMYK,
// 12-bit, an orientation, a profile). Nothing is left allocated for the caller.
// `placeholder_rgba` holds CVIPSSHIM_SMALL_PLACEHOLDER_SIDE² × 4 bytes.
cvipsshim_status cvipsshim_small_jpeg_render(const void *buf, size_t len, int smallest_tier, long long max_pixels, int quality,
                                             cvipsshim_small_jpeg *out, unsigned char *placeholder_rgba);

#endif

// Colour management with lcms2 directly (ICCTransform.c), beside libvips'
// icc_transform (cvipsshim_vips.h). C because lcms2's API is: its pixel layouts are
// macros (TYPE_RGB_8 and the like) and its transforms run over raw rows of pixels.
#ifndef CVIPSSHIM_COLOUR_H
#define CVIPSSHIM_COLOUR_H

#include "cvipsshim_status.h"

// The image's embedded ICC profile to 8-bit sRGB in one lcms transform on the calling
// thread, into a new memory image (ICCTransform.c). icc_transform goes through Lab
// floats, two transforms a pixel, which is slow. The transform is
// made once per profile (an 8-bit device link lcms optimises) and kept. 8-bit CMYK,
// RGB, RGBA and grey; CVIPSSHIM_NOT_APPLICABLE for anything else, or a profile lcms refuses for these
// pixels (use icc_transform).
cvipsshim_status cvipsshim_icc_to_srgb8(VipsImage *in, VipsImage **out);

#endif

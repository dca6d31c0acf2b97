// Evaluating a libvips pipeline into a memory image on the calling thread
// (RenderOnCallingThread.c, which also makes the memory images the fast paths decode
// into). vips_image_copy_memory and the savers hand every image to libvips' thread pool,
// which at one thread per image costs thread wake-ups per strip and new threads per
// image: most of the run's futex calls and a fifth of its CPU was the kernel's. C because
// libvips' region API is reached through macros (VIPS_REGION_ADDR and the image's line
// size) and an image is made to own its pixels through a GObject signal (g_signal_connect
// is a macro too), none of which Swift imports.
#ifndef CVIPSSHIM_RENDER_H
#define CVIPSSHIM_RENDER_H

#include "cvipsshim_status.h"

// Evaluates `in` into a new memory image on the calling thread, strip by strip. Of the
// header, the interpretation, resolution and ICC profile are kept.
cvipsshim_status cvipsshim_render_here(VipsImage *in, VipsImage **out);
// The same through libvips' own vips_image_copy_memory (all of the header kept): the
// plain path, when cvipsshim_render_here is CVIPSSHIM_NOT_APPLICABLE.
cvipsshim_status cvipsshim_copy_memory(VipsImage *in, VipsImage **out);

// Whether the image's pixels are in memory already (made from memory or rendered).
int cvipsshim_is_in_memory(VipsImage *image);

#endif

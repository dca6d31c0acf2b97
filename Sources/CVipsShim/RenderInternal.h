// Memory images for the shim's C files (RenderOnCallingThread.c; internal: not part of
// its public headers): the decoders, the resampler, the ICC transform and the monograms
// make their pixels and hand them to one of these, and the evaluation on the calling
// thread reads a pipeline strip by strip.
#ifndef CVIPSSHIM_RENDER_INTERNAL_H
#define CVIPSSHIM_RENDER_INTERNAL_H

#include "cvipsshim_render.h"

// Rows asked of the pipeline at a time (cvipsshim_render_here, cvipsshim_jpeg_encode):
// small enough that each operation's buffers stay in cache, large enough that the
// per-request overhead does not count.
#define CVIPSSHIM_STRIP 32

// A new 8-bit (or `format`) memory image over `pixels`, which it owns: they are
// g_free'd when the image closes, and also when the image cannot be made (NULL then).
VipsImage *cvipsshim_image_owning(void *pixels, size_t size, int width, int height, int bands, VipsBandFormat format);

// The same with `like`'s bands, format, interpretation, resolution and ICC profile: what a
// step that makes new pixels from `like` must keep (a profile lost is colours converted
// as if they were sRGB).
VipsImage *cvipsshim_image_owning_like(void *pixels, size_t size, int width, int height, VipsImage *like);

#endif

// CVipsShim: the C the imaging module (AvatarCacheImaging) calls, behind one module,
// one header per concern. The imaging logic is in Swift; what is here is C because
// Swift cannot make the call, or because the library's API is C's own:
//   cvipsshim_vips.h      libvips operations, which are variadic, with fixed options
//   cvipsshim_render.h    a pipeline evaluated into memory on the calling thread
//   cvipsshim_jpeg.h      the JPEG centre decoder at N/8 and the encoder (libjpeg-turbo)
//   cvipsshim_small.h     a small JPEG from its bytes to its encoded tier in one call
//   cvipsshim_heif.h      HEIC through libheif, its HEVC through our decoder plugin
//   cvipsshim_colour.h    an embedded ICC profile to sRGB with lcms2
//   cvipsshim_resample.h  the exact Lanczos rows and a placeholder's box average
//   cvipsshim_monogram.h  monograms composed, or written as indexed PNGs (zlib)
//   cvipsshim_malloc.h    glibc's malloc tuning (<malloc.h> is not in Swift's Glibc)
// Every function that makes or encodes an image returns a cvipsshim_status
// (cvipsshim_status.h). What the C files share and Swift does not see is in the
// internal headers beside them (FastPaths.h and one per concern).
#ifndef CVIPSSHIM_H
#define CVIPSSHIM_H

#include "cvipsshim_status.h"
#include "cvipsshim_vips.h"
#include "cvipsshim_render.h"
#include "cvipsshim_jpeg.h"
#include "cvipsshim_small.h"
#include "cvipsshim_heif.h"
#include "cvipsshim_colour.h"
#include "cvipsshim_resample.h"
#include "cvipsshim_monogram.h"
#include "cvipsshim_malloc.h"

#endif

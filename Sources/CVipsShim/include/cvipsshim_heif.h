// HEIC/HEIF decoded by libheif on the calling thread (HEIFDecoder.c), its HEVC by our own
// libheif decoder plugin (HEVCDecoder.c: libavcodec or libde265 on several threads).
// C because the plugin is libheif's C ABI (heif_plugin.h: a struct of callbacks, with
// per-thread state standing in for the user data its version 1 does not pass), driving
// libde265 and libavcodec (opened with dlopen) through their C structures, and because
// the file's boxes and the decoded planes are read byte by byte.
#ifndef CVIPSSHIM_HEIF_H
#define CVIPSSHIM_HEIF_H

#include "cvipsshim_status.h"

// The primary image of a HEIC/HEIF file decoded by libheif into a new 8-bit RGB(A)
// memory image on the calling thread, its transformations applied and its ICC profile
// attached (HEIFDecoder.c). CVIPSSHIM_FAILED on a damaged file; CVIPSSHIM_TOO_LARGE when the
// coded size (the larger of the ispe box and the shown size: a crop can hide a huge
// coded image), set in *codedWidth and *codedHeight, is over `maxPixels`.
// When the image is 8-bit 4:2:0 without alpha and half its centre square is
// at least `halfSquareFrom` pixels (0: never), only that square at half size, converted
// from the YCbCr planes 2x2 block by 2x2 block; for a plain picture (no grid, rotation,
// mirror or crop) through our decoder, the decoder's own planes, with no full-size RGB
// image (36 MB for 12 MP: libheif 1.15 makes one on the way to any YCbCr it returns).
// The blocks start on even pixels, so the image is then the blocks the exact square
// touches, and `square` (when not NULL) gets where that square lies in it (x, y, side, in
// half pixels; all 0 when the whole image was decoded), for cvipsshim_reducev_exact.
// *shownWidth and *shownHeight get the upright size of
// the whole image either way. `hevcDecoder`, one of the three below (HEVCDecoder.c).
#define CVIPSSHIM_HEVC_LIBHEIF 0      // libheif's own: libde265 on one thread
#define CVIPSSHIM_HEVC_LIBDE265 1     // ours: libde265 on `hevcThreads` threads
#define CVIPSSHIM_HEVC_LIBAVCODEC 2   // ours: libavcodec on `hevcThreads` threads when the
                                      // system has libavcodec.so.59, else libde265
cvipsshim_status cvipsshim_heif_decode_square(const void *buf, size_t len, long long maxPixels, int halfSquareFrom, int hevcDecoder,
                                 int hevcThreads, VipsImage **out, int *codedWidth, int *codedHeight, int *shownWidth,
                                 int *shownHeight, double square[3]);

#endif

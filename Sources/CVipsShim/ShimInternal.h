// Pieces the C files of the shim share (not part of its public header).
#ifndef CVIPSSHIM_INTERNAL_H
#define CVIPSSHIM_INTERNAL_H

#include <setjmp.h>
#include <stdio.h>
#include <jpeglib.h>
#include <vips/vips.h>
#include <libheif/heif_version.h>
#include "CVipsShim.h"

// Where each fast path is on: only with the library version it was written against,
// checked here at build time; elsewhere its function returns CVIPSSHIM_NOT_APPLICABLE and
// the caller takes the plain libvips path. CVIPSSHIM_NO_FAST_PATHS (Package.swift sets
// it when AVATAR_CACHE_FAST_PATHS=off) turns them all off, so the fallbacks are tested.
// - CVIPSSHIM_FAST_JPEG: the centre decoder at N/8, its compact coefficient store (which
//   replaces libjpeg's memory manager's virtual-array calls) and the encoder on the
//   calling thread, written against libjpeg-turbo 2.x (jpeglib.h's API 6.2 or 8);
// - CVIPSSHIM_FAST_HEIF: libheif on the calling thread, the half square and our HEVC
//   decoders, written against libheif 1.15 (the stand-in picture a plugin hands back
//   relies on how 1.15 converts it: HEVCDecoder.c);
// - CVIPSSHIM_FAST_RENDER: the evaluation, ICC transform and monograms on the calling
//   thread, over libvips' region API and lcms2 (no version-specific behaviour).
#if defined(CVIPSSHIM_NO_FAST_PATHS)
#define CVIPSSHIM_FAST_JPEG 0
#define CVIPSSHIM_FAST_HEIF 0
#define CVIPSSHIM_FAST_RENDER 0
#else
#if defined(LIBJPEG_TURBO_VERSION_NUMBER) && LIBJPEG_TURBO_VERSION_NUMBER >= 2000000 && LIBJPEG_TURBO_VERSION_NUMBER < 3000000
#define CVIPSSHIM_FAST_JPEG 1
#else
#define CVIPSSHIM_FAST_JPEG 0
#endif
#if LIBHEIF_NUMERIC_VERSION >= 0x010f0000 && LIBHEIF_NUMERIC_VERSION < 0x01100000
#define CVIPSSHIM_FAST_HEIF 1
#else
#define CVIPSSHIM_FAST_HEIF 0
#endif
#define CVIPSSHIM_FAST_RENDER 1
#endif

// A new 8-bit (or `format`) memory image over `pixels`, which it owns: they are
// g_free'd when the image closes, and also when the image cannot be made (NULL then).
VipsImage *cvipsshim_image_owning(void *pixels, size_t size, int width, int height, int bands, VipsBandFormat format);

// The same with `like`'s bands, format, interpretation, resolution and ICC profile: what a
// step that makes new pixels from `like` must keep (a profile lost is colours converted
// as if they were sRGB).
VipsImage *cvipsshim_image_owning_like(void *pixels, size_t size, int width, int height, VipsImage *like);

// libjpeg's error manager for the shim: error_exit formats the message and jumps back
// to `jump`; warnings (corrupt data, premature end) are counted, the first one's
// message kept, for the decoder to treat as failure.
struct cvipsshim_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    int warnings;
    // Set when one of the warnings was libjpeg's "premature end of JPEG file" (the data
    // ran out: a truncated file), which no tolerance covers.
    int ended_early;
    char message[JMSG_LENGTH_MAX];
};

// Sets `error` up as `info`'s error manager and returns it for info->err.
struct jpeg_error_mgr *cvipsshim_jpeg_errors(struct cvipsshim_jpeg_error *error);

// The smallest libjpeg-turbo scale N (of N/8, N = 1…8) whose scaled short side still
// has `target` pixels; 8 when none does.
unsigned int cvipsshim_jpeg_scale(unsigned int shortSide, int target);

// Makes libjpeg keep a progressive JPEG's coefficients compactly (JPEGCoefficientStore.c):
// call after jpeg_read_header and setting the scale, before jpeg_start_decompress. Only
// what the inverse DCT at the chosen scale reads is kept as values; the other
// coefficients as one bit each. Returns 1 when installed (progressive files only).
int cvipsshim_jpeg_compact_coefficients(j_decompress_ptr info);

// What the compact store holds for `info` at the scale set (after
// jpeg_calc_output_dimensions): the stored blocks and the decoder's window, in bytes;
// with `compact` 0, what libjpeg's own whole-image arrays hold.
long long cvipsshim_jpeg_compact_bytes(j_decompress_ptr info, int compact);

// Registers on `context` an HEVC decoder plugin (HEVCDecoder.c) that decodes on
// `threads` threads: `decoder` CVIPSSHIM_HEVC_LIBDE265 with libde265,
// CVIPSSHIM_HEVC_LIBAVCODEC with libavcodec when the system has it (else libde265);
// CVIPSSHIM_HEVC_LIBHEIF registers nothing (libheif's own libde265, one thread). The
// stream's own picture size is held to `maxPixels` too (libavcodec). Returns 1 when
// registered. Call on the thread that then decodes.
struct heif_context;
int cvipsshim_heif_use_hevc_decoder(struct heif_context *context, int decoder, int threads, long long maxPixels);

// libheif 1.15 converts every decoded picture to RGB 4:4:4 before anything else, even
// when YCbCr is asked for (which it then converts back): for 12 MP, 36 MB of float
// conversion on top of the picture. With a capture set on this thread, the plugin
// keeps the pictures it decodes for the caller instead (`image`, the first; `pictures`
// counts them) and hands libheif a 1 x 1 grey stand-in, which libheif leaves alone
// when asked for no colour space and no transformations. NULL ends the capture.
struct heif_image;
struct cvipsshim_hevc_capture {
    struct heif_image *image;
    int pictures;
};
void cvipsshim_hevc_capture_into(struct cvipsshim_hevc_capture *capture);

// A monogram's two inputs read whole: `mask`, one 8-bit band, side x side (the disc's
// alpha), and `text`, four 8-bit bands (the initials). CVIPSSHIM_NOT_APPLICABLE when they
// are not of those forms, CVIPSSHIM_FAILED when a region cannot be made (nothing to
// free), CVIPSSHIM_OK with both set (the caller unrefs them).
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

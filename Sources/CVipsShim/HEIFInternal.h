// What HEIFDecoder.c asks of our HEVC decoder plugin (HEVCDecoder.c; internal: not part
// of the public headers).
#ifndef CVIPSSHIM_HEIF_INTERNAL_H
#define CVIPSSHIM_HEIF_INTERNAL_H

#include "cvipsshim_heif.h"

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

#endif

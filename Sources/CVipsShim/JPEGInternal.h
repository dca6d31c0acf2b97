// What the JPEG files share (JPEGErrors.c, JPEGDestination.c, JPEGCentreDecoder.c,
// JPEGCoefficientStore.c, JPEGEncoder.c, SmallJPEG.c; internal: not part of the public
// headers).
#ifndef CVIPSSHIM_JPEG_INTERNAL_H
#define CVIPSSHIM_JPEG_INTERNAL_H

#include <setjmp.h>
#include <stdio.h>
#include <jpeglib.h>
#include "cvipsshim_jpeg.h"

// libjpeg's error manager for the shim (JPEGErrors.c): error_exit formats the message and
// jumps back to `jump`; warnings (corrupt data, premature end) are counted, the first
// one's message kept, for the decoder to treat as failure.
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

// A destination that grows one g_malloc'd buffer, which stays its owner's whatever happens
// (jpeg_mem_dest's buffer moves as it grows, and only a finished image says where;
// JPEGDestination.c): the owner sets `buffer` (g_malloc'd) and `size` before each
// jpeg_start_compress; the image's bytes are then buffer[0 ..< size - manager.free_in_buffer].
struct cvipsshim_destination {
    struct jpeg_destination_mgr manager;
    unsigned char *buffer;
    size_t size;
};

// Makes `destination` `info`'s destination (info->dest), doubling its buffer when full.
void cvipsshim_destination_install(j_compress_ptr info, struct cvipsshim_destination *destination);

// The smallest libjpeg-turbo scale N (of N/8, N = 1…8) whose scaled short side still
// has `target` pixels; 8 when none does (JPEGCentreDecoder.c).
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

#endif

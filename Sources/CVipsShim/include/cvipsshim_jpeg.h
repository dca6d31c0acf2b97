// JPEG straight through libjpeg-turbo, where libvips' jpegload and jpegsave do more than
// the pipeline needs: the centre square decoded at an N/8 DCT scale (JPEGCentreDecoder.c),
// a progressive JPEG's coefficients kept compactly meanwhile (JPEGCoefficientStore.c),
// and encoding on the calling thread (JPEGEncoder.c). C because libjpeg's API is: an
// error manager that leaves by longjmp, and memory and destination managers
// that are structs of callbacks libjpeg calls.
#ifndef CVIPSSHIM_JPEG_H
#define CVIPSSHIM_JPEG_H

#include "cvipsshim_status.h"

// Decodes only the centre square of a JPEG, at the smallest libjpeg-turbo DCT scale
// (N/8, N = 1…8) whose square still has at least `target` pixels a side (or at full
// size when the image is smaller), straight into a new 8-bit RGB image (CMYK for
// CMYK and YCCK JPEGs, Adobe inversion undone). libvips' jpegload only scales by 1/2,
// 1/4 and 1/8 and decodes every column and row.
// At a reduced scale the exact square (the full image's centre square, its left and top
// rounded down as a crop of the whole picture has them) falls between decoded pixels:
// the image is then the rows and columns it touches, and `square` (when not NULL) gets
// where the exact square lies in it, x, y and side, in decoded pixels (at 8/8: 0, 0 and
// the image's side), for cvipsshim_reducev_exact to resample exactly that.
// CVIPSSHIM_OK with *out set; CVIPSSHIM_NOT_APPLICABLE when this path does not apply
// (unusual component counts: use jpegload); CVIPSSHIM_FAILED on corrupt or truncated data.
// `compact` non-zero: a progressive JPEG's coefficients are kept compactly while its
// scans are read (only those the scaled inverse DCT reads as values, a bit for each
// other one: 15 MB instead of 72 for 12 MP at 4:4:4 and 3/8), same pixels; 0 leaves
// libjpeg's own whole-image arrays (the tests compare the two).
cvipsshim_status cvipsshim_jpeg_decode_centre(const void *buf, size_t len, int target, int compact, double square[3], VipsImage **out);
// The same (compact), tolerating the warnings libjpeg recovers from, except a premature
// end of the data (a truncated file): the first one's message is copied to `warning`
// (at most `warning_size` bytes, terminated), which stays as it was when there is none.
cvipsshim_status cvipsshim_jpeg_decode_centre_tolerant(const void *buf, size_t len, int target, char *warning, size_t warning_size,
                                          double square[3], VipsImage **out);

// The memory cvipsshim_jpeg_decode_centre holds at its peak for this JPEG, compact: the
// centre square at its DCT scale, plus, for a progressive JPEG, its coefficients as the
// compact store keeps them at that scale (libjpeg keeps them until the last scan).
// -1 when the header cannot be read, or the centre decoder is built off.
long long cvipsshim_jpeg_decode_memory(const void *buf, size_t len, int target);

// Encodes an 8-bit, 1- or 3-band image as JPEG with libjpeg-turbo on the calling
// thread (libjpeg's defaults at `quality`: 4:2:0, what jpegsave writes), no metadata,
// evaluating the image strip by strip as it goes (jpegsave hands it to libvips' thread
// pool: cvipsshim_render.h). CVIPSSHIM_NOT_APPLICABLE when the image is not such an
// image (use jpegsave); the caller frees *buf with g_free.
cvipsshim_status cvipsshim_jpeg_encode(VipsImage *in, int quality, void **buf, size_t *len);

#endif

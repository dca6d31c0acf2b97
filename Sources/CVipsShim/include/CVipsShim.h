// CVipsShim: fixed-argument wrappers around the libvips calls that are C variadic
// functions (every libvips operation takes optional arguments as a NULL-terminated
// list). Swift cannot call variadic C functions, so each wrapper passes a fixed set of
// options (CVipsShim.c) and the imaging logic is in Swift (Imaging/). The exceptions,
// the JPEG centre decoder and the evaluation and JPEG encoding on the calling thread
// below, live in JPEGCentreDecoder.c and RenderOnCallingThread.c.
//
// Every function that makes or encodes an image returns a cvipsshim_status; on
// CVIPSSHIM_FAILED the message is in vips_error_buffer(), as libvips leaves it.
#ifndef CVIPSSHIM_H
#define CVIPSSHIM_H

#include <stddef.h>
#include <vips/vips.h>

typedef enum {
    CVIPSSHIM_OK = 0,
    // A fast path that does not take this input, or was built without (a library
    // version or CPU it was not written for, or CVIPSSHIM_NO_FAST_PATHS): take the
    // plain libvips path. Nothing was made.
    CVIPSSHIM_NOT_APPLICABLE = 1,
    // Over the pixel limit the caller gave (the sizes found are set).
    CVIPSSHIM_TOO_LARGE = 2,
    // Damaged data or a library error (vips_error set).
    CVIPSSHIM_FAILED = -1,
} cvipsshim_status;

// Loaders. All read sequentially and fail on truncated or corrupt data instead of
// returning a half-grey picture. The buffer must outlive the returned image.
cvipsshim_status cvipsshim_jpegload_buffer(const void *buf, size_t len, int shrink, VipsImage **out);
// TIFF, its first page (only for photos an export carries inline: AvatarRenderer).
cvipsshim_status cvipsshim_tiffload_buffer(const void *buf, size_t len, VipsImage **out);
// The same, for a JPEG whose end-of-image marker is there (not truncated): warnings
// libjpeg recovers from (a stray byte, a short data segment) give the picture, as every
// browser shows it, instead of failing.
cvipsshim_status cvipsshim_jpegload_buffer_tolerant(const void *buf, size_t len, int shrink, VipsImage **out);
cvipsshim_status cvipsshim_pngload_buffer(const void *buf, size_t len, VipsImage **out);
cvipsshim_status cvipsshim_webpload_buffer(const void *buf, size_t len, double scale, VipsImage **out);
cvipsshim_status cvipsshim_gifload_buffer(const void *buf, size_t len, VipsImage **out);
cvipsshim_status cvipsshim_heifload_buffer(const void *buf, size_t len, VipsImage **out);

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

// `height` rows resampled (Lanczos-3, the kernel widened by the shrink) from the rows
// `start` to `start + span` of an 8-bit memory image, both fractional: output row y is
// centred on input row start + (y + 0.5) * span / height - 0.5. Taps outside the span's
// rows repeat its edge rows. The image keeps the input's interpretation and ICC profile.
// With a quarter turn before and after, the same for columns (ExactResample.c).
cvipsshim_status cvipsshim_reducev_exact(VipsImage *in, VipsImage **out, double start, double span, int height);

// The memory cvipsshim_jpeg_decode_centre holds at its peak for this JPEG, compact: the
// centre square at its DCT scale, plus, for a progressive JPEG, its coefficients as the
// compact store keeps them at that scale (libjpeg keeps them until the last scan).
// -1 when the header cannot be read, or the centre decoder is built off.
long long cvipsshim_jpeg_decode_memory(const void *buf, size_t len, int target);

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

// Evaluates `in` into a new memory image on the calling thread, strip by strip
// (RenderOnCallingThread.c). vips_image_copy_memory and the savers hand every image to libvips'
// thread pool, which at one thread per image costs thread wake-ups per strip and new
// threads per image: most of the run's futex calls and a fifth of its CPU was the
// kernel's. Of the header, the interpretation, resolution and ICC profile are kept.
cvipsshim_status cvipsshim_render_here(VipsImage *in, VipsImage **out);
// The same through libvips' own vips_image_copy_memory (all of the header kept): the
// plain path, when cvipsshim_render_here is CVIPSSHIM_NOT_APPLICABLE.
cvipsshim_status cvipsshim_copy_memory(VipsImage *in, VipsImage **out);

// Whether the image's pixels are in memory already (made from memory or rendered).
int cvipsshim_is_in_memory(VipsImage *image);

// Encodes an 8-bit, 1- or 3-band image as JPEG with libjpeg-turbo on the calling
// thread (libjpeg's defaults at `quality`: 4:2:0, what jpegsave writes), no metadata.
// CVIPSSHIM_NOT_APPLICABLE when the image is not such an image (use jpegsave); the caller frees *buf
// with g_free.
cvipsshim_status cvipsshim_jpeg_encode(VipsImage *in, int quality, void **buf, size_t *len);

// Geometry and colour.
cvipsshim_status cvipsshim_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height);
cvipsshim_status cvipsshim_smartcrop_attention(VipsImage *in, VipsImage **out, int width, int height);
cvipsshim_status cvipsshim_autorot(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_icc_transform_srgb(VipsImage *in, VipsImage **out);

// The image's embedded ICC profile to 8-bit sRGB in one lcms transform on the calling
// thread, into a new memory image (ICCTransform.c). icc_transform goes through Lab
// floats, two transforms a pixel, which is slow. The transform is
// made once per profile (an 8-bit device link lcms optimises) and kept. 8-bit CMYK,
// RGB, RGBA and grey; CVIPSSHIM_NOT_APPLICABLE for anything else, or a profile lcms refuses for these
// pixels (use icc_transform).
cvipsshim_status cvipsshim_icc_to_srgb8(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space);
cvipsshim_status cvipsshim_flatten(VipsImage *in, VipsImage **out, double red, double green, double blue);
cvipsshim_status cvipsshim_premultiply(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_unpremultiply(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_cast_uchar(VipsImage *in, VipsImage **out);
cvipsshim_status cvipsshim_resize(VipsImage *in, VipsImage **out, double scale);
// vips_shrink: each `factor` x `factor` block averaged (a box filter, no ringing).
cvipsshim_status cvipsshim_shrink(VipsImage *in, VipsImage **out, double factor);
cvipsshim_status cvipsshim_reducev_lanczos3(VipsImage *in, VipsImage **out, double shrink);
cvipsshim_status cvipsshim_rot(VipsImage *in, VipsImage **out, VipsAngle angle);

// Monograms: text (Pango markup, RGBA so colour emoji keep their colours), a blank
// canvas, a filled circle drawn in place, and alpha compositing.
cvipsshim_status cvipsshim_text(VipsImage **out, const char *markup, const char *font, int dpi);
cvipsshim_status cvipsshim_black(VipsImage **out, int width, int height, int bands);
cvipsshim_status cvipsshim_draw_circle(VipsImage *image, const double *ink, int inkCount, int cx, int cy, int radius);
cvipsshim_status cvipsshim_bandjoin(VipsImage *a, VipsImage *b, VipsImage **out);
cvipsshim_status cvipsshim_composite_over(VipsImage *base, VipsImage *overlay, VipsImage **out, int x, int y);

// A monogram in one pass on the calling thread (RenderOnCallingThread.c): the colour with the disc
// `mask`'s alpha (or an opaque square when `opaque`), the RGBA `text` over it at x, y,
// into a new 8-bit sRGB memory image (RGBA, or RGB when opaque). composite2 does the
// same in float through libvips' thread pool, which was most of a monogram's time. CVIPSSHIM_NOT_APPLICABLE
// when the inputs are not 8-bit one-band and four-band images.
cvipsshim_status cvipsshim_monogram_compose(VipsImage *mask, VipsImage *text, int x, int y,
                               int red, int green, int blue, int opaque, VipsImage **out);

// The same monogram as an indexed PNG of 4 bits a pixel (MonogramPNG.c): a palette of the
// background at 5 levels of alpha and 11 blends of it with the text colour (the mask's
// alpha and the text's are rounded to those levels), deflated by zlib: the disc's rows
// above and below the text once per size and process, the text's band with zlib looking
// `textChain` matches deep, into *buf (the caller frees it with g_free). CVIPSSHIM_NOT_APPLICABLE when the picture is not of two
// colours (a colour emoji, text over the disc's edge): the caller composes RGBA then.
cvipsshim_status cvipsshim_monogram_png(VipsImage *mask, VipsImage *text, int x, int y,
                           int red, int green, int blue, int textRed, int textGreen, int textBlue,
                           int textChain, void **buf, size_t *len);

// The pixels a placeholder is made from, in one pass over an in-memory 8-bit image of 1
// to 4 bands (grey, grey + alpha, RGB, RGBA): `rgba` gets it box-averaged to side × side
// straight RGBA (alpha-weighted, side ≤ the image's sides), `average` the mean R, G, B of
// the whole picture composited on white (0…255). CVIPSSHIM_FAILED for another image.
cvipsshim_status cvipsshim_placeholder_pixels(VipsImage *image, int side, unsigned char *rgba, double average[3]);

// Savers. Metadata (EXIF, XMP, ICC, comments) is always stripped; the caller frees
// *buf with g_free.
cvipsshim_status cvipsshim_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality);
cvipsshim_status cvipsshim_pngsave_buffer(VipsImage *in, void **buf, size_t *len);
cvipsshim_status cvipsshim_webpsave_buffer(VipsImage *in, void **buf, size_t *len, int quality);

// Not variadic, but <malloc.h> is not in Swift's Glibc module: caps glibc's malloc
// arenas, which otherwise multiply with decoding threads and fragment memory.
int cvipsshim_set_malloc_arena_max(int arenas);

// mallopt(M_MMAP_THRESHOLD): allocations from this size up are mapped, and given back
// to the system when freed (fixing it also stops glibc raising it on its own).
int cvipsshim_set_mmap_threshold(int bytes);

// mallopt(M_TRIM_THRESHOLD): free memory at the top of the heap kept, up to this size,
// for the next allocations rather than returned to the system at once.
int cvipsshim_set_trim_threshold(int bytes);

// malloc_trim(0): the heap's free memory given back to the system now.
int cvipsshim_malloc_trim(void);

#endif

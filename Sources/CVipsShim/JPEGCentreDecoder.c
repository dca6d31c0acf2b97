// Decoding only the centre square of a JPEG at a reduced DCT scale with libjpeg-turbo,
// and what that decode will hold (declared in include/cvipsshim_jpeg.h, where the reason
// is given); the scale rule (JPEGInternal.h).
#include "JPEGInternal.h"
#include "RenderInternal.h"
#include "FastPaths.h"
#include <jerror.h>
#include <math.h>
#include <string.h>

unsigned int cvipsshim_jpeg_scale(unsigned int shortSide, int target) {
    for (unsigned int n = 1; n <= 8; n++) {
        if ((shortSide * n + 7) / 8 >= (unsigned int) target) return n;
    }
    return 8;
}

// Whether the header's colour space is CMYK (libjpeg converts YCCK to CMYK itself).
static int cvipsshim_jpeg_is_cmyk(j_decompress_ptr info) {
    return info->jpeg_color_space == JCS_CMYK || info->jpeg_color_space == JCS_YCCK;
}

// Whether the centre decoder takes the file: CMYK with 4 components, grey or colour with
// 1 or 3 (anything else goes through jpegload).
static int cvipsshim_jpeg_centre_takes(j_decompress_ptr info) {
    return cvipsshim_jpeg_is_cmyk(info) ? info->num_components == 4 : (info->num_components == 1 || info->num_components == 3);
}

static cvipsshim_status cvipsshim_jpeg_decode_centre_with(const void *buf, size_t len, int target, int compact, char *warning, size_t warning_size,
                                             double square[3], VipsImage **out);

cvipsshim_status cvipsshim_jpeg_decode_centre(const void *buf, size_t len, int target, int compact, double square[3], VipsImage **out) {
    return cvipsshim_jpeg_decode_centre_with(buf, len, target, compact, NULL, 0, square, out);
}

cvipsshim_status cvipsshim_jpeg_decode_centre_tolerant(const void *buf, size_t len, int target, char *warning, size_t warning_size,
                                          double square[3], VipsImage **out) {
    return cvipsshim_jpeg_decode_centre_with(buf, len, target, 1, warning, warning_size, square, out);
}

// `warning` NULL: any warning fails the decode; else warnings libjpeg recovers from are
// tolerated (the first one's message copied there), all but a premature end of the data.
static cvipsshim_status cvipsshim_jpeg_decode_centre_with(const void *buf, size_t len, int target, int compact, char *warning, size_t warning_size,
                                             double square[3], VipsImage **out) {
#if !CVIPSSHIM_FAST_JPEG
    return CVIPSSHIM_NOT_APPLICABLE;
#endif
    struct jpeg_decompress_struct info = { 0 };   // client_data survives jpeg_create_decompress
    struct cvipsshim_jpeg_error error;
    unsigned char *volatile pixels = NULL;
    info.err = cvipsshim_jpeg_errors(&error);
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        g_free(pixels);
        vips_error("jpeg", "%s", error.message);
        return CVIPSSHIM_FAILED;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, (const unsigned char *) buf, (unsigned long) len);
    jpeg_read_header(&info, TRUE);
    if (!cvipsshim_jpeg_centre_takes(&info)) {
        jpeg_destroy_decompress(&info);
        return CVIPSSHIM_NOT_APPLICABLE;
    }
    // Adobe (Photoshop) CMYK is stored inverted, as jpegload knows.
    int cmyk = cvipsshim_jpeg_is_cmyk(&info);
    int bands = cmyk ? 4 : 3;
    int invert = cmyk && info.saw_Adobe_marker;
    unsigned int shortSide = info.image_width < info.image_height ? info.image_width : info.image_height;
    info.scale_num = cvipsshim_jpeg_scale(shortSide, target);
    info.scale_denom = 8;
    info.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    if (compact) cvipsshim_jpeg_compact_coefficients(&info);
    jpeg_start_decompress(&info);
    unsigned int width = info.output_width, height = info.output_height;
    // The exact square in decoded pixels: a block of 8 source pixels is scale_num
    // decoded ones, so source x is decoded x * scale_num / 8.
    double scale = info.scale_num / 8.0;
    double exactLeft = ((info.image_width - shortSide) / 2) * scale, exactTop = ((info.image_height - shortSide) / 2) * scale;
    double exactSide = shortSide * scale;
    // The decoded rows and columns it touches.
    unsigned int regionLeft = (unsigned int) floor(exactLeft), regionTop = (unsigned int) floor(exactTop);
    unsigned int regionRight = (unsigned int) ceil(exactLeft + exactSide), regionBottom = (unsigned int) ceil(exactTop + exactSide);
    if (regionRight > width) regionRight = width;
    if (regionBottom > height) regionBottom = height;
    unsigned int regionWidth = regionRight - regionLeft, regionHeight = regionBottom - regionTop;
    if (square) {
        square[0] = exactLeft - regionLeft;
        square[1] = exactTop - regionTop;
        square[2] = exactSide;
    }
    JDIMENSION left = regionLeft, columns = regionWidth;
    if (width > regionWidth) jpeg_crop_scanline(&info, &left, &columns);   // widens to iMCU bounds
    unsigned int wantedLeft = regionLeft - left;
    if (regionTop > 0) jpeg_skip_scanlines(&info, regionTop);
    size_t stride = (size_t) info.output_width * bands, line = (size_t) regionWidth * bands;
    pixels = g_malloc(line * regionHeight);
    unsigned char *row = g_malloc(stride);
    for (unsigned int y = 0; y < regionHeight; y++) {
        JSAMPROW rows[1] = { row };
        if (jpeg_read_scanlines(&info, rows, 1) != 1) break;
        unsigned char *target = pixels + (size_t) y * line;
        memcpy(target, row + (size_t) wantedLeft * bands, line);
        if (invert) for (size_t x = 0; x < line; x++) target[x] = 255 - target[x];
    }
    g_free(row);
    int warnings = error.warnings;
    jpeg_abort_decompress(&info);
    jpeg_destroy_decompress(&info);
    if (warnings > 0 && (!warning || error.ended_early)) {
        g_free(pixels);
        vips_error("jpeg", "%s", error.message[0] ? error.message : "corrupt JPEG data");
        return CVIPSSHIM_FAILED;
    }
    if (warnings > 0 && warning_size > 0) g_strlcpy(warning, error.message[0] ? error.message : "corrupt JPEG data", warning_size);
    // The image takes the pixels over and frees them when it closes: no second copy.
    VipsImage *image = cvipsshim_image_owning(pixels, line * regionHeight, regionWidth, regionHeight, bands, VIPS_FORMAT_UCHAR);
    if (!image) return CVIPSSHIM_FAILED;
    image->Type = cmyk ? VIPS_INTERPRETATION_CMYK : VIPS_INTERPRETATION_sRGB;
    *out = image;
    return CVIPSSHIM_OK;
}

long long cvipsshim_jpeg_decode_memory(const void *buf, size_t len, int target) {
#if !CVIPSSHIM_FAST_JPEG
    return -1;   // the centre decoder is off: the caller estimates jpegload's memory
#endif
    struct jpeg_decompress_struct info;
    struct cvipsshim_jpeg_error error;
    info.err = cvipsshim_jpeg_errors(&error);
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, (const unsigned char *) buf, (unsigned long) len);
    jpeg_read_header(&info, TRUE);
    unsigned int shortSide = info.image_width < info.image_height ? info.image_width : info.image_height;
    unsigned int scale = cvipsshim_jpeg_scale(shortSide, target);
    long long scaled = ((long long) shortSide * scale + 7) / 8;
    int bands = info.num_components == 4 ? 4 : 3;
    // A progressive JPEG's coefficients, kept compactly at this scale (the components'
    // transform sizes come from the scale: chroma at 4:2:0 is often decoded at twice
    // luma's and keeps more of each block); whole when the centre decoder does not take
    // the file (unusual component counts go through jpegload and libjpeg's own arrays).
    long long coefficients = 0;
    if (jpeg_has_multiple_scans(&info)) {
        info.scale_num = scale;
        info.scale_denom = 8;
        jpeg_calc_output_dimensions(&info);
        coefficients = cvipsshim_jpeg_compact_bytes(&info, cvipsshim_jpeg_centre_takes(&info));
    }
    jpeg_destroy_decompress(&info);
    // The rows and columns the exact square touches: one more of each at most.
    return coefficients + (scaled + 1) * (scaled + 1) * bands;
}

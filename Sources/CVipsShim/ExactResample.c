// Lanczos-3 resampling of rows with a fractional start (declared in
// include/cvipsshim_resample.h).
#include "cvipsshim_resample.h"
#include "RenderInternal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double cvipsshim_lanczos3(double x) {
    if (x == 0) return 1;
    if (x <= -3 || x >= 3) return 0;
    double px = M_PI * x;
    return 3 * sin(px) * sin(px / 3) / (px * px);
}

// sum = the rows `index` weighted, two rows a pass (restrict: the compiler may then keep
// the sums in vector registers, which it cannot when a byte store might change them).
static void cvipsshim_weighted_rows(VipsImage *in, const int *index, const float *weights, int count,
                                    float *restrict sum, size_t line) {
    const unsigned char *restrict a = VIPS_IMAGE_ADDR(in, 0, index[0]);
    float wa = weights[0];
    for (size_t x = 0; x < line; x++) sum[x] = wa * a[x];
    int k = 1;
    for (; k + 1 < count; k += 2) {
        const unsigned char *restrict p = VIPS_IMAGE_ADDR(in, 0, index[k]);
        const unsigned char *restrict q = VIPS_IMAGE_ADDR(in, 0, index[k + 1]);
        float wp = weights[k], wq = weights[k + 1];
        for (size_t x = 0; x < line; x++) sum[x] += wp * p[x] + wq * q[x];
    }
    for (; k < count; k++) {
        const unsigned char *restrict p = VIPS_IMAGE_ADDR(in, 0, index[k]);
        float wp = weights[k];
        for (size_t x = 0; x < line; x++) sum[x] += wp * p[x];
    }
}

cvipsshim_status cvipsshim_reducev_exact(VipsImage *in, VipsImage **out, double start, double span, int height) {
    if (in->BandFmt != VIPS_FORMAT_UCHAR || height < 1 || span <= 0 || vips_image_wio_input(in)) {
        vips_error("reducev_exact", "an 8-bit image in memory and a positive span are needed");
        return CVIPSSHIM_FAILED;
    }
    int rows = in->Ysize;
    size_t line = VIPS_IMAGE_SIZEOF_LINE(in);
    // Taps stay inside the rows the span touches (the square's own edge is repeated, as
    // a resize of the cropped square repeats it).
    int first = (int) floor(start), last = (int) ceil(start + span) - 1;
    if (first < 0) first = 0;
    if (last > rows - 1) last = rows - 1;
    if (last < first) {
        vips_error("reducev_exact", "the span is outside the image");
        return CVIPSSHIM_FAILED;
    }
    double scale = span / height, stretch = scale > 1 ? scale : 1, support = 3 * stretch;
    int taps = (int) ceil(2 * support) + 1;
    unsigned char *pixels = g_try_malloc(line * (size_t) height);
    float *sum = g_try_malloc(sizeof(float) * line);
    float *weights = g_try_malloc(sizeof(float) * (size_t) taps);
    int *index = g_try_malloc(sizeof(int) * (size_t) taps);
    if (!pixels || !sum || !weights || !index) {
        g_free(pixels); g_free(sum); g_free(weights); g_free(index);
        vips_error("reducev_exact", "out of memory");
        return CVIPSSHIM_FAILED;
    }
    for (int y = 0; y < height; y++) {
        // The centre of output row y in input rows (pixel centres at +0.5).
        double centre = start + (y + 0.5) * scale - 0.5;
        int from = (int) floor(centre - support) + 1;
        double total = 0;
        int count = 0;
        for (int k = 0; k < taps; k++) {
            int row = from + k;
            double weight = cvipsshim_lanczos3((row - centre) / stretch);
            if (weight == 0) continue;
            weights[count] = (float) weight;
            index[count] = row < first ? first : row > last ? last : row;
            total += weight;
            count++;
        }
        for (int k = 0; k < count; k++) weights[k] = (float) (weights[k] / total);
        cvipsshim_weighted_rows(in, index, weights, count, sum, line);
        unsigned char *target = pixels + (size_t) y * line;
        for (size_t x = 0; x < line; x++) {
            float value = sum[x] + 0.5f;
            target[x] = value <= 0 ? 0 : value >= 255 ? 255 : (unsigned char) value;
        }
    }
    g_free(sum); g_free(weights); g_free(index);
    VipsImage *image = cvipsshim_image_owning_like(pixels, line * (size_t) height, in->Xsize, height, in);
    if (!image) return CVIPSSHIM_FAILED;
    *out = image;
    return CVIPSSHIM_OK;
}

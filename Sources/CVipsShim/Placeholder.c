// The pixels a placeholder is made from (include/cvipsshim_resample.h).
#include <stdlib.h>
#include "cvipsshim_resample.h"
#include "cvipsshim_render.h"

cvipsshim_status cvipsshim_placeholder_rgb(const unsigned char *data, int width, int height, int bands, size_t stride, int side,
                                          unsigned char *rgba, double average[3]) {
    if ((bands != 1 && bands != 3) || side < 1 || side > width || side > height) return CVIPSSHIM_FAILED;
    // Opaque (every JPEG tier): integer sums, the average the same sums. A band of rows
    // is summed down each column first (a loop over the bytes that vectorises), then
    // across each box's columns: integer sums, so the same as summing box by box.
    unsigned long long total[3] = {0, 0, 0};
    const size_t line = (size_t) width * bands;
    unsigned int stackColumns[3 * 512];
    unsigned int *columns = line <= 3 * 512 ? stackColumns : malloc(line * sizeof *columns);
    if (!columns) return CVIPSSHIM_FAILED;
    for (int oy = 0; oy < side; oy++) {
        const int y0 = (int) ((long) oy * height / side), y1 = (int) ((long) (oy + 1) * height / side);
        for (size_t i = 0; i < line; i++) columns[i] = 0;
        for (int y = y0; y < y1; y++) {
            const unsigned char *p = data + (size_t) y * stride;
            for (size_t i = 0; i < line; i++) columns[i] += p[i];
        }
        for (int ox = 0; ox < side; ox++) {
            const int x0 = (int) ((long) ox * width / side), x1 = (int) ((long) (ox + 1) * width / side);
            unsigned int sum[3] = {0, 0, 0};
            if (bands == 3) {
                for (int x = x0; x < x1; x++) { sum[0] += columns[3 * x]; sum[1] += columns[3 * x + 1]; sum[2] += columns[3 * x + 2]; }
            } else {
                for (int x = x0; x < x1; x++) sum[0] += columns[x];
                sum[1] = sum[2] = sum[0];
            }
            const unsigned int count = (unsigned int) ((y1 - y0) * (x1 - x0));
            unsigned char *out = rgba + ((size_t) oy * side + ox) * 4;
            for (int c = 0; c < 3; c++) {
                out[c] = (unsigned char) ((sum[c] + count / 2) / count);
                total[c] += sum[c];
            }
            out[3] = 255;
        }
    }
    if (columns != stackColumns) free(columns);
    const double pixels = (double) width * height;
    for (int c = 0; c < 3; c++) average[c] = (double) total[c] / pixels;
    return CVIPSSHIM_OK;
}

cvipsshim_status cvipsshim_placeholder_pixels(VipsImage *image, int side, unsigned char *rgba, double average[3]) {
    if (!cvipsshim_is_in_memory(image) || image->BandFmt != VIPS_FORMAT_UCHAR || image->Bands < 1 || image->Bands > 4) return CVIPSSHIM_FAILED;
    const int width = image->Xsize, height = image->Ysize, bands = image->Bands;
    if (side < 1 || side > width || side > height) return CVIPSSHIM_FAILED;
    const int alpha = bands == 2 || bands == 4;
    const size_t stride = VIPS_IMAGE_SIZEOF_LINE(image);
    const unsigned char *data = (const unsigned char *) image->data;
    if (!alpha) return cvipsshim_placeholder_rgb(data, width, height, bands, stride, side, rgba, average);
    // With alpha (grey + alpha, RGBA): box sums of premultiplied colour and of alpha, per
    // output pixel; the whole picture's colour on white.
    const int grey = bands == 2;
    double total[3] = {0, 0, 0};
    for (int oy = 0; oy < side; oy++) {
        const int y0 = (int) ((long) oy * height / side), y1 = (int) ((long) (oy + 1) * height / side);
        for (int ox = 0; ox < side; ox++) {
            const int x0 = (int) ((long) ox * width / side), x1 = (int) ((long) (ox + 1) * width / side);
            double sum[4] = {0, 0, 0, 0};
            for (int y = y0; y < y1; y++) {
                const unsigned char *p = data + (size_t) y * stride + (size_t) x0 * bands;
                for (int x = x0; x < x1; x++, p += bands) {
                    const double r = p[0], g = grey ? p[0] : p[1], b = grey ? p[0] : p[2];
                    const double a = p[bands - 1];
                    sum[0] += r * a; sum[1] += g * a; sum[2] += b * a; sum[3] += a;
                }
            }
            const double count = (double) (y1 - y0) * (x1 - x0);
            unsigned char *out = rgba + ((size_t) oy * side + ox) * 4;
            for (int c = 0; c < 3; c++) {
                out[c] = sum[3] > 0 ? (unsigned char) (sum[c] / sum[3] + 0.5) : 0;
                // On white: a·v + (255 − a)·255, per pixel, summed.
                total[c] += sum[c] / 255 + (255 * count - sum[3]);
            }
            out[3] = (unsigned char) (sum[3] / count + 0.5);
        }
    }
    const double pixels = (double) width * height;
    for (int c = 0; c < 3; c++) average[c] = total[c] / pixels;
    return CVIPSSHIM_OK;
}

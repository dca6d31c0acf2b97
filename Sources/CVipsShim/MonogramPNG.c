// A monogram as what it is: a disc of one colour with antialiased edges and text of one
// other colour over it. As an indexed PNG (a palette with transparency) of 16 entries
// that is half a byte a pixel in long runs of one value, against four bytes of RGBA.
// The palette holds the background at EDGE_LEVELS levels of alpha (the disc's edge: the
// disc is drawn at twice the size and box-halved, so its edge has exactly these 5
// coverages) and TEXT_LEVELS - 1 blends of the background with the text colour (the
// glyphs' antialiasing; blend 0 is the background itself).
//
// Most of the bytes are the rows' runs, not the colours: deflate codes a run in pieces of
// at most 258 bytes, and each edge a row crosses ends one (a binary disc alone, no
// antialiasing, is 3.7 KB a pair at a byte a pixel and zlib 9). Half a byte a pixel halves the
// runs. On 40 monograms of the 1,000,000-profile cache, the pair (330 + 900 px) averaged,
// at zlib level 6: 13.9 KB with a byte a pixel and 16 + 32 levels (the round before),
// 11.8 KB with half a byte and 5 + 12; at level 9, 11.3 and 9.3 KB, for seven times the
// deflate time (8.4 KB would take libdeflate's level 12, which parses optimally: 175 ms
// a pair). The disc's alpha is exact (the mask has no other values); the glyphs' 12
// levels are within 12 levels of 255 of Pango's.
//
// The PNG is written here, chunk by chunk, with zlib: the rows are already in PNG's form
// (a filter byte, then packed indices), which is all libpng would have done.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "CVipsShim.h"
#include "ShimInternal.h"

#define EDGE_LEVELS 5
#define TEXT_LEVELS 12
#define ENTRIES (EDGE_LEVELS + TEXT_LEVELS - 1)

static unsigned char *put32(unsigned char *at, uint32_t value) {
    at[0] = (unsigned char) (value >> 24);
    at[1] = (unsigned char) (value >> 16);
    at[2] = (unsigned char) (value >> 8);
    at[3] = (unsigned char) value;
    return at + 4;
}

// One PNG chunk at `at`: length, type, the `size` bytes of data already at at + 8, CRC.
static unsigned char *chunk(unsigned char *at, const char *type, size_t size) {
    put32(at, (uint32_t) size);
    memcpy(at + 4, type, 4);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), at + 4, (uInt) (size + 4));
    return put32(at + 8 + size, (uint32_t) crc);
}

static int level(int value, int levels) { return (value * (levels - 1) + 127) / 255; }

int cvipsshim_monogram_png(VipsImage *mask, VipsImage *text, int x, int y,
                           int red, int green, int blue, int textRed, int textGreen, int textBlue,
                           int compression, void **buf, size_t *len) {
    VipsRegion *maskRegion, *textRegion;
    int status = cvipsshim_monogram_regions(mask, text, &maskRegion, &textRegion);
    if (status) return status;
    int side = mask->Xsize;
    // PNG's rows: a filter byte (0, none: runs of one index are predicted by nothing
    // better), then two pixels a byte, the left one high.
    size_t stride = ((size_t) side + 1) / 2 + 1;
    unsigned char *rows = g_try_malloc(stride * side), *indices = g_try_malloc(side);
    if (!rows || !indices) {
        g_free(rows);
        g_free(indices);
        g_object_unref(maskRegion);
        g_object_unref(textRegion);
        vips_error("monogram", "out of memory");
        return -1;
    }
    // Entries 0…EDGE_LEVELS - 1: the background at alpha 0…255; then the background
    // blended with the text colour, up to the text colour itself.
    int handled = 1;
    for (int row = 0; row < side && handled; row++) {
        const unsigned char *disc = VIPS_REGION_ADDR(maskRegion, 0, row);
        for (int column = 0; column < side; column++) indices[column] = (unsigned char) level(disc[column], EDGE_LEVELS);
        // No text on this row: an empty range.
        int from = 0, to = 0;
        const unsigned char *glyphRow = cvipsshim_monogram_text_row(textRegion, row, x, y, side, &from, &to);
        for (int column = from; column < to; column++) {
            const unsigned char *glyph = glyphRow + (size_t) (column - x) * 4;
            int textAlpha = glyph[3];
            if (textAlpha == 0) continue;
            // Text of another colour (a colour emoji) or over the disc's edge: not a
            // two-colour picture; the caller writes RGBA.
            if (disc[column] != 255 || abs(glyph[0] - textRed) > 2 || abs(glyph[1] - textGreen) > 2 || abs(glyph[2] - textBlue) > 2) {
                handled = 0;
                break;
            }
            indices[column] = (unsigned char) (EDGE_LEVELS - 1 + level(textAlpha, TEXT_LEVELS));
        }
        unsigned char *restrict target = rows + (size_t) row * stride;
        const unsigned char *restrict pixels = indices;
        target[0] = 0;
        // Whole pairs in a loop without a branch, on pointers that do not alias (so the
        // compiler vectorises it), then an odd side's last pixel.
        for (int pair = 0; pair < side / 2; pair++)
            target[1 + pair] = (unsigned char) (pixels[2 * pair] << 4 | pixels[2 * pair + 1]);
        if (side & 1) target[1 + side / 2] = (unsigned char) (pixels[side - 1] << 4);
    }
    g_object_unref(maskRegion);
    g_object_unref(textRegion);
    g_free(indices);
    if (!handled) {
        g_free(rows);
        return 1;
    }

    // Signature, IHDR (13 bytes), PLTE, tRNS, IDAT, IEND: 12 bytes of chunk around each.
    size_t rawSize = stride * side, bound = compressBound((uLong) rawSize);
    size_t idat = 8 + 12 + 13 + 12 + 3 * ENTRIES + 12 + EDGE_LEVELS;
    unsigned char *png = g_try_malloc(idat + 12 + bound + 12);
    if (!png) {
        g_free(rows);
        vips_error("monogram", "out of memory");
        return -1;
    }
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    int deflated = deflateInit2(&stream, compression, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    stream.next_in = rows;
    stream.avail_in = (uInt) rawSize;
    stream.next_out = png + idat + 8;
    stream.avail_out = (uInt) bound;
    deflated = deflated && deflate(&stream, Z_FINISH) == Z_STREAM_END;
    size_t compressed = stream.total_out;
    deflateEnd(&stream);
    g_free(rows);
    if (!deflated) {
        g_free(png);
        vips_error("monogram", "zlib failed");
        return -1;
    }

    unsigned char *at = png;
    memcpy(at, "\x89PNG\r\n\x1a\n", 8);
    at += 8;
    unsigned char *data = put32(at + 8, (uint32_t) side);
    data = put32(data, (uint32_t) side);
    memcpy(data, (const unsigned char[]) { 4, 3, 0, 0, 0 }, 5);   // 4 bits, palette, deflate, filters, no interlace
    at = chunk(at, "IHDR", 13);
    data = at + 8;
    for (int i = 0; i < EDGE_LEVELS; i++, data += 3) memcpy(data, (const unsigned char[]) { red, green, blue }, 3);
    for (int i = 1; i < TEXT_LEVELS; i++, data += 3) {
        int t = (i * 255 + (TEXT_LEVELS - 1) / 2) / (TEXT_LEVELS - 1);
        data[0] = (unsigned char) ((textRed * t + red * (255 - t) + 127) / 255);
        data[1] = (unsigned char) ((textGreen * t + green * (255 - t) + 127) / 255);
        data[2] = (unsigned char) ((textBlue * t + blue * (255 - t) + 127) / 255);
    }
    at = chunk(at, "PLTE", 3 * ENTRIES);
    // The box filter's own values: 0, 64, 128, 192, 255 (libvips' shrink rounds up).
    for (int i = 0; i < EDGE_LEVELS; i++) at[8 + i] = (unsigned char) ((i * 255 + EDGE_LEVELS - 2) / (EDGE_LEVELS - 1));
    at = chunk(at, "tRNS", EDGE_LEVELS);
    at = chunk(at, "IDAT", compressed);   // deflated in place, at idat + 8
    at = chunk(at, "IEND", 0);
    *buf = png;
    *len = (size_t) (at - png);
    return 0;
}

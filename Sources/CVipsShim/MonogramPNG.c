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
// runs. The disc alone is about half of a pair's bytes, and its rows above and below
// the text are the same in every monogram of a size: they are deflated once per size and
// band, at zlib's level 9, kept for the process, and spliced around the text's band,
// which is deflated for each monogram with the rows above it as its dictionary (deflate
// reaches back 32 KB, and a decoder has those rows by then). How deep zlib looks was
// chosen by measurement (docs/performance-notes.md, "Monogram PNG bands"). The disc's alpha
// is exact (the mask has no other values); the glyphs' 12 levels are within 12 levels of
// 255 of Pango's.
//
// The PNG is written here, chunk by chunk, with zlib: the rows are already in PNG's form
// (a filter byte, then packed indices), which is all libpng would have done.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "MonogramInternal.h"
#include "FastPaths.h"

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

// Raw deflate (no zlib header or checksum) of `size` bytes at `in` into `out` (room for
// deflateBound's count plus 16), at level 9 looking `chain` matches deep, with the
// `dictionarySize` bytes before `in` as its dictionary (at most deflate's 32 KB window);
// ended by a sync flush (byte-aligned, not the last block: more follows) or, when `last`,
// the stream's final block. Returns the bytes written, or 0 when zlib fails.
static size_t deflateRows(const unsigned char *in, size_t size, size_t dictionarySize, int chain, int last,
                          unsigned char *out, size_t room) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (deflateInit2(&stream, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    // Level 9's own settings but the chain: the runs fill the hash chains, and the match
    // with the row above lies behind every position of the run it is in.
    int ok = deflateTune(&stream, 32, 258, 258, chain) == Z_OK;
    if (dictionarySize > 32768) dictionarySize = 32768;
    if (ok && dictionarySize) ok = deflateSetDictionary(&stream, in - dictionarySize, (uInt) dictionarySize) == Z_OK;
    stream.next_in = (unsigned char *) in;
    stream.avail_in = (uInt) size;
    stream.next_out = out;
    stream.avail_out = (uInt) room;
    int result = ok ? deflate(&stream, last ? Z_FINISH : Z_SYNC_FLUSH) : Z_STREAM_ERROR;
    size_t written = stream.total_out;
    deflateEnd(&stream);
    return (last ? result == Z_STREAM_END : result == Z_OK && stream.avail_in == 0 && stream.avail_out > 0) ? written : 0;
}

static size_t deflateRoom(size_t size) { return compressBound((uLong) size) + 16; }

// The disc's bands, for the process: for each size, the rows of the disc alone, and the
// deflated rows above row t (`above[t]`, sync-flushed) and from row t down (`from[t]`,
// the stream's end, with no reference back: the rows above it hold text). A band found
// here is used only when the monogram's rows are byte for byte those it was made from.
#define BAND_SIDES 8
#define BAND_GRAIN 16
typedef struct { unsigned char *bytes; size_t size; } Deflated;
typedef struct {
    int side;
    size_t stride;
    unsigned char *rows;     // the disc alone, in PNG's row form
    Deflated *above, *from;  // side + 1 each
} DiscBands;
static DiscBands discBands[BAND_SIDES];
static GMutex discBandsLock;

// The bands kept for a size, or NULL. Called with discBandsLock held; an entry, once
// made, is never changed but for its slots, so its rows may be read after unlocking.
static DiscBands *keptBands(int side, size_t stride) {
    for (int i = 0; i < BAND_SIDES; i++)
        if (discBands[i].side == side && discBands[i].stride == stride) return &discBands[i];
    return NULL;
}

// Deflated rows of a band (above row t when `!last`, from row t down when `last`) of a
// monogram whose rows are `rows`: from the process' bands, or deflated now (and kept
// when the rows are the disc's alone). Copies them to `out`; returns their size, or 0.
static size_t discBand(const unsigned char *rows, int side, size_t stride, int t, int last, unsigned char *out, size_t room) {
    size_t first = last ? (size_t) t * stride : 0, size = last ? (size_t) (side - t) * stride : (size_t) t * stride;
    g_mutex_lock(&discBandsLock);
    DiscBands *bands = keptBands(side, stride);
    g_mutex_unlock(&discBandsLock);
    int same = bands && memcmp(bands->rows + first, rows + first, size) == 0;
    if (same) {
        size_t found = 0;
        g_mutex_lock(&discBandsLock);
        Deflated kept = last ? bands->from[t] : bands->above[t];
        if (kept.bytes && kept.size <= room) memcpy(out, kept.bytes, found = kept.size);
        g_mutex_unlock(&discBandsLock);
        if (found) return found;
    }
    // Deflated once and kept: as deep as level 9 looks; for this monogram only (a ninth
    // size): as deep as its text's band.
    size_t written = deflateRows(rows + first, size, 0, same ? 4096 : 256, last, out, room);
    if (!written || !same) return written;
    unsigned char *copy = g_try_malloc(written);
    if (!copy) return written;
    memcpy(copy, out, written);
    g_mutex_lock(&discBandsLock);
    Deflated *slot = last ? &bands->from[t] : &bands->above[t];
    if (slot->bytes) g_free(copy);   // another thread made it meanwhile
    else *slot = (Deflated) { copy, written };
    g_mutex_unlock(&discBandsLock);
    return written;
}

// Keeps a size's disc rows (`rows`, with no text on them) for discBand, once per size,
// for up to BAND_SIDES sizes; past that, bands are deflated for each monogram.
static void keepDiscRows(const unsigned char *rows, int side, size_t stride) {
    g_mutex_lock(&discBandsLock);
    DiscBands *empty = keptBands(0, 0);   // an entry not used yet
    if (empty && !keptBands(side, stride)) {
        unsigned char *copy = g_try_malloc(stride * side);
        Deflated *above = g_try_malloc0(sizeof(Deflated) * (side + 1)), *from = g_try_malloc0(sizeof(Deflated) * (side + 1));
        if (copy && above && from) {
            memcpy(copy, rows, stride * side);
            *empty = (DiscBands) { side, stride, copy, above, from };
        } else {
            g_free(copy);
            g_free(above);
            g_free(from);
        }
    }
    g_mutex_unlock(&discBandsLock);
}

// One row in PNG's form: the filter byte (0, none: runs of one index are predicted by
// nothing better), then two pixels a byte, the left one high. Whole pairs in a loop
// without a branch, on pointers that do not alias (so the compiler vectorises it), then
// an odd side's last pixel.
static void packRow(unsigned char *restrict target, const unsigned char *restrict pixels, int side) {
    target[0] = 0;
    for (int pair = 0; pair < side / 2; pair++)
        target[1 + pair] = (unsigned char) (pixels[2 * pair] << 4 | pixels[2 * pair + 1]);
    if (side & 1) target[1 + side / 2] = (unsigned char) (pixels[side - 1] << 4);
}

static int haveDiscRows(int side, size_t stride) {
    g_mutex_lock(&discBandsLock);
    int found = keptBands(side, stride) != NULL;
    g_mutex_unlock(&discBandsLock);
    return found;
}

cvipsshim_status cvipsshim_monogram_png(VipsImage *mask, VipsImage *text, int x, int y,
                           int red, int green, int blue, int textRed, int textGreen, int textBlue,
                           int textChain, void **buf, size_t *len) {
#if !CVIPSSHIM_FAST_RENDER
    return CVIPSSHIM_NOT_APPLICABLE;
#endif
    VipsRegion *maskRegion, *textRegion;
    cvipsshim_status status = cvipsshim_monogram_regions(mask, text, &maskRegion, &textRegion);
    if (status != CVIPSSHIM_OK) return status;
    int side = mask->Xsize;
    size_t stride = ((size_t) side + 1) / 2 + 1, rawSize = stride * side;
    // The disc's rows alone, once per size, for the bands every monogram of it shares.
    int keepDisc = !haveDiscRows(side, stride);
    unsigned char *rows = g_try_malloc(rawSize), *indices = g_try_malloc(side);
    unsigned char *discRows = keepDisc ? g_try_malloc(rawSize) : NULL;
    if (!rows || !indices || (keepDisc && !discRows)) {
        g_free(rows);
        g_free(indices);
        g_free(discRows);
        g_object_unref(maskRegion);
        g_object_unref(textRegion);
        vips_error("monogram", "out of memory");
        return CVIPSSHIM_FAILED;
    }
    // Entries 0…EDGE_LEVELS - 1: the background at alpha 0…255; then the background
    // blended with the text colour, up to the text colour itself. The text's band: rows
    // textFirst up to textEnd (none: both 0).
    int handled = 1, textFirst = -1, textEnd = 0;
    for (int row = 0; row < side && handled; row++) {
        const unsigned char *disc = VIPS_REGION_ADDR(maskRegion, 0, row);
        for (int column = 0; column < side; column++) indices[column] = (unsigned char) level(disc[column], EDGE_LEVELS);
        if (discRows) packRow(discRows + (size_t) row * stride, indices, side);
        // No text on this row: an empty range.
        int from = 0, to = 0, inked = 0;
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
            inked = 1;
        }
        if (inked) {
            if (textFirst < 0) textFirst = row;
            textEnd = row + 1;
        }
        packRow(rows + (size_t) row * stride, indices, side);
    }
    g_object_unref(maskRegion);
    g_object_unref(textRegion);
    g_free(indices);
    if (handled && discRows) keepDiscRows(discRows, side, stride);
    g_free(discRows);
    if (!handled) {
        g_free(rows);
        return CVIPSSHIM_NOT_APPLICABLE;
    }
    if (textFirst < 0) textFirst = 0;
    // The band widened to whole BAND_GRAIN rows, so that monograms share the disc's bands
    // more (a run of 60 deflated 26 bands at one row, 10 at 16).
    textFirst -= textFirst % BAND_GRAIN;
    textEnd += (BAND_GRAIN - textEnd % BAND_GRAIN) % BAND_GRAIN;
    if (textEnd > side) textEnd = side;

    // Signature, IHDR (13 bytes), PLTE, tRNS, IDAT, IEND: 12 bytes of chunk around each.
    // IDAT holds one zlib stream: its header, the disc above the text, the text's band,
    // the disc below it, and the checksum of all the rows.
    size_t above = (size_t) textFirst * stride, band = (size_t) (textEnd - textFirst) * stride, below = rawSize - above - band;
    size_t roomAbove = deflateRoom(above), roomBand = deflateRoom(band), roomBelow = deflateRoom(below);
    size_t idat = 8 + 12 + 13 + 12 + 3 * ENTRIES + 12 + EDGE_LEVELS;
    unsigned char *png = g_try_malloc(idat + 8 + 2 + roomAbove + roomBand + roomBelow + 4 + 4 + 12);
    if (!png) {
        g_free(rows);
        vips_error("monogram", "out of memory");
        return CVIPSSHIM_FAILED;
    }
    unsigned char *stream = png + idat + 8, *at = stream;
    *at++ = 0x78;   // deflate, 32 KB window
    *at++ = 0xDA;   // level 9, no preset dictionary (CMF·256 + FLG a multiple of 31)
    size_t written = 1;
    if (above) at += written = discBand(rows, side, stride, textFirst, 0, at, roomAbove);
    if (written && band) at += written = deflateRows(rows + above, band, above, textChain, 0, at, roomBand);
    if (written) at += written = discBand(rows, side, stride, textEnd, 1, at, roomBelow);
    uLong checksum = adler32(adler32(0L, Z_NULL, 0), rows, (uInt) rawSize);
    g_free(rows);
    if (!written) {
        g_free(png);
        vips_error("monogram", "zlib failed");
        return CVIPSSHIM_FAILED;
    }
    at = put32(at, (uint32_t) checksum);
    size_t compressed = (size_t) (at - stream);

    at = png;
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
    return CVIPSSHIM_OK;
}

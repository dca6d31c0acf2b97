// A small JPEG from its bytes to its encoded tier in one call, with the libjpeg objects
// and buffers the calling thread keeps (declared in include/cvipsshim_small.h, where the
// reason is given).
#include "JPEGInternal.h"
#include "FastPaths.h"
#include "TestCounters.h"
#include "cvipsshim_small.h"
#include "cvipsshim_resample.h"
#include <jerror.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The longest side taken: a 65,500 × 1 strip goes the general way.
#define SMALL_LONGEST_SIDE 4096

// What a thread keeps between photos: a compressor (its tables and pools made once; every
// image sets them anew), the decoded rows, their row pointers, the encoded bytes. The
// decompressor is made for each photo: one kept would keep the last photo's quantization
// and Huffman tables for a file that defines none, which a fresh one refuses or reads with
// the standard ones, as the general path does.
struct small_state {
    struct jpeg_decompress_struct decoder;
    struct jpeg_compress_struct encoder;
    struct cvipsshim_jpeg_error decoder_error, encoder_error;
    int has_decoder, has_encoder;
    unsigned char *pixels;
    size_t pixels_size;
    JSAMPROW *rows;
    size_t rows_count;
    // The encoded bytes' buffer (g_malloc'd), kept from one photo to the next.
    struct cvipsshim_destination destination;
};

#ifdef CVIPSSHIM_TEST_COUNTERS
static _Thread_local long long small_rendered;

long long cvipsshim_small_jpeg_rendered(void) {
    return small_rendered;
}
#endif

static pthread_key_t small_key;
static pthread_once_t small_once = PTHREAD_ONCE_INIT;

static void small_state_free(void *pointer) {
    struct small_state *state = pointer;
    if (!state) return;
    if (state->has_decoder) jpeg_destroy_decompress(&state->decoder);
    if (state->has_encoder) jpeg_destroy_compress(&state->encoder);
    free(state->pixels);
    free(state->rows);
    g_free(state->destination.buffer);
    free(state);
}

static void small_key_make(void) {
    pthread_key_create(&small_key, small_state_free);
}

static struct small_state *small_state_get(void) {
    pthread_once(&small_once, small_key_make);
    struct small_state *state = pthread_getspecific(small_key);
    if (!state) {
        state = calloc(1, sizeof *state);
        if (state && pthread_setspecific(small_key, state) != 0) {
            free(state);
            return NULL;
        }
    }
    return state;
}

// Grows `*buffer` to at least `size` bytes (its contents not kept); 0 when out of memory.
static int small_reserve(unsigned char **buffer, size_t *capacity, size_t size) {
    if (*capacity >= size) return 1;
    free(*buffer);
    *buffer = malloc(size);
    *capacity = *buffer ? size : 0;
    return *buffer != NULL;
}

// Makes room for `count` row pointers; 0 when out of memory.
static int small_rows(struct small_state *state, size_t count) {
    if (state->rows_count >= count) return 1;
    free(state->rows);
    state->rows = malloc(sizeof(JSAMPROW) * count);
    state->rows_count = state->rows ? count : 0;
    return state->rows != NULL;
}

static unsigned int small_read16(const unsigned char *p, int big) {
    return big ? (unsigned int) (p[0] << 8 | p[1]) : (unsigned int) (p[1] << 8 | p[0]);
}

static unsigned long small_read32(const unsigned char *p, int big) {
    return big ? ((unsigned long) p[0] << 24 | (unsigned long) p[1] << 16 | (unsigned long) p[2] << 8 | p[3])
               : ((unsigned long) p[3] << 24 | (unsigned long) p[2] << 16 | (unsigned long) p[1] << 8 | p[0]);
}

// The orientation an EXIF block (the APP1 payload after "Exif\0\0") gives in its first
// IFD: 1 when it has none, 0 when the block cannot be read to the end of that IFD's
// entries (the general path, through libexif, decides then).
static int small_exif_orientation(const unsigned char *tiff, size_t length) {
    if (length < 8) return 0;
    int big;
    if (tiff[0] == 'M' && tiff[1] == 'M') big = 1;
    else if (tiff[0] == 'I' && tiff[1] == 'I') big = 0;
    else return 0;
    if (small_read16(tiff + 2, big) != 42) return 0;
    unsigned long ifd = small_read32(tiff + 4, big);
    if (ifd < 8 || ifd > length - 2) return 0;
    unsigned int entries = small_read16(tiff + ifd, big);
    if (entries > (length - ifd - 2) / 12) return 0;
    int orientation = 1, seen = 0;
    for (unsigned int i = 0; i < entries; i++) {
        const unsigned char *entry = tiff + ifd + 2 + (size_t) i * 12;
        if (small_read16(entry, big) != 0x0112) continue;
        // One entry (libexif keeps the first of two), SHORT, one value, in the entry itself.
        if (seen++ > 0) return 0;
        if (small_read16(entry + 2, big) != 3 || small_read32(entry + 4, big) != 1) return 0;
        orientation = (int) small_read16(entry + 8, big);
        if (orientation < 1 || orientation > 8) return 0;
    }
    return orientation;
}

// Whether the saved markers allow this path: no ICC profile, at most one EXIF block and
// orientation 1 in it.
static int small_markers_allow(j_decompress_ptr info) {
    int exif_blocks = 0;
    for (jpeg_saved_marker_ptr marker = info->marker_list; marker; marker = marker->next) {
        if (marker->marker == JPEG_APP0 + 2 && marker->data_length >= 12 && memcmp(marker->data, "ICC_PROFILE", 12) == 0) return 0;
        if (marker->marker == JPEG_APP0 + 1 && marker->data_length >= 6 && memcmp(marker->data, "Exif\0\0", 6) == 0) {
            // A marker longer than what was saved cannot be read whole here.
            if (marker->original_length != marker->data_length) return 0;
            if (++exif_blocks > 1) return 0;
            if (small_exif_orientation(marker->data + 6, marker->data_length - 6) != 1) return 0;
        }
    }
    return 1;
}

// Destroys the photo's decompressor; after an error, the compressor too (made anew by
// the next call).
static void small_reset(struct small_state *state, int failed) {
    if (state->has_decoder) {
        jpeg_destroy_decompress(&state->decoder);
        state->has_decoder = 0;
    }
    if (failed && state->has_encoder) {
        jpeg_destroy_compress(&state->encoder);
        state->has_encoder = 0;
    }
}

cvipsshim_status cvipsshim_small_jpeg_render(const void *buf, size_t len, int smallest_tier, long long max_pixels, int quality,
                                             cvipsshim_small_jpeg *out, unsigned char *placeholder_rgba) {
#if !CVIPSSHIM_FAST_JPEG
    return CVIPSSHIM_NOT_APPLICABLE;
#endif
    if (len < 4 || smallest_tier < 1) return CVIPSSHIM_NOT_APPLICABLE;
    struct small_state *state = small_state_get();
    if (!state) return CVIPSSHIM_NOT_APPLICABLE;
    j_decompress_ptr decoder = &state->decoder;
    j_compress_ptr encoder = &state->encoder;
    if (!state->has_encoder) {
        encoder->err = cvipsshim_jpeg_errors(&state->encoder_error);
        if (setjmp(state->encoder_error.jump)) return CVIPSSHIM_NOT_APPLICABLE;   // out of memory
        jpeg_create_compress(encoder);
        cvipsshim_destination_install(encoder, &state->destination);
        state->has_encoder = 1;
    }
    // Each call counts its own warnings.
    encoder->err = cvipsshim_jpeg_errors(&state->encoder_error);
    decoder->err = cvipsshim_jpeg_errors(&state->decoder_error);
    if (setjmp(state->decoder_error.jump)) {
        small_reset(state, 0);
        return CVIPSSHIM_NOT_APPLICABLE;
    }
    jpeg_create_decompress(decoder);
    state->has_decoder = 1;
    // Markers up to their whole length (a segment is at most 65,533 bytes).
    jpeg_save_markers(decoder, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(decoder, JPEG_APP0 + 2, 0xFFFF);
    jpeg_mem_src(decoder, (const unsigned char *) buf, (unsigned long) len);
    jpeg_read_header(decoder, TRUE);
    unsigned int width = decoder->image_width, height = decoder->image_height;
    unsigned int shortSide = width < height ? width : height, longSide = width < height ? height : width;
    int colour = decoder->num_components == 3 && (decoder->jpeg_color_space == JCS_YCbCr || decoder->jpeg_color_space == JCS_RGB);
    int grey = decoder->num_components == 1 && decoder->jpeg_color_space == JCS_GRAYSCALE;
    if (state->decoder_error.warnings > 0 || decoder->data_precision != 8 || !(colour || grey) || shortSide == 0
        || shortSide > (unsigned int) smallest_tier || longSide > SMALL_LONGEST_SIDE
        || (long long) width * height > max_pixels || !small_markers_allow(decoder)) {
        small_reset(state, 0);
        return CVIPSSHIM_NOT_APPLICABLE;
    }
    // As the centre decoder at 8/8: the square's rows and columns, its left and top
    // rounded down.
    decoder->scale_num = 8;
    decoder->scale_denom = 8;
    decoder->out_color_space = JCS_RGB;
    jpeg_start_decompress(decoder);
    unsigned int left = (width - shortSide) / 2, top = (height - shortSide) / 2, side = shortSide;
    JDIMENSION cropLeft = left, columns = side;
    if (decoder->output_width > side) jpeg_crop_scanline(decoder, &cropLeft, &columns);
    unsigned int wantedLeft = left - cropLeft;
    // Decoded in place, several rows a call, into rows `stride` apart; the square starts
    // `wantedLeft` pixels into each (the crop keeps whole blocks), so no row is copied.
    size_t stride = (size_t) decoder->output_width * 3;
    if (!small_reserve(&state->pixels, &state->pixels_size, stride * side) || !small_rows(state, side)) {
        small_reset(state, 1);
        return CVIPSSHIM_NOT_APPLICABLE;
    }
    for (unsigned int y = 0; y < side; y++) state->rows[y] = state->pixels + (size_t) y * stride;
    if (top > 0) jpeg_skip_scanlines(decoder, top);
    while (decoder->output_scanline < top + side) {
        unsigned int done = decoder->output_scanline - top;
        if (jpeg_read_scanlines(decoder, state->rows + done, side - done) == 0) {
            small_reset(state, 0);
            return CVIPSSHIM_NOT_APPLICABLE;
        }
    }
    int warnings = state->decoder_error.warnings;
    small_reset(state, 0);
    if (warnings > 0) return CVIPSSHIM_NOT_APPLICABLE;

    // Encoded as cvipsshim_jpeg_encode encodes: libjpeg's defaults at `quality`.
    if (!state->destination.buffer) {
        state->destination.buffer = g_try_malloc(16384);
        if (!state->destination.buffer) return CVIPSSHIM_NOT_APPLICABLE;
        state->destination.size = 16384;
    }
    if (setjmp(state->encoder_error.jump)) {
        small_reset(state, 1);
        return CVIPSSHIM_NOT_APPLICABLE;
    }
    encoder->image_width = side;
    encoder->image_height = side;
    encoder->input_components = 3;
    encoder->in_color_space = JCS_RGB;
    jpeg_set_defaults(encoder);
    jpeg_set_quality(encoder, quality, TRUE);
    jpeg_start_compress(encoder, TRUE);
    unsigned char *square = state->pixels + (size_t) wantedLeft * 3;
    for (unsigned int y = 0; y < side; y++) state->rows[y] = square + (size_t) y * stride;
    while (encoder->next_scanline < side) {
        jpeg_write_scanlines(encoder, state->rows + encoder->next_scanline, side - encoder->next_scanline);
    }
    jpeg_finish_compress(encoder);

    out->width = (int) width;
    out->height = (int) height;
    out->side = (int) side;
    out->jpeg = state->destination.buffer;
    out->jpeg_length = state->destination.size - state->destination.manager.free_in_buffer;
    int placeholder = (int) side < CVIPSSHIM_SMALL_PLACEHOLDER_SIDE ? (int) side : CVIPSSHIM_SMALL_PLACEHOLDER_SIDE;
    out->placeholder_side = placeholder;
    cvipsshim_placeholder_rgb(square, (int) side, (int) side, 3, stride, placeholder, placeholder_rgba, out->average);
    CVIPSSHIM_COUNT(small_rendered, 1);
    return CVIPSSHIM_OK;
}

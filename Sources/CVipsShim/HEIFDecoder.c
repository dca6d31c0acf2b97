// HEIC/HEIF straight from libheif into a libvips image (declared in
// include/cvipsshim_heif.h, where the reason is given).
#include "HEIFInternal.h"
#include "RenderInternal.h"
#include "FastPaths.h"
#include <libheif/heif.h>
#include <string.h>

struct cvipsshim_heif_pixels {
    struct heif_image *image;
};

static void cvipsshim_release_heif(VipsImage *image, void *data) {
    (void) image;
    struct cvipsshim_heif_pixels *pixels = data;
    heif_image_release(pixels->image);
    g_free(pixels);
}

// Big-endian reads within a box already bounds-checked.
static uint32_t cvipsshim_be32(const uint8_t *p) { return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3]; }
static uint32_t cvipsshim_be16(const uint8_t *p) { return (uint32_t) p[0] << 8 | p[1]; }
#define CVIPSSHIM_FOURCC(a, b, c, d) ((uint32_t) (a) << 24 | (uint32_t) (b) << 16 | (uint32_t) (c) << 8 | (uint32_t) (d))

// The first box of `type` among the boxes in [p, p + n): its contents (after the header)
// in *body and *size; 0 when there is none or a header does not fit.
static int cvipsshim_heif_box(const uint8_t *p, size_t n, uint32_t type, const uint8_t **body, size_t *size) {
    while (n >= 8) {
        uint64_t boxSize = cvipsshim_be32(p);
        size_t header = 8;
        if (boxSize == 1) {
            if (n < 16) return 0;
            boxSize = (uint64_t) cvipsshim_be32(p + 8) << 32 | cvipsshim_be32(p + 12);
            header = 16;
        } else if (boxSize == 0) {
            boxSize = n;
        }
        if (boxSize < header || boxSize > n) return 0;
        if (cvipsshim_be32(p + 4) == type) {
            *body = p + header;
            *size = (size_t) boxSize - header;
            return 1;
        }
        p += boxSize;
        n -= (size_t) boxSize;
    }
    return 0;
}

// Whether the file's primary item is one coded 4:2:0 picture ('hvc1', its 'hvcC' saying
// so) that libheif shows as decoded: no rotation, mirror or crop among its properties.
// Anything not read as expected is a no (the caller then lets libheif do everything).
static int cvipsshim_heif_plain_primary(const uint8_t *file, size_t length) {
    const uint8_t *meta, *box, *iprp, *ipco, *ipma;
    size_t metaSize, boxSize, iprpSize, ipcoSize, ipmaSize;
    if (!file || !cvipsshim_heif_box(file, length, CVIPSSHIM_FOURCC('m', 'e', 't', 'a'), &meta, &metaSize) || metaSize < 4) return 0;
    meta += 4;   // version and flags
    metaSize -= 4;
    // The primary item.
    if (!cvipsshim_heif_box(meta, metaSize, CVIPSSHIM_FOURCC('p', 'i', 't', 'm'), &box, &boxSize) || boxSize < 6) return 0;
    uint32_t primary = box[0] == 0 ? cvipsshim_be16(box + 4) : boxSize >= 8 ? cvipsshim_be32(box + 4) : 0;
    if (primary == 0) return 0;
    // Its type, from its 'infe' (versions 2 and 3) in 'iinf'.
    if (!cvipsshim_heif_box(meta, metaSize, CVIPSSHIM_FOURCC('i', 'i', 'n', 'f'), &box, &boxSize) || boxSize < 6) return 0;
    size_t skip = box[0] == 0 ? 6 : 8;
    if (boxSize < skip) return 0;
    const uint8_t *entries = box + skip;
    size_t entriesSize = boxSize - skip;
    uint32_t type = 0;
    while (type == 0) {
        const uint8_t *infe;
        size_t infeSize;
        if (!cvipsshim_heif_box(entries, entriesSize, CVIPSSHIM_FOURCC('i', 'n', 'f', 'e'), &infe, &infeSize)) return 0;
        size_t consumed = (size_t) (infe + infeSize - entries);
        if (infeSize < 4) return 0;
        if (infeSize >= 12 && infe[0] == 2 && cvipsshim_be16(infe + 4) == primary) type = cvipsshim_be32(infe + 8);
        else if (infeSize >= 14 && infe[0] == 3 && cvipsshim_be32(infe + 4) == primary) type = cvipsshim_be32(infe + 10);
        else if (infe[0] < 2 || infe[0] > 3) return 0;
        entries += consumed;
        entriesSize -= consumed;
    }
    if (type != CVIPSSHIM_FOURCC('h', 'v', 'c', '1')) return 0;
    // Its properties: 'ipma' numbers them from 1 in the order of 'ipco'.
    if (!cvipsshim_heif_box(meta, metaSize, CVIPSSHIM_FOURCC('i', 'p', 'r', 'p'), &iprp, &iprpSize) ||
        !cvipsshim_heif_box(iprp, iprpSize, CVIPSSHIM_FOURCC('i', 'p', 'c', 'o'), &ipco, &ipcoSize) ||
        !cvipsshim_heif_box(iprp, iprpSize, CVIPSSHIM_FOURCC('i', 'p', 'm', 'a'), &ipma, &ipmaSize) || ipmaSize < 8) return 0;
    int version = ipma[0], wide = ipma[3] & 1;
    uint32_t count = cvipsshim_be32(ipma + 4);
    size_t at = 8;
    for (uint32_t entry = 0; entry < count; entry++) {
        size_t idSize = version < 1 ? 2 : 4;
        if (ipmaSize - at < idSize + 1) return 0;
        uint32_t item = idSize == 2 ? cvipsshim_be16(ipma + at) : cvipsshim_be32(ipma + at);
        int associations = ipma[at + idSize];
        at += idSize + 1;
        size_t each = wide ? 2 : 1;
        if ((ipmaSize - at) / each < (size_t) associations) return 0;
        if (item == primary) {
            int fourTwoZero = 0;
            for (int a = 0; a < associations; a++) {
                uint32_t index = wide ? cvipsshim_be16(ipma + at + 2 * a) & 0x7fff : ipma[at + a] & 0x7f;
                if (index == 0) continue;
                // The index-th property in 'ipco'.
                const uint8_t *p = ipco;
                size_t n = ipcoSize;
                uint32_t propertyType = 0;
                for (uint32_t i = 1; i <= index; i++) {
                    if (n < 8) return 0;
                    uint64_t propertySize = cvipsshim_be32(p);
                    if (propertySize < 8 || propertySize > n) return 0;   // 64-bit sizes: not for properties
                    propertyType = cvipsshim_be32(p + 4);
                    if (i < index) { p += propertySize; n -= (size_t) propertySize; }
                }
                if (propertyType == CVIPSSHIM_FOURCC('i', 'r', 'o', 't') || propertyType == CVIPSSHIM_FOURCC('i', 'm', 'i', 'r') ||
                    propertyType == CVIPSSHIM_FOURCC('c', 'l', 'a', 'p')) return 0;
                // The decoder configuration record's chroma_format_idc (1: 4:2:0), 17th byte.
                if (propertyType == CVIPSSHIM_FOURCC('h', 'v', 'c', 'C')) {
                    if (cvipsshim_be32(p) < 8 + 17 || (p[8 + 16] & 3) != 1) return 0;
                    fourTwoZero = 1;
                }
            }
            return fourTwoZero;
        }
        at += (size_t) associations * each;
    }
    return 0;
}

// The centre square at half size, straight from the decoded YCbCr 4:2:0 planes: each
// 2x2 block of luma averaged and converted with its one chroma sample (libheif's own
// conversion repeats that sample over the block: the same colours), into an RGB image a
// quarter of the full square's size. The blocks start on even pixels (chroma's), so the
// image is the blocks the exact square touches and `square` gets where that square lies
// in it (x, y, side, in half pixels). CVIPSSHIM_NOT_APPLICABLE (nothing done) when the image is not 8-bit
// 4:2:0 without alpha, its matrix is not one of the usual ones, or half its square would
// be smaller than `minSide`.
static cvipsshim_status cvipsshim_heif_half_square(const uint8_t *file, size_t length, struct heif_image_handle *handle, int minSide,
                                      int ownPlugin, double square[3], VipsImage **out) {
    if (minSide <= 0 || heif_image_handle_has_alpha_channel(handle) ||
        heif_image_handle_get_luma_bits_per_pixel(handle) != 8 || heif_image_handle_get_chroma_bits_per_pixel(handle) != 8) return CVIPSSHIM_NOT_APPLICABLE;
    int w = heif_image_handle_get_width(handle), h = heif_image_handle_get_height(handle);
    int side = w < h ? w : h;
    if (side / 2 < minSide) return CVIPSSHIM_NOT_APPLICABLE;
    struct heif_image *decoded = NULL;
    struct heif_error error;
    if (ownPlugin && cvipsshim_heif_plain_primary(file, length)) {
        // The decoder's own planes, through the plugin's capture (HEIFInternal.h): one
        // picture, no transformation to apply.
        struct cvipsshim_hevc_capture capture = { NULL, 0 };
        struct heif_decoding_options *options = heif_decoding_options_alloc();
        if (!options) return CVIPSSHIM_NOT_APPLICABLE;
        options->ignore_transformations = 1;
        struct heif_image *standIn = NULL;
        cvipsshim_hevc_capture_into(&capture);
        error = heif_decode_image(handle, &standIn, heif_colorspace_undefined, heif_chroma_undefined, options);
        cvipsshim_hevc_capture_into(NULL);
        heif_decoding_options_free(options);
        if (standIn) heif_image_release(standIn);
        if (error.code == heif_error_Ok && capture.pictures == 1) {
            decoded = capture.image;
        } else if (capture.image) {
            heif_image_release(capture.image);
        } else if (error.code != heif_error_Ok) {
            // Damaged: libheif's way would run the same decoder on the same data.
            vips_error("heif", "%s", error.message ? error.message : "decode failed");
            return CVIPSSHIM_FAILED;
        }
    }
    if (!decoded) {
        error = heif_decode_image(handle, &decoded, heif_colorspace_YCbCr, heif_chroma_420, NULL);
        if (error.code != heif_error_Ok || !decoded) return CVIPSSHIM_NOT_APPLICABLE;
    }
    int yStride = 0, cbStride = 0, crStride = 0;
    const uint8_t *luma = heif_image_get_plane_readonly(decoded, heif_channel_Y, &yStride);
    const uint8_t *cb = heif_image_get_plane_readonly(decoded, heif_channel_Cb, &cbStride);
    const uint8_t *cr = heif_image_get_plane_readonly(decoded, heif_channel_Cr, &crStride);
    if (!luma || !cb || !cr || heif_image_get_width(decoded, heif_channel_Y) != w || heif_image_get_height(decoded, heif_channel_Y) != h ||
        heif_image_get_width(decoded, heif_channel_Cb) != (w + 1) / 2 || heif_image_get_height(decoded, heif_channel_Cb) != (h + 1) / 2 ||
        heif_image_get_width(decoded, heif_channel_Cr) != (w + 1) / 2 || heif_image_get_height(decoded, heif_channel_Cr) != (h + 1) / 2 ||
        heif_image_get_bits_per_pixel_range(decoded, heif_channel_Y) != 8 || heif_image_get_bits_per_pixel_range(decoded, heif_channel_Cb) != 8 ||
        heif_image_get_bits_per_pixel_range(decoded, heif_channel_Cr) != 8) {
        heif_image_release(decoded);
        return CVIPSSHIM_NOT_APPLICABLE;
    }
    // The matrix and range libheif's conversion would use: the image's, else the file's,
    // else its default (BT.601, full range).
    int matrix = 6, fullRange = 1;
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_get_nclx_color_profile(decoded, &nclx).code != heif_error_Ok) {
        nclx = NULL;
        if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code != heif_error_Ok) nclx = NULL;
    }
    if (nclx) {
        matrix = nclx->matrix_coefficients;
        fullRange = nclx->full_range_flag;
        heif_nclx_color_profile_free(nclx);
    }
    double kr, kb;
    switch (matrix) {
    case 1: kr = 0.2126; kb = 0.0722; break;          // BT.709
    case 2: case 5: case 6: kr = 0.299; kb = 0.114; break;  // unspecified, BT.470 B/G, BT.601
    case 4: kr = 0.30; kb = 0.11; break;               // FCC
    case 7: kr = 0.212; kb = 0.087; break;             // SMPTE 240M
    case 9: kr = 0.2627; kb = 0.0593; break;           // BT.2020 non-constant
    default: heif_image_release(decoded); return CVIPSSHIM_NOT_APPLICABLE;
    }
    double kg = 1 - kr - kb;
    double lumaScale = fullRange ? 1.0 : 255.0 / 219.0, chromaScale = fullRange ? 1.0 : 255.0 / 224.0;
    int lumaOffset = fullRange ? 0 : 16;
    // In 1/65536ths.
    int yk = (int) (lumaScale * 65536 + 0.5);
    int rCr = (int) (2 * (1 - kr) * chromaScale * 65536 + 0.5);
    int gCb = (int) (2 * kb * (1 - kb) / kg * chromaScale * 65536 + 0.5);
    int gCr = (int) (2 * kr * (1 - kr) / kg * chromaScale * 65536 + 0.5);
    int bCb = (int) (2 * (1 - kb) * chromaScale * 65536 + 0.5);
    // The exact square (its left and top rounded down, as a crop of the whole picture has
    // them) in half pixels, and the whole 2x2 blocks it touches.
    int exactLeft = (w - side) / 2, exactTop = (h - side) / 2;
    int blockLeft = exactLeft / 2, blockTop = exactTop / 2;
    int blockRight = (exactLeft + side + 1) / 2, blockBottom = (exactTop + side + 1) / 2;
    if (blockRight > w / 2) blockRight = w / 2;
    if (blockBottom > h / 2) blockBottom = h / 2;
    int nw = blockRight - blockLeft, nh = blockBottom - blockTop;
    square[0] = exactLeft / 2.0 - blockLeft;
    square[1] = exactTop / 2.0 - blockTop;
    square[2] = side / 2.0;
    int left = 2 * blockLeft, top = 2 * blockTop;
    unsigned char *rgb = g_try_malloc((size_t) nw * nh * 3);
    if (!rgb) { heif_image_release(decoded); vips_error("heif", "out of memory"); return CVIPSSHIM_FAILED; }
    for (int j = 0; j < nh; j++) {
        const uint8_t *y0 = luma + (size_t) (top + 2 * j) * yStride + left, *y1 = y0 + yStride;
        const uint8_t *cbRow = cb + (size_t) (top / 2 + j) * cbStride + left / 2;
        const uint8_t *crRow = cr + (size_t) (top / 2 + j) * crStride + left / 2;
        unsigned char *target = rgb + (size_t) j * nw * 3;
        for (int i = 0; i < nw; i++) {
            // The block's luma, in 1/4ths, less the offset.
            int y4 = y0[2 * i] + y0[2 * i + 1] + y1[2 * i] + y1[2 * i + 1] - 4 * lumaOffset;
            long long yv = (long long) y4 * yk / 4;   // in 1/65536ths
            int u = cbRow[i] - 128, v = crRow[i] - 128;
            long long r = yv + (long long) rCr * v, g = yv - (long long) gCb * u - (long long) gCr * v, b = yv + (long long) bCb * u;
            r = (r + 32768) >> 16; g = (g + 32768) >> 16; b = (b + 32768) >> 16;
            target[3 * i] = (unsigned char) (r < 0 ? 0 : r > 255 ? 255 : r);
            target[3 * i + 1] = (unsigned char) (g < 0 ? 0 : g > 255 ? 255 : g);
            target[3 * i + 2] = (unsigned char) (b < 0 ? 0 : b > 255 ? 255 : b);
        }
    }
    heif_image_release(decoded);
    VipsImage *image = cvipsshim_image_owning(rgb, (size_t) nw * nh * 3, nw, nh, 3, VIPS_FORMAT_UCHAR);
    if (!image) return CVIPSSHIM_FAILED;
    *out = image;
    return CVIPSSHIM_OK;
}

cvipsshim_status cvipsshim_heif_decode_square(const void *buf, size_t len, long long maxPixels, int halfSquareFrom, int hevcDecoder,
                                 int hevcThreads, VipsImage **out, int *codedWidth, int *codedHeight, int *shownWidth,
                                 int *shownHeight, double square[3]) {
#if !CVIPSSHIM_FAST_HEIF
    return CVIPSSHIM_NOT_APPLICABLE;
#endif
    double unused[3];
    if (!square) square = unused;
    square[0] = square[1] = square[2] = 0;
    struct heif_context *context = heif_context_alloc();
    struct heif_image_handle *handle = NULL;
    struct heif_image *decoded = NULL;
    struct heif_error error;
    if (!context) { vips_error("heif", "out of memory"); return CVIPSSHIM_FAILED; }
    // One image per thread is the pipeline's model: libheif's own threads (one per grid
    // tile) would only hand work back and forth on cores that are already busy.
    heif_context_set_max_decoding_threads(context, 0);
    // Within one picture, the HEVC decoder's threads decode rows of coding blocks in
    // parallel (wavefronts), so a large HEIC uses more than one core; libavcodec where
    // the system has it (HEVCDecoder.c).
    int ownPlugin = cvipsshim_heif_use_hevc_decoder(context, hevcDecoder, hevcThreads, maxPixels);
    error = heif_context_read_from_memory_without_copy(context, buf, len, NULL);
    if (error.code == heif_error_Ok) error = heif_context_get_primary_image_handle(context, &handle);
    if (error.code != heif_error_Ok) goto failed;
    // What gets decoded is the coded size (the ispe box), which a crop ('clap') may
    // hide: a small picture cut from a huge coded one is a pixel bomb all the same.
    long long width = heif_image_handle_get_width(handle), height = heif_image_handle_get_height(handle);
    long long ispeWidth = heif_image_handle_get_ispe_width(handle), ispeHeight = heif_image_handle_get_ispe_height(handle);
    if (ispeWidth > width) width = ispeWidth;
    if (ispeHeight > height) height = ispeHeight;
    *codedWidth = (int) width;
    *codedHeight = (int) height;
    if (width <= 0 || height <= 0 || width * height > maxPixels) {
        vips_error("heif", "image is %lld x %lld pixels", width, height);
        heif_image_handle_release(handle);
        heif_context_free(context);
        return width > 0 && height > 0 ? CVIPSSHIM_TOO_LARGE : CVIPSSHIM_FAILED;
    }
    if (shownWidth) *shownWidth = heif_image_handle_get_width(handle);
    if (shownHeight) *shownHeight = heif_image_handle_get_height(handle);
    VipsImage *image;
    cvipsshim_status half = cvipsshim_heif_half_square(buf, len, handle, halfSquareFrom, ownPlugin, square, &image);
    if (half == CVIPSSHIM_OK) goto attach_profile;
    if (half == CVIPSSHIM_FAILED) goto cleanup;
    int alpha = heif_image_handle_has_alpha_channel(handle);
    int bands = alpha ? 4 : 3;
    // The image's transformations (rotation, mirror, crop) applied, as heifload does.
    error = heif_decode_image(handle, &decoded, heif_colorspace_RGB, alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, NULL);
    if (error.code != heif_error_Ok) goto failed;
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride);
    int w = heif_image_get_width(decoded, heif_channel_interleaved), h = heif_image_get_height(decoded, heif_channel_interleaved);
    if (!plane || w <= 0 || h <= 0) { vips_error("heif", "no pixels decoded"); goto cleanup; }
    if ((size_t) stride == (size_t) w * bands) {
        // No copy: the image keeps libheif's plane and releases it when it closes.
        image = vips_image_new_from_memory(plane, (size_t) stride * h, w, h, bands, VIPS_FORMAT_UCHAR);
        if (!image) goto cleanup;
        struct cvipsshim_heif_pixels *owner = g_new(struct cvipsshim_heif_pixels, 1);
        owner->image = decoded;
        g_signal_connect(image, "postclose", G_CALLBACK(cvipsshim_release_heif), owner);
        decoded = NULL;
    } else {
        unsigned char *packed = g_malloc((size_t) w * bands * h);
        for (int y = 0; y < h; y++) memcpy(packed + (size_t) y * w * bands, plane + (size_t) y * stride, (size_t) w * bands);
        image = cvipsshim_image_owning(packed, (size_t) w * bands * h, w, h, bands, VIPS_FORMAT_UCHAR);
        if (!image) goto cleanup;
    }
attach_profile:
    image->Type = VIPS_INTERPRETATION_sRGB;
    if (heif_image_handle_get_color_profile_type(handle) == heif_color_profile_type_prof ||
        heif_image_handle_get_color_profile_type(handle) == heif_color_profile_type_rICC) {
        size_t size = heif_image_handle_get_raw_color_profile_size(handle);
        if (size > 0) {
            void *profile = g_malloc(size);
            if (heif_image_handle_get_raw_color_profile(handle, profile).code == heif_error_Ok)
                vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, profile, size);
            g_free(profile);
        }
    }
    if (decoded) heif_image_release(decoded);
    heif_image_handle_release(handle);
    heif_context_free(context);
    *out = image;
    return CVIPSSHIM_OK;

failed:
    vips_error("heif", "%s", error.message ? error.message : "decode failed");
cleanup:
    if (decoded) heif_image_release(decoded);
    if (handle) heif_image_handle_release(handle);
    heif_context_free(context);
    return CVIPSSHIM_FAILED;
}

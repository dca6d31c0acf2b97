// libheif's HEVC decoding on more than one core, and through FFmpeg's decoder where the
// system has it (declared in HEIFInternal.h).
//
// Debian 12's libheif (1.15) starts libde265 with one worker thread, so a HEIC decodes
// on one core however its picture was encoded. Phones' and x265's HEVC streams use
// wavefront parallel processing (each row of coding blocks can start once the row above
// is two blocks ahead), and both decoders below decode such rows on as many threads as
// they are given. libheif takes decoder plugins through its public plugin interface
// (heif_plugin.h); this one is registered on the decoding context only, at a priority
// above libheif's own, and does what libheif's libde265 plugin does — NAL units in, the
// first decoded picture's planes copied out.
//
// The decoder: FFmpeg's (libavcodec), when libavcodec.so.59 can be opened, else libde265;
// libavcodec is the faster (docs/performance-notes.md, "HEIC through FFmpeg's HEVC
// decoder"; libheif 1.17 and later ship an FFmpeg plugin for the same reason). HEVC decoding is exact: both give the same
// pixels, which the tests check. libavcodec is opened on first use (dlopen), not linked:
// a process that decodes no HEIC (a lookup) loads none of the 38 libraries it brings,
// and where it is missing (the .deb depends on it; a binary from the tarball may lack
// it) HEICs still decode, through libde265.
#include "HEIFInternal.h"
#include "TestCounters.h"
#include <dlfcn.h>
#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libde265/de265.h>
#include <libheif/heif_plugin.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// libavcodec's entry points (with libavutil's, which it links), found once per process;
// `hevc` is NULL when libavcodec or one of them is missing.
static struct {
    AVCodecContext *(*allocContext)(const AVCodec *);
    int (*open)(AVCodecContext *, const AVCodec *, AVDictionary **);
    void (*freeContext)(AVCodecContext **);
    AVPacket *(*allocPacket)(void);
    void (*freePacket)(AVPacket **);
    int (*send)(AVCodecContext *, const AVPacket *);
    int (*receive)(AVCodecContext *, AVFrame *);
    AVFrame *(*allocFrame)(void);
    void (*freeFrame)(AVFrame **);
    int (*defaultBuffer)(AVCodecContext *, AVFrame *, int);
    void (*alignDimensions)(AVCodecContext *, int *, int *, int[AV_NUM_DATA_POINTERS]);
    int (*fillLinesizes)(int[4], enum AVPixelFormat, int);
    int (*fillPlaneSizes)(size_t[4], enum AVPixelFormat, int, const ptrdiff_t[4]);
    AVBufferRef *(*createBuffer)(uint8_t *, size_t, void (*)(void *, uint8_t *), void *, int);
    const AVCodec *hevc;
} cvipsshim_avcodec;
static pthread_once_t cvipsshim_avcodec_once = PTHREAD_ONCE_INIT;

static void cvipsshim_avcodec_open(void) {
    // The major version the headers describe: structures and calls are the same within it.
    char name[32];
    snprintf(name, sizeof name, "libavcodec.so.%d", LIBAVCODEC_VERSION_MAJOR);
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    unsigned (*version)(void);
    void (*setLogLevel)(int);
    const AVCodec *(*find)(enum AVCodecID);
    // POSIX's way to a function pointer from dlsym; any symbol missing leaves `hevc` NULL.
#define CVIPSSHIM_FIND(pointer, symbol) do { *(void **) &(pointer) = dlsym(library, symbol); if (!(pointer)) return; } while (0)
    CVIPSSHIM_FIND(version, "avcodec_version");
    CVIPSSHIM_FIND(setLogLevel, "av_log_set_level");
    CVIPSSHIM_FIND(find, "avcodec_find_decoder");
    CVIPSSHIM_FIND(cvipsshim_avcodec.allocContext, "avcodec_alloc_context3");
    CVIPSSHIM_FIND(cvipsshim_avcodec.open, "avcodec_open2");
    CVIPSSHIM_FIND(cvipsshim_avcodec.freeContext, "avcodec_free_context");
    CVIPSSHIM_FIND(cvipsshim_avcodec.allocPacket, "av_packet_alloc");
    CVIPSSHIM_FIND(cvipsshim_avcodec.freePacket, "av_packet_free");
    CVIPSSHIM_FIND(cvipsshim_avcodec.send, "avcodec_send_packet");
    CVIPSSHIM_FIND(cvipsshim_avcodec.receive, "avcodec_receive_frame");
    CVIPSSHIM_FIND(cvipsshim_avcodec.allocFrame, "av_frame_alloc");
    CVIPSSHIM_FIND(cvipsshim_avcodec.freeFrame, "av_frame_free");
    CVIPSSHIM_FIND(cvipsshim_avcodec.defaultBuffer, "avcodec_default_get_buffer2");
    CVIPSSHIM_FIND(cvipsshim_avcodec.alignDimensions, "avcodec_align_dimensions2");
    CVIPSSHIM_FIND(cvipsshim_avcodec.fillLinesizes, "av_image_fill_linesizes");
    CVIPSSHIM_FIND(cvipsshim_avcodec.fillPlaneSizes, "av_image_fill_plane_sizes");
    CVIPSSHIM_FIND(cvipsshim_avcodec.createBuffer, "av_buffer_create");
#undef CVIPSSHIM_FIND
    if ((int) (version() >> 16) != LIBAVCODEC_VERSION_MAJOR) return;
    // A damaged picture is our error to report, not FFmpeg's lines on stderr.
    setLogLevel(AV_LOG_QUIET);
    cvipsshim_avcodec.hevc = find(AV_CODEC_ID_HEVC);
}

int cvipsshim_hevc_libavcodec_available(void) {
    pthread_once(&cvipsshim_avcodec_once, cvipsshim_avcodec_open);
    return cvipsshim_avcodec.hevc != NULL;
}

// The NAL units libheif pushes, kept as one Annex B stream (each after a start code):
// the form libavcodec parses without a configuration record, and libde265 takes as well.
struct cvipsshim_hevc_decoder {
    unsigned char *stream;
    size_t size, capacity;
};

// Set on the decoding thread before heif_decode_image (libheif's v1 plugins take no
// user data): the decoder, its threads, the pixel limit.
static _Thread_local int cvipsshim_hevc_threads = 1;
static _Thread_local int cvipsshim_hevc_libavcodec = 0;
static _Thread_local long long cvipsshim_hevc_max_pixels = 0;
#ifdef CVIPSSHIM_TEST_COUNTERS
static _Thread_local long long cvipsshim_hevc_pictures_decoded, cvipsshim_hevc_libavcodec_pictures_decoded,
    cvipsshim_hevc_pictures_captured;

long long cvipsshim_hevc_pictures(void) {
    return cvipsshim_hevc_pictures_decoded;
}

long long cvipsshim_hevc_captured_pictures(void) {
    return cvipsshim_hevc_pictures_captured;
}

long long cvipsshim_hevc_libavcodec_pictures(void) {
    return cvipsshim_hevc_libavcodec_pictures_decoded;
}
#endif

static const char *cvipsshim_hevc_name(void) {
    return "avatar-cache HEVC: libavcodec or libde265, several threads";
}

static int cvipsshim_hevc_supports(enum heif_compression_format format) {
    // libheif's own plugins ask for 100: this one wins where it is registered.
    return format == heif_compression_HEVC ? 200 : 0;
}

static struct heif_error cvipsshim_hevc_error(enum heif_error_code code, enum heif_suberror_code sub, const char *message) {
    struct heif_error error = { code, sub, message };
    return error;
}

static struct heif_error cvipsshim_hevc_ok(void) {
    return cvipsshim_hevc_error(heif_error_Ok, heif_suberror_Unspecified, "Success");
}

static struct heif_error cvipsshim_hevc_failed(const char *message) {
    return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, message);
}

static struct heif_error cvipsshim_hevc_new(void **out) {
    struct cvipsshim_hevc_decoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) return cvipsshim_hevc_error(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory");
    *out = decoder;
    return cvipsshim_hevc_ok();
}

static void cvipsshim_hevc_free(void *raw) {
    struct cvipsshim_hevc_decoder *decoder = raw;
    free(decoder->stream);
    free(decoder);
}

// libheif hands over the headers and the picture's data as NAL units, each after its
// size in 4 big-endian bytes; each is kept after a start code. The stream keeps
// libavcodec's zeroed padding after its end.
static struct heif_error cvipsshim_hevc_push(void *raw, const void *data, size_t size) {
    struct cvipsshim_hevc_decoder *decoder = raw;
    const unsigned char *bytes = data;
    size_t at = 0;
    while (at < size) {
        if (size - at < 4)
            return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_End_of_data, "truncated NAL unit size");
        size_t length = ((size_t) bytes[at] << 24) | ((size_t) bytes[at + 1] << 16) | ((size_t) bytes[at + 2] << 8) | bytes[at + 3];
        at += 4;
        if (length > size - at)
            return cvipsshim_hevc_error(heif_error_Decoder_plugin_error, heif_suberror_End_of_data, "NAL unit past the end of the data");
        // Both decoders take an int length for the whole stream.
        if (length > (size_t) INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE - 4 - decoder->size) return cvipsshim_hevc_failed("HEVC stream too large");
        size_t needed = decoder->size + 4 + length + AV_INPUT_BUFFER_PADDING_SIZE;
        if (needed > decoder->capacity) {
            size_t capacity = decoder->capacity ? decoder->capacity : 65536;
            while (capacity < needed) capacity *= 2;
            unsigned char *grown = realloc(decoder->stream, capacity);
            if (!grown) return cvipsshim_hevc_error(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory");
            decoder->stream = grown;
            decoder->capacity = capacity;
        }
        static const unsigned char startCode[4] = { 0, 0, 0, 1 };
        memcpy(decoder->stream + decoder->size, startCode, 4);
        memcpy(decoder->stream + decoder->size + 4, bytes + at, length);
        decoder->size += 4 + length;
        memset(decoder->stream + decoder->size, 0, AV_INPUT_BUFFER_PADDING_SIZE);
        at += length;
    }
    return cvipsshim_hevc_ok();
}

// A new heif_image of `chroma` (libde265's and libavcodec's chroma formats number as
// libheif's do: monochrome, 4:2:0, 4:2:2, 4:4:4) with the planes copied in.
static struct heif_error cvipsshim_hevc_image(int width, int height, enum heif_chroma chroma, const uint8_t *const planes[3],
                                              const int strides[3], const int widths[3], const int heights[3], const int bits[3],
                                              struct heif_image **out) {
    int mono = chroma == heif_chroma_monochrome;
    struct heif_image *image = NULL;
    struct heif_error error = heif_image_create(width, height, mono ? heif_colorspace_monochrome : heif_colorspace_YCbCr, chroma, &image);
    if (error.code != heif_error_Ok) return error;
    static const enum heif_channel channels[3] = { heif_channel_Y, heif_channel_Cb, heif_channel_Cr };
    for (int c = 0; c < (mono ? 1 : 3); c++) {
        if (widths[c] <= 0 || heights[c] <= 0 || bits[c] <= 0 || bits[c] > 16 || !planes[c]) {
            heif_image_release(image);
            return cvipsshim_hevc_failed("picture without a plane");
        }
        error = heif_image_add_plane(image, channels[c], widths[c], heights[c], bits[c]);
        if (error.code != heif_error_Ok) { heif_image_release(image); return error; }
        int target = 0;
        uint8_t *copy = heif_image_get_plane(image, channels[c], &target);
        size_t row = (size_t) widths[c] * ((bits[c] + 7) / 8);
        for (int y = 0; y < heights[c]; y++) memcpy(copy + (size_t) y * target, planes[c] + (size_t) y * strides[c], row);
    }
    *out = image;
    return cvipsshim_hevc_ok();
}

static struct heif_error cvipsshim_hevc_decode_libde265(struct cvipsshim_hevc_decoder *decoder, struct heif_image **out) {
    de265_decoder_context *context = de265_new_decoder();
    if (!context) return cvipsshim_hevc_error(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory");
    if (de265_start_worker_threads(context, cvipsshim_hevc_threads) != DE265_OK) {
        de265_free_decoder(context);
        return cvipsshim_hevc_failed("libde265 threads did not start");
    }
    struct heif_error error = cvipsshim_hevc_ok();
    if (de265_push_data(context, decoder->stream, (int) decoder->size, 0, NULL) != DE265_OK ||
        de265_flush_data(context) != DE265_OK) {
        de265_free_decoder(context);
        return cvipsshim_hevc_failed("libde265 refused the data");
    }
    int more = 0;
    do {
        more = 0;
        if (de265_decode(context, &more) != DE265_OK) break;
        const struct de265_image *picture = de265_get_next_picture(context);
        if (picture) {
            // An image item holds one picture: the first is it.
            if (!*out) {
                const uint8_t *planes[3] = { NULL, NULL, NULL };
                int strides[3] = { 0, 0, 0 }, widths[3] = { 0, 0, 0 }, heights[3] = { 0, 0, 0 }, bits[3] = { 0, 0, 0 };
                for (int c = 0; c < 3; c++) {
                    planes[c] = de265_get_image_plane(picture, c, &strides[c]);
                    widths[c] = de265_get_image_width(picture, c);
                    heights[c] = de265_get_image_height(picture, c);
                    bits[c] = de265_get_bits_per_pixel(picture, c);
                }
                error = cvipsshim_hevc_image(widths[0], heights[0], (enum heif_chroma) de265_get_chroma_format(picture),
                                             planes, strides, widths, heights, bits, out);
                if (error.code == heif_error_Ok) CVIPSSHIM_COUNT(cvipsshim_hevc_pictures_decoded, 1);
            }
            de265_release_next_picture(context);
            if (error.code != heif_error_Ok) break;
        }
    } while (more);
    de265_free_decoder(context);
    if (error.code == heif_error_Ok && !*out) error = cvipsshim_hevc_failed("libde265 decoded no picture");
    return error;
}

// libavcodec's pixel formats that map onto a heif_image: the chroma and the bits.
static int cvipsshim_hevc_format(int format, enum heif_chroma *chroma, int *bits) {
    switch (format) {
    case AV_PIX_FMT_GRAY8: *chroma = heif_chroma_monochrome; *bits = 8; return 1;
    case AV_PIX_FMT_YUV420P: case AV_PIX_FMT_YUVJ420P: *chroma = heif_chroma_420; *bits = 8; return 1;
    case AV_PIX_FMT_YUV422P: case AV_PIX_FMT_YUVJ422P: *chroma = heif_chroma_422; *bits = 8; return 1;
    case AV_PIX_FMT_YUV444P: case AV_PIX_FMT_YUVJ444P: *chroma = heif_chroma_444; *bits = 8; return 1;
    case AV_PIX_FMT_GRAY10LE: *chroma = heif_chroma_monochrome; *bits = 10; return 1;
    case AV_PIX_FMT_YUV420P10LE: *chroma = heif_chroma_420; *bits = 10; return 1;
    case AV_PIX_FMT_YUV422P10LE: *chroma = heif_chroma_422; *bits = 10; return 1;
    case AV_PIX_FMT_YUV444P10LE: *chroma = heif_chroma_444; *bits = 10; return 1;
    case AV_PIX_FMT_GRAY12LE: *chroma = heif_chroma_monochrome; *bits = 12; return 1;
    case AV_PIX_FMT_YUV420P12LE: *chroma = heif_chroma_420; *bits = 12; return 1;
    case AV_PIX_FMT_YUV422P12LE: *chroma = heif_chroma_422; *bits = 12; return 1;
    case AV_PIX_FMT_YUV444P12LE: *chroma = heif_chroma_444; *bits = 12; return 1;
    default: return 0;
    }
}

// Frames from 4 MB up (a 12 MP picture's is 18.5 MB) in pages of their own, returned
// when the frame goes, rather than from the heap (the allocator keeps freed memory for
// the next decode, Vips.reuseFreedMemory): there the frame sat between the decoder's
// other buffers, and the picture's copy, made once those are freed, no longer fit in
// their place, which raised the heap's high-water mark by 12 MB for one 12 MP HEIC. The
// layout is libavcodec's own default's (decode.c, update_frame_pool): its dimension and
// line alignment, each plane 64-byte aligned with 16 + 63 bytes to spare.
static void cvipsshim_hevc_unmap(void *length, uint8_t *data) {
    munmap(data, (size_t) length);
}

static int cvipsshim_hevc_frame_buffer(AVCodecContext *context, AVFrame *frame, int flags) {
    int width = frame->width, height = frame->height, align[AV_NUM_DATA_POINTERS] = { 0 }, linesizes[4] = { 0 };
    cvipsshim_avcodec.alignDimensions(context, &width, &height, align);
    for (;;) {
        if (cvipsshim_avcodec.fillLinesizes(linesizes, frame->format, width) < 0) return AVERROR(EINVAL);
        int unaligned = 0;
        for (int i = 0; i < 4; i++) unaligned |= align[i] > 0 && linesizes[i] % align[i];
        if (!unaligned) break;
        width += width & ~(width - 1);
    }
    ptrdiff_t strides[4] = { linesizes[0], linesizes[1], linesizes[2], linesizes[3] };
    size_t sizes[4] = { 0 }, offsets[4] = { 0 }, total = 0;
    if (cvipsshim_avcodec.fillPlaneSizes(sizes, frame->format, height, strides) < 0) return AVERROR(EINVAL);
    for (int i = 0; i < 4 && sizes[i]; i++) {
        offsets[i] = total;
        total += (sizes[i] + 16 + 63 + 63) & ~(size_t) 63;
    }
    if (total < ((size_t) 4 << 20)) return cvipsshim_avcodec.defaultBuffer(context, frame, flags);
    uint8_t *pages = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) return AVERROR(ENOMEM);
    frame->buf[0] = cvipsshim_avcodec.createBuffer(pages, total, cvipsshim_hevc_unmap, (void *) total, 0);
    if (!frame->buf[0]) { munmap(pages, total); return AVERROR(ENOMEM); }
    for (int i = 0; i < 4; i++) {
        frame->data[i] = sizes[i] ? pages + offsets[i] : NULL;
        frame->linesize[i] = sizes[i] ? linesizes[i] : 0;
    }
    frame->extended_data = frame->data;
    return 0;
}

// 1: decoded into *out; 0: a picture libavcodec cannot give in a form we map (libde265
// then decodes it); -1: *error set.
static int cvipsshim_hevc_decode_libavcodec(struct cvipsshim_hevc_decoder *decoder, struct heif_image **out, struct heif_error *error) {
    AVCodecContext *context = cvipsshim_avcodec.allocContext(cvipsshim_avcodec.hevc);
    AVPacket *packet = cvipsshim_avcodec.allocPacket();
    AVFrame *frame = cvipsshim_avcodec.allocFrame();
    int result = -1;
    *error = cvipsshim_hevc_error(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory");
    if (!context || !packet || !frame) goto done;
    // Rows of coding blocks (wavefronts) on several threads; frame threads would only
    // delay the one picture.
    context->thread_count = cvipsshim_hevc_threads;
    context->thread_type = FF_THREAD_SLICE;
    context->get_buffer2 = cvipsshim_hevc_frame_buffer;
    // The size the stream declares is checked again here: it can differ from the file's.
    if (cvipsshim_hevc_max_pixels > 0) context->max_pixels = cvipsshim_hevc_max_pixels;
    *error = cvipsshim_hevc_failed("libavcodec could not start");
    if (cvipsshim_avcodec.open(context, cvipsshim_avcodec.hevc, NULL) < 0) goto done;
    packet->data = decoder->stream;
    packet->size = (int) decoder->size;
    *error = cvipsshim_hevc_failed("libavcodec decoded no picture");
    if (cvipsshim_avcodec.send(context, packet) < 0 || cvipsshim_avcodec.send(context, NULL) < 0) goto done;
    if (cvipsshim_avcodec.receive(context, frame) < 0) goto done;
    // The frame holds its own reference to its planes: the decoder's other state (9 MB
    // and more for 12 MP) goes before the copy below, not after it.
    cvipsshim_avcodec.freeContext(&context);
    enum heif_chroma chroma;
    int depth;
    if (!cvipsshim_hevc_format(frame->format, &chroma, &depth)) { result = 0; goto done; }
    int bits[3] = { depth, depth, depth };
    int shiftX = chroma == heif_chroma_444 ? 0 : 1, shiftY = chroma == heif_chroma_420 ? 1 : 0;
    const uint8_t *planes[3] = { frame->data[0], frame->data[1], frame->data[2] };
    int strides[3] = { frame->linesize[0], frame->linesize[1], frame->linesize[2] };
    int widths[3] = { frame->width, (frame->width + shiftX) >> shiftX, (frame->width + shiftX) >> shiftX };
    int heights[3] = { frame->height, (frame->height + shiftY) >> shiftY, (frame->height + shiftY) >> shiftY };
    *error = cvipsshim_hevc_image(frame->width, frame->height, chroma, planes, strides, widths, heights, bits, out);
    if (error->code == heif_error_Ok) {
        CVIPSSHIM_COUNT(cvipsshim_hevc_pictures_decoded, 1);
        CVIPSSHIM_COUNT(cvipsshim_hevc_libavcodec_pictures_decoded, 1);
        result = 1;
    }
done:
    if (packet) packet->data = NULL;   // the stream is ours
    cvipsshim_avcodec.freeFrame(&frame);
    cvipsshim_avcodec.freePacket(&packet);
    cvipsshim_avcodec.freeContext(&context);
    return result;
}

static _Thread_local struct cvipsshim_hevc_capture *cvipsshim_hevc_capture;

void cvipsshim_hevc_capture_into(struct cvipsshim_hevc_capture *capture) {
    cvipsshim_hevc_capture = capture;
}

static struct heif_error cvipsshim_hevc_decode_picture(struct cvipsshim_hevc_decoder *decoder, struct heif_image **out) {
    if (cvipsshim_hevc_libavcodec && cvipsshim_hevc_libavcodec_available()) {
        struct heif_error error;
        int status = cvipsshim_hevc_decode_libavcodec(decoder, out, &error);
        if (status != 0) return error;
    }
    return cvipsshim_hevc_decode_libde265(decoder, out);
}

static struct heif_error cvipsshim_hevc_decode(void *raw, struct heif_image **out) {
    struct cvipsshim_hevc_decoder *decoder = raw;
    *out = NULL;
    if (!decoder->stream) return cvipsshim_hevc_failed("no HEVC data");
    struct heif_error error = cvipsshim_hevc_decode_picture(decoder, out);
    struct cvipsshim_hevc_capture *capture = cvipsshim_hevc_capture;
    if (error.code != heif_error_Ok || !capture || !*out) return error;
    // Kept for the caller; libheif gets the stand-in (see HEIFInternal.h).
    capture->pictures++;
    CVIPSSHIM_COUNT(cvipsshim_hevc_pictures_captured, 1);
    if (capture->image) heif_image_release(*out);
    else capture->image = *out;
    *out = NULL;
    error = heif_image_create(1, 1, heif_colorspace_monochrome, heif_chroma_monochrome, out);
    if (error.code != heif_error_Ok) return error;
    error = heif_image_add_plane(*out, heif_channel_Y, 1, 1, 8);
    if (error.code != heif_error_Ok) { heif_image_release(*out); *out = NULL; return error; }
    int stride = 0;
    heif_image_get_plane(*out, heif_channel_Y, &stride)[0] = 128;
    return error;
}

static const struct heif_decoder_plugin cvipsshim_hevc_plugin = {
    .plugin_api_version = 1,
    .get_plugin_name = cvipsshim_hevc_name,
    // init_plugin, deinit_plugin: none needed (heif_plugin.h: may be NULL).
    .does_support_format = cvipsshim_hevc_supports,
    .new_decoder = cvipsshim_hevc_new,
    .free_decoder = cvipsshim_hevc_free,
    .push_data = cvipsshim_hevc_push,
    .decode_image = cvipsshim_hevc_decode,
};

int cvipsshim_heif_use_hevc_decoder(struct heif_context *context, int decoder, int threads, long long maxPixels) {
    if (decoder != CVIPSSHIM_HEVC_LIBDE265 && decoder != CVIPSSHIM_HEVC_LIBAVCODEC) return 0;
    cvipsshim_hevc_threads = threads > 0 ? threads : 1;
    cvipsshim_hevc_libavcodec = decoder == CVIPSSHIM_HEVC_LIBAVCODEC;
    cvipsshim_hevc_max_pixels = maxPixels;
    return heif_register_decoder(context, &cvipsshim_hevc_plugin).code == heif_error_Ok;
}

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "CTestZlib.h"

static uint32_t get32(const unsigned char *at) {
    return (uint32_t) at[0] << 24 | (uint32_t) at[1] << 16 | (uint32_t) at[2] << 8 | at[3];
}

long ctestzlib_inflate_png(const unsigned char *png, size_t length, unsigned char *out, size_t room) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (length < 8 || inflateInit(&stream) != Z_OK) return -1;
    stream.next_out = out;
    stream.avail_out = (uInt) room;
    int result = Z_OK, trailing = 0;
    for (size_t at = 8; at + 12 <= length;) {
        size_t size = get32(png + at);
        if (size > length - at - 12) break;
        if (memcmp(png + at + 4, "IDAT", 4) == 0) {
            if (result == Z_STREAM_END) trailing |= size > 0;
            else {
                stream.next_in = (unsigned char *) png + at + 8;
                stream.avail_in = (uInt) size;
                result = inflate(&stream, Z_NO_FLUSH);
                if (result != Z_OK && result != Z_STREAM_END) break;
                trailing |= stream.avail_in > 0;
            }
        }
        at += size + 12;
    }
    long inflated = (long) stream.total_out;
    inflateEnd(&stream);
    return result == Z_STREAM_END && !trailing ? inflated : -1;
}

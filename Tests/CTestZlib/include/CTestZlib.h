// Test support: a PNG's image data through zlib's inflate. libpng only warns about a
// stream's bad checksum at its end; the tests need to know.
#ifndef CTESTZLIB_H
#define CTESTZLIB_H
#include <stddef.h>

// Inflates the zlib stream of the IDAT chunks of the PNG in `png` into `out` (`room`
// bytes). Returns the bytes inflated when the stream is whole: it ends, its Adler-32
// matches, nothing follows it; -1 otherwise.
long ctestzlib_inflate_png(const unsigned char *png, size_t length, unsigned char *out, size_t room);

#endif

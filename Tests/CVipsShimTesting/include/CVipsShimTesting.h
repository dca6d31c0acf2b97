// What the tests count inside CVipsShim's fast paths (defined there, per thread, and
// not part of its contract): which path a decode took. Defined only in debug builds
// (CVIPSSHIM_TEST_COUNTERS, Sources/CVipsShim/TestCounters.h), which the tests run; a
// release build has none of the counters.
#ifndef CVIPSSHIM_TESTING_H
#define CVIPSSHIM_TESTING_H

// Block rows the compact coefficient store has packed on the calling thread so far.
long long cvipsshim_jpeg_compact_rows_packed(void);

// Photos the one-call path for small JPEGs (SmallJPEG.c) has rendered on the calling
// thread so far.
long long cvipsshim_small_jpeg_rendered(void);

// Pictures our HEVC decoder plugin has decoded for the calling thread so far, and those
// of them libavcodec decoded.
long long cvipsshim_hevc_pictures(void);
long long cvipsshim_hevc_libavcodec_pictures(void);
// Of those, the pictures whose planes went to the half square straight from the decoder
// (libheif's conversions skipped).
long long cvipsshim_hevc_captured_pictures(void);

// 1 when libavcodec (the major version built against) could be opened and has an HEVC
// decoder; opened on the first call. Not a counter: the shim's own check, in every build.
int cvipsshim_hevc_libavcodec_available(void);

#endif

// Which of the shim's fast paths this build has (internal: not part of its public
// headers). Each is on only with the library version it was written against, checked
// here at build time; elsewhere its function returns CVIPSSHIM_NOT_APPLICABLE and the
// caller takes the plain libvips path. CVIPSSHIM_NO_FAST_PATHS (Package.swift sets it
// when AVATAR_CACHE_FAST_PATHS=off) turns them all off, so the fallbacks are tested.
// - CVIPSSHIM_FAST_JPEG: the centre decoder at N/8, its compact coefficient store (which
//   replaces libjpeg's memory manager's virtual-array calls) and the encoder on the
//   calling thread, written against libjpeg-turbo 2.x (jpeglib.h's API 6.2 or 8);
// - CVIPSSHIM_FAST_HEIF: libheif on the calling thread, the half square and our HEVC
//   decoders, written against libheif 1.15 (the stand-in picture a plugin hands back
//   relies on how 1.15 converts it: HEVCDecoder.c);
// - CVIPSSHIM_FAST_RENDER: the evaluation, ICC transform and monograms on the calling
//   thread, over libvips' region API and lcms2 (no version-specific behaviour).
// Every file that tests one of these includes this header: an undefined name would read
// as 0 and turn its fast path off without a word.
#ifndef CVIPSSHIM_FAST_PATHS_H
#define CVIPSSHIM_FAST_PATHS_H

#include <stdio.h>
#include <jpeglib.h>
#include <libheif/heif_version.h>

#if defined(CVIPSSHIM_NO_FAST_PATHS)
#define CVIPSSHIM_FAST_JPEG 0
#define CVIPSSHIM_FAST_HEIF 0
#define CVIPSSHIM_FAST_RENDER 0
#else
#if defined(LIBJPEG_TURBO_VERSION_NUMBER) && LIBJPEG_TURBO_VERSION_NUMBER >= 2000000 && LIBJPEG_TURBO_VERSION_NUMBER < 3000000
#define CVIPSSHIM_FAST_JPEG 1
#else
#define CVIPSSHIM_FAST_JPEG 0
#endif
#if LIBHEIF_NUMERIC_VERSION >= 0x010f0000 && LIBHEIF_NUMERIC_VERSION < 0x01100000
#define CVIPSSHIM_FAST_HEIF 1
#else
#define CVIPSSHIM_FAST_HEIF 0
#endif
#define CVIPSSHIM_FAST_RENDER 1
#endif

#endif

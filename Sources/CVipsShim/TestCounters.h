// Which path a decode took, counted per thread for the tests (declared for them in
// Tests/CVipsShimTesting): compiled only when CVIPSSHIM_TEST_COUNTERS is defined, which
// Package.swift does for debug builds, the ones `swift test` runs. A release build, what
// ships, has neither the counters nor the functions that read them.
#ifndef CVIPSSHIM_TEST_COUNTERS_H
#define CVIPSSHIM_TEST_COUNTERS_H

#ifdef CVIPSSHIM_TEST_COUNTERS
#define CVIPSSHIM_COUNT(counter, n) ((counter) += (n))
#else
#define CVIPSSHIM_COUNT(counter, n) ((void) 0)
#endif

#endif

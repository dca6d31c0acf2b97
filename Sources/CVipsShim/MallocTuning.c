// glibc's malloc tuning (declared in include/cvipsshim_malloc.h, where the reason is
// given).
#include "cvipsshim_malloc.h"
#include <stdlib.h>   // defines __GLIBC__ with glibc (through <features.h>)
#if defined(__GLIBC__)
#include <malloc.h>
#endif

// glibc's tuning calls; 0 (nothing done) with another C library.
#if defined(__GLIBC__)
int cvipsshim_set_malloc_arena_max(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}

int cvipsshim_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

int cvipsshim_set_trim_threshold(int bytes) {
    return mallopt(M_TRIM_THRESHOLD, bytes);
}

int cvipsshim_malloc_trim(void) {
    return malloc_trim(0);
}
#else
int cvipsshim_set_malloc_arena_max(int arenas) { (void) arenas; return 0; }
int cvipsshim_set_mmap_threshold(int bytes) { (void) bytes; return 0; }
int cvipsshim_set_trim_threshold(int bytes) { (void) bytes; return 0; }
int cvipsshim_malloc_trim(void) { return 0; }
#endif

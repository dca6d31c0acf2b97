// glibc's malloc tuning (MallocTuning.c). None of these calls is variadic, and none is
// libvips': they are here because <malloc.h> is not in Swift's Glibc module. Each
// returns what glibc's call does, and 0 (nothing done) with another C library.
#ifndef CVIPSSHIM_MALLOC_H
#define CVIPSSHIM_MALLOC_H

// Caps glibc's malloc arenas, which otherwise multiply with decoding threads and
// fragment memory.
int cvipsshim_set_malloc_arena_max(int arenas);

// mallopt(M_MMAP_THRESHOLD): allocations from this size up are mapped, and given back
// to the system when freed (fixing it also stops glibc raising it on its own).
int cvipsshim_set_mmap_threshold(int bytes);

// mallopt(M_TRIM_THRESHOLD): free memory at the top of the heap kept, up to this size,
// for the next allocations rather than returned to the system at once.
int cvipsshim_set_trim_threshold(int bytes);

// malloc_trim(0): the heap's free memory given back to the system now.
int cvipsshim_malloc_trim(void);

#endif

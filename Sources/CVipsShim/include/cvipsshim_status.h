// What every function of the shim that makes or encodes an image returns; on
// CVIPSSHIM_FAILED the message is in vips_error_buffer(), as libvips leaves it. Each
// concern's header includes this one; CVipsShim.h includes them all.
#ifndef CVIPSSHIM_STATUS_H
#define CVIPSSHIM_STATUS_H

#include <stddef.h>
#include <vips/vips.h>

typedef enum {
    CVIPSSHIM_OK = 0,
    // A fast path that does not take this input, or was built without (a library
    // version or CPU it was not written for, or CVIPSSHIM_NO_FAST_PATHS): take the
    // plain libvips path. Nothing was made.
    CVIPSSHIM_NOT_APPLICABLE = 1,
    // Over the pixel limit the caller gave (the sizes found are set).
    CVIPSSHIM_TOO_LARGE = 2,
    // Damaged data or a library error (vips_error set).
    CVIPSSHIM_FAILED = -1,
} cvipsshim_status;

#endif

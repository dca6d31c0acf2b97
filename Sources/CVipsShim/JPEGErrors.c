// libjpeg's error manager for the shim's JPEG decoder and encoder (declared in
// JPEGInternal.h).
#include "JPEGInternal.h"
#include <jerror.h>

static void cvipsshim_jpeg_error_exit(j_common_ptr info) {
    struct cvipsshim_jpeg_error *error = (struct cvipsshim_jpeg_error *) info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

static void cvipsshim_jpeg_emit_message(j_common_ptr info, int level) {
    // Level -1 is a warning: corrupt data, premature end of file. Treated as failure,
    // as jpegload's fail_on=truncated does, so no half-grey picture is ever cached.
    if (level < 0) {
        struct cvipsshim_jpeg_error *error = (struct cvipsshim_jpeg_error *) info->err;
        if (info->err->msg_code == JWRN_JPEG_EOF) error->ended_early = 1;
        if (error->warnings++ == 0) (*info->err->format_message)(info, error->message);
    }
}

struct jpeg_error_mgr *cvipsshim_jpeg_errors(struct cvipsshim_jpeg_error *error) {
    struct jpeg_error_mgr *manager = jpeg_std_error(&error->manager);
    manager->error_exit = cvipsshim_jpeg_error_exit;
    manager->emit_message = cvipsshim_jpeg_emit_message;
    error->warnings = 0;
    error->ended_early = 0;
    error->message[0] = 0;
    return manager;
}

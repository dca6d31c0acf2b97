// The growing destination the JPEG encoders share (declared in JPEGInternal.h).
#include "JPEGInternal.h"
#include <jerror.h>

static void cvipsshim_destination_init(j_compress_ptr info) {
    struct cvipsshim_destination *destination = (struct cvipsshim_destination *) info->dest;
    destination->manager.next_output_byte = destination->buffer;
    destination->manager.free_in_buffer = destination->size;
}

static boolean cvipsshim_destination_grow(j_compress_ptr info) {
    struct cvipsshim_destination *destination = (struct cvipsshim_destination *) info->dest;
    size_t used = destination->size;
    unsigned char *larger = g_try_realloc(destination->buffer, used * 2);
    if (!larger) ERREXIT1(info, JERR_OUT_OF_MEMORY, 0);
    destination->buffer = larger;
    destination->size = used * 2;
    destination->manager.next_output_byte = larger + used;
    destination->manager.free_in_buffer = destination->size - used;
    return TRUE;
}

static void cvipsshim_destination_term(j_compress_ptr info) {
    (void) info;
}

void cvipsshim_destination_install(j_compress_ptr info, struct cvipsshim_destination *destination) {
    destination->manager.init_destination = cvipsshim_destination_init;
    destination->manager.empty_output_buffer = cvipsshim_destination_grow;
    destination->manager.term_destination = cvipsshim_destination_term;
    info->dest = &destination->manager;
}

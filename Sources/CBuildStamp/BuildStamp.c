#include "CBuildStamp.h"

#ifndef AVATAR_CACHE_COMMIT
#define AVATAR_CACHE_COMMIT ""
#endif

const char *cbuildstamp_commit(void) {
    return AVATAR_CACHE_COMMIT;
}

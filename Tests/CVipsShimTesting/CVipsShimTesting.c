// The counters CVipsShimTesting.h declares are defined in CVipsShim; SwiftPM needs a
// source file in every C target.
#include "CVipsShimTesting.h"

// The Level Zero backend's plugin table and its one exported symbol: every
// entry of entries.h, made from the entry list (xalsupport/table.h).
// Native collectives stay NULL: oneCCL has no C API, so the core's own
// collectives serve Level Zero devices.
#include "entries.h"
#include "xalsupport/table.h"

XAL_SUPPORT_DEFINE_PLUGIN(xal::levelzero, "levelzero", "1.1.0")

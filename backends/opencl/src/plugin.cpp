// The OpenCL backend's plugin table and its one exported symbol: every
// entry of entries.h, made from the entry list (xalsupport/table.h).
#include "entries.h"
#include "xalsupport/table.h"

XAL_SUPPORT_DEFINE_PLUGIN(xal::opencl, "opencl", "1.1.0")

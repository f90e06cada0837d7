// The HIP runtime API types, from Debian's libamdhip64-dev (HIP 5.x).
// Only the host-side runtime API header is used; it compiles with the
// system C++ compiler once the AMD platform is selected. The backend never
// links libamdhip64: every function is reached through dlopen/dlsym.
#pragma once

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

// The HIP runtime API: types and prototypes, from Debian's libamdhip64-dev
// (HIP 5.2), plus the prototypes of the later functions the backend uses.
// Only the host-side runtime API header is used; it compiles with the
// system C++ compiler once the AMD platform is selected. The prototypes
// only give the function types of the symbol list (decltype(&name)): the
// backend never links libamdhip64 and never calls them directly; every
// function is reached through dlopen/dlsym.
#pragma once

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
// Without the header's C++ template overloads (hipMalloc, hipHostMalloc,
// ...) each name is one function, whose type decltype(&name) can take.
#ifndef __HIP_DISABLE_CPP_FUNCTIONS__
#define __HIP_DISABLE_CPP_FUNCTIONS__ 1
#endif
#include <hip/hip_runtime_api.h>

extern "C" {
// HIP 5.6: the device a stream belongs to.
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device);
}

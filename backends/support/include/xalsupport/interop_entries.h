// What the ABI 1.1 interop entries of the HIP and Level Zero backends share:
// the checks of an imported range and of an opened IPC mapping. Each backend
// keeps its vendor calls and the wording of its refusals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "xal/xal_backend.h"

namespace xal::support {

// mem_import's end: XAL_ERROR_INVALID_ARGUMENT, "<what> + N bytes runs
// past its allocation [base, +size)", when [native, native + bytes) is not
// inside the vendor allocation [base, base + size) that holds `native`;
// else *out_ptr = native (nothing is recorded: xal owns nothing of it, and
// the core keeps the range) and XAL_SUCCESS. Errors are reported through
// the plugin's services (report.h). Thread-safe.
xal_status_t accept_import(uint64_t native, size_t bytes, uint64_t base, size_t size,
                           const std::string& what, xal_devptr_t* out_ptr);

// mem_ipc_open: XAL_ERROR_INVALID_ARGUMENT, "mem_ipc_open: the handle names
// N bytes, <mapper> mapped M", for a mapping of `mapped` bytes smaller than
// the `named` bytes of the handle (`mapper` as "the HIP runtime"); else
// XAL_SUCCESS. The caller closes the mapping it refuses. Thread-safe.
xal_status_t check_ipc_mapping(size_t named, size_t mapped, const char* mapper);

// XAL_ERROR_NOT_SUPPORTED, reported as "<library> lacks <function>" (library
// as "the HIP runtime"). Thread-safe.
xal_status_t report_lacks(const char* library, const char* function);

}  // namespace xal::support

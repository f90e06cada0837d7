// sides.h -- the two halves of time_copies() (bench_common.h) that
// xal-cuda-rawbench times: the driver API's and xal's. Each copies between
// `host` and `a` (H2D, D2H) or `a` to `b` (D2D) on `stream`, gates a batch
// with the spin kernel and times it with the two `events`; a failed call
// sets *error. The objects must outlive the returned side.
#pragma once

#include <string>

#include "bench_common.h"
#include "dynamic_symbols.h"
#include "xal/xal.h"

namespace xal::cuda::rawbench {

// Through the driver directly (raw_bench.cpp).
CopySide raw_copy_side(const DriverSymbols& d, void* host, CUdeviceptr a, CUdeviceptr b,
                       CUstream stream, CUfunction spin, CUevent* events, std::string* error);

// Through xal's public ABI (xal_side.cpp).
CopySide xal_copy_side(void* host, xal_devptr_t a, xal_devptr_t b, xal_stream_t stream,
                       xal_kernel_t spin, xal_event_t* events, std::string* error);

}  // namespace xal::cuda::rawbench

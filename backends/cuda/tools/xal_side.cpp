// xal_side.cpp -- the xal half of xal-cuda-rawbench's copies: the same
// copies through the public ABI.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "sides.h"
#include "xal_cuda_device.h"
#include "xal/xal.h"

namespace xal::cuda::rawbench {

namespace {

std::string last_error(const char* call) {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  xal_last_error(&info);
  return std::string(call) + " failed: " + xal_status_name(info.status) + ": " +
         info.message;
}

#define CHECK_XAL(call)                      \
  do {                                       \
    if ((call) != XAL_SUCCESS) {             \
      *error = last_error(#call);            \
      return 1;                              \
    }                                        \
  } while (0)


}  // namespace

CopySide xal_copy_side(void* host, xal_devptr_t a, xal_devptr_t b, xal_stream_t stream,
                       xal_kernel_t spin, xal_event_t* events, std::string* error) {
  auto ok = [error](xal_status_t s, const char* call) {
    if (s == XAL_SUCCESS) return true;
    *error = last_error(call);
    return false;
  };
  CopySide side;
  side.copy = [=](const std::string& direction, size_t bytes) {
    if (direction == "htod") return ok(xal_memcpy_htod(stream, a, host, bytes), "xal_memcpy_htod");
    if (direction == "dtoh") return ok(xal_memcpy_dtoh(stream, host, a, bytes), "xal_memcpy_dtoh");
    return ok(xal_memcpy_dtod(stream, b, a, bytes), "xal_memcpy_dtod");
  };
  side.synchronize = [=] { return ok(xal_stream_synchronize(stream), "xal_stream_synchronize"); };
  side.gate = [=](uint64_t ns) {
    xal_launch_config_t config{};
    config.struct_size = sizeof config;
    config.grid[0] = config.grid[1] = config.grid[2] = 1;
    config.block[0] = config.block[1] = config.block[2] = 1;
    void* args[] = {&ns};
    return ok(xal_kernel_launch(stream, spin, &config, args, 1), "xal_kernel_launch");
  };
  side.record = [=](bool start) {
    return ok(xal_event_record(events[start ? 0 : 1], stream), "xal_event_record");
  };
  side.query_start = [=] {
    const xal_status_t s = xal_event_query(events[0]);
    if (s == XAL_NOT_READY) return 0;
    return ok(s, "xal_event_query") ? 1 : -1;
  };
  side.elapsed_ms = [=](float* ms) {
    return ok(xal_event_elapsed_ms(events[0], events[1], ms), "xal_event_elapsed_ms");
  };
  return side;
}

int run_xal(const Options& o, std::vector<Result>* results, std::string* error) {
  CHECK_XAL(tools::init_xal());
  xal_device_t dev = tools::find_cuda_device(o.device);
  if (dev == nullptr) {
    *error = "no CUDA device " + std::to_string(o.device) + " through xal";
    xal_shutdown();
    return 1;
  }
  const size_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  void* host = nullptr;
  CHECK_XAL(xal_host_alloc(max_size, XAL_HOST_ALLOC_DEFAULT, &host));
  xal_devptr_t a = 0, b = 0;
  CHECK_XAL(xal_mem_alloc(dev, max_size, &a));
  CHECK_XAL(xal_mem_alloc(dev, max_size, &b));
  xal_stream_t stream = nullptr;
  CHECK_XAL(xal_stream_create(dev, XAL_STREAM_NON_BLOCKING, &stream));
  xal_event_t events[2] = {nullptr, nullptr};
  CHECK_XAL(xal_event_create(dev, XAL_EVENT_DEFAULT, &events[0]));
  CHECK_XAL(xal_event_create(dev, XAL_EVENT_DEFAULT, &events[1]));
  xal_module_t module = nullptr;
  CHECK_XAL(xal_module_load(dev, XAL_MODULE_FORMAT_PTX, kBenchKernelsPtx,
                            sizeof kBenchKernelsPtx - 1, &module));
  xal_kernel_t spin = nullptr;
  CHECK_XAL(xal_kernel_get(module, "xal_bench_spin", &spin));
  const CopySide side = xal_copy_side(host, a, b, stream, spin, events, error);
  for (Result& r : *results) {
    if (!time_copies(o, r.direction, r.bytes, side, &r.xal_host_gbps, &r.xal_gbps, error)) {
      *error = r.direction + ": " + *error;
      return 1;
    }
  }
  xal_module_unload(module);
  xal_event_destroy(events[0]);
  xal_event_destroy(events[1]);
  xal_stream_destroy(stream);
  xal_mem_free(dev, a);
  xal_mem_free(dev, b);
  xal_host_free(host);
  xal_shutdown();
  return 0;
}

}  // namespace xal::cuda::rawbench

// The worker's "copies" command: a process of a job saturating its partition
// with throttled copies (see quota_ledger_worker.hpp).
#include <chrono>
#include <thread>
#include <vector>

#include "quota_ledger_worker.hpp"
#include "xal/xal.h"

namespace xal_test {

namespace {

constexpr size_t kBytes = 256u << 10;  // per op: about 1 ms at 0.25 GB/s

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string failure(const char* what, xal_status_t s) {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return std::string("err ") + what + ": " + xal_status_name(s) + " " + e.message;
}

}  // namespace

uint64_t saturate_with_copies(void* device, int64_t start, int64_t end, int64_t w0,
                              int64_t w1, std::string* error) {
  auto dev = static_cast<xal_device_t>(device);
  xal_stream_t s = nullptr;
  xal_devptr_t a = 0, b = 0;
  std::vector<uint8_t> host(kBytes, 1);
  xal_status_t st = XAL_SUCCESS;
  if ((st = xal_stream_create(dev, 0, &s)) || (st = xal_mem_alloc(dev, kBytes, &a)) ||
      (st = xal_mem_alloc(dev, kBytes, &b))) {
    *error = failure("setup", st);
    return 0;
  }
  while (now_ns() < start) std::this_thread::sleep_for(std::chrono::microseconds(200));
  uint64_t in_window = 0, n = 0;
  for (int64_t t = now_ns(); t < end; t = now_ns()) {
    if ((st = xal_memcpy_htod(s, a, host.data(), kBytes)) ||
        (st = xal_memcpy_dtod(s, b, a, kBytes))) {
      *error = failure("copy", st);
      break;
    }
    if (t >= w0 && t < w1) in_window += 2 * kBytes;
    // At most four ops queued: the share's overshoot stays a few ms.
    if (++n % 2 == 0 && (st = xal_stream_synchronize(s))) {
      *error = failure("synchronize", st);
      break;
    }
  }
  xal_stream_synchronize(s);
  xal_mem_free(dev, a);
  xal_mem_free(dev, b);
  xal_stream_destroy(s);
  return in_window;
}

}  // namespace xal_test

// xal-cuda-faultcheck: the CUDA backend's bad paths on a real device,
// through libxal, as a user meets them:
//   1. a PTX image that does not compile: an error whose message carries the
//      JIT log (ptxas's words), and the device stays healthy;
//   2. a kernel that stores to an address no allocation holds: the driver's
//      CUDA_ERROR_ILLEGAL_ADDRESS (700), a sticky error, at the next
//      synchronize with the CUDA code kept; the device then reports itself
//      lost, and other calls on it are refused with a message naming
//      xal_device_reset;
//   3. xal_device_reset: either the device works again (a copy round trip
//      checked byte for byte, health OK), or the reset is refused with a
//      message saying the error lasts until the process ends (the driver
//      may keep 700 past a context reset); both are xal's documented
//      outcomes.
// Exit 0 when every step behaves as documented, 1 when one does not, 2 when
// the check cannot run. Run it last: it leaves the device in an error state
// when the reset does not clear it. Prints what it sees at each step.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "xal/xal.h"
#include "xal_common/cli.hpp"
#include "xal_cuda_device.h"

namespace {

// Does not compile on any driver: an unknown instruction. The simulated
// driver fails images that name XALSIM_JIT_ERROR, with a ptxas-like log.
constexpr char kBadPtx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    "// XALSIM_JIT_ERROR\n"
    ".visible .entry xal_faultcheck_bad()\n{\n\tno_such_instruction;\n\tret;\n}\n";

// Stores to address 8 (no allocation there). The simulated driver runs a
// kernel of this name as an illegal address, without reading the PTX.
constexpr char kFaultPtx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry xalsim_illegal_address()\n{\n"
    "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n"
    "\tmov.u64 %rd1, 8;\n\tmov.u32 %r1, 1;\n"
    "\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

xal_error_info_t last_error() {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  xal_last_error(&info);
  return info;
}

xal_device_health_t health(xal_device_t dev) {
  xal_device_health_t h{};
  h.struct_size = sizeof h;
  if (xal_device_get_health(dev, &h) != XAL_SUCCESS) h.state = 0xffffffffu;
  return h;
}

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

bool contains(const char* text, const char* word) {
  return std::string(text).find(word) != std::string::npos;
}

// A copy round trip on a fresh stream: what "works again" means.
bool round_trip(xal_device_t dev) {
  constexpr size_t kBytes = 1 << 20;
  std::vector<unsigned char> in(kBytes), out(kBytes, 0);
  for (size_t i = 0; i < kBytes; ++i) in[i] = static_cast<unsigned char>(i * 131 + 7);
  xal_stream_t s = nullptr;
  xal_devptr_t p = 0;
  bool ok = xal_stream_create(dev, XAL_STREAM_DEFAULT, &s) == XAL_SUCCESS &&
            xal_mem_alloc(dev, kBytes, &p) == XAL_SUCCESS &&
            xal_memcpy_htod(s, p, in.data(), kBytes) == XAL_SUCCESS &&
            xal_memcpy_dtoh(s, out.data(), p, kBytes) == XAL_SUCCESS &&
            xal_stream_synchronize(s) == XAL_SUCCESS && in == out;
  if (!ok) std::printf("  round trip: %s\n", last_error().message);
  if (p != 0) xal_mem_free(dev, p);
  if (s != nullptr) xal_stream_destroy(s);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int ordinal = 0;
  CLI::App app{"The CUDA backend's bad paths on a real device: JIT errors, a kernel fault, reset"};
  app.add_option("--device", ordinal, "CUDA device ordinal")->check(xal::common::AtLeast(0));
  if (const auto status = xal::common::parse_options(app, "xal-cuda-faultcheck", argc, argv)) {
    return *status;
  }
  if (xal::cuda::tools::init_xal() != XAL_SUCCESS) {
    std::fprintf(stderr, "xal-cuda-faultcheck: xal_init: %s\n", last_error().message);
    return 2;
  }
  xal_device_t dev = xal::cuda::tools::find_cuda_device(ordinal);
  if (dev == nullptr) {
    std::fprintf(stderr, "xal-cuda-faultcheck: no CUDA device %d through xal\n", ordinal);
    xal_shutdown();
    return 2;
  }

  std::printf("1. a PTX image that does not compile\n");
  xal_module_t bad = nullptr;
  const xal_status_t jit = xal_module_load(dev, XAL_MODULE_FORMAT_PTX, kBadPtx,
                                           sizeof kBadPtx - 1, &bad);
  const xal_error_info_t jit_error = last_error();
  std::printf("  %s: %s\n", xal_status_name(jit), jit_error.message);
  expect(jit != XAL_SUCCESS && bad == nullptr, "the load fails and gives no module");
  expect(contains(jit_error.message, "ptxas"), "the message carries the JIT log");
  expect(health(dev).state == XAL_HEALTH_OK, "the device stays healthy");

  std::printf("2. a kernel that stores to an address no allocation holds\n");
  xal_module_t module = nullptr;
  xal_kernel_t kernel = nullptr;
  xal_stream_t stream = nullptr;
  if (xal_module_load(dev, XAL_MODULE_FORMAT_PTX, kFaultPtx, sizeof kFaultPtx - 1, &module) !=
          XAL_SUCCESS ||
      xal_kernel_get(module, "xalsim_illegal_address", &kernel) != XAL_SUCCESS ||
      xal_stream_create(dev, XAL_STREAM_NON_BLOCKING, &stream) != XAL_SUCCESS) {
    std::fprintf(stderr, "xal-cuda-faultcheck: set-up: %s\n", last_error().message);
    xal_shutdown();
    return 2;
  }
  xal_launch_config_t config{};
  config.struct_size = sizeof config;
  config.grid[0] = config.grid[1] = config.grid[2] = 1;
  config.block[0] = config.block[1] = config.block[2] = 1;
  xal_status_t s = xal_kernel_launch(stream, kernel, &config, nullptr, 0);
  if (s == XAL_SUCCESS) s = xal_stream_synchronize(stream);
  const xal_error_info_t fault = last_error();
  std::printf("  %s: %s (%s %lld)\n", xal_status_name(s), fault.message, fault.vendor_name,
              static_cast<long long>(fault.vendor_code));
  expect(s == XAL_ERROR_DEVICE_LOST, "reported as XAL_ERROR_DEVICE_LOST");
  expect(fault.vendor_code == 700, "with the CUDA code kept (700, CUDA_ERROR_ILLEGAL_ADDRESS)");
  const xal_device_health_t lost = health(dev);
  std::printf("  health: state %u, %s\n", lost.state, lost.message);
  expect(lost.state == XAL_HEALTH_LOST && lost.vendor_code == 700,
         "the device reports itself lost, code 700");
  xal_devptr_t p = 0;
  const xal_status_t refused = xal_mem_alloc(dev, 256, &p);
  const xal_error_info_t refusal = last_error();
  std::printf("  xal_mem_alloc: %s: %s\n", xal_status_name(refused), refusal.message);
  expect(refused != XAL_SUCCESS && contains(refusal.message, "xal_device_reset"),
         "other calls on it are refused, naming xal_device_reset");

  std::printf("3. xal_device_reset\n");
  const xal_status_t reset = xal_device_reset(dev);
  const xal_error_info_t reset_error = last_error();
  if (reset == XAL_SUCCESS) {
    std::printf("  XAL_SUCCESS\n");
    expect(health(dev).state == XAL_HEALTH_OK, "health OK after the reset");
    expect(round_trip(dev), "a 1 MiB copy round trip on a new stream matches");
  } else {
    std::printf("  %s: %s\n", xal_status_name(reset), reset_error.message);
    expect(reset == XAL_ERROR_DEVICE_LOST && contains(reset_error.message, "process"),
           "the reset did not clear it and says so: it lasts until the process ends");
    expect(health(dev).state == XAL_HEALTH_LOST, "the device still reports itself lost");
  }
  // The stream and module of before the reset are stale: released quietly.
  xal_stream_destroy(stream);
  xal_module_unload(module);
  xal_shutdown();
  std::printf("xal-cuda-faultcheck: %s (%d failed)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}

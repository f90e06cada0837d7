// IPC handles (xal_mem_open_ipc_handle): 128 bytes that come from another
// process through a pipe, a file or a store, so any bytes at all. The
// contract: a handle that is not one xal wrote for a live exporter on this
// host is refused with INVALID_ARGUMENT and a message; one that opens is
// closed again; nothing crashes, blocks or maps a file other than a
// device's memory. Runs on the mock (its handles name a memory file by
// process, descriptor and identity).
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_check.hpp"
#include "xal/xal.h"

namespace {

constexpr size_t kHostBytes = 32;  // the core header's host identity: bytes 32..47
constexpr size_t kPidBytes = 12;   // its exporting process: bytes 12..15

struct Session {
  xal_device_t dev = nullptr;
  xal_ipc_handle_t genuine{};  // a handle of this process's own memory
};

const Session& session() {
  static Session s = [] {
    Session r;
    setenv("XAL_MOCK_DEVICES", R"([{"profile": "l4", "count": 1, "memory": "64MiB"}])", 1);
    xal_init_options_t o{};
    o.struct_size = sizeof o;
    o.backends = XAL_FUZZ_MOCK_PLUGIN;
    XAL_FUZZ_CHECK(xal_init(&o) == XAL_SUCCESS, "xal_init on the mock");
    std::atexit([] { xal_shutdown(); });  // everything xal made, released
    XAL_FUZZ_CHECK(xal_device_get(0, &r.dev) == XAL_SUCCESS, "xal_device_get");
    xal_devptr_t p = 0;
    XAL_FUZZ_CHECK(xal_mem_alloc(r.dev, 4096, &p) == XAL_SUCCESS, "xal_mem_alloc");
    XAL_FUZZ_CHECK(xal_mem_get_ipc_handle(r.dev, p, &r.genuine) == XAL_SUCCESS,
                   "xal_mem_get_ipc_handle");
    return r;
  }();
  return s;
}

}  // namespace

// The first byte steers, the rest is the handle: bit 0 puts this host's
// identity in (which bytes alone would rarely find), bit 1 the parent
// process as the exporter (a live process other than this one), bit 2 the
// genuine handle's mock part (a real memory file's identity).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Session& ses = session();
  xal_device_t dev = ses.dev;
  xal_ipc_handle_t h{};
  const uint8_t steer = size ? data[0] : 0;
  if (size) ++data, --size;
  std::memcpy(h.bytes, data, size < sizeof h.bytes ? size : sizeof h.bytes);
  if (steer & 1) std::memcpy(h.bytes + kHostBytes, ses.genuine.bytes + kHostBytes, 16);
  if (steer & 2) {
    const int32_t parent = static_cast<int32_t>(getppid());
    std::memcpy(h.bytes + kPidBytes, &parent, sizeof parent);
  }
  if (steer & 4) std::memcpy(h.bytes + 64, ses.genuine.bytes + 64, 64);
  xal_devptr_t ptr = 0;
  uint64_t bytes = 0;
  const xal_status_t s = xal_mem_open_ipc_handle(dev, &h, 0, &ptr, &bytes);
  if (s == XAL_SUCCESS) {
    XAL_FUZZ_CHECK(ptr != 0 && bytes > 0, "an opened handle maps memory");
    XAL_FUZZ_CHECK(xal_mem_close_ipc_handle(dev, ptr) == XAL_SUCCESS, "closing what opened");
    return 0;
  }
  XAL_FUZZ_CHECK(s == XAL_ERROR_INVALID_ARGUMENT,
                 std::string("a refused handle gives INVALID_ARGUMENT, not ") +
                     xal_status_name(s));
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  XAL_FUZZ_CHECK(xal_last_error(&e) == XAL_SUCCESS && e.status == s && e.message[0] != '\0',
                 "a refusal has a message");
  return 0;
}

// A test plugin for xal-conform's own tests: the mock backend under another
// name ("shim"), with an optional defect chosen by XAL_SHIM_DEFECT, so that
// the tests can prove that the suite catches a broken backend:
//   (unset)            behaves exactly as the mock (a second "vendor")
//   overreport-memory  properties and mem_get_info claim 4x the memory
//   corrupt-dtoh       device-to-host copies of 2+ bytes flip one byte
//   abort-memset       a memset of exactly 3 bytes aborts the process
//   hang-elapsed       xal_event_elapsed_ms never returns
//   slow-through-xal   copies that libxal makes (the path through xal)
//                      take bytes / 10 GB/s longer; the conformance
//                      suite's direct calls to the table do not
// It loads the mock plugin from XAL_SHIM_TARGET (a path fixed at build
// time) and copies its table, replacing a few entries.
#include <xal/xal_backend.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

xal_backend_table_t g_table;
const xal_backend_table_t* g_mock = nullptr;

const char* defect() {
  const char* d = std::getenv("XAL_SHIM_DEFECT");
  return d != nullptr ? d : "";
}
bool has_defect(const char* name) { return std::strcmp(defect(), name) == 0; }

xal_status_t shim_describe(xal_backend_t* backend, xal_backend_describe_t* out) {
  xal_status_t s = XAL_SUCCESS;
  if (g_mock->describe != nullptr) s = g_mock->describe(backend, out);
  if (s == XAL_SUCCESS) {
    std::strncpy(out->name, "shim", sizeof(out->name) - 1);
    out->name[sizeof(out->name) - 1] = '\0';
  }
  return s;
}

xal_status_t shim_properties(xal_bdevice_t* device, xal_device_properties_t* out) {
  const xal_status_t s = g_mock->device_get_properties(device, out);
  if (s == XAL_SUCCESS && has_defect("overreport-memory")) {
    out->memory_bytes *= 4;
    out->max_allocation_bytes *= 4;
  }
  return s;
}

xal_status_t shim_mem_get_info(xal_bdevice_t* device, uint64_t* out_free,
                               uint64_t* out_total) {
  const xal_status_t s = g_mock->mem_get_info(device, out_free, out_total);
  if (s == XAL_SUCCESS && has_defect("overreport-memory")) {
    *out_free *= 4;
    *out_total *= 4;
  }
  return s;
}

// "slow-through-xal": sleeps bytes / 10 GB/s when the copy was called from
// libxal (`caller` is the entry's return address), as a core that adds
// cost to every copy would.
void maybe_slow(const void* caller, size_t bytes) {
  if (!has_defect("slow-through-xal")) return;
  Dl_info info{};
  if (dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return;
  const char* base = std::strrchr(info.dli_fname, '/');
  base = base != nullptr ? base + 1 : info.dli_fname;
  if (std::strncmp(base, "libxal.so", 9) != 0) return;
  std::this_thread::sleep_for(std::chrono::nanoseconds(bytes / 10));
}

xal_status_t shim_htod(xal_bstream_t* stream, xal_devptr_t dst, const void* src,
                       size_t bytes) {
  maybe_slow(__builtin_return_address(0), bytes);
  return g_mock->memcpy_htod(stream, dst, src, bytes);
}

xal_status_t shim_dtod(xal_bstream_t* stream, xal_devptr_t dst, xal_devptr_t src,
                       size_t bytes) {
  maybe_slow(__builtin_return_address(0), bytes);
  return g_mock->memcpy_dtod(stream, dst, src, bytes);
}

void flip_byte(void* user) { *static_cast<uint8_t*>(user) ^= 0x5A; }

xal_status_t shim_dtoh(xal_bstream_t* stream, void* dst, xal_devptr_t src,
                       size_t bytes) {
  maybe_slow(__builtin_return_address(0), bytes);
  xal_status_t s = g_mock->memcpy_dtoh(stream, dst, src, bytes);
  if (s == XAL_SUCCESS && bytes >= 2 && has_defect("corrupt-dtoh") &&
      g_mock->stream_enqueue_host_func != nullptr) {
    s = g_mock->stream_enqueue_host_func(stream, flip_byte,
                                         static_cast<uint8_t*>(dst) + bytes / 2);
  }
  return s;
}

xal_status_t shim_memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value,
                         size_t bytes) {
  if (bytes == 3 && has_defect("abort-memset")) std::abort();
  return g_mock->memset(stream, dst, value, bytes);
}

xal_status_t shim_elapsed(xal_bevent_t* start, xal_bevent_t* end, float* out_ms) {
  if (has_defect("hang-elapsed")) {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  return g_mock->event_elapsed_ms(start, end, out_ms);
}

}  // namespace

extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (g_mock == nullptr) {
    void* lib = ::dlopen(XAL_SHIM_TARGET, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    auto get = reinterpret_cast<xal_backend_get_fn>(
        ::dlsym(lib, XAL_BACKEND_ENTRY_SYMBOL));
    if (get == nullptr) return nullptr;
    g_mock = get(core_abi_version);
    if (g_mock == nullptr) return nullptr;
    std::memset(&g_table, 0, sizeof(g_table));
    std::memcpy(&g_table, g_mock,
                g_mock->struct_size < sizeof(g_table) ? g_mock->struct_size
                                                      : sizeof(g_table));
    g_table.struct_size = sizeof(g_table);
    g_table.name = "shim";
    g_table.describe = shim_describe;
    g_table.device_get_properties = shim_properties;
    g_table.mem_get_info = shim_mem_get_info;
    g_table.memcpy_htod = shim_htod;
    g_table.memcpy_dtoh = shim_dtoh;
    g_table.memcpy_dtod = shim_dtod;
    g_table.memset = shim_memset;
    g_table.event_elapsed_ms = shim_elapsed;
  }
  return &g_table;
}

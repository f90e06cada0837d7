// Backend (backend.h) and the entries of the instance (entries.h).
#include "backend.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <system_error>

#include "copy_engine.h"
#include "device_spec.h"
#include "entries.h"
#include "errors.h"
#include "xal_common/strings.hpp"

namespace xal::mock {

namespace {

// The ordinals in use by live instances of this process.
std::mutex g_ordinals_mutex;
std::set<uint32_t> g_ordinals;

}  // namespace

InstanceOrdinal::InstanceOrdinal() {
  std::lock_guard lock(g_ordinals_mutex);
  uint32_t v = 0;
  while (g_ordinals.count(v) != 0) ++v;
  g_ordinals.insert(v);  // may throw std::bad_alloc: nothing taken then
  value_ = v;
}

InstanceOrdinal::~InstanceOrdinal() {
  std::lock_guard lock(g_ordinals_mutex);
  g_ordinals.erase(value_);
}

Backend::Backend(const xal_backend_services_t* services,
                 std::vector<Profile> profiles, std::string spec,
                 CopySettings copies, double compute_scale)
    : services_(services), spec_(std::move(spec)), copies_(copies),
      compute_scale_(compute_scale) {
  devices_.reserve(profiles.size());
  for (size_t i = 0; i < profiles.size(); ++i)
    devices_.push_back(std::make_unique<Device>(*this, static_cast<uint32_t>(i),
                                                std::move(profiles[i])));
}

Backend::~Backend() {
  // Streams may wait on events of other devices: drain them all before any
  // device goes away.
  for (auto& device : devices_) device->synchronize(nullptr);
  devices_.clear();
  for (auto& [ptr, length] : host_allocations_) munmap(ptr, length);
}

bool Backend::owns(const Device* device) const {
  return device && &device->backend() == this;
}

void* Backend::host_alloc(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > SIZE_MAX - page)
    throw Error(XAL_ERROR_OUT_OF_HOST_MEMORY,
                "host_alloc: " + std::to_string(bytes) + " bytes is too large");
  const size_t length = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error(XAL_ERROR_OUT_OF_HOST_MEMORY,
                "host_alloc: cannot map " + std::to_string(bytes) + " bytes");
  (void)mlock(p, length);  // best effort: RLIMIT_MEMLOCK may refuse
  try {
    std::lock_guard lock(host_mutex_);
    host_allocations_.emplace(p, length);
  } catch (...) {
    munmap(p, length);
    throw;
  }
  return p;
}

bool Backend::host_free(void* ptr) {
  size_t length = 0;
  {
    std::lock_guard lock(host_mutex_);
    auto it = host_allocations_.find(ptr);
    if (it == host_allocations_.end()) return false;
    length = it->second;
    host_allocations_.erase(it);
  }
  munmap(ptr, length);
  return true;
}

void Backend::host_register(void* ptr, size_t bytes) {
  std::lock_guard lock(host_mutex_);
  if (!host_registered_.emplace(ptr, bytes).second)
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "host_register: " + hex(reinterpret_cast<uint64_t>(ptr)) +
                    " is already registered");
}

bool Backend::host_unregister(void* ptr) {
  std::lock_guard lock(host_mutex_);
  return host_registered_.erase(ptr) == 1;
}

// Entries (entries.h): the instance's lifecycle and its devices.

namespace {

// A configuration value through the core (the environment), or NULL.
const char* config(const xal_backend_services_t* services, const char* key) {
  return services->get_config ? services->get_config(key) : std::getenv(key);
}

// A byte-size setting ("8MiB") or "off" (nullopt); `fallback` when unset.
std::optional<size_t> size_setting(const xal_backend_services_t* services,
                                   const char* key, size_t fallback) {
  const char* value = config(services, key);
  if (!value || common::trim(value).empty()) return fallback;
  if (common::to_lower(common::trim(value)) == "off") return std::nullopt;
  std::string reason;
  const auto bytes = common::parse_bytes(value, &reason);
  if (!bytes)
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                std::string(key) + " \"" + value +
                    "\": expected a byte size such as \"8MiB\" or \"off\": " + reason);
  return static_cast<size_t>(*bytes);
}

// XAL_MOCK_COMPUTE_SCALE: a number >= 0 (0 or "off": gemm_f32 unpaced);
// kDefaultComputeScale when unset.
double compute_scale_setting(const xal_backend_services_t* services) {
  const char* value = config(services, "XAL_MOCK_COMPUTE_SCALE");
  if (!value || common::trim(value).empty()) return kDefaultComputeScale;
  const std::string text(common::trim(value));
  if (common::to_lower(text) == "off") return 0.0;
  char* end = nullptr;
  errno = 0;
  const double scale = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !(scale >= 0.0) ||
      scale > 1e6)
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                std::string("XAL_MOCK_COMPUTE_SCALE \"") + value +
                    "\": expected a number from 0 to 1e6 (e.g. \"1e-6\") or \"off\"");
  return scale;
}

}  // namespace

xal_status_t init(const xal_backend_init_args_t* args, xal_backend_t** out) {
  const xal_backend_services_t* services =
      args && args->struct_size >= sizeof(xal_backend_init_args_t) ? args->services
                                                                   : nullptr;
  return guarded(Entry{services}, "init", [&] {
    if (!args || args->struct_size < sizeof(xal_backend_init_args_t))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "init: args is NULL or its struct_size is too small");
    if (!services || services->struct_size < sizeof(xal_backend_services_t) ||
        !services->set_error)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "init: services table is NULL or incomplete");
    check_not_null(out, "init: out_backend");
    const char* spec_value = config(services, "XAL_MOCK_DEVICES");
    const std::string text = spec_value ? spec_value : "";
    Backend::CopySettings copies;
    copies.parallel_threshold =
        size_setting(services, "XAL_MOCK_PARALLEL_COPY", kDefaultParallelThreshold)
            .value_or(kNeverParallel);
    copies.inline_limit =
        size_setting(services, "XAL_MOCK_INLINE_COPY", kDefaultInlineLimit).value_or(0);
    const double compute_scale = compute_scale_setting(services);
    std::vector<Profile> profiles;
    try {
      profiles = parse_device_spec(text);
    } catch (const SpecError& e) {
      throw Error(XAL_ERROR_INVALID_ARGUMENT, e.what());
    }
    const std::string spec =
        common::trim(text).empty()
            ? std::string(kDefaultDeviceSpec) + " (default)"
            : "XAL_MOCK_DEVICES=" + text;
    std::unique_ptr<Backend> backend;
    try {
      backend = std::make_unique<Backend>(services, std::move(profiles), spec,
                                          copies, compute_scale);
    } catch (const std::system_error& e) {
      throw Error(XAL_ERROR_OUT_OF_HOST_MEMORY, std::string("init: ") + e.what());
    }
    *out = to_handle<xal_backend_t>(backend.release());
    return XAL_SUCCESS;
  });
}

xal_status_t shutdown(xal_backend_t* backend) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  const xal_backend_services_t* services = as_backend(backend)->services();
  return guarded(Entry{services}, "shutdown", [&] {
    std::unique_ptr<Backend> owned(as_backend(backend));
    owned.reset();
    return XAL_SUCCESS;
  });
}

xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(Entry{b.services()}, "describe", [&] {
    check_out_struct(out, "describe: out_describe");
    common::copy_string(out->name, "mock");
    common::copy_string(out->driver_version, std::string("xal-mock ") + kVersion);
    out->flags = XAL_BACKEND_FLAG_SIMULATED;
    common::copy_string(out->note, "simulated devices from profiles: " + b.spec());
    return XAL_SUCCESS;
  });
}

xal_status_t device_count(xal_backend_t* backend, uint32_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(Entry{b.services()}, "device_count", [&] {
    check_not_null(out, "device_count: out_count");
    *out = b.device_count();
    return XAL_SUCCESS;
  });
}

xal_status_t device_get(xal_backend_t* backend, uint32_t index, xal_bdevice_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(Entry{b.services()}, "device_get", [&] {
    check_not_null(out, "device_get: out_device");
    if (index >= b.device_count())
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "device_get: index " + std::to_string(index) + " is past the " +
                      std::to_string(b.device_count()) + " mock devices");
    *out = to_handle<xal_bdevice_t>(&b.device(index));
    return XAL_SUCCESS;
  });
}

}  // namespace xal::mock

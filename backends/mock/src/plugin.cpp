// The mock plugin: its table, xal_backend_get, lifecycle and device entries.
#include "plugin.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <system_error>

#include "copy_engine.hpp"
#include "device_spec.hpp"
#include "xal_common/strings.hpp"
#include "xalsupport/table.h"

namespace xal::mock {

namespace {

constexpr const char* kVersion = "1.1.0";

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
  return guarded(services, "init", [&] {
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
  return guarded(services, "shutdown", [&] {
    std::unique_ptr<Backend> owned(as_backend(backend));
    owned.reset();
    return XAL_SUCCESS;
  });
}

xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(b.services(), "describe", [&] {
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
  return guarded(b.services(), "device_count", [&] {
    check_not_null(out, "device_count: out_count");
    *out = b.device_count();
    return XAL_SUCCESS;
  });
}

xal_status_t device_get(xal_backend_t* backend, uint32_t index, xal_bdevice_t** out) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(b.services(), "device_get", [&] {
    check_not_null(out, "device_get: out_device");
    if (index >= b.device_count())
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "device_get: index " + std::to_string(index) + " is past the " +
                      std::to_string(b.device_count()) + " mock devices");
    *out = to_handle<xal_bdevice_t>(&b.device(index));
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_properties(xal_bdevice_t* device, xal_device_properties_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "device_get_properties", [&] {
    check_out_struct(out, "device_get_properties: out_properties");
    d.fill_properties(*out);
    return XAL_SUCCESS;
  });
}

xal_status_t device_synchronize(xal_bdevice_t* device) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "device_synchronize", [&] {
    std::string message;
    const xal_status_t s = d.synchronize(&message);
    if (s != XAL_SUCCESS) throw Error(s, message);
    return XAL_SUCCESS;
  });
}

xal_status_t device_reset(xal_bdevice_t* device) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "device_reset", [&] {
    d.reset();
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_health(xal_bdevice_t* device, xal_device_health_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "device_get_health", [&] {
    check_out_struct(out, "device_get_health: out_health");
    out->state = XAL_HEALTH_OK;
    out->sticky_status = XAL_SUCCESS;
    out->vendor_code = 0;
    common::copy_string(out->message, "simulated device: healthy");
    return XAL_SUCCESS;
  });
}

// Accepts the struct from its first public version on (ABI 1.0 ended
// before the job fields, as the core's xal_device_get_metrics takes it) and
// writes nothing past the caller's struct_size.
xal_status_t device_get_metrics(xal_bdevice_t* device, xal_device_metrics_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(services_of(&d), "device_get_metrics", [&] {
    constexpr size_t kFirstSize = XAL_DEVICE_METRICS_SIZE_1_0;
    check_not_null(out, "device_get_metrics: out_metrics");
    if (out->struct_size < kFirstSize)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "device_get_metrics: out_metrics->struct_size is " +
                      std::to_string(out->struct_size) + ", expected at least " +
                      std::to_string(kFirstSize));
    // Filled in a full copy that starts as the caller's fields, so that
    // what the caller's struct holds and the mock does not set stays.
    const size_t size = std::min(out->struct_size, sizeof(xal_device_metrics_t));
    xal_device_metrics_t m{};
    std::memcpy(&m, out, size);
    d.fill_metrics(m);
    std::memcpy(out, &m, size);
    return XAL_SUCCESS;
  });
}

void* device_ptr_to_host(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes) {
  if (!device) return nullptr;
  return as_device(device)->host_address(ptr, bytes);
}

// Every entry above is named after its table entry; the table is made from
// the entry list (xalsupport/table.h).
using namespace xal::support::absent_entries;

namespace {

constexpr xal_backend_table_t make_table() {
  xal_backend_table_t t = support::table_header("mock", kVersion);
  XAL_SUPPORT_TABLE_FILL(t, xal::mock);
  XAL_SUPPORT_TABLE_REQUIRE(xal::mock);
  return t;
}

constexpr xal_backend_table_t kTable = make_table();

}  // namespace

}  // namespace xal::mock

// The one exported symbol: the table, or NULL for a core of another major
// (the loader then names both versions). Static storage; thread-safe.
extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;
  return &xal::mock::kTable;
}

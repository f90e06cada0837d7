// Memory quotas.
#include "quota.hpp"

#include <mutex>

#include "quota_shared.hpp"
#include "partition.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

using xal::common::format_bytes;
using xal::common::parse_bytes;
using xal::common::parse_uint;
using xal::common::split;
using xal::common::trim;

std::optional<MemoryLimits> parse_memory_limits(std::string_view text,
                                                std::string* error) {
  MemoryLimits out;
  if (trim(text).empty()) return out;
  if (text.find('=') == std::string_view::npos) {
    std::string why;
    auto v = parse_bytes(text, &why);
    if (!v) {
      *error = why;
      return std::nullopt;
    }
    out.all = *v;
    return out;
  }
  for (const auto& item : split(text, ",")) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      *error = cat("'", item, "' is not index=size");
      return std::nullopt;
    }
    auto idx = parse_uint(trim(std::string_view(item).substr(0, eq)));
    std::string why;
    auto v = parse_bytes(std::string_view(item).substr(eq + 1), &why);
    if (!idx || *idx > 0xffffffffu) {
      *error = cat("'", item, "': device index expected before '='");
      return std::nullopt;
    }
    if (!v) {
      *error = cat("'", item, "': ", why);
      return std::nullopt;
    }
    out.devices[static_cast<uint32_t>(*idx)] = *v;
  }
  return out;
}

void apply_memory_limits(Runtime& rt, const MemoryLimits& limits) {
  for (DeviceObj* d : rt.devices) {
    if (limits.all) d->state->limit.store(*limits.all);
    auto it = limits.devices.find(d->index);
    if (it != limits.devices.end()) d->state->limit.store(it->second);
  }
  for (const auto& [idx, v] : limits.devices)
    if (idx >= rt.devices.size())
      log_message(XAL_LOG_WARNING,
                  cat("XAL_MEMORY_LIMIT names device ", idx, " but only ",
                      rt.devices.size(), " devices exist").c_str());
}

xal_status_t quota_reserve(DeviceObj* device, uint64_t bytes) {
  DeviceState& st = *device->state;
  const uint64_t before = st.reserved.fetch_add(bytes);
  // Sequentially consistent, as in xal_device_set_memory_limit: this adds
  // and then reads the limit, that stores the limit and then reads the use,
  // so at least one of the two sees the other.
  const uint64_t limit = st.limit.load();
  if (limit != 0 && (before + bytes < before || before + bytes > limit)) {
    st.reserved.fetch_sub(bytes);
    return fail(device, XAL_ERROR_OUT_OF_MEMORY,
                cat("allocation of ", bytes, " bytes on device ", device->index,
                    " would pass its memory limit of ", format_bytes(limit),
                    " (", format_bytes(before), " in use)"));
  }
  xal_status_t shared = XAL_ERROR_INTERNAL;
  try {
    shared = shared_quota_reserve(device, bytes);
  } catch (...) {
    st.reserved.fetch_sub(bytes);
    throw;
  }
  if (shared != XAL_SUCCESS) st.reserved.fetch_sub(bytes);
  return shared;
}

void quota_release(DeviceObj* device, uint64_t bytes) noexcept {
  device->state->reserved.fetch_sub(bytes);
  shared_quota_release(device, bytes);
}

namespace {

// Serialises xal_device_set_memory_limit, so that the ledger's limit and the
// device's own are written in the same order by concurrent calls.
std::mutex g_limit_mu;

}  // namespace

}  // namespace xal::core

using namespace xal::core;

extern "C" {

// Sets the device's quota (0 removes it). Thread-safe.
XAL_API xal_status_t xal_device_set_memory_limit(xal_device_t device,
                                                 uint64_t bytes) {
  return entry("xal_device_set_memory_limit", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (xal_status_t r = partition_limit(d, bytes, &bytes); r) return r;
    std::lock_guard lock(g_limit_mu);
    DeviceState& st = *d->state;
    // Stores the limit, then reads the use (see quota_reserve); an allocation
    // racing with a refused limit may see it for that moment and fail.
    uint64_t used = 0;
    bool refused = false;
    auto commit = [&] {
      const uint64_t old = st.limit.exchange(bytes);
      used = st.reserved.load();
      refused = bytes != 0 && used > bytes;
      if (refused) st.limit.store(old);
      return !refused;
    };
    if (xal_status_t s = shared_quota_set_limit(d, bytes, commit); s != XAL_SUCCESS)
      return s;
    if (refused)
      return fail(d, XAL_ERROR_OUT_OF_MEMORY,
                  cat("cannot set a memory limit of ", bytes, " bytes on device ",
                      d->index, ": ", used, " bytes are already allocated"));
    return XAL_SUCCESS;
  });
}

// Free and total memory, quota applied. Thread-safe.
XAL_API xal_status_t xal_mem_get_info(xal_device_t device, uint64_t* out_free,
                                      uint64_t* out_total) {
  return entry("xal_mem_get_info", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_free) return null_argument("out_free");
    if (!out_total) return null_argument("out_total");
    uint64_t free_b = 0, total_b = 0;
    const xal_status_t s = d->hdr.table->mem_get_info(d->native, &free_b, &total_b);
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    uint64_t limit = d->state->limit.load();
    uint64_t used = d->state->reserved.load();
    if (LedgerUsage job; shared_quota_usage(d, &job)) {
      limit = job.limit;  // the smallest limit of the job's processes
      used = job.used;
    }
    if (limit != 0) {
      const uint64_t left = used >= limit ? 0 : limit - used;
      free_b = std::min(left, free_b);
      total_b = limit;
    }
    *out_free = free_b;
    *out_total = total_b;
    return XAL_SUCCESS;
  });
}

}  // extern "C"

// xal_device_partition, xal_device_unpartition, xal_device_get_compute_share,
// xal_partition_config_errors.
#include <cstring>

#include "error.hpp"
#include "partition.hpp"

using namespace xal::core;

extern "C" {

// Splits a card; see xal.h. Serialised against itself (rt->partition_mu).
XAL_API xal_status_t xal_device_partition(xal_device_t parent, uint32_t n,
                                          const xal_partition_desc_t* descs,
                                          xal_device_t* out_partitions) {
  return entry("xal_device_partition", [&] {
    Runtime* rt = runtime();
    DeviceObj* d = as_device(parent);
    if (!d || !rt) return bad_handle(parent, "parent");
    if (n == 0)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT, "n is 0 (no partitions)");
    if (n > 64)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("n is ", n, " (at most 64 partitions of one card)"));
    XAL_CHECK_STRUCT(descs, "descs");
    const size_t stride = descs[0].struct_size;
    if (stride > 4096)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("descs[0].struct_size is ", stride,
                      " (not the size of a xal_partition_desc_t)"));
    std::vector<PartitionRequest> parts(n);
    for (uint32_t i = 0; i < n; ++i) {
      const auto* di = reinterpret_cast<const xal_partition_desc_t*>(
          reinterpret_cast<const char*>(descs) + i * stride);
      if (di->struct_size != stride)
        return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                    cat("descs[", i, "].struct_size is ", di->struct_size,
                        ", not that of descs[0] (", stride, ")"));
      if (di->memory_bytes == 0)
        return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                    cat("descs[", i, "].memory_bytes is 0"));
      if (di->compute_percent > 100)
        return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                    cat("descs[", i, "].compute_percent is ",
                        di->compute_percent, " (at most 100)"));
      parts[i] = {di->memory_bytes, di->compute_percent};
    }
    std::lock_guard lock(rt->partition_mu);
    uint64_t card_bytes = 0;
    if (xal_status_t s = card_memory(d, &card_bytes); s) return s;
    if (const std::string why = resolve_shares(parts, card_bytes); !why.empty())
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("cannot partition device ", d->index, ": ", why));
    std::vector<DeviceObj*> made;
    if (xal_status_t s = create_partitions(*rt, d, parts, &made); s) return s;
    if (out_partitions)
      for (uint32_t i = 0; i < n; ++i) out_partitions[i] = to_handle<xal_device_t>(made[i]);
    return XAL_SUCCESS;
  });
}

// Undoes the partitions of a card; see xal.h.
XAL_API xal_status_t xal_device_unpartition(xal_device_t parent) {
  return entry("xal_device_unpartition", [&] {
    Runtime* rt = runtime();
    DeviceObj* d = as_device(parent);
    if (!d || !rt) return bad_handle(parent, "parent");
    std::lock_guard lock(rt->partition_mu);
    return remove_partitions(*rt, d);
  });
}

// Thread-safe.
XAL_API xal_status_t xal_device_get_compute_share(xal_device_t device,
                                                  uint32_t* out_percent) {
  return entry("xal_device_get_compute_share", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_percent) return null_argument("out_percent");
    *out_percent = d->state->share ? d->state->share->percent() : 100;
    return XAL_SUCCESS;
  });
}

// Thread-safe, also against xal_shutdown.
XAL_API xal_status_t xal_partition_config_errors(char* out_text, size_t size,
                                                 size_t* out_length) {
  return entry("xal_partition_config_errors", [&] {
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!out_text && size > 0) return null_argument("out_text");
    std::string text;
    {
      std::lock_guard lock(rt->partition_mu);
      for (const auto& e : rt->partition_errors)
        text += (text.empty() ? "" : "\n") + e;
    }
    if (size > 0) {
      const size_t n = std::min(size - 1, text.size());
      std::memcpy(out_text, text.data(), n);
      out_text[n] = 0;
    }
    if (out_length) *out_length = text.size();
    return XAL_SUCCESS;
  });
}

}  // extern "C"

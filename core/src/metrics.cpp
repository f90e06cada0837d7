// xal_device_get_metrics: backend sensors merged with the core's counters.
#include <cstddef>
#include <cstring>
#include <vector>

#include "error.hpp"
#include "partition.hpp"
#include "quota_shared.hpp"
#include "runtime.hpp"

using namespace xal::core;

namespace {
// The struct's size in ABI 1.0: everything up to the job fields.
constexpr size_t kMetricsFirstSize = XAL_DEVICE_METRICS_SIZE_1_0;
// xal_errors has room for the statuses of ABI 1.0 only; a later status is
// counted by the core (Counters::errors) but not reported in it.
constexpr int kErrorSlots =
    XAL_STATUS_COUNT < XAL_METRICS_ERROR_SLOTS ? XAL_STATUS_COUNT : XAL_METRICS_ERROR_SLOTS;
}  // namespace

extern "C" {

// Fills the caller's struct. Thread-safe.
XAL_API xal_status_t xal_device_get_metrics(xal_device_t device,
                                            xal_device_metrics_t* out_metrics) {
  return entry("xal_device_get_metrics", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!struct_ok_from(out_metrics, kMetricsFirstSize))
      return bad_struct(out_metrics, out_metrics ? out_metrics->struct_size : 0,
                        kMetricsFirstSize, "out_metrics");
    const xal_backend_table_t* t = d->hdr.table;
    xal_device_metrics_t m{};
    m.struct_size = sizeof m;
    if (t->device_get_metrics) {
      const xal_status_t s = t->device_get_metrics(d->native, &m);
      if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
      m.valid &= ~XAL_METRIC_XAL_COUNTERS;
    }
    DeviceState& st = *d->state;
    const Counters& c = st.counters;
    uint64_t free_b = 0, total_b = 0;
    if (t->mem_get_info(d->native, &free_b, &total_b) == XAL_SUCCESS) {
      if (!(m.valid & XAL_METRIC_MEMORY_TOTAL)) m.memory_total_bytes = total_b;
      if (!(m.valid & XAL_METRIC_MEMORY_USED))
        m.memory_used_bytes = total_b >= free_b ? total_b - free_b : 0;
      m.valid |= XAL_METRIC_MEMORY_TOTAL | XAL_METRIC_MEMORY_USED;
    } else {
      clear_pending();
    }
    partition_metrics(d, &m);
    m.memory_limit_bytes = st.limit.load();
    if (LedgerUsage job; shared_quota_usage(d, &job)) {
      m.memory_limit_bytes = job.limit;  // XAL_QUOTA_LEDGER: the job's limit
      m.job_memory_used_bytes = job.used;
      m.job_processes = job.processes;
      m.valid |= XAL_METRIC_JOB_MEMORY;
    }
    m.valid |= XAL_METRIC_MEMORY_LIMIT;
    if (!(m.valid & XAL_METRIC_HEALTH)) {
      m.health = XAL_HEALTH_OK;
      if (t->device_get_health) {
        xal_device_health_t h{};
        h.struct_size = sizeof h;
        if (t->device_get_health(d->native, &h) == XAL_SUCCESS) m.health = h.state;
        else clear_pending();
      }
      m.valid |= XAL_METRIC_HEALTH;
    }
    m.xal_bytes_htod = c.bytes_htod.load();
    m.xal_bytes_dtoh = c.bytes_dtoh.load();
    m.xal_bytes_dtod = c.bytes_dtod.load();
    m.xal_bytes_peer = c.bytes_peer.load();
    m.xal_collective_calls = c.collective_calls.load();
    m.xal_collective_bytes = c.collective_bytes.load();
    m.xal_alloc_bytes_current = c.alloc_bytes_current.load();
    m.xal_alloc_bytes_peak = c.alloc_bytes_peak.load();
    m.xal_alloc_count_current = c.alloc_count_current.load();
    for (int i = 0; i < kErrorSlots; ++i) m.xal_errors[i] = c.errors[i].load();
    m.valid |= XAL_METRIC_XAL_COUNTERS;
    copy_out_struct(out_metrics, m);
    return XAL_SUCCESS;
  });
}

// Lists the job's processes on the card from the ledger. Thread-safe.
XAL_API xal_status_t xal_device_get_job_processes(xal_device_t device, uint32_t capacity,
                                                  xal_job_process_t* out_processes,
                                                  uint32_t* out_count) {
  return entry("xal_device_get_job_processes", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_count) return null_argument("out_count");
    if (capacity > 0 && !struct_ok_from(out_processes, XAL_JOB_PROCESS_SIZE_MEMORY))
      return bad_struct(out_processes, out_processes ? out_processes->struct_size : 0,
                        XAL_JOB_PROCESS_SIZE_MEMORY, "out_processes");
    std::vector<LedgerProcess> procs;
    if (!shared_quota_processes(d, &procs))
      return fail(d, XAL_ERROR_NOT_SUPPORTED,
                  cat("device ", d->index, " is not in a shared quota ledger (set "
                      "XAL_QUOTA_LEDGER=NAME for every process of the job)"));
    const size_t stride = capacity > 0 ? out_processes->struct_size : 0;
    auto* base = reinterpret_cast<unsigned char*>(out_processes);
    for (size_t i = 0; i < procs.size() && i < capacity; ++i) {
      xal_job_process_t e{};
      e.struct_size = stride;
      e.pid = procs[i].pid;
      e.is_self = procs[i].self ? 1 : 0;
      e.memory_bytes = procs[i].bytes;
      e.limit_bytes = procs[i].limit;
      e.busy_ns = procs[i].usage.busy_ns;
      e.utilization_percent = procs[i].utilization;
      e.bytes_copied = procs[i].usage.bytes_copied;
      e.collective_calls = procs[i].usage.collective_calls;
      e.collective_bytes = procs[i].usage.collective_bytes;
      e.allocations = procs[i].usage.allocations;
      e.errors = procs[i].usage.errors;
      // Every element takes element 0's struct_size (the caller's version).
      std::memcpy(base + i * stride, &e, stride < sizeof e ? stride : sizeof e);
    }
    *out_count = static_cast<uint32_t>(procs.size());
    return XAL_SUCCESS;
  });
}

}  // extern "C"

// xal_comm_create_transport (xal/xal_transport.h): communicators whose ranks
// span processes, over a transport another library provides (libxal_mpi).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "collectives/transport_comm.hpp"
#include "comm.hpp"
#include "error.hpp"
#include "runtime.hpp"

using namespace xal::core;

namespace {

// The size of the table's first version (up to and including `release`):
// a transport built against that header is still accepted.
constexpr size_t kFirstVersionSize =
    offsetof(xal_comm_transport_t, release) + sizeof(xal_comm_transport_t::release);

// The caller's table at this header's size: entries past its struct_size
// read as NULL.
xal_comm_transport_t current_version(const xal_comm_transport_t& t) {
  xal_comm_transport_t out{};
  std::memcpy(&out, &t, std::min(t.struct_size, sizeof out));
  out.struct_size = sizeof out;
  return out;
}

// Checks the transport the caller filled; `n` local devices.
xal_status_t check_transport(const xal_comm_transport_t* t, uint32_t n) {
  if (!t) return null_argument("transport");
  if (t->struct_size < kFirstVersionSize)
    return bad_struct(t, t->struct_size, kFirstVersionSize, "transport");
  if (!t->allreduce || !t->broadcast || !t->allgatherv || !t->alltoallv || !t->abort)
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                "transport: allreduce, broadcast, allgatherv, alltoallv and abort are required");
  if (t->process_count == 0 || t->process_rank >= t->process_count)
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                cat("transport: process_rank ", t->process_rank, " is out of range (",
                    t->process_count, " processes)"));
  if (!t->ranks_per_process) return null_argument("transport->ranks_per_process");
  uint64_t total = 0;
  for (uint32_t p = 0; p < t->process_count; ++p) {
    if (t->ranks_per_process[p] == 0)
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("transport: process ", p, " has no devices"));
    total += t->ranks_per_process[p];
  }
  if (total > 0xffffffffu)
    return fail(XAL_ERROR_INVALID_ARGUMENT, cat("transport: ", total, " ranks are too many"));
  if (t->ranks_per_process[t->process_rank] != n)
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                cat("transport: ranks_per_process[", t->process_rank, "] is ",
                    t->ranks_per_process[t->process_rank], " but ", n, " devices were given"));
  return XAL_SUCCESS;
}

}  // namespace

extern "C" {

XAL_API xal_status_t xal_comm_create_transport(const xal_device_t* devs, uint32_t n,
                                               const xal_comm_options_t* options,
                                               const xal_comm_transport_t* transport,
                                               xal_comm_t* out_comms) {
  return entry("xal_comm_create_transport", [&] {
    Runtime* rt = runtime();
    if (!rt) return not_initialized();
    if (!devs) return null_argument("devs");
    if (!out_comms) return null_argument("out_comms");
    if (n == 0) return fail(XAL_ERROR_INVALID_ARGUMENT, "n is 0 (no devices)");
    if (options) XAL_CHECK_STRUCT(options, "options");
    if (xal_status_t s = check_transport(transport, n); s) return s;
    const xal_comm_transport_t table = current_version(*transport);
    std::vector<DeviceObj*> devices;
    std::set<DeviceObj*> seen;
    for (uint32_t i = 0; i < n; ++i) {
      DeviceObj* d = as_device(devs[i]);
      if (!d) return bad_handle(devs[i], cat("devs[", i, "]").c_str());
      if (!seen.insert(d).second)
        return fail(XAL_ERROR_INVALID_ARGUMENT,
                    cat("device ", d->index, " is listed twice (devs[", i, "])"));
      devices.push_back(d);
    }
    const uint32_t timeout = comm_timeout_from(options);
    std::vector<std::unique_ptr<CommImpl>> impls;
    if (xal_status_t s = create_transport_comms(devices, timeout, table, impls); s) return s;
    uint32_t base = 0;
    uint32_t size = 0;
    for (uint32_t p = 0; p < transport->process_count; ++p) {
      if (p < transport->process_rank) base += transport->ranks_per_process[p];
      size += transport->ranks_per_process[p];
    }
    std::vector<CommObj*> made;
    try {
      for (uint32_t i = 0; i < n; ++i) {
        CommObj* c = make_handle<CommObj>(devices[i]->hdr.table);
        made.push_back(c);
        c->device = devices[i];
        c->rank = base + i;
        c->size = size;
        c->timeout_ms = timeout;
        c->impl = std::move(impls[i]);
      }
      std::lock_guard lock(rt->comms_mu);
      rt->comms.insert(made.begin(), made.end());
    } catch (...) {
      for (CommObj* c : made) destroy_handle(c);
      throw;
    }
    adopt_transport(*made[0]->impl);
    for (uint32_t i = 0; i < n; ++i) out_comms[i] = to_handle<xal_comm_t>(made[i]);
    return XAL_SUCCESS;
  });
}

XAL_API xal_status_t xal_transport_set_error(const char* operation, xal_status_t status,
                                             const char* message) {
  const std::string op = operation ? operation : "";
  return entry("xal_transport_set_error", [&] {
    if (status >= 0)
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("xal_transport_set_error: status ", status, " is not an error"));
    t_operation = op.c_str();
    const xal_status_t s = fail(status, message ? message : "");
    t_operation = "xal_transport_set_error";
    return s;
  });
}

}  // extern "C"

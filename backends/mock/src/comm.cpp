// The mock plugin's native collectives entries (see comm_engine.h).
#include <algorithm>
#include <memory>
#include <vector>

#include "comm_engine.h"
#include "device.h"
#include "entries.h"
#include "xal_common/reduce.hpp"

namespace xal::mock {

namespace {

Comm* as_comm(xal_bcomm_t* h) { return reinterpret_cast<Comm*>(h); }

[[noreturn]] void send_elems_overflow(const char* name, size_t count) {
  throw Error(XAL_ERROR_OUT_OF_BOUNDS,
              std::string(name) + ": count " + std::to_string(count) +
                  " overflows the address space");
}

const xal_backend_services_t* services_of_comm(Comm* c) {
  return services_of(&c->clique->device(c->rank));
}

// Checks the call and queues rank's part on `stream`.
xal_status_t enqueue(xal_bcomm_t* comm, xal_bstream_t* stream, common::CollDesc op,
                     xal_devptr_t send, xal_devptr_t recv) {
  XAL_MOCK_REQUIRE_HANDLE(comm);
  XAL_MOCK_REQUIRE_HANDLE(stream);
  Comm* c = as_comm(comm);
  Stream& s = *as_stream(stream);
  const char* name = common::coll_name(op.kind);
  return guarded(Entry{services_of_comm(c)}, name, [&] {
    Device& dev = c->clique->device(c->rank);
    if (&s.device() != &dev)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  std::string(name) + ": the stream is not on the device of rank " +
                      std::to_string(c->rank));
    std::string why;
    const xal_status_t st = common::check_coll_dtype_op(op, &why);
    if (st != XAL_SUCCESS) throw Error(st, std::string(name) + ": " + why);
    if (op.root >= c->clique->size())
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  std::string(name) + ": root " + std::to_string(op.root) + " is out of range");
    try {
      c->clique->rendezvous().throw_if_broken(op.kind);
    } catch (const common::CollError& e) {
      throw Error(e.status(), e.what());
    }
    const uint32_t n = c->clique->size();
    const size_t send_elems = common::coll_in_elements(op, c->rank, n);
    const size_t recv_elems = common::coll_out_elements(op, c->rank, n);
    if (op.count > SIZE_MAX / n) send_elems_overflow(name, op.count);
    const size_t es = common::dtype_size(op.dtype);
    size_t bytes = 0;
    if (__builtin_mul_overflow(std::max(send_elems, recv_elems), es, &bytes))
      send_elems_overflow(name, op.count);
    common::HostPart part{op, nullptr, nullptr};
    if (send_elems)
      part.in = dev.checked_address(send, send_elems * es, (std::string(name) + ": send").c_str());
    if (recv_elems)
      part.out = dev.checked_address(recv, recv_elems * es, (std::string(name) + ": recv").c_str());
    std::shared_ptr<Clique> clique = c->clique;
    const uint32_t rank = c->rank;
    s.enqueue({[clique, rank, part] { clique->run(rank, part); }, true});
    return XAL_SUCCESS;
  });
}

}  // namespace

xal_status_t comm_create(xal_bdevice_t* const* devices, uint32_t n,
                         const xal_bcomm_options_t* options, xal_bcomm_t** out) {
  if (!devices || n == 0 || !devices[0]) return XAL_ERROR_INVALID_ARGUMENT;
  return guarded(Entry{services_of(as_device(devices[0]))}, "comm_create", [&] {
    check_not_null(out, "comm_create: out_comms");
    std::vector<Device*> devs;
    for (uint32_t i = 0; i < n; ++i) {
      check_not_null(devices[i], "comm_create: device");
      devs.push_back(as_device(devices[i]));
    }
    const uint32_t timeout = options && options->timeout_ms ? options->timeout_ms : 30000;
    auto clique = std::make_shared<Clique>(std::move(devs), timeout);
    std::vector<std::unique_ptr<Comm>> made;
    for (uint32_t i = 0; i < n; ++i) made.push_back(std::make_unique<Comm>(Comm{clique, i}));
    for (uint32_t i = 0; i < n; ++i) out[i] = to_handle<xal_bcomm_t>(made[i].release());
    return XAL_SUCCESS;
  });
}

xal_status_t comm_destroy(xal_bcomm_t* comm) {
  XAL_MOCK_REQUIRE_HANDLE(comm);
  std::unique_ptr<Comm> owned(as_comm(comm));
  return XAL_SUCCESS;
}

xal_status_t comm_abort(xal_bcomm_t* comm) {
  XAL_MOCK_REQUIRE_HANDLE(comm);
  as_comm(comm)->clique->rendezvous().abort();
  return XAL_SUCCESS;
}

xal_status_t comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(comm);
  if (!out) return XAL_ERROR_INVALID_ARGUMENT;
  *out = as_comm(comm)->clique->rendezvous().first_error();
  return XAL_SUCCESS;
}

// Collectives are queued on streams and never block the caller, so one
// thread can issue every rank's call without grouping.
xal_status_t group_start(xal_backend_t*) { return XAL_SUCCESS; }
xal_status_t group_end(xal_backend_t*) { return XAL_SUCCESS; }

xal_status_t allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                       xal_dtype_t dtype, xal_op_t op, xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(common::CollKind::kAllreduce, count, dtype, op, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                       xal_dtype_t dtype, uint32_t root, xal_bstream_t* stream) {
  const common::CollDesc d =
      common::coll_desc(common::CollKind::kBroadcast, count, dtype, XAL_OP_SUM, root);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                    xal_dtype_t dtype, xal_op_t op, uint32_t root, xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(common::CollKind::kReduce, count, dtype, op, root);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                       size_t send_count, xal_dtype_t dtype, xal_bstream_t* stream) {
  const common::CollDesc d =
      common::coll_desc(common::CollKind::kAllgather, send_count, dtype, XAL_OP_SUM, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t recv_count, xal_dtype_t dtype, xal_op_t op,
                            xal_bstream_t* stream) {
  const common::CollDesc d =
      common::coll_desc(common::CollKind::kReduceScatter, recv_count, dtype, op, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                      xal_dtype_t dtype, xal_bstream_t* stream) {
  const common::CollDesc d =
      common::coll_desc(common::CollKind::kAlltoall, count, dtype, XAL_OP_SUM, 0);
  return enqueue(comm, stream, d, send, recv);
}

}  // namespace xal::mock

// Table entries: modules, kernels and collectives.
#include <memory>
#include <vector>

#include "backend.hpp"

namespace xal::fault {
namespace {

xal_status_t unsupported(FaultBackend* b, const char* what) {
  return b->report(XAL_ERROR_NOT_SUPPORTED,
                   "fault: target backend '" + b->target_name +
                       "' does not support " + what);
}

xal_status_t dead(FaultBackend* b, const char* what) {
  return b->report(XAL_ERROR_INVALID_HANDLE,
                   std::string("fault: the ") + what +
                       " was invalidated by device_reset");
}

uint64_t dtype_size(xal_dtype_t dtype) {
  switch (dtype) {
    case XAL_DTYPE_I8: case XAL_DTYPE_U8: return 1;
    case XAL_DTYPE_F16: case XAL_DTYPE_BF16: return 2;
    case XAL_DTYPE_I32: case XAL_DTYPE_U32: case XAL_DTYPE_F32: return 4;
    case XAL_DTYPE_I64: case XAL_DTYPE_U64: case XAL_DTYPE_F64: return 8;
    default: return 0;
  }
}

xal_status_t fault_module_load(xal_bdevice_t* device, uint32_t format,
                               const void* image, size_t bytes,
                               xal_bmodule_t** out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "module_load", [&] {
    const auto s = b->before(Op::module_load, d, nullptr, bytes, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    if (b->t.module_load == nullptr) return unsupported(b, "kernels");
    auto w = std::make_unique<FaultModule>();
    w->device = d;
    const auto c = b->t.module_load(d->target, format, image, bytes, &w->target);
    if (c != XAL_SUCCESS) return c;
    *out = reinterpret_cast<xal_bmodule_t*>(b->modules.add(std::move(w)));
    return XAL_SUCCESS;
  });
}

xal_status_t fault_module_unload(xal_bmodule_t* module) {
  FaultModule* m = as_fault(module);
  FaultBackend* b = m->device->backend;
  return guarded(FaultEntry{b}, "module_unload", [&] {
    // The core drops the module whatever module_unload returns
    // (xal_backend.h, "Releases"): an injected error is returned, but the
    // module still goes.
    const auto injected = b->before(Op::module_unload, m->device, nullptr,
                                    std::nullopt, 0, nullptr);
    auto owned = b->modules.take(m);
    if (!owned || owned->dead.load() || b->t.module_unload == nullptr) {
      return injected;
    }
    const auto s = b->t.module_unload(owned->target);
    return s != XAL_SUCCESS ? s : injected;  // the detail of the one returned
  });
}

xal_status_t fault_kernel_get(xal_bmodule_t* module, const char* name,
                              xal_bkernel_t** out) {
  FaultModule* m = as_fault(module);
  FaultBackend* b = m->device->backend;
  return guarded(FaultEntry{b}, "kernel_get", [&] {
    if (m->dead.load()) return dead(b, "module");
    const auto s =
        b->before(Op::kernel_get, m->device, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    if (b->t.kernel_get == nullptr) return unsupported(b, "kernels");
    xal_bkernel_t* k = nullptr;
    const auto c = b->t.kernel_get(m->target, name, &k);
    if (c != XAL_SUCCESS) return c;
    std::lock_guard lock(m->mutex);
    auto& slot = m->kernels[k];
    if (!slot) slot = std::make_unique<FaultKernel>(FaultKernel{m, k});
    *out = reinterpret_cast<xal_bkernel_t*>(slot.get());
    return XAL_SUCCESS;
  });
}

xal_status_t fault_kernel_launch(xal_bstream_t* stream, xal_bkernel_t* kernel,
                                 const xal_launch_config_t* config,
                                 void** args, size_t arg_count) {
  FaultStream* w = as_fault(stream);
  FaultKernel* k = as_fault(kernel);
  FaultBackend* b = w->device->backend;
  return guarded(FaultEntry{b}, "kernel_launch", [&] {
    if (w->dead.load()) return dead(b, "stream");
    if (k->module->dead.load()) return dead(b, "module");
    const auto s = b->before(Op::kernel_launch, w->device, nullptr,
                             std::nullopt, 0, nullptr, nullptr, w);
    if (s != XAL_SUCCESS) return s;
    if (b->t.kernel_launch == nullptr) return unsupported(b, "kernels");
    return b->t.kernel_launch(w->target, k->target, config, args, arg_count);
  });
}

xal_status_t fault_comm_create(xal_bdevice_t* const* devices, uint32_t n,
                               const xal_bcomm_options_t* options,
                               xal_bcomm_t** out_comms) {
  FaultDevice* first = as_fault(devices[0]);
  FaultBackend* b = first->backend;
  return guarded(FaultEntry{b}, "comm_create", [&] {
    std::vector<FaultDevice*> members(n);
    for (uint32_t i = 0; i < n; ++i) members[i] = as_fault(devices[i]);
    // One call, one match of the rules, whatever the number of devices.
    const auto s = b->before_devices(Op::comm_create, members);
    if (s != XAL_SUCCESS) return s;
    if (b->t.comm_create == nullptr) return unsupported(b, "collectives");
    std::vector<xal_bdevice_t*> targets(n);
    for (uint32_t i = 0; i < n; ++i) targets[i] = as_fault(devices[i])->target;
    std::vector<xal_bcomm_t*> comms(n, nullptr);
    const auto c = b->t.comm_create(targets.data(), n, options, comms.data());
    if (c != XAL_SUCCESS) return c;
    const auto group = std::make_shared<CommGroup>();
    for (uint32_t i = 0; i < n; ++i) {
      auto w = std::make_unique<FaultComm>();
      w->device = as_fault(devices[i]);
      w->group = group;
      w->target = comms[i];
      w->rank = i;
      w->size = n;
      w->timeout_ms = options != nullptr ? options->timeout_ms : 0;
      out_comms[i] = reinterpret_cast<xal_bcomm_t*>(b->comms.add(std::move(w)));
    }
    return XAL_SUCCESS;
  });
}

xal_status_t fault_comm_destroy(xal_bcomm_t* comm) {
  FaultComm* c = as_fault(comm);
  FaultBackend* b = c->device->backend;
  return guarded(FaultEntry{b}, "comm_destroy", [&] {
    // Released whatever it returns, as module_unload.
    const auto injected = b->before(Op::comm_destroy, c->device, nullptr,
                                    std::nullopt, 0, nullptr);
    // Also after a reset of its device: a reset aborts communicators but
    // does not end them in the target (xal_backend.h, device_reset), so it is destroyed
    // there as well, else the target's communicator would leak.
    auto owned = b->comms.take(c);
    if (!owned || b->t.comm_destroy == nullptr) return injected;
    const auto s = b->t.comm_destroy(owned->target);
    return s != XAL_SUCCESS ? s : injected;
  });
}

xal_status_t fault_comm_abort(xal_bcomm_t* comm) {
  FaultComm* c = as_fault(comm);
  FaultBackend* b = c->device->backend;
  return guarded(FaultEntry{b}, "comm_abort", [&] {
    b->abort_comm(*c->group);  // its injected hangs end with ABORTED
    const auto s =
        b->before(Op::comm_abort, c->device, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    if (b->t.comm_abort == nullptr) return XAL_SUCCESS;
    return b->t.comm_abort(c->target);
  });
}

xal_status_t fault_comm_get_async_error(xal_bcomm_t* comm,
                                        xal_status_t* out_error) {
  FaultComm* c = as_fault(comm);
  FaultBackend* b = c->device->backend;
  return guarded(FaultEntry{b}, "comm_get_async_error", [&] {
    const auto s = b->before(Op::comm_get_async_error, c->device, nullptr,
                             std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    if (b->t.comm_get_async_error == nullptr) {
      *out_error = XAL_SUCCESS;
      return XAL_SUCCESS;
    }
    return b->t.comm_get_async_error(c->target, out_error);
  });
}

// The groups this thread has open (group_start without its group_end), by
// backend, and the bit flips of their collectives: a target runs a group's
// collectives at group_end, so their flips are queued after it.
struct GroupFlip {
  FaultStream* stream;
  FaultDevice* device;
  xal_devptr_t recv;
  uint64_t bytes;
  Decision decision;
};
struct GroupState {
  FaultBackend* backend;
  uint32_t depth;
  std::vector<GroupFlip> flips;
};
thread_local std::vector<GroupState> t_groups;

GroupState* open_group(FaultBackend* b) {
  for (auto& g : t_groups) {
    if (g.backend == b) return &g;
  }
  return nullptr;
}

template <Op kOp, xal_status_t (*xal_backend_table_t::*kEntry)(xal_backend_t*)>
xal_status_t group_call(xal_backend_t* backend) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, op_name(kOp).data(), [&] {
    const auto s = b->before(kOp, nullptr, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    const auto r =
        b->t.*kEntry == nullptr ? XAL_SUCCESS : (b->t.*kEntry)(b->target);
    GroupState* g = open_group(b);
    if (kOp == Op::group_start) {
      if (r != XAL_SUCCESS) return r;
      if (g == nullptr) g = &t_groups.emplace_back(GroupState{b, 0, {}});
      ++g->depth;
    } else if (g != nullptr && --g->depth == 0) {
      // The group's collectives are queued now (none when it failed).
      std::vector<GroupFlip> flips = std::move(g->flips);
      std::erase_if(t_groups,
                    [&](const GroupState& x) { return x.backend == b; });
      if (r != XAL_SUCCESS) return r;
      for (const auto& f : flips) {
        b->flip_output(f.stream, f.device, f.recv, nullptr, f.bytes, f.decision);
      }
    }
    return r;
  });
}

// The shared shape of every collective: checks, the call, then a bitflip
// of the receive buffer (`out_elems` elements) when a rule asked for one.
template <class Call>
xal_status_t collective(Op op, FaultComm* c, xal_bstream_t* stream,
                        xal_dtype_t dtype, uint64_t out_elems,
                        xal_devptr_t recv, bool has_output, bool supported,
                        Call&& call) {
  FaultBackend* b = c->device->backend;
  FaultStream* w = as_fault(stream);
  // An abort from here on ends a hang injected into this call.
  const CommCall call_comm{c->timeout_ms, c->group.get(),
                           c->group->aborts.load(std::memory_order_acquire)};
  return guarded(FaultEntry{b}, op_name(op).data(), [&] {
    if (w->dead.load()) return dead(b, "stream");
    const uint64_t bytes = out_elems * dtype_size(dtype);
    std::optional<Decision> flip;
    const auto s = b->before(op, c->device, nullptr, bytes,
                             has_output ? bytes : 0, &flip, &call_comm, w);
    if (s != XAL_SUCCESS) return s;
    if (!supported) return unsupported(b, "collectives");
    const auto r = call(c->target, w->target);
    if (r == XAL_SUCCESS && flip && has_output) {
      // Inside a group the target runs the collective at group_end.
      if (GroupState* g = open_group(b)) {
        g->flips.push_back(
            GroupFlip{w, c->device, recv, bytes, std::move(*flip)});
      } else {
        b->flip_output(w, c->device, recv, nullptr, bytes, *flip);
      }
    }
    return r;
  });
}

xal_status_t fault_allreduce(xal_bcomm_t* comm, xal_devptr_t send,
                             xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                             xal_op_t op, xal_bstream_t* stream) {
  FaultComm* c = as_fault(comm);
  auto* f = c->device->backend->t.allreduce;
  return collective(Op::allreduce, c, stream, dtype, count, recv, true,
                    f != nullptr, [&](xal_bcomm_t* tc, xal_bstream_t* ts) {
                                     return f(tc, send, recv, count, dtype, op, ts);
                                   });
}

xal_status_t fault_broadcast(xal_bcomm_t* comm, xal_devptr_t send,
                             xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                             uint32_t root, xal_bstream_t* stream) {
  FaultComm* c = as_fault(comm);
  auto* f = c->device->backend->t.broadcast;
  return collective(Op::broadcast, c, stream, dtype, count, recv, true,
                    f != nullptr, [&](xal_bcomm_t* tc, xal_bstream_t* ts) {
                                     return f(tc, send, recv, count, dtype, root, ts);
                                   });
}

xal_status_t fault_reduce(xal_bcomm_t* comm, xal_devptr_t send,
                          xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                          xal_op_t op, uint32_t root, xal_bstream_t* stream) {
  FaultComm* c = as_fault(comm);
  auto* f = c->device->backend->t.reduce;
  return collective(Op::reduce, c, stream, dtype, count, recv, c->rank == root,
                    f != nullptr, [&](xal_bcomm_t* tc, xal_bstream_t* ts) {
                                     return f(tc, send, recv, count, dtype, op, root, ts);
                                   });
}

xal_status_t fault_allgather(xal_bcomm_t* comm, xal_devptr_t send,
                             xal_devptr_t recv, size_t send_count,
                             xal_dtype_t dtype, xal_bstream_t* stream) {
  FaultComm* c = as_fault(comm);
  auto* f = c->device->backend->t.allgather;
  return collective(Op::allgather, c, stream, dtype,
                    uint64_t{send_count} * c->size, recv, true,
                    f != nullptr, [&](xal_bcomm_t* tc, xal_bstream_t* ts) {
                                     return f(tc, send, recv, send_count, dtype, ts);
                                   });
}

xal_status_t fault_reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send,
                                  xal_devptr_t recv, size_t recv_count,
                                  xal_dtype_t dtype, xal_op_t op,
                                  xal_bstream_t* stream) {
  FaultComm* c = as_fault(comm);
  auto* f = c->device->backend->t.reduce_scatter;
  return collective(Op::reduce_scatter, c, stream, dtype, recv_count, recv, true,
                    f != nullptr, [&](xal_bcomm_t* tc, xal_bstream_t* ts) {
                                     return f(tc, send, recv, recv_count, dtype, op, ts);
                                   });
}

xal_status_t fault_alltoall(xal_bcomm_t* comm, xal_devptr_t send,
                            xal_devptr_t recv, size_t count, xal_dtype_t dtype,
                            xal_bstream_t* stream) {
  FaultComm* c = as_fault(comm);
  auto* f = c->device->backend->t.alltoall;
  return collective(Op::alltoall, c, stream, dtype,
                    uint64_t{count} * c->size, recv, true,
                    f != nullptr, [&](xal_bcomm_t* tc, xal_bstream_t* ts) {
                                     return f(tc, send, recv, count, dtype, ts);
                                   });
}

// Point-to-point (ABI 1.1). A target without them returns NOT_SUPPORTED
// after the rules ran, and the core then moves the message itself: a plan
// reaches comm_send and comm_recv either way.
xal_status_t fault_comm_send(xal_bcomm_t* comm, xal_devptr_t send, size_t count,
                             xal_dtype_t dtype, uint32_t peer, xal_bstream_t* stream) {
  FaultComm* c = as_fault(comm);
  auto* f = c->device->backend->t.comm_send;
  return collective(Op::comm_send, c, stream, dtype, count, 0, false, f != nullptr,
                    [&](xal_bcomm_t* tc, xal_bstream_t* ts) {
                      return f(tc, send, count, dtype, peer, ts);
                    });
}

xal_status_t fault_comm_recv(xal_bcomm_t* comm, xal_devptr_t recv, size_t count,
                             xal_dtype_t dtype, uint32_t peer, xal_bstream_t* stream) {
  FaultComm* c = as_fault(comm);
  auto* f = c->device->backend->t.comm_recv;
  return collective(Op::comm_recv, c, stream, dtype, count, recv, true, f != nullptr,
                    [&](xal_bcomm_t* tc, xal_bstream_t* ts) {
                      return f(tc, recv, count, dtype, peer, ts);
                    });
}

}  // namespace

void fill_comm_entries(xal_backend_table_t& t) {
  t.module_load = fault_module_load;
  t.module_unload = fault_module_unload;
  t.kernel_get = fault_kernel_get;
  t.kernel_launch = fault_kernel_launch;
  t.comm_create = fault_comm_create;
  t.comm_destroy = fault_comm_destroy;
  t.comm_abort = fault_comm_abort;
  t.comm_get_async_error = fault_comm_get_async_error;
  t.group_start = group_call<Op::group_start, &xal_backend_table_t::group_start>;
  t.group_end = group_call<Op::group_end, &xal_backend_table_t::group_end>;
  t.allreduce = fault_allreduce;
  t.broadcast = fault_broadcast;
  t.reduce = fault_reduce;
  t.allgather = fault_allgather;
  t.reduce_scatter = fault_reduce_scatter;
  t.alltoall = fault_alltoall;
  t.comm_send = fault_comm_send;
  t.comm_recv = fault_comm_recv;
}

}  // namespace xal::fault

// testdev: a built-in kernel module and simple native collectives (each
// collective runs when the last rank arrives; ranks' k-th calls pair up).
#include <cstring>
#include <optional>

#include "testdev.hpp"

namespace testdev {

namespace {

constexpr char kModuleImage[] = "testdev-kernels";

struct Module {
  Device* device;
};
struct Kernel {
  int id;  // 0: fill_u32(u32* dst, u32 value, u64 count)
};
const Kernel kFill{0};

xal_status_t td_module_load(xal_bdevice_t* device, uint32_t format,
                            const void* image, size_t bytes,
                            xal_bmodule_t** out) {
  auto* d = as<Device>(device);
  if (format != XAL_MODULE_FORMAT_NATIVE || bytes < sizeof kModuleImage - 1 ||
      std::memcmp(image, kModuleImage, sizeof kModuleImage - 1) != 0)
    return error(d->backend, XAL_ERROR_INVALID_ARGUMENT, 3,
                 "TESTDEV_ERROR_INVALID_IMAGE",
                 "testdev: image is not 'testdev-kernels' in NATIVE format");
  *out = as<xal_bmodule_t>(std::make_unique<Module>(Module{d}).release());
  return XAL_SUCCESS;
}

xal_status_t td_module_unload(xal_bmodule_t* module) {
  std::unique_ptr<Module> m(as<Module>(module));
  return XAL_SUCCESS;
}

xal_status_t td_kernel_get(xal_bmodule_t* module, const char* name,
                           xal_bkernel_t** out) {
  if (std::strcmp(name, "fill_u32") != 0)
    return error(as<Module>(module)->device->backend, XAL_ERROR_INVALID_ARGUMENT,
                 4, "TESTDEV_ERROR_NOT_FOUND",
                 std::string("testdev: no kernel named ") + name);
  *out = as<xal_bkernel_t>(const_cast<Kernel*>(&kFill));
  return XAL_SUCCESS;
}

xal_status_t td_kernel_launch(xal_bstream_t* stream, xal_bkernel_t*,
                              const xal_launch_config_t*, void** args,
                              size_t arg_count) {
  auto* s = as<Stream>(stream);
  if (arg_count != 3)
    return error(s->device->backend, XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                 "testdev: fill_u32 takes 3 arguments");
  xal_devptr_t dst;
  uint32_t value;
  uint64_t count;
  std::memcpy(&dst, args[0], sizeof dst);
  std::memcpy(&value, args[1], sizeof value);
  std::memcpy(&count, args[2], sizeof count);
  s->enqueue([=] {
    auto* p = reinterpret_cast<uint32_t*>(dst);
    for (uint64_t i = 0; i < count; ++i) p[i] = value;
  });
  return XAL_SUCCESS;
}

// ---- collectives ----------------------------------------------------------

enum class Op { kAllreduce, kBroadcast, kAllgather };

struct Call {
  Op kind;
  xal_devptr_t send, recv;
  size_t count;
  xal_dtype_t dtype;
  xal_op_t op;
  uint32_t root;
  Stream* stream;
};

struct Group {
  std::mutex mu;
  uint32_t n = 0;
  std::map<uint64_t, std::vector<std::optional<Call>>> rounds;
};

struct Comm {
  std::shared_ptr<Group> group;
  Device* device;
  uint32_t rank;
  uint64_t next = 0;
};

template <class T>
void reduce_into(T* acc, const T* in, size_t n, xal_op_t op) {
  for (size_t i = 0; i < n; ++i) {
    switch (op) {
      case XAL_OP_SUM:
      case XAL_OP_AVG: acc[i] = static_cast<T>(acc[i] + in[i]); break;
      case XAL_OP_PROD: acc[i] = static_cast<T>(acc[i] * in[i]); break;
      case XAL_OP_MIN: acc[i] = in[i] < acc[i] ? in[i] : acc[i]; break;
      case XAL_OP_MAX: acc[i] = in[i] > acc[i] ? in[i] : acc[i]; break;
      default: break;
    }
  }
}

template <class T>
void allreduce_typed(const std::vector<std::optional<Call>>& calls) {
  const Call& c0 = *calls[0];
  std::vector<T> acc(c0.count);
  std::memcpy(acc.data(), reinterpret_cast<const void*>(c0.send), c0.count * sizeof(T));
  for (size_t r = 1; r < calls.size(); ++r)
    reduce_into(acc.data(), reinterpret_cast<const T*>(calls[r]->send), c0.count, c0.op);
  if (c0.op == XAL_OP_AVG)
    for (auto& v : acc) v = static_cast<T>(v / static_cast<T>(calls.size()));
  for (const auto& c : calls)
    std::memcpy(reinterpret_cast<void*>(c->recv), acc.data(), c0.count * sizeof(T));
}

size_t elem_size(xal_dtype_t t) {
  switch (t) {
    case XAL_DTYPE_I8: case XAL_DTYPE_U8: return 1;
    case XAL_DTYPE_F16: case XAL_DTYPE_BF16: return 2;
    case XAL_DTYPE_I32: case XAL_DTYPE_U32: case XAL_DTYPE_F32: return 4;
    default: return 8;
  }
}

xal_status_t run(Comm* comm, const Call& call) {
  Group& g = *comm->group;
  std::unique_lock lock(g.mu);
  auto& calls = g.rounds[comm->next++];
  calls.resize(g.n);
  calls[comm->rank] = call;
  for (const auto& c : calls)
    if (!c) return XAL_SUCCESS;  // the last rank to arrive runs it
  auto all = std::move(calls);
  g.rounds.erase(comm->next - 1);
  lock.unlock();
  Backend* b = comm->device->backend;
  for (const auto& c : all) {
    if (c->kind != all[0]->kind || c->count != all[0]->count ||
        c->dtype != all[0]->dtype || c->op != all[0]->op || c->root != all[0]->root)
      return error(b, XAL_ERROR_COLLECTIVE_MISMATCH, 0, nullptr,
                   "testdev: ranks called different collectives");
    c->stream->synchronize();
  }
  const Call& c0 = *all[0];
  const size_t bytes = c0.count * elem_size(c0.dtype);
  switch (c0.kind) {
    case Op::kBroadcast:
      for (const auto& c : all)
        if (c->recv != all[c0.root]->send)
          std::memmove(reinterpret_cast<void*>(c->recv),
                       reinterpret_cast<const void*>(all[c0.root]->send), bytes);
      return XAL_SUCCESS;
    case Op::kAllgather:
      for (const auto& c : all)
        for (size_t r = 0; r < all.size(); ++r)
          std::memcpy(reinterpret_cast<char*>(c->recv) + r * bytes,
                      reinterpret_cast<const void*>(all[r]->send), bytes);
      return XAL_SUCCESS;
    case Op::kAllreduce:
      switch (c0.dtype) {
        case XAL_DTYPE_I8: allreduce_typed<int8_t>(all); break;
        case XAL_DTYPE_U8: allreduce_typed<uint8_t>(all); break;
        case XAL_DTYPE_I32: allreduce_typed<int32_t>(all); break;
        case XAL_DTYPE_U32: allreduce_typed<uint32_t>(all); break;
        case XAL_DTYPE_I64: allreduce_typed<int64_t>(all); break;
        case XAL_DTYPE_U64: allreduce_typed<uint64_t>(all); break;
        case XAL_DTYPE_F32: allreduce_typed<float>(all); break;
        case XAL_DTYPE_F64: allreduce_typed<double>(all); break;
        default:
          return error(b, XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                       "testdev: 16-bit floats are not supported");
      }
      return XAL_SUCCESS;
  }
  return XAL_SUCCESS;
}

xal_status_t td_comm_create(xal_bdevice_t* const* devices, uint32_t n,
                            const xal_bcomm_options_t*, xal_bcomm_t** out) {
  auto g = std::make_shared<Group>();
  g->n = n;
  for (uint32_t i = 0; i < n; ++i)
    out[i] = as<xal_bcomm_t>(std::make_unique<Comm>(Comm{g, as<Device>(devices[i]), i, 0}).release());
  return XAL_SUCCESS;
}

xal_status_t td_comm_destroy(xal_bcomm_t* comm) {
  std::unique_ptr<Comm> c(as<Comm>(comm));
  return XAL_SUCCESS;
}

xal_status_t td_group(xal_backend_t*) { return XAL_SUCCESS; }

xal_status_t td_allreduce(xal_bcomm_t* comm, xal_devptr_t s, xal_devptr_t r,
                          size_t n, xal_dtype_t dt, xal_op_t op,
                          xal_bstream_t* st) {
  return run(as<Comm>(comm), Call{Op::kAllreduce, s, r, n, dt, op, 0, as<Stream>(st)});
}

xal_status_t td_broadcast(xal_bcomm_t* comm, xal_devptr_t s, xal_devptr_t r,
                          size_t n, xal_dtype_t dt, uint32_t root,
                          xal_bstream_t* st) {
  return run(as<Comm>(comm),
             Call{Op::kBroadcast, s, r, n, dt, XAL_OP_SUM, root, as<Stream>(st)});
}

xal_status_t td_allgather(xal_bcomm_t* comm, xal_devptr_t s, xal_devptr_t r,
                          size_t n, xal_dtype_t dt, xal_bstream_t* st) {
  return run(as<Comm>(comm),
             Call{Op::kAllgather, s, r, n, dt, XAL_OP_SUM, 0, as<Stream>(st)});
}

}  // namespace

void fill_extras(xal_backend_table_t& t) {
  t.module_load = td_module_load;
  t.module_unload = td_module_unload;
  t.kernel_get = td_kernel_get;
  t.kernel_launch = td_kernel_launch;
  t.comm_create = td_comm_create;
  t.comm_destroy = td_comm_destroy;
  t.group_start = td_group;
  t.group_end = td_group;
  t.allreduce = td_allreduce;
  t.broadcast = td_broadcast;
  t.allgather = td_allgather;
}

}  // namespace testdev

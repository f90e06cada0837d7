// The native collective path: a backend's own library (NCCL, RCCL, the
// mock's), through its table.
#include "comm.hpp"

namespace xal::core {

namespace {

class NativeComm final : public CommImpl {
 public:
  NativeComm(DeviceObj* device, xal_bcomm_t* comm)
      : device_(device), t_(device->hdr.table), comm_(comm) {}
  ~NativeComm() override {
    if (comm_ && t_->comm_destroy) t_->comm_destroy(comm_);
    clear_pending();
  }

  uint32_t path() const override { return XAL_COMM_PATH_NATIVE; }
  std::string description() const override {
    return cat("native collectives of backend ", device_->backend->name);
  }
  void* native() override { return comm_; }

  xal_status_t abort() override {
    if (!t_->comm_abort) return unsupported("comm_abort");
    return check(t_->comm_abort(comm_));
  }
  xal_status_t async_error(xal_status_t* out) override {
    if (!t_->comm_get_async_error) {
      *out = XAL_SUCCESS;
      return XAL_SUCCESS;
    }
    return check(t_->comm_get_async_error(comm_, out));
  }
  xal_status_t allreduce(xal_devptr_t s, xal_devptr_t r, size_t n,
                         xal_dtype_t dt, xal_op_t op, StreamObj* st) override {
    if (!t_->allreduce) return unsupported("allreduce");
    return check(t_->allreduce(comm_, s, r, n, dt, op, st->native));
  }
  xal_status_t broadcast(xal_devptr_t s, xal_devptr_t r, size_t n,
                         xal_dtype_t dt, uint32_t root, StreamObj* st) override {
    if (!t_->broadcast) return unsupported("broadcast");
    return check(t_->broadcast(comm_, s, r, n, dt, root, st->native));
  }
  xal_status_t reduce(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                      xal_op_t op, uint32_t root, StreamObj* st) override {
    if (!t_->reduce) return unsupported("reduce");
    return check(t_->reduce(comm_, s, r, n, dt, op, root, st->native));
  }
  xal_status_t allgather(xal_devptr_t s, xal_devptr_t r, size_t n,
                         xal_dtype_t dt, StreamObj* st) override {
    if (!t_->allgather) return unsupported("allgather");
    return check(t_->allgather(comm_, s, r, n, dt, st->native));
  }
  xal_status_t reduce_scatter(xal_devptr_t s, xal_devptr_t r, size_t n,
                              xal_dtype_t dt, xal_op_t op,
                              StreamObj* st) override {
    if (!t_->reduce_scatter) return unsupported("reduce_scatter");
    return check(t_->reduce_scatter(comm_, s, r, n, dt, op, st->native));
  }
  xal_status_t alltoall(xal_devptr_t s, xal_devptr_t r, size_t n,
                        xal_dtype_t dt, StreamObj* st) override {
    if (!t_->alltoall) return unsupported("alltoall");
    return check(t_->alltoall(comm_, s, r, n, dt, st->native));
  }

 private:
  xal_status_t check(xal_status_t s) {
    return s >= 0 ? s : fail_backend(device_->backend, device_, s);
  }
  xal_status_t unsupported(const char* what) {
    return fail(device_, XAL_ERROR_NOT_SUPPORTED,
                cat("backend ", device_->backend->name, " does not support ",
                    what));
  }

  DeviceObj* device_;
  const xal_backend_table_t* t_;
  xal_bcomm_t* comm_;
};

}  // namespace

xal_status_t create_native_comms(std::span<DeviceObj* const> devices,
                                 uint32_t timeout_ms,
                                 std::vector<std::unique_ptr<CommImpl>>& out) {
  DeviceObj* first = devices.front();
  const xal_backend_table_t* t = first->hdr.table;
  std::vector<xal_bdevice_t*> natives;
  natives.reserve(devices.size());
  for (DeviceObj* d : devices) natives.push_back(d->native);
  std::vector<xal_bcomm_t*> comms(devices.size(), nullptr);
  xal_bcomm_options_t opts{};
  opts.struct_size = sizeof opts;
  opts.timeout_ms = timeout_ms;
  const xal_status_t s = t->comm_create(natives.data(),
                                        static_cast<uint32_t>(natives.size()),
                                        &opts, comms.data());
  if (s != XAL_SUCCESS) return fail_backend(first->backend, first, s);
  out.clear();
  for (size_t i = 0; i < devices.size(); ++i) {
    try {
      out.push_back(std::make_unique<NativeComm>(devices[i], comms[i]));
    } catch (...) {
      for (size_t j = out.size(); j < comms.size(); ++j)
        if (t->comm_destroy && comms[j]) t->comm_destroy(comms[j]);
      out.clear();
      throw;
    }
  }
  return XAL_SUCCESS;
}

// Only "the library cannot serve this set" (absent, not loaded, refuses
// these devices): a library that tried and failed (BACKEND, INTERNAL) or a
// device error is the caller's to see, as an injected fault must be.
bool native_failure_can_fall_back(xal_status_t status) {
  return status == XAL_ERROR_NOT_SUPPORTED || status == XAL_ERROR_BACKEND_UNAVAILABLE;
}

void warn_native_fallback(const Backend* backend) {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  xal_last_error(&info);
  log_message(XAL_LOG_WARNING,
              cat("the native collectives of backend ", backend->name, " failed (",
                  xal_status_name(info.status), ": ", info.message,
                  "); the core's collectives run over its devices instead")
                  .c_str());
}

}  // namespace xal::core

// The native collective path: a backend's own library (NCCL, RCCL, the
// mock's), through its table.
#include "collectives/comm_split.hpp"
#include "collectives/p2p_rank.hpp"
#include "comm.hpp"

namespace xal::core {

namespace {

class NativeComm final : public CommImpl {
 public:
  NativeComm(DeviceObj* device, xal_bcomm_t* comm, uint32_t rank,
             std::shared_ptr<P2pShared> p2p, std::shared_ptr<SplitMeet> meet)
      : device_(device), t_(device->hdr.table), comm_(comm),
        p2p_(device, rank, this, std::move(p2p)), meet_(std::move(meet)) {}
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
    p2p_.abort();
    if (!t_->comm_abort) return unsupported("comm_abort");
    return check(t_->comm_abort(comm_));
  }
  xal_status_t async_error(xal_status_t* out) override {
    if (xal_status_t e = p2p_.shared()->error->get(); e != XAL_SUCCESS) {
      *out = e;
      return XAL_SUCCESS;
    }
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

  // The backend's own point-to-point (ncclSend/ncclRecv) when it has it,
  // for batches without a reduction; else the core's (p2p_rank.hpp). A
  // batch whose first message the backend answers with NOT_SUPPORTED (the
  // fault backend over a target without them, after its rules ran) goes to
  // the core, unless the backend carried earlier messages itself.
  xal_status_t p2p(std::span<const P2pOp> ops, StreamObj* st) override {
    bool reduces = false;
    for (const P2pOp& op : ops) reduces = reduces || op.kind == P2pOp::Kind::kRecvReduce;
    if (!reduces && t_->comm_send && t_->comm_recv) {
      const bool grouped = ops.size() > 1 && t_->group_start && t_->group_end;
      if (grouped)
        if (xal_status_t s = check(t_->group_start(device_->backend->instance)); s) return s;
      xal_status_t s = XAL_SUCCESS;
      for (size_t i = 0; i < ops.size() && s == XAL_SUCCESS; ++i) {
        const P2pOp& op = ops[i];
        s = op.kind == P2pOp::Kind::kSend
                ? t_->comm_send(comm_, op.ptr, op.count, op.dtype, op.peer, st->native)
                : t_->comm_recv(comm_, op.ptr, op.count, op.dtype, op.peer, st->native);
        if (s == XAL_ERROR_NOT_SUPPORTED && i == 0 && !used_native_p2p_) {
          if (grouped) t_->group_end(device_->backend->instance);
          clear_pending();
          return p2p_.submit(ops, st);
        }
      }
      used_native_p2p_ = used_native_p2p_ || s == XAL_SUCCESS;
      if (grouped) {
        const xal_status_t e = t_->group_end(device_->backend->instance);
        if (s == XAL_SUCCESS) s = e;
      }
      return check(s);
    }
    return p2p_.submit(ops, st);
  }
  SplitMeet* split_meet() override { return meet_.get(); }

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
  P2pRank p2p_;
  std::shared_ptr<SplitMeet> meet_;
  bool used_native_p2p_ = false;  // see p2p()
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
  auto p2p = std::make_shared<P2pShared>(timeout_ms, nullptr);
  auto meet = std::make_shared<SplitMeet>(
      std::vector<DeviceObj*>(devices.begin(), devices.end()), timeout_ms);
  for (size_t i = 0; i < devices.size(); ++i) {
    try {
      out.push_back(std::make_unique<NativeComm>(devices[i], comms[i], static_cast<uint32_t>(i),
                                                 p2p, meet));
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

// XalBackend's split (torch.distributed.split_group): the group's
// communicator split with xal_comm_split over the shared-memory transport's
// split (shm_split.cpp), in order with the group's queued calls.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <climits>

#include "backend.hpp"
#include "xal_runtime.hpp"

namespace xal::torch_backend {

XalBackend::XalBackend(int rank, int size, std::chrono::milliseconds timeout, xal_device_t dev,
                       xal_comm_t comm, ShmTransport* shm)
    : c10d::Backend(rank, size), timeout_(timeout) {
  dev_ = dev;
  gdev_ = GroupDevice::of(dev_);
  comm_ = comm;
  shm_ = shm;
  if (shm)
    offered_from_ = [shm](int first) { return shm->offered_from(static_cast<uint32_t>(first)); };
  start();
}

xal_comm_t XalBackend::split_comm(int32_t color, int32_t key, std::chrono::milliseconds timeout,
                                  ShmTransport** out_shm) {
  xal_comm_t child = nullptr;
  ShmTransport* child_shm = nullptr;
  auto work = enqueue(c10d::OpType::UNKNOWN, {}, CallPlace{}, [&] {
    xal_comm_options_t o{};
    o.struct_size = sizeof o;
    o.timeout_ms = static_cast<uint32_t>(std::clamp<long long>(timeout.count(), 1, UINT32_MAX));
    check_xal("split_group (xal_comm_split)", xal_comm_split(comm_, color, key, &o, &child));
    if (shm_) child_shm = shm_->take_split_child();
  });
  work->wait();  // rethrows the worker's error
  *out_shm = child_shm;
  return child;
}

c10::intrusive_ptr<c10d::Backend> XalBackend::split(
    const c10::intrusive_ptr<c10d::Store>& /*store*/, const std::vector<int>& ranks,
    const c10::intrusive_ptr<Options>& opts) {
  TORCH_CHECK(hosts_ == 1, "xal: split_group of a group over ", hosts_,
              " hosts is not supported (new_group makes subgroups there)");
  for (int r : ranks)
    TORCH_CHECK(r >= 0 && r < size_, "xal: split_group: rank ", r, " is outside the group of ",
                size_);
  const std::chrono::milliseconds timeout = opts ? opts->timeout : timeout_;
  const auto me = std::find(ranks.begin(), ranks.end(), rank_);
  ShmTransport* child_shm = nullptr;
  if (me == ranks.end()) {  // not in any new group: take part without a color
    split_comm(XAL_COMM_SPLIT_NOCOLOR, rank_, timeout, &child_shm);
    return {};
  }
  const int32_t color = *std::min_element(ranks.begin(), ranks.end());
  const auto key = static_cast<int32_t>(me - ranks.begin());
  xal_comm_t child = split_comm(color, key, timeout, &child_shm);
  TORCH_CHECK(child, "xal: split_group: xal_comm_split gave no communicator");
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  if (xal_status_t s = xal_comm_get_info(child, &info); s) {
    xal_comm_destroy(child);
    throw_xal("split_group (xal_comm_get_info)", s);
  }
  return c10::make_intrusive<XalBackend>(static_cast<int>(info.rank), static_cast<int>(info.size),
                                         timeout, dev_, child, child_shm);
}

}  // namespace xal::torch_backend

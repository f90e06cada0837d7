#include "hosts_transport.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "entry_guard.hpp"
#include "hosts_common.hpp"
#include "xal_common/reduce.hpp"

namespace xal::torch_backend {

using namespace hosts;


HostsTransport::HostsTransport(std::unique_ptr<ShmTransport> local, std::vector<int> host_of_rank,
                               int rank, c10::intrusive_ptr<c10d::Backend> leaders,
                               c10::intrusive_ptr<c10d::Backend> everyone)
    : host_of_(std::move(host_of_rank)), rank_(rank),
      hosts_(*std::max_element(host_of_.begin(), host_of_.end()) + 1), host_(host_of_[rank]),
      leaders_(std::move(leaders)), everyone_(std::move(everyone)),
      ranks_per_process_(host_of_.size(), 1) {
  for (int r = 0; r < static_cast<int>(host_of_.size()); ++r)
    if (host_of_[r] == host_) local_ranks_.push_back(r);
  if (everyone_) headers_ = std::make_unique<RemoteHeaders>(everyone_);
  local_ = local->table();
  shm_ = local.get();
  static_cast<void>(local.release());  // released through local_.release
}

HostsTransport::~HostsTransport() {
  headers_.reset();  // its thread waits on `everyone`: stopped first
  if (local_.release) local_.release(local_.user);
}

int HostsTransport::local_index(int rank) const {
  return static_cast<int>(std::find(local_ranks_.begin(), local_ranks_.end(), rank) -
                          local_ranks_.begin());
}

xal_comm_transport_t HostsTransport::table() {
  xal_comm_transport_t t{};
  t.struct_size = sizeof t;
  t.user = this;
  t.process_rank = static_cast<uint32_t>(rank_);
  t.process_count = static_cast<uint32_t>(host_of_.size());
  t.ranks_per_process = ranks_per_process_.data();
  t.allreduce = &HostsTransport::allreduce;
  t.broadcast = &HostsTransport::broadcast;
  t.allgatherv = &HostsTransport::allgatherv;
  t.alltoallv = &HostsTransport::alltoallv;
  t.abort = &HostsTransport::abort;
  t.release = &HostsTransport::release;
  t.send = &HostsTransport::send;
  t.recv = &HostsTransport::recv;
  return t;
}

int HostsTransport::offered_from(int first) const {
  const int n = static_cast<int>(local_ranks_.size());
  int start = 0;  // the first local rank at or after `first`
  while (start < n && local_ranks_[start] < first) ++start;
  const int p = shm_->offered_from(static_cast<uint32_t>(start % n));
  const int local = p < 0 ? -1 : local_ranks_[p];
  const int remote = headers_ ? headers_->waiting_from(first) : -1;
  if (local < 0 || remote < 0) return std::max(local, remote);
  // Both: the first in the order from `first` on.
  const int world = static_cast<int>(host_of_.size());
  auto distance = [&](int r) { return ((r - first) % world + world) % world; };
  return distance(local) <= distance(remote) ? local : remote;
}

xal_status_t HostsTransport::allreduce(void* user, const void* send, void* recv, size_t count,
                                       xal_dtype_t dtype, xal_op_t op, uint32_t timeout_ms,
                                       char* message, size_t message_size) {
  XAL_HOSTS_BEGIN();
  const xal_comm_transport_t& l = t.local_;
  XAL_HOSTS_CHECK(l.allreduce(l.user, send, recv, count, dtype, op, timeout_ms, message,
                              message_size));
  const size_t bytes = count * common::dtype_size(dtype);
  if (t.hosts_ == 1 || bytes == 0) return XAL_SUCCESS;
  if (t.leader()) {
    // Every host's partial result, reduced in host order on every leader.
    at::Tensor all = at::empty({static_cast<int64_t>(bytes) * t.hosts_}, at::kByte);
    std::vector<std::vector<at::Tensor>> outs(1);
    for (int h = 0; h < t.hosts_; ++h) outs[0].push_back(all.narrow(0, h * int64_t(bytes), bytes));
    std::vector<at::Tensor> in{bytes_of(recv, bytes)};
    XAL_HOSTS_CHECK(leaders_call("allgather", timeout_ms,
                                 [&] { return t.leaders_->allgather(outs, in); }, message,
                                 message_size));
    std::vector<const void*> srcs;
    for (int h = 0; h < t.hosts_; ++h) srcs.push_back(all.data_ptr<uint8_t>() + h * bytes);
    void* dst[] = {recv};
    common::reduce(dtype, op, dst, srcs, count, 1);
  }
  XAL_HOSTS_CHECK(l.broadcast(l.user, recv, bytes, 0, timeout_ms, message, message_size));
  return XAL_SUCCESS;
}

xal_status_t HostsTransport::broadcast(void* user, void* buf, size_t bytes, uint32_t root,
                                       uint32_t timeout_ms, char* message, size_t message_size) {
  XAL_HOSTS_BEGIN();
  const xal_comm_transport_t& l = t.local_;
  const int root_host = t.host_of_[root];
  if (root_host == t.host_)
    XAL_HOSTS_CHECK(l.broadcast(l.user, buf, bytes, static_cast<uint32_t>(t.local_index(root)),
                                timeout_ms, message, message_size));
  if (t.hosts_ == 1 || bytes == 0) return XAL_SUCCESS;
  if (t.leader()) {
    std::vector<at::Tensor> ts{bytes_of(buf, bytes)};
    c10d::BroadcastOptions o;
    o.rootRank = root_host;
    XAL_HOSTS_CHECK(leaders_call("broadcast", timeout_ms,
                                 [&] { return t.leaders_->broadcast(ts, o); }, message,
                                 message_size));
  }
  if (root_host != t.host_)
    XAL_HOSTS_CHECK(l.broadcast(l.user, buf, bytes, 0, timeout_ms, message, message_size));
  return XAL_SUCCESS;
}

xal_status_t HostsTransport::allgatherv(void* user, void* recv, const size_t* bytes,
                                        const size_t* displs, uint32_t timeout_ms,
                                        char* message, size_t message_size) {
  XAL_HOSTS_BEGIN();
  const xal_comm_transport_t& l = t.local_;
  std::vector<size_t> lb, ld;
  for (int r : t.local_ranks_) lb.push_back(bytes[r]), ld.push_back(displs[r]);
  XAL_HOSTS_CHECK(l.allgatherv(l.user, recv, lb.data(), ld.data(), timeout_ms, message,
                               message_size));
  if (t.hosts_ == 1) return XAL_SUCCESS;
  const int world = static_cast<int>(t.host_of_.size());
  std::vector<size_t> host_bytes(t.hosts_, 0);
  for (int r = 0; r < world; ++r) host_bytes[t.host_of_[r]] += bytes[r];
  const size_t most = *std::max_element(host_bytes.begin(), host_bytes.end());
  const size_t others = [&] {
    size_t n = 0;
    for (int h = 0; h < t.hosts_; ++h) n += h == t.host_ ? 0 : host_bytes[h];
    return n;
  }();
  if (others == 0) return XAL_SUCCESS;  // every process knows it: nothing to move
  auto* out = static_cast<char*>(recv);
  // The other hosts' pieces, in rank order: what the leader broadcasts.
  at::Tensor packed = at::empty({static_cast<int64_t>(others)}, at::kByte);
  char* pk = reinterpret_cast<char*>(packed.data_ptr<uint8_t>());
  if (t.leader()) {
    at::Tensor mine = at::empty({static_cast<int64_t>(most)}, at::kByte);
    size_t off = 0;
    for (int r : t.local_ranks_) {
      if (bytes[r]) std::memcpy(mine.data_ptr<uint8_t>() + off, out + displs[r], bytes[r]);
      off += bytes[r];
    }
    at::Tensor all = at::empty({static_cast<int64_t>(most) * t.hosts_}, at::kByte);
    std::vector<std::vector<at::Tensor>> outs(1);
    for (int h = 0; h < t.hosts_; ++h) outs[0].push_back(all.narrow(0, h * int64_t(most), most));
    std::vector<at::Tensor> in{mine};
    XAL_HOSTS_CHECK(leaders_call("allgather", timeout_ms,
                                 [&] { return t.leaders_->allgather(outs, in); }, message,
                                 message_size));
    std::vector<size_t> host_off(t.hosts_, 0);
    size_t po = 0;
    for (int r = 0; r < world; ++r) {
      const int h = t.host_of_[r];
      if (h != t.host_ && bytes[r]) {
        const char* from = reinterpret_cast<const char*>(all.data_ptr<uint8_t>()) +
                           h * most + host_off[h];
        std::memcpy(out + displs[r], from, bytes[r]);
        std::memcpy(pk + po, from, bytes[r]);
        po += bytes[r];
      }
      host_off[h] += bytes[r];
    }
  }
  XAL_HOSTS_CHECK(l.broadcast(l.user, pk, others, 0, timeout_ms, message, message_size));
  if (!t.leader()) {
    size_t po = 0;
    for (int r = 0; r < world; ++r)
      if (t.host_of_[r] != t.host_ && bytes[r]) {
        std::memcpy(out + displs[r], pk + po, bytes[r]);
        po += bytes[r];
      }
  }
  return XAL_SUCCESS;
}

void HostsTransport::abort(void* user) {
  HostsTransport& t = *static_cast<HostsTransport*>(user);
  t.aborted_.store(true);
  if (t.local_.abort) t.local_.abort(t.local_.user);
  if (t.headers_) t.headers_->abort();
  std::lock_guard lock(t.pending_mu_);
  for (const auto& work : t.pending_) {
    try {
      work->abort();  // Gloo's sends and receives end their wait
    } catch (const std::exception&) {  // a Work without abort: it ends at its timeout
    }
  }
}

void HostsTransport::release(void* user) { delete static_cast<HostsTransport*>(user); }

}  // namespace xal::torch_backend

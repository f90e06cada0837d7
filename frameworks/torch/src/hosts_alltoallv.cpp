// HostsTransport's all-to-all between hosts (hosts_transport.hpp): the
// host's own pieces in shared memory, the others through the leaders'
// Gloo all-to-all.
#include <algorithm>
#include <cstring>
#include <vector>

#include "entry_guard.hpp"
#include "hosts_common.hpp"

namespace xal::torch_backend {

using namespace hosts;

xal_status_t HostsTransport::alltoallv(void* user, const void* send, const size_t* send_bytes,
                                       const size_t* send_displs, void* recv,
                                       const size_t* recv_bytes, const size_t* recv_displs,
                                       uint32_t timeout_ms, char* message, size_t message_size) {
  return guarded_entry("alltoallv across hosts", message, message_size, [&]() -> xal_status_t {
    XAL_HOSTS_BEGIN();
    const xal_comm_transport_t& l = t.local_;
    const size_t nl = t.local_ranks_.size();
    const int world = static_cast<int>(t.host_of_.size());
    const auto w = static_cast<size_t>(world);
    // 1. The pieces between this host's processes, in shared memory.
    {
      std::vector<size_t> sb(nl), sd(nl), rb(nl), rd(nl);
      for (size_t j = 0; j < nl; ++j) {
        const int q = t.local_ranks_[j];
        sb[j] = send_bytes[q], sd[j] = send_displs[q];
        rb[j] = recv_bytes[q], rd[j] = recv_displs[q];
      }
      XAL_HOSTS_CHECK(l.alltoallv(l.user, send, sb.data(), sd.data(), recv, rb.data(), rd.data(),
                                  timeout_ms, message, message_size));
    }
    if (t.hosts_ == 1) return XAL_SUCCESS;
    const int me = t.local_index(t.rank_);
    // 2. Every local process's sizes (its row of the size matrix), then its
    // pieces for other hosts in destination order, reach every local process.
    std::vector<int64_t> rows(nl * w);
    for (int q = 0; q < world; ++q) rows[me * w + q] = static_cast<int64_t>(send_bytes[q]);
    {
      std::vector<size_t> b(nl, w * sizeof(int64_t)), d(nl);
      for (size_t j = 0; j < nl; ++j) d[j] = j * w * sizeof(int64_t);
      XAL_HOSTS_CHECK(l.allgatherv(l.user, rows.data(), b.data(), d.data(), timeout_ms, message,
                                   message_size));
    }
    auto remote = [&](int q) { return t.host_of_[q] != t.host_; };
    std::vector<size_t> out_b(nl, 0), out_d(nl, 0);
    for (size_t j = 0; j < nl; ++j)
      for (int q = 0; q < world; ++q)
        if (remote(q)) out_b[j] += static_cast<size_t>(rows[j * w + q]);
    for (size_t j = 1; j < nl; ++j) out_d[j] = out_d[j - 1] + out_b[j - 1];
    const size_t out_total = out_d[nl - 1] + out_b[nl - 1];
    std::vector<char> outgoing(std::max<size_t>(out_total, 1));
    {
      size_t off = out_d[me];
      for (int q = 0; q < world; ++q)
        if (remote(q) && send_bytes[q]) {
          std::memcpy(outgoing.data() + off, static_cast<const char*>(send) + send_displs[q],
                      send_bytes[q]);
          off += send_bytes[q];
        }
      XAL_HOSTS_CHECK(l.allgatherv(l.user, outgoing.data(), out_b.data(), out_d.data(), timeout_ms,
                                   message, message_size));
    }
    // 3. The leaders: the whole size matrix, then Gloo's all-to-all of what
    // each host sends each other host, ordered by (sender, receiver).
    at::Tensor matrix = at::zeros({static_cast<int64_t>(w * w)}, at::kLong);
    at::Tensor incoming;
    if (t.leader()) {
      int64_t* m = matrix.data_ptr<int64_t>();
      for (size_t j = 0; j < nl; ++j)
        std::memcpy(m + t.local_ranks_[j] * w, rows.data() + j * w, w * sizeof(int64_t));
      at::Tensor all = at::empty({static_cast<int64_t>(w * w) * t.hosts_}, at::kLong);
      std::vector<std::vector<at::Tensor>> outs(1);
      for (int h = 0; h < t.hosts_; ++h)
        outs[0].push_back(all.narrow(0, h * static_cast<int64_t>(w * w), w * w));
      std::vector<at::Tensor> in{matrix};
      XAL_HOSTS_CHECK(leaders_call("allgather", timeout_ms,
                                   [&] { return t.leaders_->allgather(outs, in); }, message,
                                   message_size));
      const int64_t* a = all.data_ptr<int64_t>();
      for (int s = 0; s < world; ++s)
        std::memcpy(m + s * w, a + t.host_of_[s] * w * w + s * w, w * sizeof(int64_t));
      std::vector<int64_t> in_splits(t.hosts_, 0), out_splits(t.hosts_, 0);
      for (int s = 0; s < world; ++s)
        for (int d = 0; d < world; ++d) {
          const int hs = t.host_of_[s], hd = t.host_of_[d];
          if (hs == t.host_ && hd != t.host_) in_splits[hd] += m[s * w + d];
          if (hd == t.host_ && hs != t.host_) out_splits[hs] += m[s * w + d];
        }
      int64_t in_total = 0, out_total_l = 0;
      for (int h = 0; h < t.hosts_; ++h) in_total += in_splits[h], out_total_l += out_splits[h];
      // This host's outgoing pieces by receiving host, then sender, receiver.
      at::Tensor packed = at::empty({in_total}, at::kByte);
      char* pk = reinterpret_cast<char*>(packed.data_ptr<uint8_t>());
      size_t po = 0;
      for (int g = 0; g < t.hosts_; ++g)
        for (size_t j = 0; j < nl; ++j) {
          const int s = t.local_ranks_[j];
          size_t src = out_d[j];
          for (int d = 0; d < world; ++d) {
            if (!remote(d)) continue;
            const auto n = static_cast<size_t>(m[s * w + d]);
            if (t.host_of_[d] == g && n) std::memcpy(pk + po, outgoing.data() + src, n), po += n;
            src += n;
          }
        }
      incoming = at::empty({out_total_l}, at::kByte);
      XAL_HOSTS_CHECK(leaders_call("alltoall", timeout_ms, [&] {
        return t.leaders_->alltoall_base(incoming, packed, out_splits, in_splits);
      }, message, message_size));
    }
    // 4. The matrix and what this host received, from the leader; each
    // process takes its pieces.
    int64_t* m = matrix.data_ptr<int64_t>();
    XAL_HOSTS_CHECK(l.broadcast(l.user, m, w * w * sizeof(int64_t), 0, timeout_ms, message,
                                message_size));
    size_t in_total = 0;
    for (int s = 0; s < world; ++s)
      for (int d = 0; d < world; ++d)
        if (remote(s) && !remote(d)) in_total += static_cast<size_t>(m[s * w + d]);
    if (!t.leader()) incoming = at::empty({static_cast<int64_t>(in_total)}, at::kByte);
    const char* inc = reinterpret_cast<const char*>(incoming.data_ptr<uint8_t>());
    if (in_total)
      XAL_HOSTS_CHECK(l.broadcast(l.user, const_cast<char*>(inc), in_total, 0, timeout_ms, message,
                                  message_size));
    size_t off = 0;
    for (int g = 0; g < t.hosts_; ++g) {
      if (g == t.host_) continue;
      for (int s = 0; s < world; ++s) {
        if (t.host_of_[s] != g) continue;
        for (int d = 0; d < world; ++d) {
          if (remote(d)) continue;
          const auto n = static_cast<size_t>(m[s * w + d]);
          if (d == t.rank_) {
            if (n != recv_bytes[s])
              return fail(XAL_ERROR_COLLECTIVE_MISMATCH,
                          "all-to-all between hosts: process " + std::to_string(s) + " sends " +
                              std::to_string(n) + " bytes, this process expects " +
                              std::to_string(recv_bytes[s]),
                          message, message_size);
            if (n) std::memcpy(static_cast<char*>(recv) + recv_displs[s], inc + off, n);
          }
          off += n;
        }
      }
    }
    return XAL_SUCCESS;
  });
}

}  // namespace xal::torch_backend

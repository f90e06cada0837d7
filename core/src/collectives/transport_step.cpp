#include "transport_step.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "xal_common/reduce.hpp"

namespace xal::core {

namespace {

using common::CollDesc;
using common::CollKind;
using common::HostPart;

const char* at(const void* p, size_t offset) { return static_cast<const char*>(p) + offset; }
char* at(void* p, size_t offset) { return static_cast<char*>(p) + offset; }
void copy(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes) std::memmove(dst, src, bytes);
}

bool uses_op(CollKind k) {
  return k == CollKind::kAllreduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}
bool uses_root(CollKind k) { return k == CollKind::kBroadcast || k == CollKind::kReduce; }

// The fields every rank must agree on; op and root only where they matter.
std::array<uint64_t, 5> fields(const CollDesc& d) {
  return {static_cast<uint64_t>(d.kind), d.count, static_cast<uint64_t>(d.dtype),
          uses_op(d.kind) ? static_cast<uint64_t>(d.op) : 0,
          uses_root(d.kind) ? d.root : 0};
}
constexpr const char* kFieldNames[] = {"operation", "count", "dtype", "op", "root"};

// One leader's step, with the transport's failure turned into a StepResult.
class Step {
 public:
  Step(const xal_comm_transport_t& t, const ProcessLayout& l, uint32_t timeout_ms,
       std::span<const HostPart> parts)
      : t_(t), l_(l), timeout_(timeout_ms), parts_(parts), d_(parts[0].desc),
        es_(common::dtype_size(d_.dtype)) {}

  StepResult run() {
    if (!agree()) return result_;
    if (d_.count == 0) return result_;
    switch (d_.kind) {
      case CollKind::kAllreduce: allreduce(parts_[0].out, d_.count, true); break;
      case CollKind::kReduce: reduce(); break;
      case CollKind::kBroadcast: broadcast(); break;
      case CollKind::kAllgather: allgather(); break;
      case CollKind::kReduceScatter: reduce_scatter(); break;
      case CollKind::kAlltoall: alltoall(); break;
    }
    return result_;
  }

 private:
  bool check(xal_status_t s, const char* what) {
    if (s == XAL_SUCCESS) return true;
    message_[sizeof message_ - 1] = '\0';
    result_.status = s;
    result_.sticky = true;
    result_.message = std::string(what) + " between processes failed: " + message_;
    return false;
  }

  // Every local rank, then every process, agrees on the call. One small
  // allreduce (max of each field and of its complement) between processes.
  bool agree() {
    std::string local;
    const auto mine = fields(d_);
    for (size_t r = 1; r < parts_.size() && local.empty(); ++r) {
      const auto theirs = fields(parts_[r].desc);
      for (size_t f = 0; f < mine.size(); ++f)
        if (theirs[f] != mine[f]) {
          local = "ranks disagree: local rank " + std::to_string(r) + " of process " +
                  std::to_string(l_.me) + " called with a different " + kFieldNames[f];
          break;
        }
    }
    bool mismatch = !local.empty();
    if (l_.ranks.size() > 1) {
      std::array<uint64_t, 11> v{};
      for (size_t f = 0; f < mine.size(); ++f) v[2 * f] = mine[f], v[2 * f + 1] = ~mine[f];
      v[10] = mismatch ? 1 : 0;
      std::array<uint64_t, 11> m{};
      if (!check(t_.allreduce(t_.user, v.data(), m.data(), v.size(), XAL_DTYPE_U64, XAL_OP_MAX,
                              timeout_, message_, sizeof message_),
                 "the agreement check"))
        return false;
      for (size_t f = 0; f < mine.size() && local.empty(); ++f)
        if (m[2 * f] != v[2 * f] || m[2 * f + 1] != v[2 * f + 1])
          local = std::string("processes disagree on the ") + kFieldNames[f];
      if (local.empty() && m[10]) local = "ranks of another process disagree";
      mismatch = !local.empty();
    }
    if (mismatch) {
      result_.status = XAL_ERROR_COLLECTIVE_MISMATCH;
      result_.message = local;
    }
    return !mismatch;
  }

  // acc[0, count) = op over every rank of the `in` at `offset` elements.
  bool combine(void* acc, size_t count, size_t offset) {
    const xal_op_t op = d_.op == XAL_OP_AVG ? XAL_OP_SUM : d_.op;
    std::vector<const void*> srcs;
    for (const HostPart& p : parts_) srcs.push_back(at(p.in, offset * es_));
    void* dst[] = {acc};
    common::reduce(d_.dtype, op, dst, srcs, count, l_.size);
    if (!check(t_.allreduce(t_.user, acc, acc, count, d_.dtype, op, timeout_, message_,
                            sizeof message_),
               "allreduce"))
      return false;
    if (d_.op == XAL_OP_AVG) {
      const void* src[] = {acc};
      common::reduce(d_.dtype, XAL_OP_AVG, dst, src, count, l_.size);
    }
    return true;
  }

  void allreduce(void* acc, size_t count, bool copy_out) {
    if (!combine(acc, count, 0) || !copy_out) return;
    for (size_t i = 1; i < parts_.size(); ++i) copy(parts_[i].out, acc, count * es_);
  }

  void reduce() {
    std::vector<char> acc(d_.count * es_);
    if (!combine(acc.data(), d_.count, 0)) return;
    if (l_.process_of(d_.root) == l_.me)
      copy(parts_[d_.root - l_.base()].out, acc.data(), acc.size());
  }

  void broadcast() {
    const size_t bytes = d_.count * es_;
    const uint32_t root = l_.process_of(d_.root);
    void* buf = root == l_.me ? const_cast<void*>(parts_[d_.root - l_.base()].in) : parts_[0].out;
    if (!check(t_.broadcast(t_.user, buf, bytes, root, timeout_, message_, sizeof message_),
               "broadcast"))
      return;
    for (const HostPart& p : parts_) copy(p.out, buf, bytes);
  }

  void allgather() {
    const size_t block = d_.count * es_;
    void* out = parts_[0].out;
    for (size_t i = 0; i < parts_.size(); ++i)
      copy(at(out, (l_.base() + i) * block), parts_[i].in, block);
    const size_t np = l_.ranks.size();
    std::vector<size_t> bytes(np), displs(np);
    for (size_t p = 0; p < np; ++p) bytes[p] = l_.ranks[p] * block, displs[p] = l_.first[p] * block;
    if (!check(t_.allgatherv(t_.user, out, bytes.data(), displs.data(), timeout_, message_,
                             sizeof message_),
               "allgather"))
      return;
    for (size_t i = 1; i < parts_.size(); ++i) copy(parts_[i].out, out, l_.size * block);
  }

  void reduce_scatter() {
    const size_t block = d_.count * es_;
    std::vector<char> acc(l_.size * block);
    if (!combine(acc.data(), l_.size * d_.count, 0)) return;
    for (size_t i = 0; i < parts_.size(); ++i)
      copy(parts_[i].out, acc.data() + (l_.base() + i) * block, block);
  }

  // To process q goes, for each local rank i and each rank k of q, the block
  // i sends to k: [i][k]. From q come the blocks [k][i].
  void alltoall() {
    const size_t block = d_.count * es_;
    const size_t np = l_.ranks.size(), local = l_.local();
    std::vector<char> send(local * l_.size * block), recv(send.size());
    std::vector<size_t> bytes(np), displs(np);
    size_t pos = 0;
    for (size_t q = 0; q < np; ++q) {
      bytes[q] = local * l_.ranks[q] * block;
      displs[q] = pos;
      for (size_t i = 0; i < local; ++i)
        for (size_t k = 0; k < l_.ranks[q]; ++k, pos += block)
          copy(send.data() + pos, at(parts_[i].in, (l_.first[q] + k) * block), block);
    }
    if (!check(t_.alltoallv(t_.user, send.data(), bytes.data(), displs.data(), recv.data(),
                            bytes.data(), displs.data(), timeout_, message_, sizeof message_),
               "alltoall"))
      return;
    for (size_t q = 0; q < np; ++q)
      for (size_t k = 0; k < l_.ranks[q]; ++k)
        for (size_t i = 0; i < local; ++i)
          copy(at(parts_[i].out, (l_.first[q] + k) * block),
               recv.data() + displs[q] + (k * local + i) * block, block);
  }

  const xal_comm_transport_t& t_;
  const ProcessLayout& l_;
  const uint32_t timeout_;
  std::span<const HostPart> parts_;
  const CollDesc d_;
  const size_t es_;
  StepResult result_;
  char message_[512] = {};
};

}  // namespace

uint32_t ProcessLayout::process_of(uint32_t rank) const {
  const auto it = std::upper_bound(first.begin(), first.end(), rank);
  return static_cast<uint32_t>(it - first.begin()) - 1;
}

StepResult run_transport_step(const xal_comm_transport_t& t, const ProcessLayout& layout,
                              uint32_t timeout_ms, std::span<const HostPart> parts) {
  return Step(t, layout, timeout_ms, parts).run();
}

}  // namespace xal::core

#include "transport_step.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>

#include "transport_host.hpp"
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

bool overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
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
       std::span<const HostPart> parts, Scratch& scratch)
      : t_(t), l_(l), timeout_(timeout_ms), parts_(parts), d_(parts[0].desc),
        es_(common::dtype_size(d_.dtype)), scratch_(scratch) {}

  StepResult run() {
    if (!agree()) return result_;
    if (d_.count == 0) return result_;
    switch (d_.kind) {
      case CollKind::kAllreduce: allreduce(); break;
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

  xal_op_t exchange_op() const { return d_.op == XAL_OP_AVG ? XAL_OP_SUM : d_.op; }

  std::vector<void*> outs() const {
    std::vector<void*> v;
    for (const HostPart& p : parts_) v.push_back(p.out);
    return v;
  }

  // acc[0, count) = op over the local ranks' inputs (a sum for avg), on
  // several cores. acc may be one of the inputs.
  void local_reduce(void* acc, size_t count) {
    if (parts_.size() == 1 && parts_[0].in == acc) return;  // one rank, in place
    std::vector<const void*> srcs;
    for (const HostPart& p : parts_) srcs.push_back(p.in);
    void* dst[] = {acc};
    parallel_reduce(d_.dtype, exchange_op(), dst, srcs, count, l_.size);
  }

  // Every dst = src (count elements), divided by the global size for avg.
  // A dst may be src.
  void fan_out(std::span<void* const> dsts, const void* src, size_t count) {
    if (d_.op == XAL_OP_AVG) {
      const void* from[] = {src};
      parallel_reduce(d_.dtype, XAL_OP_AVG, dsts, from, count, l_.size);
    } else {
      parallel_copy(dsts, src, count * es_);
    }
  }

  xal_status_t exchange_allreduce(void* acc, size_t count) {
    return t_.allreduce(t_.user, acc, acc, count, d_.dtype, exchange_op(), timeout_, message_,
                        sizeof message_);
  }

  void allreduce() {
    void* acc = parts_[0].out;
    local_reduce(acc, d_.count);
    if (!check(exchange_allreduce(acc, d_.count), "allreduce")) return;
    fan_out(outs(), acc, d_.count);
  }

  // Only the root's process receives (with the transport's reduce; an
  // older transport's allreduce gives it to every process).
  void reduce() {
    const uint32_t root = l_.process_of(d_.root);
    const bool here = root == l_.me;
    // A lone rank elsewhere sends its input as it is (the transport's
    // reduce only reads it there).
    const bool as_is = !here && t_.reduce && parts_.size() == 1;
    void* acc = here ? parts_[d_.root - l_.base()].out
                     : as_is ? const_cast<void*>(parts_[0].in) : scratch_.get(d_.count * es_);
    local_reduce(acc, d_.count);
    const xal_status_t s =
        t_.reduce ? t_.reduce(t_.user, acc, here ? acc : nullptr, d_.count, d_.dtype,
                              exchange_op(), root, timeout_, message_, sizeof message_)
                  : exchange_allreduce(acc, d_.count);
    if (!check(s, t_.reduce ? "reduce" : "allreduce")) return;
    if (here && d_.op == XAL_OP_AVG) {
      void* dst[] = {acc};
      fan_out(dst, acc, d_.count);
    }
  }

  void broadcast() {
    const size_t bytes = d_.count * es_;
    const uint32_t root = l_.process_of(d_.root);
    void* buf = root == l_.me ? const_cast<void*>(parts_[d_.root - l_.base()].in) : parts_[0].out;
    if (!check(t_.broadcast(t_.user, buf, bytes, root, timeout_, message_, sizeof message_),
               "broadcast"))
      return;
    parallel_copy(outs(), buf, bytes);
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
    parallel_copy(outs(), out, l_.size * block);
  }

  // Each process receives only its own ranks' blocks (contiguous, as ranks
  // are numbered process by process) with the transport's reduce_scatter;
  // an older transport's allreduce gives every block to every process.
  void reduce_scatter() {
    const size_t total = size_t{l_.size} * d_.count;
    const size_t mine = size_t{l_.local()} * d_.count;
    const bool scatter = t_.reduce_scatter != nullptr;
    // A lone local rank whose buffers do not overlap: its input goes as it
    // is (the transport only reads it) and the result straight into its
    // output.
    const bool direct = scatter && parts_.size() == 1 &&
                        !overlap(parts_[0].in, total * es_, parts_[0].out, d_.count * es_);
    char* acc = direct ? static_cast<char*>(const_cast<void*>(parts_[0].in))
                       : static_cast<char*>(scratch_.get((total + (scatter ? mine : 0)) * es_));
    local_reduce(acc, total);
    const char* result = acc + size_t{l_.base()} * d_.count * es_;
    if (scatter) {
      std::vector<size_t> counts(l_.ranks.size());
      for (size_t p = 0; p < counts.size(); ++p) counts[p] = size_t{l_.ranks[p]} * d_.count;
      void* recv = direct ? parts_[0].out : acc + total * es_;
      if (!check(t_.reduce_scatter(t_.user, acc, recv, counts.data(), d_.dtype, exchange_op(),
                                   timeout_, message_, sizeof message_),
                 "reduce_scatter"))
        return;
      result = static_cast<const char*>(recv);
    } else if (!check(exchange_allreduce(acc, total), "allreduce")) {
      return;
    }
    for (size_t i = 0; i < parts_.size(); ++i) {
      void* dst[] = {parts_[i].out};
      fan_out(dst, result + i * d_.count * es_, d_.count);
    }
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
  Scratch& scratch_;
  StepResult result_;
  char message_[512] = {};
};

}  // namespace

uint32_t ProcessLayout::process_of(uint32_t rank) const {
  const auto it = std::upper_bound(first.begin(), first.end(), rank);
  return static_cast<uint32_t>(it - first.begin()) - 1;
}

StepResult run_transport_step(const xal_comm_transport_t& t, const ProcessLayout& layout,
                              uint32_t timeout_ms, std::span<const HostPart> parts,
                              Scratch& scratch) {
  try {
    return Step(t, layout, timeout_ms, parts, scratch).run();
  } catch (const std::bad_alloc&) {
    // The other processes may be inside the exchange already: this one
    // cannot pair its next call with theirs, so the communicator breaks.
    StepResult r;
    r.status = XAL_ERROR_OUT_OF_HOST_MEMORY;
    r.message = "out of host memory for the leader's step";
    r.sticky = true;
    return r;
  }
}

}  // namespace xal::core

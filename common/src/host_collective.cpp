#include "xal_common/host_collective.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "xal_common/reduce.hpp"

namespace xal::common {

namespace {

using Clock = std::chrono::steady_clock;

// Each rank's share is a multiple of this many elements (cache lines).
constexpr size_t kSliceAlign = 64;

struct Slice {
  size_t begin, count;
};

Slice slice_of(size_t count, uint32_t rank, uint32_t n) {
  const size_t per = (count / n + kSliceAlign - 1) / kSliceAlign * kSliceAlign;
  const size_t begin = std::min(count, per * rank);
  const size_t end = rank + 1 == n ? count : std::min(count, begin + per);
  return {begin, end - begin};
}

const char* at(const void* p, size_t offset) { return static_cast<const char*>(p) + offset; }
char* at(void* p, size_t offset) { return static_cast<char*>(p) + offset; }

void copy(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes) std::memcpy(dst, src, bytes);
}

bool uses_op(CollKind k) {
  return k == CollKind::kAllreduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}
bool uses_root(CollKind k) { return k == CollKind::kBroadcast || k == CollKind::kReduce; }

}  // namespace

const char* coll_name(CollKind kind) {
  switch (kind) {
    case CollKind::kAllreduce: return "allreduce";
    case CollKind::kBroadcast: return "broadcast";
    case CollKind::kReduce: return "reduce";
    case CollKind::kAllgather: return "allgather";
    case CollKind::kReduceScatter: return "reduce_scatter";
    case CollKind::kAlltoall: return "alltoall";
  }
  return "collective";
}

xal_status_t check_coll_dtype_op(const CollDesc& d, std::string* why) {
  return check_dtype_op(d.dtype, uses_op(d.kind) ? d.op : XAL_OP_SUM, why);
}

std::string coll_difference(const CollDesc& b, const CollDesc& a) {
  if (b.kind != a.kind) return std::string("operation ") + coll_name(b.kind) + " vs " + coll_name(a.kind);
  if (b.count != a.count) return "count " + std::to_string(b.count) + " vs " + std::to_string(a.count);
  if (b.dtype != a.dtype) return std::string("dtype ") + dtype_name(b.dtype) + " vs " + dtype_name(a.dtype);
  if (uses_op(a.kind) && b.op != a.op) return std::string("op ") + op_name(b.op) + " vs " + op_name(a.op);
  if (uses_root(a.kind) && b.root != a.root)
    return "root " + std::to_string(b.root) + " vs " + std::to_string(a.root);
  if (a.op == XAL_OP_AVG && b.avg_divisor != a.avg_divisor)
    return "avg divisor " + std::to_string(b.avg_divisor) + " vs " + std::to_string(a.avg_divisor);
  return {};
}

size_t coll_in_elements(const CollDesc& d, uint32_t rank, uint32_t n) {
  switch (d.kind) {
    case CollKind::kBroadcast: return rank == d.root ? d.count : 0;
    case CollKind::kReduceScatter:
    case CollKind::kAlltoall: return d.count * n;
    default: return d.count;
  }
}

size_t coll_out_elements(const CollDesc& d, uint32_t rank, uint32_t n) {
  switch (d.kind) {
    case CollKind::kReduce: return rank == d.root ? d.count : 0;
    case CollKind::kAllgather:
    case CollKind::kAlltoall: return d.count * n;
    default: return d.count;
  }
}

double coll_bus_bytes(const CollDesc& d, uint32_t n) {
  const double bytes = static_cast<double>(d.count) * static_cast<double>(dtype_size(d.dtype));
  const double dn = n;
  switch (d.kind) {
    case CollKind::kAllreduce: return bytes * 2.0 * (dn - 1) / dn;
    case CollKind::kAllgather:
    case CollKind::kReduceScatter:
    case CollKind::kAlltoall: return bytes * (dn - 1);  // (n-1)/n of n*count
    default: return bytes;
  }
}

Rendezvous::Rendezvous(uint32_t size, uint32_t timeout_ms)
    : size_(size), timeout_ms_(timeout_ms), parts_(size), arrived_(size, false),
      running_(size, false) {}

xal_status_t Rendezvous::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

xal_status_t Rendezvous::first_error() const {
  std::lock_guard lock(mutex_);
  return first_error_ != XAL_SUCCESS ? first_error_ : error_;
}

void Rendezvous::throw_if_broken(CollKind kind) const {
  std::lock_guard lock(mutex_);
  check_usable(kind);
}

void Rendezvous::abort() {
  break_with(XAL_ERROR_ABORTED, "the communicator was aborted (xal_comm_abort)");
}

void Rendezvous::break_with(xal_status_t status, const std::string& message) {
  std::lock_guard lock(mutex_);
  if (error_ == XAL_SUCCESS) {
    error_ = status;
    error_message_ = message;
  }
  cv_.notify_all();
}

void Rendezvous::check_usable(CollKind kind) const {
  if (error_ != XAL_SUCCESS) throw CollError(error_, std::string(coll_name(kind)) + ": " + error_message_);
}

std::string Rendezvous::describe_mismatch() const {
  for (uint32_t r = 1; r < size_; ++r) {
    const std::string what = coll_difference(parts_[r].desc, parts_[0].desc);
    if (!what.empty())
      return "ranks disagree: rank " + std::to_string(r) + " called with " + what + " of rank 0";
  }
  return {};
}

void Rendezvous::barrier(std::unique_lock<std::mutex>& lock, uint32_t rank, CollKind kind) {
  check_usable(kind);
  const uint64_t gen = generation_;
  arrived_[rank] = true;
  if (++count_ == size_) {
    count_ = 0;
    std::fill(arrived_.begin(), arrived_.end(), false);
    ++generation_;
    cv_.notify_all();
    return;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  while (generation_ == gen) {
    check_usable(kind);
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && generation_ == gen &&
        error_ == XAL_SUCCESS) {
      std::string missing;
      for (uint32_t r = 0; r < size_; ++r)
        if (!arrived_[r]) missing += (missing.empty() ? "" : ",") + std::to_string(r);
      error_ = XAL_ERROR_TIMEOUT;
      error_message_ = "timed out after " + std::to_string(timeout_ms_) +
                       " ms waiting for rank(s) " + missing + " (seen from rank " +
                       std::to_string(rank) + ")";
      cv_.notify_all();
      check_usable(kind);
    }
  }
}

void Rendezvous::run(uint32_t rank, const HostPart& part) {
  bool mismatch = false;
  std::string mismatch_message;
  // Marks the rank's run as over on every way out (cv_ wakes a second run
  // of the rank that waits for it).
  struct Running {
    Rendezvous& rv;
    uint32_t rank;
    ~Running() {
      std::lock_guard lock(rv.mutex_);
      rv.running_[rank] = false;
      if (rv.waiting_runs_) rv.cv_.notify_all();
    }
  };
  {
    std::unique_lock lock(mutex_);
    // One run per rank at a time: the run under way ends in bounded time
    // (every barrier has the timeout), or the rendezvous breaks.
    if (running_[rank]) {
      ++waiting_runs_;
      cv_.wait(lock, [&] { return !running_[rank] || error_ != XAL_SUCCESS; });
      --waiting_runs_;
    }
    // Once broken (sticky), a rank must not touch parts_: a peer released
    // early from the previous run's last barrier may still be reading them.
    check_usable(part.desc.kind);
    running_[rank] = true;
  }
  Running running{*this, rank};
  {
    std::unique_lock lock(mutex_);
    check_usable(part.desc.kind);
    parts_[rank] = part;
    if (count_ + 1 == size_) {  // the last to arrive checks agreement
      mismatch_message_ = describe_mismatch();
      mismatch_ = !mismatch_message_.empty();
      if (mismatch_ && first_error_ == XAL_SUCCESS && error_ == XAL_SUCCESS)
        first_error_ = XAL_ERROR_COLLECTIVE_MISMATCH;
    }
    barrier(lock, rank, part.desc.kind);
    mismatch = mismatch_;
    mismatch_message = mismatch_message_;
  }
  if (!mismatch) work(rank);
  {
    std::unique_lock lock(mutex_);
    barrier(lock, rank, part.desc.kind);
  }
  if (mismatch)
    throw CollError(XAL_ERROR_COLLECTIVE_MISMATCH,
                    std::string(coll_name(part.desc.kind)) + ": " + mismatch_message);
}

void Rendezvous::work(uint32_t rank) {
  const uint32_t n = size_;
  const CollDesc& d = parts_[rank].desc;
  const size_t es = dtype_size(d.dtype);
  const uint32_t divisor = d.avg_divisor ? d.avg_divisor : n;
  // Byte offset of block j in a part's n-block input or output.
  auto in_block = [&](uint32_t part, uint32_t j) {
    const size_t stride = parts_[part].in_stride ? parts_[part].in_stride : d.count;
    return j * stride * es;
  };
  auto out_block = [&](uint32_t part, uint32_t j) {
    const size_t stride = parts_[part].out_stride ? parts_[part].out_stride : d.count;
    return j * stride * es;
  };
  std::vector<const void*> srcs(n);
  std::vector<void*> dsts;
  switch (d.kind) {
    case CollKind::kAllreduce:
    case CollKind::kReduce: {
      const Slice s = slice_of(d.count, rank, n);
      if (s.count == 0) return;
      for (uint32_t j = 0; j < n; ++j) srcs[j] = at(parts_[j].in, s.begin * es);
      if (d.kind == CollKind::kAllreduce)
        for (uint32_t j = 0; j < n; ++j) dsts.push_back(at(parts_[j].out, s.begin * es));
      else
        dsts.push_back(at(parts_[d.root].out, s.begin * es));
      reduce(d.dtype, d.op, dsts, srcs, s.count, divisor);
      return;
    }
    case CollKind::kBroadcast:
      copy(parts_[rank].out, parts_[d.root].in, d.count * es);
      return;
    case CollKind::kAllgather: {
      const size_t block = d.count * es;
      for (uint32_t j = 0; j < n; ++j) copy(at(parts_[rank].out, out_block(rank, j)), parts_[j].in, block);
      return;
    }
    case CollKind::kReduceScatter: {
      for (uint32_t j = 0; j < n; ++j) srcs[j] = at(parts_[j].in, in_block(j, rank));
      dsts.push_back(parts_[rank].out);
      reduce(d.dtype, d.op, dsts, srcs, d.count, divisor);
      return;
    }
    case CollKind::kAlltoall: {
      const size_t block = d.count * es;
      bool in_place = false;
      for (const HostPart& p : parts_) in_place |= p.in == p.out;
      if (!in_place) {
        for (uint32_t j = 0; j < n; ++j)
          copy(at(parts_[rank].out, out_block(rank, j)), at(parts_[j].in, in_block(j, rank)), block);
        return;
      }
      // In place: gather privately, wait until every rank has read its
      // inputs, then write.
      std::vector<char> staged(block * n);
      for (uint32_t j = 0; j < n; ++j)
        copy(staged.data() + j * block, at(parts_[j].in, in_block(j, rank)), block);
      {
        std::unique_lock lock(mutex_);
        barrier(lock, rank, d.kind);
      }
      for (uint32_t j = 0; j < n; ++j)
        copy(at(parts_[rank].out, out_block(rank, j)), staged.data() + j * block, block);
      return;
    }
  }
}

}  // namespace xal::common

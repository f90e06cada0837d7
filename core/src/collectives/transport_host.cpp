#include "transport_host.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "xal_common/reduce.hpp"
#include "xal_common/stream_copy.hpp"

namespace xal::core {

namespace {

// A slice of work per task: large enough to amortise the task, small
// enough to spread a few MiB over the cores.
constexpr size_t kReduceSliceBytes = size_t{256} << 10;
constexpr size_t kCopySliceBytes = size_t{1} << 20;

template <class T>
T* advance(T* p, size_t bytes) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return reinterpret_cast<Byte*>(p) + bytes;
}

}  // namespace

void parallel_reduce(xal_dtype_t dtype, xal_op_t op, std::span<void* const> dsts,
                     std::span<const void* const> srcs, size_t count, uint32_t avg_divisor) {
  const size_t es = common::dtype_size(dtype);
  const size_t grain = std::max<size_t>(1024, kReduceSliceBytes / es);
  if (count < 2 * grain) {
    common::reduce(dtype, op, dsts, srcs, count, avg_divisor);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, count, grain),
                    [&](const tbb::blocked_range<size_t>& r) {
                      const size_t off = r.begin() * es;
                      std::vector<void*> d(dsts.size());
                      std::vector<const void*> s(srcs.size());
                      for (size_t i = 0; i < d.size(); ++i) d[i] = advance(dsts[i], off);
                      for (size_t i = 0; i < s.size(); ++i) s[i] = advance(srcs[i], off);
                      common::reduce(dtype, op, d, s, r.size(), avg_divisor);
                    });
}

void parallel_copy(std::span<void* const> dsts, const void* src, size_t bytes) {
  std::vector<void*> to;
  for (void* d : dsts)
    if (d != src) to.push_back(d);
  if (to.empty() || bytes == 0) return;
  const size_t slices = (bytes + kCopySliceBytes - 1) / kCopySliceBytes;
  if (slices * to.size() < 2) {
    for (void* d : to) std::memmove(d, src, bytes);
    return;
  }
  // Task k copies slice k % slices to destination k / slices; a copy from
  // common::kStreamCopyMinBytes takes streaming stores (stream_copy.hpp).
  tbb::parallel_for(tbb::blocked_range<size_t>(0, slices * to.size()),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t k = r.begin(); k != r.end(); ++k) {
                        const size_t off = (k % slices) * kCopySliceBytes;
                        common::stream_copy(advance(to[k / slices], off), advance(src, off),
                                            std::min(kCopySliceBytes, bytes - off), bytes);
                      }
                    });
}

void* Scratch::get(size_t bytes) {
  if (bytes > bytes_ || !buf_) {
    buf_.reset();
    buf_ = std::make_unique_for_overwrite<char[]>(std::max<size_t>(bytes, 1));
    bytes_ = bytes;
  }
  return buf_.get();
}

}  // namespace xal::core

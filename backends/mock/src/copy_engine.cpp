#include "copy_engine.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace xal::mock {

namespace {

template <class Piece>
void for_chunks(size_t bytes, size_t threshold, Piece&& piece) {
  if (bytes < threshold || bytes <= kChunk) {
    piece(size_t{0}, bytes);
    return;
  }
  const size_t chunks = (bytes + kChunk - 1) / kChunk;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, chunks),
                    [&](const tbb::blocked_range<size_t>& r) {
                      const size_t begin = r.begin() * kChunk;
                      const size_t end = std::min(bytes, r.end() * kChunk);
                      piece(begin, end - begin);
                    });
}

}  // namespace

void copy_bytes(void* dst, const void* src, size_t bytes, size_t threshold) {
  if (bytes == 0 || dst == src) return;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for_chunks(bytes, threshold,
             [&](size_t off, size_t n) { std::memcpy(d + off, s + off, n); });
}

void move_bytes(void* dst, const void* src, size_t bytes, size_t threshold) {
  if (bytes == 0 || dst == src) return;
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto s = reinterpret_cast<uintptr_t>(src);
  const bool overlap = d < s + bytes && s < d + bytes;
  if (overlap)
    std::memmove(dst, src, bytes);
  else
    copy_bytes(dst, src, bytes, threshold);
}

void fill_bytes(void* dst, uint8_t value, size_t bytes, size_t threshold) {
  if (bytes == 0) return;
  auto* d = static_cast<unsigned char*>(dst);
  for_chunks(bytes, threshold,
             [&](size_t off, size_t n) { std::memset(d + off, value, n); });
}

void throttle(std::chrono::steady_clock::time_point start, size_t bytes,
              double gbps) {
  if (gbps <= 0.0 || bytes == 0) return;
  // Capped at a year, so that the cast below cannot overflow whatever the
  // rate (profiles refuse rates under kMinRateGbps anyway).
  constexpr double kMaxSeconds = 365.0 * 24 * 3600;
  const std::chrono::duration<double> needed(
      std::min(static_cast<double>(bytes) / (gbps * 1e9), kMaxSeconds));
  std::this_thread::sleep_until(
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(needed));
}

}  // namespace xal::mock

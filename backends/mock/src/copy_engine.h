// Byte movement for the simulated devices: memcpy and memset, split over
// oneTBB workers from a size threshold up (an instance's setting,
// XAL_MOCK_PARALLEL_COPY), and the optional bandwidth throttle.
// Stateless; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace xal::mock {

// Default threshold: copies at least this large run as a tbb::parallel_for
// over kChunk pieces (README.md has the measurements).
inline constexpr size_t kDefaultParallelThreshold = size_t{8} << 20;
inline constexpr size_t kChunk = size_t{1} << 20;
// Default largest copy that runs on the caller's thread when its stream is
// idle (see Stream::run_or_enqueue).
inline constexpr size_t kDefaultInlineLimit = size_t{64} << 20;
// A threshold that turns the parallel path off.
inline constexpr size_t kNeverParallel = SIZE_MAX;

// memcpy(dst, src, bytes), parallel from `parallel_threshold` bytes up.
// Ranges must not overlap unless dst == src.
void copy_bytes(void* dst, const void* src, size_t bytes,
                size_t parallel_threshold = kDefaultParallelThreshold);
// memmove semantics: used when the ranges may overlap (dtod within one
// arena, peer copies).
void move_bytes(void* dst, const void* src, size_t bytes,
                size_t parallel_threshold = kDefaultParallelThreshold);
// memset(dst, value, bytes), parallel from `parallel_threshold` bytes up.
void fill_bytes(void* dst, uint8_t value, size_t bytes,
                size_t parallel_threshold = kDefaultParallelThreshold);

// The start of a throttled copy: now, or nothing when gbps <= 0 (reading
// the clock is not free).
inline std::chrono::steady_clock::time_point throttle_start(double gbps) {
  return gbps > 0.0 ? std::chrono::steady_clock::now()
                    : std::chrono::steady_clock::time_point{};
}

// Sleeps until `bytes` at `gbps` GB/s (1e9 B/s) would have taken since
// `start`. No-op when gbps <= 0.
void throttle(std::chrono::steady_clock::time_point start, size_t bytes,
              double gbps);

}  // namespace xal::mock

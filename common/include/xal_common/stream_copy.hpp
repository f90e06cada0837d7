// A copy of large buffers with non-temporal (streaming) stores, for copies
// whose destination is not read again right away: a message copied out of
// another process's memory, a block of an all-to-all. The stores go to
// memory without first reading the destination's lines into the caches, so
// a copy larger than the caches moves two bytes of memory traffic per byte
// instead of three, and does not evict what the caches hold.
// Pure functions over host memory; thread-safe.
#pragma once

#include <cstddef>

namespace xal::common {

// From this size a copy takes streaming stores (stream_copy_large below);
// smaller ones are plain memcpy, whose destination stays in the caches for
// the code that reads it next.
inline constexpr size_t kStreamCopyMinBytes = size_t{4} << 20;

// Copies `bytes` from `src` to `dst` (the ranges must not overlap; with 0
// bytes either may be null): memcpy below kStreamCopyMinBytes,
// stream_copy_large from there.
void stream_copy(void* dst, const void* src, size_t bytes);

// The same for one piece of a larger copy: streaming stores when the whole
// operation, `whole_bytes`, reaches `min_bytes`, whatever the piece's size.
void stream_copy(void* dst, const void* src, size_t bytes, size_t whole_bytes,
                 size_t min_bytes = kStreamCopyMinBytes);

// Copies `bytes` from `src` to `dst` (no overlap) with non-temporal stores
// where the CPU has them (x86-64: 32-byte AVX2 stores when the CPU has
// AVX2, 16-byte SSE2 stores otherwise); elsewhere, or with
// XAL_STREAM_COPY=0 in the environment (read once), memcpy. The stores are
// fenced before it returns, so the bytes are visible to other threads and
// processes like those of a memcpy.
void stream_copy_large(void* dst, const void* src, size_t bytes);

// Which loop stream_copy_large uses on this CPU: "avx2", "sse2" or
// "memcpy" (the tests check it against the CPU).
const char* stream_copy_kind();

}  // namespace xal::common

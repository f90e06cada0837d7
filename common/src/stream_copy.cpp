// Streaming copies (stream_copy.hpp).
#include "xal_common/stream_copy.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define XAL_STREAM_COPY_X86 1
#endif

namespace xal::common {

namespace {

#ifdef XAL_STREAM_COPY_X86

// Bytes copied with memcpy until `dst` is aligned to `align`.
size_t head_bytes(const void* dst, size_t align, size_t bytes) {
  const size_t misalign = reinterpret_cast<uintptr_t>(dst) & (align - 1);
  const size_t head = misalign ? align - misalign : 0;
  return head < bytes ? head : bytes;
}

// 128 bytes per step: four 32-byte loads, then four streaming stores.
__attribute__((target("avx2"))) void copy_avx2(char* dst, const char* src, size_t bytes) {
  const size_t head = head_bytes(dst, 32, bytes);
  std::memcpy(dst, src, head);
  dst += head, src += head, bytes -= head;
  for (; bytes >= 128; dst += 128, src += 128, bytes -= 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 64));
    const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + 96), d);
  }
  _mm_sfence();
  std::memcpy(dst, src, bytes);
}

// The same with SSE2's 16-byte stores, which every x86-64 CPU has.
void copy_sse2(char* dst, const char* src, size_t bytes) {
  const size_t head = head_bytes(dst, 16, bytes);
  std::memcpy(dst, src, head);
  dst += head, src += head, bytes -= head;
  for (; bytes >= 64; dst += 64, src += 64, bytes -= 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), d);
  }
  _mm_sfence();
  std::memcpy(dst, src, bytes);
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

#endif

// XAL_STREAM_COPY=0: memcpy everywhere. Read once.
bool streaming_on() {
  static const bool on = [] {
    const char* v = std::getenv("XAL_STREAM_COPY");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

}  // namespace

void stream_copy_large(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;  // dst and src may then be null, which memcpy forbids
#ifdef XAL_STREAM_COPY_X86
  if (!streaming_on()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  if (has_avx2()) copy_avx2(out, in, bytes);
  else copy_sse2(out, in, bytes);
#else
  std::memcpy(dst, src, bytes);
#endif
}

void stream_copy(void* dst, const void* src, size_t bytes, size_t whole_bytes,
                 size_t min_bytes) {
  if (bytes == 0) return;
  if (whole_bytes < min_bytes) std::memcpy(dst, src, bytes);
  else stream_copy_large(dst, src, bytes);
}

void stream_copy(void* dst, const void* src, size_t bytes) {
  stream_copy(dst, src, bytes, bytes);
}

const char* stream_copy_kind() {
#ifdef XAL_STREAM_COPY_X86
  if (!streaming_on()) return "memcpy";
  return has_avx2() ? "avx2" : "sse2";
#else
  return "memcpy";
#endif
}

}  // namespace xal::common

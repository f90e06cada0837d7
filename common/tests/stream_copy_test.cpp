#include "xal_common/stream_copy.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace xal::common;

namespace {

// Bytes that differ at every offset within a 256-byte window, so that a
// copy shifted by any amount short of that is caught.
std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + (i >> 8) + seed);
  return v;
}

// Copies `n` bytes between offsets `src_off` and `dst_off` of two buffers
// with `copy`, and checks the copied range and the guard bytes around it.
template <class Copy>
void check(Copy copy, size_t n, size_t src_off, size_t dst_off) {
  constexpr size_t kGuard = 64;
  const std::vector<uint8_t> src = pattern(n + src_off, 7);
  std::vector<uint8_t> dst(dst_off + n + kGuard, 0xEE);
  copy(dst.data() + dst_off, src.data() + src_off, n);
  if (n) {
    ASSERT_EQ(std::memcmp(dst.data() + dst_off, src.data() + src_off, n), 0)
        << n << " bytes, src +" << src_off << ", dst +" << dst_off;
  }
  for (size_t i = 0; i < dst_off; ++i) ASSERT_EQ(dst[i], 0xEE) << "before, at " << i;
  for (size_t i = dst_off + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xEE) << "after, at " << i;
}

}  // namespace

TEST(StreamCopy, LargeCopiesEveryAlignmentAndTail) {
  // Sizes around the loops' steps (64 and 128 bytes) and their heads (16
  // and 32), at every destination misalignment up to 33 bytes.
  for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{31}, size_t{63}, size_t{64},
                   size_t{127}, size_t{128}, size_t{129}, size_t{4095}, size_t{65537}})
    for (size_t dst_off = 0; dst_off < 34; ++dst_off)
      check(stream_copy_large, n, dst_off % 5, dst_off);
}

TEST(StreamCopy, NothingToCopyAcceptsNull) {
  stream_copy(nullptr, nullptr, 0);
  stream_copy_large(nullptr, nullptr, 0);
  uint8_t b = 5;
  stream_copy_large(&b, nullptr, 0);
  EXPECT_EQ(b, 5);
}

TEST(StreamCopy, AboveTheThresholdStreamsAndStaysExact) {
  // Across the threshold: memcpy below it, streaming stores from it.
  for (size_t n : {kStreamCopyMinBytes - 1, kStreamCopyMinBytes, kStreamCopyMinBytes + 77})
    for (size_t off : {size_t{0}, size_t{3}, size_t{40}})
      check(static_cast<void (*)(void*, const void*, size_t)>(stream_copy), n, off, off + 1);
  // A piece of a larger copy: the whole copy's size decides.
  auto piece_of_large = [](void* d, const void* s, size_t n) { stream_copy(d, s, n, size_t{64} << 20); };
  auto piece_of_small = [](void* d, const void* s, size_t n) { stream_copy(d, s, n, n, size_t{64} << 20); };
  for (size_t n : {size_t{1}, size_t{129}, size_t{65537}}) {
    check(piece_of_large, n, 3, 5);
    check(piece_of_small, n, 3, 5);
  }
}

TEST(StreamCopy, NamesTheLoopItUses) {
  const std::string kind = stream_copy_kind();
#if defined(__x86_64__)
  EXPECT_TRUE(kind == "avx2" || kind == "sse2" || kind == "memcpy") << kind;
  if (kind != "memcpy") {
    EXPECT_EQ(kind, __builtin_cpu_supports("avx2") ? "avx2" : "sse2");
  }
#else
  EXPECT_EQ(kind, "memcpy");
#endif
}

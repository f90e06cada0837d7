// Device memory: the arena allocator directly, and mem_* through the table:
// capacity, OUT_OF_MEMORY at the profile size, alignment, coalescing.
#include <algorithm>
#include <cstring>
#include <random>
#include <set>

#include "arena.h"
#include "mock_harness.h"

namespace xal::mock {
namespace {

using test::Instance;
using test::table;

constexpr uint64_t MiB = 1ull << 20;

TEST(Arena, AlignmentAndAccounting) {
  Arena a(16 * MiB);
  EXPECT_EQ(a.capacity(), 16 * MiB);
  std::set<uint64_t> seen;
  for (uint64_t size : {1ull, 255ull, 256ull, 257ull, 1000ull, 4097ull}) {
    auto r = a.allocate(size);
    ASSERT_NE(r.address, 0u);
    EXPECT_EQ(r.address % Arena::kAlignment, 0u);
    EXPECT_TRUE(seen.insert(r.address).second);
    EXPECT_EQ(a.allocation_size(r.address), (size + 255) / 256 * 256);
  }
  EXPECT_EQ(a.allocation_count(), 6u);
  EXPECT_EQ(a.used(), 256u + 256 + 256 + 512 + 1024 + 4352);
  for (uint64_t p : seen) EXPECT_TRUE(a.release(p));
  EXPECT_EQ(a.used(), 0u);
  EXPECT_FALSE(a.release(*seen.begin()));  // double free
  EXPECT_FALSE(a.release(0));
  EXPECT_EQ(a.allocate(0).address, 0u);
}

TEST(Arena, FillsExactlyAndCoalesces) {
  Arena a(4 * MiB);
  std::vector<uint64_t> blocks;
  for (int i = 0; i < 16; ++i) {
    auto r = a.allocate(256 * 1024);
    ASSERT_NE(r.address, 0u) << i;
    blocks.push_back(r.address);
  }
  auto full = a.allocate(256);
  EXPECT_EQ(full.address, 0u);
  EXPECT_EQ(full.free, 0u);
  // Free every other block: 2 MiB free but fragmented.
  for (size_t i = 0; i < blocks.size(); i += 2) ASSERT_TRUE(a.release(blocks[i]));
  auto frag = a.allocate(512 * 1024);
  EXPECT_EQ(frag.address, 0u);
  EXPECT_EQ(frag.free, 2 * MiB);
  EXPECT_EQ(frag.largest, 256u * 1024);
  // Free the rest: everything coalesces back into one range.
  for (size_t i = 1; i < blocks.size(); i += 2) ASSERT_TRUE(a.release(blocks[i]));
  auto whole = a.allocate(4 * MiB);
  EXPECT_NE(whole.address, 0u);
  EXPECT_EQ(whole.address, a.base());
}

TEST(Arena, LargeFreesReturnPagesToTheSystem) {
  Arena a(8 * MiB);
  auto r = a.allocate(4 * MiB);
  ASSERT_NE(r.address, 0u);
  auto* bytes = reinterpret_cast<unsigned char*>(r.address);
  std::memset(bytes, 0x7f, 4 * MiB);
  ASSERT_TRUE(a.release(r.address));
  // MADV_DONTNEED on private anonymous memory: the pages read back as zero.
  auto again = a.allocate(4 * MiB);
  ASSERT_EQ(again.address, r.address);
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[2 * MiB], 0);
  EXPECT_EQ(bytes[4 * MiB - 1], 0);
  // Small frees keep their pages (no system call on the hot path).
  auto small = a.allocate(4096);
  auto* sb = reinterpret_cast<unsigned char*>(small.address);
  sb[0] = 9;
  ASSERT_TRUE(a.release(small.address));
  EXPECT_EQ(a.allocate(4096).address, small.address);
  EXPECT_EQ(sb[0], 9);
}

TEST(Arena, RandomisedStaysConsistent) {
  Arena a(8 * MiB);
  std::mt19937 rng(42);
  std::vector<std::pair<uint64_t, uint64_t>> live;
  for (int step = 0; step < 4000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      const uint64_t size = 1 + rng() % (64 * 1024);
      auto r = a.allocate(size);
      if (r.address) live.emplace_back(r.address, (size + 255) / 256 * 256);
    } else {
      const size_t i = rng() % live.size();
      ASSERT_TRUE(a.release(live[i].first));
      live.erase(live.begin() + static_cast<long>(i));
    }
    if (step % 500 == 0) {
      auto sorted = live;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 1; i < sorted.size(); ++i)
        ASSERT_LE(sorted[i - 1].first + sorted[i - 1].second, sorted[i].first);
    }
  }
  for (auto& [p, n] : live) ASSERT_TRUE(a.release(p));
  EXPECT_EQ(a.used(), 0u);
  EXPECT_NE(a.allocate(8 * MiB).address, 0u);
}

TEST(Memory, AllocUpToProfileSizeThenOutOfMemory) {
  Instance inst(R"([{"profile": "a100-40g", "memory": "8MiB"}])");
  xal_bdevice_t* d = inst.device(0);
  uint64_t free = 0, total = 0;
  ASSERT_EQ(table().mem_get_info(d, &free, &total), XAL_SUCCESS);
  EXPECT_EQ(total, 8 * MiB);
  EXPECT_EQ(free, 8 * MiB);
  std::vector<xal_devptr_t> ptrs;
  for (int i = 0; i < 8; ++i) ptrs.push_back(inst.alloc(0, MiB));
  ASSERT_EQ(table().mem_get_info(d, &free, &total), XAL_SUCCESS);
  EXPECT_EQ(free, 0u);
  xal_devptr_t p = 0;
  EXPECT_EQ(table().mem_alloc(d, 1, &p), XAL_ERROR_OUT_OF_MEMORY);
  const std::string msg = test::last_error().message;
  EXPECT_NE(msg.find("requested 1 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("total 8388608"), std::string::npos) << msg;
  // Every byte of the arena is usable memory.
  for (xal_devptr_t q : ptrs) {
    auto* h = static_cast<unsigned char*>(test::host(d, q, MiB));
    ASSERT_NE(h, nullptr);
    h[0] = 1;
    h[MiB - 1] = 2;
  }
  for (xal_devptr_t q : ptrs) EXPECT_EQ(table().mem_free(d, q), XAL_SUCCESS);
  ASSERT_EQ(table().mem_get_info(d, &free, &total), XAL_SUCCESS);
  EXPECT_EQ(free, 8 * MiB);
  EXPECT_EQ(table().mem_alloc(d, 8 * MiB + 1, &p), XAL_ERROR_OUT_OF_MEMORY);
}

TEST(Memory, RealH100ReservesItsFullSize) {
  Instance inst("1*h100-sxm-80g");
  xal_bdevice_t* d = inst.device(0);
  uint64_t free = 0, total = 0;
  ASSERT_EQ(table().mem_get_info(d, &free, &total), XAL_SUCCESS);
  EXPECT_EQ(total, 80ull << 30);
  // Only reserved, never touched: this works on a machine with less memory.
  xal_devptr_t big = 0, p = 0;
  ASSERT_EQ(table().mem_alloc(d, 79ull << 30, &big), XAL_SUCCESS);
  ASSERT_EQ(table().mem_alloc(d, 1ull << 30, &p), XAL_SUCCESS);
  EXPECT_EQ(table().mem_alloc(d, 1, &p), XAL_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(table().mem_free(d, big), XAL_SUCCESS);
  xal_device_properties_t props{};
  props.struct_size = sizeof(props);
  ASSERT_EQ(table().device_get_properties(d, &props), XAL_SUCCESS);
  EXPECT_EQ(props.max_allocation_bytes, 80ull << 30);
}

TEST(Memory, BadInput) {
  Instance inst(R"([{"profile": "l4", "memory": "1MiB", "count": 2}])");
  xal_bdevice_t* d = inst.device(0);
  xal_devptr_t p = 0;
  EXPECT_EQ(table().mem_alloc(d, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().mem_alloc(d, 16, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().mem_alloc(d, SIZE_MAX, &p), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(table().mem_alloc(nullptr, 16, &p), XAL_ERROR_INVALID_HANDLE);
  p = inst.alloc(0, 1000);
  EXPECT_EQ(table().mem_free(d, p + 256), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("not the start of a live allocation"),
            std::string::npos);
  EXPECT_EQ(table().mem_free(inst.device(1), p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().mem_free(d, 0x10), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().mem_free(d, p), XAL_SUCCESS);
  EXPECT_EQ(table().mem_free(d, p), XAL_ERROR_INVALID_ARGUMENT);
  uint64_t f = 0;
  EXPECT_EQ(table().mem_get_info(d, nullptr, &f), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().mem_get_info(d, &f, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(test::host(d, p, 2 * MiB), nullptr);
  EXPECT_EQ(test::host(d, 0, 1), nullptr);
}

TEST(Memory, HostMemory) {
  Instance inst("1*l4");
  void* p = nullptr;
  ASSERT_EQ(table().host_alloc(inst.backend(), 10000, 0, &p), XAL_SUCCESS);
  ASSERT_NE(p, nullptr);
  static_cast<char*>(p)[9999] = 1;
  EXPECT_EQ(table().host_alloc(inst.backend(), 0, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().host_alloc(inst.backend(), 8, 0x80, &p), XAL_ERROR_INVALID_ARGUMENT);
  void* q = nullptr;
  ASSERT_EQ(table().host_alloc(inst.backend(), 8, XAL_HOST_ALLOC_WRITE_COMBINED, &q),
            XAL_SUCCESS);
  EXPECT_EQ(table().host_free(inst.backend(), p), XAL_SUCCESS);
  EXPECT_EQ(table().host_free(inst.backend(), p), XAL_ERROR_INVALID_ARGUMENT);
  int local = 0;
  EXPECT_EQ(table().host_free(inst.backend(), &local), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().host_register(inst.backend(), &local, sizeof local), XAL_SUCCESS);
  EXPECT_EQ(table().host_register(inst.backend(), &local, sizeof local),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().host_unregister(inst.backend(), &local), XAL_SUCCESS);
  EXPECT_EQ(table().host_unregister(inst.backend(), &local), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().host_register(inst.backend(), nullptr, 4), XAL_ERROR_INVALID_ARGUMENT);
  // q is released by shutdown.
}

}  // namespace
}  // namespace xal::mock

// Group "memory": allocation and free, zero size, alignment, allocation up
// to the reported capacity and past it, quotas.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "conform.hpp"
#include "events.hpp"
#include "helpers.hpp"

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

class Memory : public conform::DeviceTest {};

TEST_P(Memory, AllocFree) {
  for (size_t bytes : {size_t{1}, size_t{255}, size_t{4096}, size_t{kMiB + 7}}) {
    xal_devptr_t ptr = 0;
    XAL_ASSERT_OK(xal_mem_alloc(dev(), bytes, &ptr));
    EXPECT_NE(ptr, 0u) << "allocation of " << bytes << " bytes returned 0";
    XAL_ASSERT_OK(xal_mem_free(dev(), ptr));
  }
}

TEST_P(Memory, ZeroSize) {
  xal_devptr_t ptr = 0;
  XAL_EXPECT_STATUS(xal_mem_alloc(dev(), 0, &ptr), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_P(Memory, AlignmentAndDistinct) {
  std::vector<conform::DeviceBuffer> buffers;
  const size_t sizes[] = {1, 3, 17, 255, 256, 257, 4095, 65537};
  for (int round = 0; round < 4; ++round) {
    for (size_t bytes : sizes) {
      buffers.emplace_back(dev(), bytes);
      XAL_ASSERT_OK(buffers.back().status());
      EXPECT_EQ(buffers.back().ptr() % 256, 0u)
          << "allocation of " << bytes << " bytes at 0x" << std::hex
          << buffers.back().ptr() << " is not 256-byte aligned";
    }
  }
  // Live allocations never overlap.
  std::vector<std::pair<xal_devptr_t, size_t>> ranges;
  for (const auto& b : buffers) ranges.emplace_back(b.ptr(), b.bytes());
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    EXPECT_GE(ranges[i].first, ranges[i - 1].first + ranges[i - 1].second)
        << "allocations overlap";
  }
}

TEST_P(Memory, MemInfoTracksAllocations) {
  uint64_t free0 = 0, total0 = 0, free1 = 0, total1 = 0;
  XAL_ASSERT_OK(xal_mem_get_info(dev(), &free0, &total0));
  const size_t bytes = 64 * kMiB;
  if (free0 < 2 * bytes) XAL_CONFORM_UNSUPPORTED("less than 128 MiB free");
  conform::DeviceBuffer buf(dev(), bytes);
  XAL_ASSERT_OK(buf.status());
  XAL_ASSERT_OK(xal_mem_get_info(dev(), &free1, &total1));
  EXPECT_EQ(total1, total0);
  EXPECT_LE(free1 + bytes, free0 + 2 * kMiB)
      << "free memory did not drop by the 64 MiB allocated";
}

// Allocates the reported capacity in large untouched blocks: every block
// up to it must succeed, one more must fail with OUT_OF_MEMORY, and the
// device must work once everything is freed. A margin of the free memory
// (64 MiB and 1/256 of it) is left out: a driver's free figure is not all
// allocatable in blocks (each rounded up to its granularity, 2 MiB on
// NVIDIA cards, plus the page tables of each mapping); blocks past the held
// ones must fail before they add up to more than the free memory.
TEST_P(Memory, UpToCapacityAndPast) {
  uint64_t free_bytes = 0, total = 0;
  XAL_ASSERT_OK(xal_mem_get_info(dev(), &free_bytes, &total));
  const uint64_t max_alloc = props().max_allocation_bytes;
  const uint64_t margin = 64 * kMiB + free_bytes / 256;
  if (free_bytes < margin + 128 * kMiB) {
    XAL_CONFORM_UNSUPPORTED("less than 128 MiB free past the margin");
  }
  uint64_t block = std::min<uint64_t>((free_bytes - margin) / 8, max_alloc);
  block -= block % (2 * kMiB);
  if (block < 16 * kMiB) XAL_CONFORM_UNSUPPORTED("less than 128 MiB free");
  const uint64_t blocks = (free_bytes - margin) / block;
  std::vector<conform::DeviceBuffer> held;
  held.reserve(blocks + 2);
  for (uint64_t i = 0; i < blocks; ++i) {
    held.emplace_back(dev(), block);
    ASSERT_EQ(held.back().status(), XAL_SUCCESS)
        << "allocation " << i + 1 << " of " << blocks << " (" << block
        << " bytes each, " << i * block << " bytes held) failed although "
        << "xal_mem_get_info reported " << free_bytes << " bytes free of "
        << total << ": " << conform::describe(held.back().status());
  }
  conform::record_figure("allocated_before_oom",
                         static_cast<double>(blocks * block), "B",
                         static_cast<int>(index()));
  {
    // More blocks (one, unless the margin holds several): OUT_OF_MEMORY
    // must come before they add up to more than the reported free memory.
    const uint64_t remaining = free_bytes - blocks * block;
    std::vector<conform::DeviceBuffer> past;
    xal_status_t last = XAL_SUCCESS;
    for (uint64_t extra = 0; extra * block <= remaining && last == XAL_SUCCESS; ++extra) {
      past.emplace_back(dev(), block);
      last = past.back().status();
    }
    EXPECT_EQ(last, XAL_ERROR_OUT_OF_MEMORY)
        << "allocating " << past.size() << " more blocks of " << block
        << " bytes past the reported capacity (" << blocks * block << " of " << free_bytes
        << " free held) gave " << conform::describe(last);
    if (last == XAL_ERROR_OUT_OF_MEMORY) {
      EXPECT_STRNE(conform::last_error().message, "");
    }
  }
  held.clear();
  {
    conform::DeviceBuffer huge(dev(), total + kMiB);
    EXPECT_EQ(huge.status(), XAL_ERROR_OUT_OF_MEMORY)
        << "allocating more than the total gave " << conform::describe(huge.status());
  }
  // A driver may count freed memory as free a little later (once it is
  // scrubbed, say): read again for up to a second.
  uint64_t free_after = 0, total_after = 0;
  for (int tries = 0; tries < 20; ++tries) {
    XAL_ASSERT_OK(xal_mem_get_info(dev(), &free_after, &total_after));
    if (free_after + 2 * kMiB >= free_bytes) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GE(free_after + 2 * kMiB, free_bytes) << "memory was not given back";
  EXPECT_EQ(conform::round_trip(dev(), kMiB), "") << "after running out of memory";
}

TEST_P(Memory, Quota) {
  uint64_t free_bytes = 0, total = 0;
  XAL_ASSERT_OK(xal_mem_get_info(dev(), &free_bytes, &total));
  if (free_bytes < 128 * kMiB) XAL_CONFORM_UNSUPPORTED("less than 128 MiB free");
  XAL_ASSERT_OK(xal_device_set_memory_limit(dev(), 64 * kMiB));
  uint64_t qfree = 0, qtotal = 0;
  EXPECT_EQ(xal_mem_get_info(dev(), &qfree, &qtotal), XAL_SUCCESS);
  EXPECT_EQ(qtotal, 64 * kMiB) << "mem_get_info does not report the quota as total";
  EXPECT_LE(qfree, 64 * kMiB);
  {
    conform::DeviceBuffer a(dev(), 48 * kMiB);
    EXPECT_EQ(a.status(), XAL_SUCCESS) << conform::describe(a.status());
    conform::DeviceBuffer b(dev(), 32 * kMiB);
    EXPECT_EQ(b.status(), XAL_ERROR_OUT_OF_MEMORY)
        << "allocation past the quota gave " << conform::describe(b.status());
    const xal_status_t lower = xal_device_set_memory_limit(dev(), 16 * kMiB);
    EXPECT_EQ(lower, XAL_ERROR_OUT_OF_MEMORY)
        << "a quota below what is allocated gave " << conform::describe(lower);
  }
  // Restore what was there: no quota, or the one XAL_MEMORY_LIMIT set.
  const bool env_quota = std::getenv("XAL_MEMORY_LIMIT") != nullptr;
  XAL_ASSERT_OK(xal_device_set_memory_limit(dev(), env_quota ? total : 0));
  EXPECT_EQ(xal_mem_get_info(dev(), &qfree, &qtotal), XAL_SUCCESS);
  EXPECT_EQ(qtotal, total) << "removing the quota did not restore the total";
  conform::DeviceBuffer c(dev(), 96 * kMiB);
  EXPECT_EQ(c.status(), XAL_SUCCESS) << "after removing the quota: "
                                     << conform::describe(c.status());
}

XAL_CONFORM_DEVICE_GROUP(memory, Memory);

}  // namespace

// Partitions of a card: XAL_PARTITIONS, xal_device_partition/unpartition,
// quotas, streams and copies on partitions, the card refusing work, metrics.
#include <array>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

std::string config_errors() {
  size_t n = 0;
  EXPECT_EQ(xal_partition_config_errors(nullptr, 0, &n), XAL_SUCCESS);
  std::string text(n + 1, '\0');
  EXPECT_EQ(xal_partition_config_errors(text.data(), text.size(), nullptr),
            XAL_SUCCESS);
  text.resize(n);
  return text;
}

uint32_t device_count() {
  uint32_t n = 0;
  EXPECT_EQ(xal_device_count(&n), XAL_SUCCESS);
  return n;
}

xal_device_t device(uint32_t i) {
  xal_device_t d = nullptr;
  EXPECT_EQ(xal_device_get(i, &d), XAL_SUCCESS) << last_error().message;
  return d;
}

xal_device_properties_t props(xal_device_t d) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  EXPECT_EQ(xal_device_get_properties(d, &p), XAL_SUCCESS) << last_error().message;
  return p;
}

uint32_t share(xal_device_t d) {
  uint32_t pct = 0;
  EXPECT_EQ(xal_device_get_compute_share(d, &pct), XAL_SUCCESS);
  return pct;
}

xal_partition_desc_t desc(uint64_t bytes, uint32_t pct) {
  xal_partition_desc_t d{};
  d.struct_size = sizeof d;
  d.memory_bytes = bytes;
  d.compute_percent = pct;
  return d;
}

// xal initialised on testdev (two cards of 1 GiB) with XAL_PARTITIONS=spec.
class Partitions : public ::testing::Test {
 protected:
  void start(const char* spec) {
    ScopedEnv env("XAL_PARTITIONS", spec);
    ASSERT_EQ(init(plugin("testdev")), XAL_SUCCESS) << last_error().message;
    started_ = true;
  }
  void TearDown() override {
    if (started_) {
      EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
    }
  }
  bool started_ = false;
};

TEST_F(Partitions, EqualPartitionsAreAppendedAfterTheCards) {
  start("testdev:0=4x256MiB");
  EXPECT_EQ(config_errors(), "");
  ASSERT_EQ(device_count(), 6u);
  const auto card = props(device(0));
  EXPECT_EQ(card.parent_index, -1);
  EXPECT_FALSE(card.capabilities & XAL_DEVICE_CAP_PARTITION);
  EXPECT_EQ(props(device(1)).parent_index, -1);  // physical indices unmoved
  std::vector<std::array<uint8_t, 16>> uuids{{}};
  std::memcpy(uuids[0].data(), card.uuid, 16);
  for (uint32_t i = 2; i < 6; ++i) {
    const auto p = props(device(i));
    EXPECT_EQ(p.index, i);
    EXPECT_EQ(p.parent_index, 0);
    EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_PARTITION);
    EXPECT_EQ(p.memory_bytes, 256 * kMiB);
    EXPECT_EQ(std::string(p.name),
              std::string(card.name) + " [part " + std::to_string(i - 1) + "/4]");
    EXPECT_EQ(share(device(i)), 25u);
    std::array<uint8_t, 16> u;
    std::memcpy(u.data(), p.uuid, 16);
    for (const auto& o : uuids) EXPECT_NE(u, o) << "device " << i;
    uuids.push_back(u);
  }
  // Deterministic: the same uuid on a second read.
  EXPECT_EQ(std::memcmp(props(device(2)).uuid, uuids[1].data(), 16), 0);
  EXPECT_EQ(share(device(0)), 100u);
}

TEST_F(Partitions, ListWithSharesAndAnOpenShare) {
  start(" testdev:1 = 512MiB@30% , 256MiB ");
  EXPECT_EQ(config_errors(), "");
  ASSERT_EQ(device_count(), 4u);
  EXPECT_EQ(props(device(2)).parent_index, 1);
  EXPECT_EQ(props(device(2)).memory_bytes, 512 * kMiB);
  EXPECT_EQ(share(device(2)), 30u);
  EXPECT_EQ(share(device(3)), 70u);
}

struct BadSpec {
  const char* spec;
  const char* says;  // part of the message
};

class BadPartitionSpec : public Partitions,
                         public ::testing::WithParamInterface<BadSpec> {};

TEST_P(BadPartitionSpec, IsIgnoredWithAMessage) {
  start(GetParam().spec);
  EXPECT_EQ(device_count(), 2u) << "nothing partitioned";
  const std::string text = config_errors();
  EXPECT_NE(text.find("XAL_PARTITIONS entry"), std::string::npos) << text;
  EXPECT_NE(text.find(GetParam().says), std::string::npos) << text;
  xal_devptr_t p = 0;
  EXPECT_EQ(xal_mem_alloc(device(0), 4096, &p), XAL_SUCCESS) << "card still usable";
  EXPECT_EQ(xal_mem_free(device(0), p), XAL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, BadPartitionSpec,
    ::testing::Values(
        BadSpec{"garbage", "expected BACKEND:INDEX=SPEC"},
        BadSpec{"testdev=2x1MiB", "expected BACKEND:INDEX=SPEC"},
        BadSpec{":0=2x1MiB", "no backend name"},
        BadSpec{"testdev:x=2x1MiB", "not a device index"},
        BadSpec{"testdev:0=", "nothing after '='"},
        BadSpec{"testdev:0=0x1MiB", "count before 'x' must be 1 to 64"},
        BadSpec{"testdev:0=65x1MiB", "count before 'x' must be 1 to 64"},
        BadSpec{"testdev:0=2xlots", "bad size 'lots'"},
        BadSpec{"testdev:0=2x0", "more than 0 bytes"},
        BadSpec{"testdev:0=1MiB@0%", "percent from 1 to 100"},
        BadSpec{"testdev:0=1MiB@101%", "percent from 1 to 100"},
        BadSpec{"testdev:0=1MiB@x%", "percent from 1 to 100"},
        BadSpec{"testdev:0=1MiB,,1MiB", "empty partition"},
        BadSpec{"nosuch:0=2x1MiB", "loaded backend 'nosuch'"},
        BadSpec{"testdev:7=2x1MiB", "no device 7"},
        BadSpec{"testdev:0=2x1GiB",
                "add up to 2.00 GiB (2147483648 bytes), more than the card's "
                "1.00 GiB (1073741824 bytes)"},
        BadSpec{"testdev:0=1MiB@60%,1MiB@50%", "shares add up to 110%"},
        BadSpec{"testdev:0=1MiB@100%,1MiB", "above 100%"}));

TEST_F(Partitions, GoodEntriesApplyBesideBadOnes) {
  start("testdev:0=2x1MiB;bad;testdev:0=4x1MiB;testdev:1=1MiB@50%");
  ASSERT_EQ(device_count(), 5u);
  const std::string text = config_errors();
  EXPECT_NE(text.find("'bad'"), std::string::npos) << text;
  EXPECT_NE(text.find("already partitioned by an earlier entry"),
            std::string::npos) << text;
  EXPECT_EQ(props(device(4)).parent_index, 1);
  EXPECT_EQ(share(device(4)), 50u);
  size_t n = 0;
  char small[8];
  EXPECT_EQ(xal_partition_config_errors(small, sizeof small, &n), XAL_SUCCESS);
  EXPECT_EQ(n, text.size());
  EXPECT_EQ(std::strlen(small), 7u);  // truncated, terminated
  EXPECT_XAL_ERROR(xal_partition_config_errors(nullptr, 4, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(Partitions, CardRefusesWorkNamingItsPartitions) {
  start("testdev:0=2x1MiB");
  xal_devptr_t p = 0;
  EXPECT_XAL_ERROR(xal_mem_alloc(device(0), 4096, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("partitioned into devices 2, 3"),
            std::string::npos) << last_error().message;
  xal_stream_t s = nullptr;
  EXPECT_XAL_ERROR(xal_stream_create(device(0), 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_reset(device(2)), XAL_ERROR_NOT_SUPPORTED);
  // The other card is whole.
  EXPECT_EQ(xal_mem_alloc(device(1), 4096, &p), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(device(1), p), XAL_SUCCESS);
}

TEST_F(Partitions, QuotaIsThePartitionSize) {
  start("testdev:0=2x1MiB");
  xal_device_t part = device(2);
  uint64_t free_b = 0, total_b = 0;
  ASSERT_EQ(xal_mem_get_info(part, &free_b, &total_b), XAL_SUCCESS);
  EXPECT_EQ(total_b, kMiB);
  EXPECT_EQ(free_b, kMiB);
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(xal_mem_alloc(part, 768 * 1024, &a), XAL_SUCCESS);
  EXPECT_XAL_ERROR(xal_mem_alloc(part, 512 * 1024, &b), XAL_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(xal_mem_get_info(part, &free_b, &total_b), XAL_SUCCESS);
  EXPECT_EQ(free_b, 256 * 1024u);
  // The sibling has its own quota.
  ASSERT_EQ(xal_mem_alloc(device(3), 768 * 1024, &b), XAL_SUCCESS);
  EXPECT_XAL_ERROR(xal_device_set_memory_limit(part, 2 * kMiB),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_device_set_memory_limit(part, 0), XAL_SUCCESS);  // = its size
  ASSERT_EQ(xal_mem_get_info(part, &free_b, &total_b), XAL_SUCCESS);
  EXPECT_EQ(total_b, kMiB);
  EXPECT_XAL_ERROR(xal_mem_free(part, b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_mem_free(part, a), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(device(3), b), XAL_SUCCESS);
}

TEST_F(Partitions, StreamsAndCopiesOnPartitions) {
  start("testdev:0=16MiB@40%,16MiB@60%");
  xal_device_t p0 = device(2), p1 = device(3);
  xal_stream_t s0 = nullptr;
  ASSERT_EQ(xal_stream_create(p0, 0, &s0), XAL_SUCCESS) << last_error().message;
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(xal_mem_alloc(p0, 4096, &a), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(p1, 4096, &b), XAL_SUCCESS);
  std::vector<uint8_t> in(4096), out(4096, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
  ASSERT_EQ(xal_memcpy_htod(s0, a, in.data(), in.size()), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_peer(s0, p1, b, p0, a, in.size()), XAL_SUCCESS)
      << last_error().message;
  ASSERT_EQ(xal_memset(s0, a, 0x5a, 16), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(s0, out.data(), a, 16), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(s0), XAL_SUCCESS);
  EXPECT_EQ(out[0], 0x5a);
  xal_stream_t s1 = nullptr;
  ASSERT_EQ(xal_stream_create(p1, 0, &s1), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(s1, out.data(), b, out.size()), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(s1), XAL_SUCCESS);
  EXPECT_EQ(out, in);
  // A partition's stream cannot touch its sibling's memory.
  EXPECT_XAL_ERROR(xal_memset(s0, b, 0, 16), XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_EQ(xal_stream_destroy(s0), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(s1), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(p0, a), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(p1, b), XAL_SUCCESS);
}

TEST_F(Partitions, MetricsAreThePartitionsOwn) {
  start("testdev:0=2x8MiB");
  xal_device_t p0 = device(2), p1 = device(3);
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(p0, 0, &s), XAL_SUCCESS);
  xal_devptr_t a = 0;
  ASSERT_EQ(xal_mem_alloc(p0, kMiB, &a), XAL_SUCCESS);
  std::vector<uint8_t> buf(kMiB);
  ASSERT_EQ(xal_memcpy_htod(s, a, buf.data(), buf.size()), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
  xal_device_metrics_t m0{}, m1{};
  m0.struct_size = m1.struct_size = sizeof m0;
  ASSERT_EQ(xal_device_get_metrics(p0, &m0), XAL_SUCCESS);
  ASSERT_EQ(xal_device_get_metrics(p1, &m1), XAL_SUCCESS);
  EXPECT_EQ(m0.xal_bytes_htod, kMiB);
  EXPECT_EQ(m1.xal_bytes_htod, 0u);
  EXPECT_EQ(m0.memory_total_bytes, 8 * kMiB);
  EXPECT_EQ(m0.memory_limit_bytes, 8 * kMiB);
  EXPECT_EQ(m0.memory_used_bytes, kMiB);
  EXPECT_EQ(m1.memory_used_bytes, 0u);
  EXPECT_EQ(m0.xal_alloc_count_current, 1u);
  EXPECT_EQ(m1.xal_alloc_count_current, 0u);
  EXPECT_TRUE(m0.valid & XAL_METRIC_UTILIZATION);
  EXPECT_GE(m0.utilization_percent, 0.0);
  EXPECT_LE(m0.utilization_percent, 100.0);
  EXPECT_EQ(m1.utilization_percent, 0.0);
  EXPECT_TRUE(m0.valid & XAL_METRIC_TEMPERATURE);  // the card's sensors
  EXPECT_EQ(m0.temperature_c, 42.0);
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(p0, a), XAL_SUCCESS);
}

TEST_F(Partitions, ApiCreatesAndUndoes) {
  start(nullptr);
  xal_device_t card = device(1);
  const auto card_props = props(card);
  const xal_partition_desc_t d[3] = {desc(64 * kMiB, 20), desc(64 * kMiB, 0),
                                     desc(128 * kMiB, 0)};
  xal_device_t parts[3] = {};
  ASSERT_EQ(xal_device_partition(card, 3, d, parts), XAL_SUCCESS)
      << last_error().message;
  ASSERT_EQ(device_count(), 5u);
  EXPECT_EQ(parts[0], device(2));
  EXPECT_EQ(share(parts[0]), 20u);
  EXPECT_EQ(share(parts[1]), 40u);
  EXPECT_EQ(share(parts[2]), 40u);
  EXPECT_EQ(props(parts[2]).memory_bytes, 128 * kMiB);
  EXPECT_EQ(props(parts[2]).parent_index, 1);
  // Not while a partition is in use.
  xal_devptr_t a = 0;
  ASSERT_EQ(xal_mem_alloc(parts[1], 4096, &a), XAL_SUCCESS);
  EXPECT_XAL_ERROR(xal_device_unpartition(card), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("1 allocations"),
            std::string::npos) << last_error().message;
  ASSERT_EQ(xal_mem_free(parts[1], a), XAL_SUCCESS);
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(parts[0], 0, &s), XAL_SUCCESS);
  EXPECT_XAL_ERROR(xal_device_unpartition(card), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  ASSERT_EQ(xal_device_unpartition(card), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(device_count(), 2u);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  EXPECT_XAL_ERROR(xal_device_get_properties(parts[0], &p), XAL_ERROR_INVALID_HANDLE);
  EXPECT_STREQ(props(card).name, card_props.name);
  ASSERT_EQ(xal_mem_alloc(card, 4096, &a), XAL_SUCCESS);  // whole again
  EXPECT_EQ(xal_mem_free(card, a), XAL_SUCCESS);
  EXPECT_XAL_ERROR(xal_device_unpartition(card), XAL_ERROR_INVALID_ARGUMENT);
}

// A copy outside any allocation names the device that owns the pointer, if
// any: that look at every device must not race xal_device_partition /
// unpartition on another card (copies take only a stream, so nothing tells
// the caller to keep them apart).
TEST_F(Partitions, BadCopiesRacingPartitionsOfAnotherCard) {
  start(nullptr);
  xal_device_t card = device(0);
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(device(1), 0, &s), XAL_SUCCESS);
  std::vector<uint8_t> host(64);
  std::atomic<bool> done{false};
  std::atomic<int> bad{XAL_ERROR_OUT_OF_BOUNDS};
  std::thread copies([&] {
    while (!done.load()) {
      const xal_status_t st = xal_memcpy_htod(s, 0x40, host.data(), host.size());
      if (st != XAL_ERROR_OUT_OF_BOUNDS) bad.store(st);
    }
  });
  // The most partitions a card takes: a long device list to walk, grown
  // and shrunk by 64 each round.
  std::vector<xal_partition_desc_t> d(64, desc(kMiB, 0));
  for (int round = 0; round < 300; ++round) {
    xal_status_t st = xal_device_partition(card, 64, d.data(), nullptr);
    if (st == XAL_SUCCESS) st = xal_device_unpartition(card);
    if (st != XAL_SUCCESS) {
      ADD_FAILURE() << "round " << round << ": " << last_error().message;
      break;
    }
  }
  done.store(true);
  copies.join();
  EXPECT_EQ(bad.load(), XAL_ERROR_OUT_OF_BOUNDS) << xal_status_name(bad.load());
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
}

TEST_F(Partitions, UndoRenumbersLaterPartitions) {
  start("testdev:0=2x1MiB;testdev:1=2x1MiB");
  ASSERT_EQ(device_count(), 6u);
  xal_device_t later = device(4);
  ASSERT_EQ(xal_device_unpartition(device(0)), XAL_SUCCESS);
  ASSERT_EQ(device_count(), 4u);
  EXPECT_EQ(device(2), later);
  EXPECT_EQ(props(later).index, 2u);
  EXPECT_EQ(props(later).parent_index, 1);
}

TEST_F(Partitions, ApiRejectsBadInput) {
  start(nullptr);
  xal_device_t card = device(0);
  xal_partition_desc_t d[2] = {desc(kMiB, 50), desc(kMiB, 50)};
  EXPECT_XAL_ERROR(xal_device_partition(nullptr, 2, d, nullptr),
                   XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_device_partition(card, 0, d, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_partition(card, 65, d, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, nullptr, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  xal_partition_desc_t small = d[0];
  small.struct_size = 4;
  EXPECT_XAL_ERROR(xal_device_partition(card, 1, &small, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  xal_partition_desc_t huge[2] = {d[0], d[1]};
  huge[0].struct_size = size_t{1} << 40;
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, huge, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  huge[0].struct_size = sizeof huge[0];
  huge[1].struct_size = sizeof huge[1] + 8;
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, huge, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  xal_partition_desc_t bad[2] = {desc(0, 10), desc(kMiB, 10)};
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, bad, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  bad[0] = desc(kMiB, 101);
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, bad, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  bad[0] = desc(kMiB, 70);
  bad[1] = desc(kMiB, 40);
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, bad, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("110%"), std::string::npos);
  bad[0] = desc(1ull << 30, 10);
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, bad, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("more than the card's"),
            std::string::npos) << last_error().message;
  // A card in use.
  xal_devptr_t a = 0;
  ASSERT_EQ(xal_mem_alloc(card, 4096, &a), XAL_SUCCESS);
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, d, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(xal_mem_free(card, a), XAL_SUCCESS);
  EXPECT_EQ(device_count(), 2u);
  // Twice, and a partition of a partition.
  xal_device_t parts[2] = {};
  ASSERT_EQ(xal_device_partition(card, 2, d, parts), XAL_SUCCESS);
  EXPECT_XAL_ERROR(xal_device_partition(card, 2, d, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  const xal_partition_desc_t one = desc(4096, 0);
  EXPECT_XAL_ERROR(xal_device_partition(parts[0], 1, &one, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_device_unpartition(nullptr), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_device_get_compute_share(card, nullptr),
                   XAL_ERROR_INVALID_ARGUMENT);
  uint32_t pct = 0;
  EXPECT_XAL_ERROR(xal_device_get_compute_share(nullptr, &pct),
                   XAL_ERROR_INVALID_HANDLE);
}

// A small share slows submits down but never stops them (no timing asserted).
TEST_F(Partitions, LowShareStillRunsEveryKindOfWork) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  start("testdev:0=8MiB@1%,8MiB");
  xal_device_t part = device(2);
  EXPECT_EQ(share(part), 1u);
  EXPECT_EQ(share(device(3)), 99u);
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(part, 0, &s), XAL_SUCCESS);
  constexpr uint64_t n = 256;
  xal_devptr_t p = 0, q = 0;
  ASSERT_EQ(xal_mem_alloc(part, n * 4, &p), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(part, n * 4, &q), XAL_SUCCESS);
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(xal_memset(s, p, static_cast<uint8_t>(i), n * 4), XAL_SUCCESS);
  const char image[] = "testdev-kernels";
  xal_module_t m = nullptr;
  xal_kernel_t k = nullptr;
  ASSERT_EQ(xal_module_load(part, XAL_MODULE_FORMAT_NATIVE, image,
                            sizeof image - 1, &m), XAL_SUCCESS)
      << last_error().message;
  ASSERT_EQ(xal_kernel_get(m, "fill_u32", &k), XAL_SUCCESS);
  uint32_t value = 0xfeedu;
  uint64_t count = n;
  void* args[] = {&p, &value, &count};
  xal_launch_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = 64;
  cfg.block[1] = cfg.block[2] = 1;
  ASSERT_EQ(xal_kernel_launch(s, k, &cfg, args, 3), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtod(s, q, p, n * 4), XAL_SUCCESS);
  std::vector<uint32_t> out(n);
  ASSERT_EQ(xal_memcpy_dtoh(s, out.data(), q, n * 4), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint32_t>(n, 0xfeedu));
  xal_device_metrics_t m0{};
  m0.struct_size = sizeof m0;
  ASSERT_EQ(xal_device_get_metrics(part, &m0), XAL_SUCCESS);
  EXPECT_GT(m0.utilization_percent, 0.0);
  EXPECT_LE(m0.utilization_percent, 100.0);
  EXPECT_EQ(xal_module_unload(m), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(part, p), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(part, q), XAL_SUCCESS);
}

TEST(PartitionsUninitialised, CallsSayNotInitialised) {
  EXPECT_XAL_ERROR(xal_partition_config_errors(nullptr, 0, nullptr),
                   XAL_ERROR_NOT_INITIALIZED);
  EXPECT_XAL_ERROR(xal_device_unpartition(nullptr), XAL_ERROR_NOT_INITIALIZED);
}

}  // namespace

// The actions of the fault plugin through its table, over a fake target:
// error, sticky error and reset, device lost, delay, hang, bitflip,
// asynchronous error, abort, and their log lines.
#include <atomic>
#include <thread>

#include "backend_fixture.hpp"

namespace xal::fault::testing {
namespace {

TEST_F(FaultBackendTest, ErrorWithVendorCode) {
  ASSERT_EQ(start("profile=cuda;mem_alloc=nth(2)OUT_OF_MEMORY"), XAL_SUCCESS);
  xal_devptr_t p1 = 0, p2 = 0, p3 = 0;
  EXPECT_EQ(t->mem_alloc(dev(0), 16, &p1), XAL_SUCCESS);
  EXPECT_EQ(t->mem_alloc(dev(0), 16, &p2), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(last_error().vendor_code, 2);
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_NE(last_error().message.find("rule 'rule0'"), std::string::npos);
  EXPECT_EQ(t->mem_alloc(dev(0), 16, &p3), XAL_SUCCESS);  // not sticky
  EXPECT_EQ(health(dev(0)).state, static_cast<uint32_t>(XAL_HEALTH_OK));
  t->mem_free(dev(0), p1);
  t->mem_free(dev(0), p3);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  const auto& l = lines[0];
  EXPECT_EQ(l["rule"], "rule0");
  EXPECT_EQ(l["operation"], "mem_alloc");
  EXPECT_EQ(l["device"], 0);
  EXPECT_EQ(l["action"], "error");
  EXPECT_EQ(l["status"], "XAL_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(l["vendor_code"], 2);
  EXPECT_EQ(l["vendor_name"], "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(l["match"], 2);
  EXPECT_EQ(l["bytes"], 16);
  EXPECT_TRUE(l["call"].is_number());
  EXPECT_TRUE(l["time_ms"].is_number());
  EXPECT_EQ(l["backend"], "fault(fake)");
}

TEST_F(FaultBackendTest, StickyErrorUntilReset) {
  ASSERT_EQ(start("memcpy_htod=nth(1)cuda:CUDA_ERROR_ILLEGAL_ADDRESS"),
            XAL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), 8, &p), XAL_SUCCESS);
  auto* s = stream(dev(0));
  uint64_t v = 1;
  EXPECT_EQ(t->memcpy_htod(s, p, &v, 8), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 700);
  // Every later call on the device fails with the same error...
  xal_devptr_t q = 0;
  EXPECT_EQ(t->mem_alloc(dev(0), 8, &q), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 700);
  EXPECT_NE(last_error().message.find("sticky"), std::string::npos);
  EXPECT_EQ(t->stream_synchronize(s), XAL_ERROR_DEVICE_LOST);
  // ...but not on the other device, and cleanup still works.
  xal_devptr_t r = 0;
  EXPECT_EQ(t->mem_alloc(dev(1), 8, &r), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(1), r), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), p), XAL_SUCCESS);
  const auto h = health(dev(0));
  EXPECT_EQ(h.state, static_cast<uint32_t>(XAL_HEALTH_LOST));
  EXPECT_EQ(h.sticky_status, XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(h.vendor_code, 700);
  EXPECT_NE(std::string(h.message).find("CUDA_ERROR_ILLEGAL_ADDRESS"),
            std::string::npos);
  EXPECT_EQ(health(dev(1)).state, static_cast<uint32_t>(XAL_HEALTH_OK));

  const int resets = fake_resets();
  EXPECT_EQ(t->device_reset(dev(0)), XAL_SUCCESS);
  EXPECT_EQ(fake_resets(), resets + 1);
  EXPECT_EQ(health(dev(0)).state, static_cast<uint32_t>(XAL_HEALTH_OK));
  // The old stream died with the reset; a new one works.
  EXPECT_EQ(t->stream_synchronize(s), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  auto* s2 = stream(dev(0));
  ASSERT_EQ(t->mem_alloc(dev(0), 8, &q), XAL_SUCCESS);
  EXPECT_EQ(t->memcpy_htod(s2, q, &v, 8), XAL_SUCCESS);
  EXPECT_EQ(t->stream_synchronize(s2), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(s2), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), q), XAL_SUCCESS);
}

TEST_F(FaultBackendTest, DeviceLost) {
  ASSERT_EQ(start("profile=levelzero;*=device(1)after(0)device_lost"),
            XAL_SUCCESS);
  xal_devptr_t p = 0;
  EXPECT_EQ(t->mem_alloc(dev(1), 8, &p), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 0x70000001);
  EXPECT_EQ(t->mem_alloc(dev(1), 8, &p), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(health(dev(1)).state, static_cast<uint32_t>(XAL_HEALTH_LOST));
  EXPECT_EQ(t->mem_alloc(dev(0), 8, &p), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), p), XAL_SUCCESS);
  // The rule keeps firing after reset (device lost from a time on) until
  // it is disabled.
  EXPECT_EQ(t->device_reset(dev(1)), XAL_SUCCESS);
  EXPECT_EQ(t->mem_alloc(dev(1), 8, &p), XAL_ERROR_DEVICE_LOST);
  ASSERT_NE(control(), nullptr);
  EXPECT_EQ(control()->set_rule_enabled(b, "rule0", 0), XAL_SUCCESS);
  EXPECT_EQ(t->device_reset(dev(1)), XAL_SUCCESS);
  EXPECT_EQ(t->mem_alloc(dev(1), 8, &p), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(1), p), XAL_SUCCESS);
}

TEST_F(FaultBackendTest, DelayGoesThrough) {
  ASSERT_EQ(start("mem_alloc=delay(5)"), XAL_SUCCESS);
  xal_devptr_t p = 0;
  EXPECT_EQ(t->mem_alloc(dev(0), 8, &p), XAL_SUCCESS);
  EXPECT_NE(p, 0u);
  EXPECT_EQ(t->mem_free(dev(0), p), XAL_SUCCESS);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["action"], "delay");
  EXPECT_EQ(lines[0]["delay_ms"], 5);
}

TEST_F(FaultBackendTest, HangEndsInTimeout) {
  ASSERT_EQ(start("stream_synchronize=1*hang(30)"), XAL_SUCCESS);
  auto* s = stream(dev(0));
  EXPECT_EQ(t->stream_synchronize(s), XAL_ERROR_TIMEOUT);
  EXPECT_NE(last_error().message.find("timed out after 30 ms"),
            std::string::npos);
  EXPECT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["timeout_ms"], 30);
  EXPECT_EQ(lines[0]["status"], "XAL_ERROR_TIMEOUT");
}

TEST_F(FaultBackendTest, HangUsesCommTimeoutEnv) {
  config()["XAL_COMM_TIMEOUT_MS"] = "20";
  ASSERT_EQ(start("device_synchronize=hang"), XAL_SUCCESS);
  EXPECT_EQ(t->device_synchronize(dev(0)), XAL_ERROR_TIMEOUT);
  EXPECT_NE(last_error().message.find("after 20 ms"), std::string::npos);
}

class BitflipTest : public FaultBackendTest,
                    public ::testing::WithParamInterface<bool> {};

int differing_bits(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  int n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += __builtin_popcount(a[i] ^ b[i]);
  return n;
}

TEST_P(BitflipTest, CorruptsTheOutput) {
  use_minimal_fake(GetParam());  // minimal: flips through staging copies
  ASSERT_EQ(start("memcpy_htod=nth(1)bitflip;memcpy_dtoh=nth(2)bitflip(1);"
                  "memcpy_dtod=nth(1)bitflip;memcpy_peer=nth(1)bitflip;"
                  "memset=nth(1)bitflip"),
            XAL_SUCCESS);
  const size_t n = 4096;
  std::vector<uint8_t> in(n), out(n), clean(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i * 7);
  xal_devptr_t a = 0, c = 0, d = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), n, &a), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev(0), n, &c), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev(1), n, &d), XAL_SUCCESS);
  auto* s = stream(dev(0));
  ASSERT_EQ(t->memcpy_htod(s, a, in.data(), n), XAL_SUCCESS);  // flipped
  ASSERT_EQ(t->memcpy_dtoh(s, clean.data(), a, n), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(differing_bits(in, clean), 1);
  ASSERT_EQ(t->memcpy_dtoh(s, out.data(), a, n), XAL_SUCCESS);  // flipped
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(differing_bits(clean, out), 1);
  ASSERT_EQ(t->memcpy_dtod(s, c, a, n), XAL_SUCCESS);  // flipped
  ASSERT_EQ(t->memcpy_dtoh(s, out.data(), c, n), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(differing_bits(clean, out), 1);
  ASSERT_EQ(t->memcpy_peer(s, dev(1), d, dev(0), a, n), XAL_SUCCESS);
  auto* s1 = stream(dev(1));
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(s1, out.data(), d, n), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(s1), XAL_SUCCESS);
  EXPECT_EQ(differing_bits(clean, out), 1);
  ASSERT_EQ(t->memset(s, c, 0, n), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(s, out.data(), c, n), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(differing_bits(std::vector<uint8_t>(n, 0), out), 1);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(s1), XAL_SUCCESS);
  EXPECT_EQ(log_lines().size(), 5u);
  for (const auto& l : log_lines()) {
    EXPECT_EQ(l["action"], "bitflip");
    ASSERT_EQ(l["flips"].size(), 1u);
    EXPECT_LT(l["flips"][0]["offset"].get<uint64_t>(), n);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, BitflipTest, ::testing::Values(false, true),
                         [](const auto& info) {
                           return info.param ? "Minimal" : "Full";
                         });

// A target without host access to device memory (CUDA, HIP, OpenCL): the
// flip goes through a staging buffer queued on the stream. The call does
// not wait for the stream (the queued fake runs nothing before a sync),
// the flip lands after the call's output and before later work, and the
// staging buffer is freed.
TEST_F(FaultBackendTest, StagedBitflipIsQueuedInStreamOrder) {
  use_fake(FakeKind::queued);
  const int allocations = fake_host_allocations();
  ASSERT_EQ(start("memcpy_htod=nth(1)bitflip(3)"), XAL_SUCCESS);
  const size_t n = 4096;
  std::vector<uint8_t> in(n), out(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i * 13);
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), n, &a), XAL_SUCCESS);
  auto* s = stream(dev(0));
  const int syncs = fake_stream_syncs();
  ASSERT_EQ(t->memcpy_htod(s, a, in.data(), n), XAL_SUCCESS);  // flipped
  EXPECT_EQ(fake_stream_syncs(), syncs);                       // no wait
  ASSERT_EQ(t->memcpy_dtoh(s, out.data(), a, n), XAL_SUCCESS);
  EXPECT_EQ(fake_stream_syncs(), syncs);
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(differing_bits(in, out), 3);
  EXPECT_EQ(log_lines().size(), 1u);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), a), XAL_SUCCESS);
  stop();
  EXPECT_EQ(fake_host_allocations(), allocations);
}

// Inside a group the target runs the collective at group_end (as NCCL
// does): the flip is queued after it, still without waiting.
TEST_F(FaultBackendTest, BitflipOfAGroupedCollectiveLandsAfterIt) {
  use_fake(FakeKind::queued);
  ASSERT_EQ(start("allreduce=nth(1)bitflip(1)"), XAL_SUCCESS);
  constexpr size_t kCount = 16;
  const size_t bytes = kCount * sizeof(float);
  std::vector<uint8_t> in(bytes), out(bytes);
  for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(i + 1);
  xal_devptr_t send = 0, recv = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), bytes, &send), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev(0), bytes, &recv), XAL_SUCCESS);
  auto* s = stream(dev(0));
  ASSERT_EQ(t->memcpy_htod(s, send, in.data(), bytes), XAL_SUCCESS);
  xal_bdevice_t* devs[1] = {dev(0)};
  xal_bcomm_t* comm = nullptr;
  ASSERT_EQ(t->comm_create(devs, 1, nullptr, &comm), XAL_SUCCESS);
  const int syncs = fake_stream_syncs();
  ASSERT_EQ(t->group_start(b), XAL_SUCCESS);
  ASSERT_EQ(t->allreduce(comm, send, recv, kCount, XAL_DTYPE_F32, XAL_OP_SUM, s),
            XAL_SUCCESS);
  ASSERT_EQ(t->group_end(b), XAL_SUCCESS);
  EXPECT_EQ(fake_stream_syncs(), syncs);
  ASSERT_EQ(t->memcpy_dtoh(s, out.data(), recv, bytes), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(differing_bits(in, out), 1);
  EXPECT_EQ(t->comm_destroy(comm), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), send), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), recv), XAL_SUCCESS);
}

// An asynchronous error waits for a sync of the stream it was injected on
// (or of an event recorded there, or of the device): the core's own
// streams on that device do not take it from the program.
TEST_F(FaultBackendTest, AsyncErrorWaitsForItsStream) {
  ASSERT_EQ(start("memset=async(TIMEOUT)"), XAL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), 64, &p), XAL_SUCCESS);
  auto* mine = stream(dev(0));
  auto* other = stream(dev(0));
  xal_bevent_t* e = nullptr;
  ASSERT_EQ(t->event_create(dev(0), 0, &e), XAL_SUCCESS);
  EXPECT_EQ(t->memset(mine, p, 1, 64), XAL_SUCCESS);
  EXPECT_EQ(t->stream_synchronize(other), XAL_SUCCESS);
  EXPECT_EQ(t->stream_query(other), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(e, other), XAL_SUCCESS);
  EXPECT_EQ(t->event_synchronize(e), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(e, mine), XAL_SUCCESS);
  EXPECT_EQ(t->event_synchronize(e), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(t->stream_synchronize(mine), XAL_SUCCESS);  // delivered once
  // A device sync takes it whatever the stream.
  EXPECT_EQ(t->memset(mine, p, 1, 64), XAL_SUCCESS);
  EXPECT_EQ(t->device_synchronize(dev(0)), XAL_ERROR_TIMEOUT);
  // The error of a destroyed stream goes to the next sync on the device.
  EXPECT_EQ(t->memset(mine, p, 1, 64), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(mine), XAL_SUCCESS);
  EXPECT_EQ(t->stream_synchronize(other), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(t->event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(other), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), p), XAL_SUCCESS);
}

TEST_F(FaultBackendTest, AsyncErrorSurfacesAtSynchronize) {
  ASSERT_EQ(start("memset=nth(1)async(cuda:CUDA_ERROR_LAUNCH_FAILED)"),
            XAL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), 64, &p), XAL_SUCCESS);
  auto* s = stream(dev(0));
  EXPECT_EQ(t->memset(s, p, 1, 64), XAL_SUCCESS);  // the call succeeds
  EXPECT_EQ(health(dev(0)).state, static_cast<uint32_t>(XAL_HEALTH_OK));
  EXPECT_EQ(t->stream_synchronize(s), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 719);
  EXPECT_NE(last_error().message.find("asynchronous"), std::string::npos);
  // CUDA_ERROR_LAUNCH_FAILED is sticky.
  EXPECT_EQ(t->device_synchronize(dev(0)), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(health(dev(0)).state, static_cast<uint32_t>(XAL_HEALTH_LOST));
  EXPECT_EQ(t->device_reset(dev(0)), XAL_SUCCESS);
  EXPECT_EQ(t->device_synchronize(dev(0)), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
}

TEST_F(FaultBackendTest, NonStickyAsyncErrorIsReportedOnce) {
  ASSERT_EQ(start("memset=nth(1)async(TIMEOUT)"), XAL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_EQ(t->mem_alloc(dev(1), 64, &p), XAL_SUCCESS);
  auto* s = stream(dev(1));
  xal_bevent_t* e = nullptr;
  ASSERT_EQ(t->event_create(dev(1), 0, &e), XAL_SUCCESS);
  EXPECT_EQ(t->memset(s, p, 1, 64), XAL_SUCCESS);
  EXPECT_EQ(t->event_record(e, s), XAL_SUCCESS);
  EXPECT_EQ(t->event_synchronize(e), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(t->event_synchronize(e), XAL_SUCCESS);
  EXPECT_EQ(t->event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
}

TEST_F(FaultBackendTest, AsyncErrorGoesToOneOfTwoSynchronizingThreads) {
  ASSERT_EQ(start("memset=async(TIMEOUT)"), XAL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), 64, &p), XAL_SUCCESS);
  auto* s = stream(dev(0));
  xal_bdevice_t* d = dev(0);
  // Each round: one asynchronous error, then two threads (this one and
  // `other`) synchronize at once; exactly one of them gets it.
  constexpr int kRounds = 2000;
  std::atomic<int> go{0}, done{0}, errors{0}, spin{0};
  std::thread other([&] {
    for (int round = 1; round <= kRounds; ++round) {
      while (go.load() < round) {
      }
      if (t->device_synchronize(d) == XAL_ERROR_TIMEOUT) ++errors;
      done.store(round);
    }
  });
  for (int round = 1; round <= kRounds; ++round) {
    EXPECT_EQ(t->memset(s, p, 1, 64), XAL_SUCCESS);
    go.store(round);
    // A start that varies by round, so that some rounds overlap the calls.
    for (int i = 0; i < round % 128; ++i) spin.fetch_add(1);
    if (t->device_synchronize(d) == XAL_ERROR_TIMEOUT) ++errors;
    while (done.load() < round) std::this_thread::yield();
  }
  other.join();
  EXPECT_EQ(errors.load(), kRounds);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), p), XAL_SUCCESS);
}

TEST_F(FaultBackendTest, ShutdownWaitsForTheHangsItEnds) {
  ASSERT_EQ(start("stream_synchronize=nth(1)hang(600000)"), XAL_SUCCESS);
  auto* s = stream(dev(0));
  const int aborted = errors_reported(XAL_ERROR_ABORTED);
  xal_status_t status = XAL_SUCCESS;
  std::thread waiter([&] { status = t->stream_synchronize(s); });
  // The log line is written once the hang counts as active.
  while (log_lines().empty()) std::this_thread::yield();
  stop();
  // The hang has made its report on the backend before shutdown returned.
  EXPECT_EQ(errors_reported(XAL_ERROR_ABORTED), aborted + 1);
  waiter.join();
  EXPECT_EQ(status, XAL_ERROR_ABORTED);
}

TEST_F(FaultBackendTest, ResetWithoutTargetResetKeepsTheObjects) {
  use_minimal_fake(true);  // no device_reset
  ASSERT_EQ(start("memcpy_htod=nth(1)cuda:CUDA_ERROR_ILLEGAL_ADDRESS"),
            XAL_SUCCESS);
  xal_devptr_t p = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), 8, &p), XAL_SUCCESS);
  auto* s = stream(dev(0));
  uint64_t v = 1;
  EXPECT_EQ(t->memcpy_htod(s, p, &v, 8), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(t->device_reset(dev(0)), XAL_SUCCESS);
  // The target's stream was not reset: it still works and is destroyed.
  EXPECT_EQ(t->memcpy_htod(s, p, &v, 8), XAL_SUCCESS);
  EXPECT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  const int destroys = fake_stream_destroys();
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(fake_stream_destroys(), destroys + 1);
  EXPECT_EQ(t->mem_free(dev(0), p), XAL_SUCCESS);
}

TEST_F(FaultBackendTest, AbortKillsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        start("mem_alloc=abort");
        xal_devptr_t p = 0;
        t->mem_alloc(dev(0), 8, &p);
      },
      "");
}

class CollectiveTest : public FaultBackendTest {
 protected:
  void make_comms(uint32_t timeout_ms = 0) {
    xal_bdevice_t* devs[2] = {dev(0), dev(1)};
    xal_bcomm_options_t o{sizeof o, timeout_ms, 0};
    ASSERT_EQ(t->comm_create(devs, 2, &o, comms), XAL_SUCCESS);
    ASSERT_EQ(t->mem_alloc(dev(0), 4096, &send), XAL_SUCCESS);
    ASSERT_EQ(t->mem_alloc(dev(0), 4096, &recv), XAL_SUCCESS);
    s = stream(dev(0));
  }
  void TearDown() override {
    if (b != nullptr && comms[0] != nullptr) {
      EXPECT_EQ(t->comm_destroy(comms[0]), XAL_SUCCESS);
      EXPECT_EQ(t->comm_destroy(comms[1]), XAL_SUCCESS);
      t->stream_destroy(s);
    }
    FaultBackendTest::TearDown();
  }
  xal_status_t allreduce() {
    return t->allreduce(comms[0], send, recv, 1024, XAL_DTYPE_F32, XAL_OP_SUM, s);
  }
  xal_bcomm_t* comms[2] = {};
  xal_devptr_t send = 0, recv = 0;
  xal_bstream_t* s = nullptr;
};

TEST_F(CollectiveTest, BitflipInTheReceiveBuffer) {
  ASSERT_EQ(start("allreduce=nth(2)bitflip"), XAL_SUCCESS);
  make_comms();
  std::vector<uint8_t> in(4096), out(4096), first(4096);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i);
  ASSERT_EQ(t->memcpy_htod(s, send, in.data(), in.size()), XAL_SUCCESS);
  ASSERT_EQ(allreduce(), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(s, first.data(), recv, 4096), XAL_SUCCESS);
  ASSERT_EQ(allreduce(), XAL_SUCCESS);  // corrupted
  ASSERT_EQ(t->memcpy_dtoh(s, out.data(), recv, 4096), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(first, in);
  int bits = 0;
  for (size_t i = 0; i < in.size(); ++i) bits += __builtin_popcount(in[i] ^ out[i]);
  EXPECT_EQ(bits, 1);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["operation"], "allreduce");
  EXPECT_EQ(lines[0]["bytes"], 4096);
}

TEST_F(CollectiveTest, HangUsesTheCommunicatorTimeout) {
  ASSERT_EQ(start("allreduce=nth(1)hang"), XAL_SUCCESS);
  make_comms(25);
  EXPECT_EQ(allreduce(), XAL_ERROR_TIMEOUT);
  EXPECT_NE(last_error().message.find("after 25 ms"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(allreduce(), XAL_SUCCESS);
}

TEST_F(CollectiveTest, AbortEndsAHang) {
  ASSERT_EQ(start("allreduce=nth(1)hang(600000)"), XAL_SUCCESS);
  make_comms();
  std::atomic<bool> done{false};
  xal_status_t status = XAL_SUCCESS;
  std::string message;
  std::thread waiter([&] {
    status = allreduce();
    message = last_error().message;
    done = true;
  });
  // Abort until the hang has seen it (it may not be waiting yet).
  while (!done.load()) {
    EXPECT_EQ(t->comm_abort(comms[1]), XAL_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  waiter.join();
  EXPECT_EQ(status, XAL_ERROR_ABORTED);
  EXPECT_NE(message.find("aborted"), std::string::npos) << message;
}

TEST_F(CollectiveTest, AbortOfAnotherCommunicatorLeavesAHang) {
  ASSERT_EQ(start("allreduce=nth(1)hang(300);"
                  "stream_synchronize=device(1)nth(1)hang(300)"),
            XAL_SUCCESS);
  make_comms();
  xal_bdevice_t* devs[2] = {dev(0), dev(1)};
  xal_bcomm_t* others[2] = {};
  ASSERT_EQ(t->comm_create(devs, 2, nullptr, others), XAL_SUCCESS);
  auto* s1 = stream(dev(1));
  xal_status_t collective = XAL_SUCCESS, sync = XAL_SUCCESS;
  std::thread hang_a([&] { collective = allreduce(); });
  std::thread hang_b([&] { sync = t->stream_synchronize(s1); });
  while (log_lines().size() < 2) std::this_thread::yield();  // both hang
  // Aborting the other communicator ends neither hang.
  EXPECT_EQ(t->comm_abort(others[0]), XAL_SUCCESS);
  EXPECT_EQ(t->comm_abort(others[1]), XAL_SUCCESS);
  hang_a.join();
  hang_b.join();
  EXPECT_EQ(collective, XAL_ERROR_TIMEOUT);
  EXPECT_EQ(sync, XAL_ERROR_TIMEOUT);
  EXPECT_EQ(t->stream_destroy(s1), XAL_SUCCESS);
  EXPECT_EQ(t->comm_destroy(others[0]), XAL_SUCCESS);
  EXPECT_EQ(t->comm_destroy(others[1]), XAL_SUCCESS);
}

TEST_F(CollectiveTest, CommCreateMatchesOncePerCall) {
  ASSERT_EQ(start("comm_create=nth(2)TIMEOUT;comm_create=device(1)nth(2)BACKEND"),
            XAL_SUCCESS);
  xal_bdevice_t* devs[2] = {dev(0), dev(1)};
  xal_bdevice_t* only0[1] = {dev(0)};
  xal_bcomm_t* made[3][2] = {};
  ASSERT_EQ(t->comm_create(devs, 2, nullptr, made[0]), XAL_SUCCESS);
  EXPECT_EQ(t->comm_create(devs, 2, nullptr, made[1]), XAL_ERROR_TIMEOUT);
  // Device 1's rule: its 2nd match, a call with device 1 among its devices
  // (rule0 took the 2nd call; the call on device 0 alone is not a match).
  ASSERT_EQ(t->comm_create(only0, 1, nullptr, made[2]), XAL_SUCCESS);
  EXPECT_EQ(t->comm_create(devs, 2, nullptr, made[1]), XAL_ERROR_BACKEND);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["match"], 2);
  EXPECT_EQ(lines[0]["device"], 0);
  EXPECT_EQ(lines[1]["rule"], "rule1");
  EXPECT_EQ(lines[1]["match"], 2);
  EXPECT_EQ(lines[1]["device"], 1);
  const auto info = control()->rule_get_info;
  xal_fault_rule_info_t r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(info(b, 0, &r), XAL_SUCCESS);
  EXPECT_EQ(r.matched, 4u);  // one match per call
  for (auto* c : made[0]) EXPECT_EQ(t->comm_destroy(c), XAL_SUCCESS);
  EXPECT_EQ(t->comm_destroy(made[2][0]), XAL_SUCCESS);
}

TEST_F(CollectiveTest, StickyErrorInACollective) {
  ASSERT_EQ(start("allreduce=nth(1)cuda:CUDA_ERROR_ECC_UNCORRECTABLE"), XAL_SUCCESS);
  make_comms();
  EXPECT_EQ(allreduce(), XAL_ERROR_HARDWARE);
  EXPECT_EQ(last_error().vendor_code, 214);
  EXPECT_EQ(health(dev(0)).state, static_cast<uint32_t>(XAL_HEALTH_ERROR));
  EXPECT_EQ(allreduce(), XAL_ERROR_HARDWARE);
  EXPECT_EQ(t->group_start(b), XAL_SUCCESS);
  EXPECT_EQ(t->group_end(b), XAL_SUCCESS);
  ASSERT_EQ(t->device_reset(dev(0)), XAL_SUCCESS);
  // The reset invalidated the stream of device 0.
  EXPECT_EQ(allreduce(), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(CollectiveTest, CommunicatorsOutliveAResetUntilDestroyed) {
  ASSERT_EQ(start("mem_alloc=nth(100)BACKEND"), XAL_SUCCESS);
  make_comms();
  ASSERT_EQ(t->device_reset(dev(0)), XAL_SUCCESS);
  // The target's communicator of device 0 is aborted, not ended: its
  // destroy still reaches the target (else it would leak there).
  const int before = fake_comm_destroys();
  EXPECT_EQ(t->comm_destroy(comms[0]), XAL_SUCCESS);
  EXPECT_EQ(t->comm_destroy(comms[1]), XAL_SUCCESS);
  EXPECT_EQ(fake_comm_destroys(), before + 2);
  comms[0] = comms[1] = nullptr;
}

}  // namespace
}  // namespace xal::fault::testing

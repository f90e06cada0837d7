// The fixture of the point-to-point tests on one process
// (p2p_mock_test.cpp, vcoll_mock_test.cpp): the mock's native path or a
// mixed set of mock cards and staged test-plugin ranks, byte patterns in
// every rank's buffers, and grouped calls from one thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "test_util.hpp"

#define EXPECT_XAL_OK(call) EXPECT_EQ((call), XAL_SUCCESS) << xal_test::last_error().message

namespace xal_test {

struct Layout {
  const char* name;
  uint32_t mocks;
  const char* ranks;  // 'm' next mock card, 't' testdev, 'u' testdev2
  uint32_t path;      // xal_comm_path_t expected
};

inline constexpr size_t kBytes = 1 << 16;

// The call returned `want`, and xal_last_error says so with `needle` in its
// message.
inline void expect_error(xal_status_t got, xal_status_t want, const char* needle) {
  const xal_error_info_t e = last_error();
  EXPECT_EQ(got, want) << xal_status_name(got) << ": " << e.message;
  EXPECT_EQ(e.status, want) << e.message;
  EXPECT_NE(std::string(e.message).find(needle), std::string::npos) << e.message;
}

class P2p : public ::testing::TestWithParam<Layout>, protected RankSet {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(start(GetParam())); }
  void start(const Layout& l, uint32_t timeout_ms = 0) {
    env_.push_back(std::make_unique<ScopedEnv>("XAL_TESTDEV_ASYNC", "1"));
    env_.push_back(std::make_unique<ScopedEnv>("XAL_TESTDEV_NO_HOST_PTR", "1"));
    const std::string spec = std::to_string(l.mocks) + "*a100-40g";
    env_.push_back(std::make_unique<ScopedEnv>("XAL_MOCK_DEVICES", spec.c_str()));
    ASSERT_XAL_OK(init(std::string(XAL_MOCK_PLUGIN) + "," + plugin("testdev") + "," +
                       plugin("testdev2")));
    uint32_t next_mock = 0;
    for (const char* c = l.ranks; *c; ++c) {
      const uint32_t index = *c == 'm' ? next_mock++ : l.mocks + (*c == 't' ? 0 : 2);
      ASSERT_NO_FATAL_FAILURE(add_rank(index, kBytes));
    }
    comm.resize(dev.size());
    xal_comm_options_t o{};
    o.struct_size = sizeof o;
    o.timeout_ms = timeout_ms;
    ASSERT_XAL_OK(xal_comm_create(dev.data(), size(), &o, comm.data()));
  }
  void TearDown() override {
    for (xal_comm_t c : comm) {
      if (c) {
        EXPECT_XAL_OK(xal_comm_destroy(c));
      }
    }
    EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  }
  uint32_t size() const { return static_cast<uint32_t>(dev.size()); }

  // Bytes into / out of a buffer of rank r (waits for its stream).
  void write(size_t r, xal_devptr_t p, const void* data, size_t bytes) {
    ASSERT_XAL_OK(xal_memcpy_htod(stream[r], p, data, bytes));
    ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
  }
  std::vector<uint8_t> read(size_t r, xal_devptr_t p, size_t bytes) {
    std::vector<uint8_t> v(bytes);
    EXPECT_XAL_OK(xal_memcpy_dtoh(stream[r], v.data(), p, bytes));
    EXPECT_XAL_OK(xal_stream_synchronize(stream[r]));
    return v;
  }
  // Rank r's send buffer holds byte pattern(r, i); recv is cleared to 0xee.
  static uint8_t pattern(size_t r, size_t i) { return static_cast<uint8_t>(r * 37 + i * 11 + 1); }
  void fill_all() {
    std::vector<uint8_t> clear(kBytes, 0xee);
    for (size_t r = 0; r < size(); ++r) {
      std::vector<uint8_t> v(kBytes);
      for (size_t i = 0; i < kBytes; ++i) v[i] = pattern(r, i);
      ASSERT_NO_FATAL_FAILURE(write(r, send[r], v.data(), kBytes));
      ASSERT_NO_FATAL_FAILURE(write(r, recv[r], clear.data(), kBytes));
    }
  }
  void sync_all() {
    for (size_t r = 0; r < size(); ++r) ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
  }
  // Runs call(r) for every rank inside one group, from this thread.
  void grouped(const std::function<xal_status_t(uint32_t)>& call) {
    ASSERT_XAL_OK(xal_group_start());
    for (uint32_t r = 0; r < size(); ++r) ASSERT_EQ(call(r), XAL_SUCCESS) << r << ": " << last_error().message;
    ASSERT_XAL_OK(xal_group_end());
  }

  std::vector<std::unique_ptr<ScopedEnv>> env_;
};


class P2pOnce : public P2p {
 protected:
  void SetUp() override {}
};

}  // namespace xal_test

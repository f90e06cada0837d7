#include "xaltest/libxal_p2p_cases.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace xaltest {
namespace {

std::string last_message() {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return e.message;
}

size_t size_of(xal_dtype_t d) {
  switch (d) {
    case XAL_DTYPE_I8:
    case XAL_DTYPE_U8: return 1;
    case XAL_DTYPE_F16:
    case XAL_DTYPE_BF16: return 2;
    case XAL_DTYPE_I32:
    case XAL_DTYPE_U32:
    case XAL_DTYPE_F32: return 4;
    default: return 8;
  }
}

}  // namespace

std::string p2p_case_name(const ::testing::TestParamInfo<P2pCase>& info) {
  return info.param.backend;
}

void NativePointToPoint::SetUp() {
  const P2pCase& c = GetParam();
  const char* library = std::getenv(c.library_variable);
  ASSERT_NE(library, nullptr) << c.library_variable << " must name the simulated library";
  xal_init_options_t options{sizeof options, c.backend, nullptr, nullptr, -1, 0};
  ASSERT_EQ(xal_init(&options), XAL_SUCCESS) << last_message();
  // Loaded by the backend by now.
  void* handle = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << library << " was not loaded by the backend";
  call_count_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "xalsim_nccl_call_count"));
  dlclose(handle);
  uint32_t n = 0;
  ASSERT_EQ(xal_device_count(&n), XAL_SUCCESS);
  ASSERT_EQ(n, 2u);
  devices_.resize(n);
  comms_.resize(n);
  streams_.resize(n);
  send_.resize(n);
  recv_.resize(n);
  for (uint32_t r = 0; r < n; ++r) {
    ASSERT_EQ(xal_device_get(r, &devices_[r]), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_create(devices_[r], 0, &streams_[r]), XAL_SUCCESS);
    ASSERT_EQ(xal_mem_alloc(devices_[r], kBytes, &send_[r]), XAL_SUCCESS);
    ASSERT_EQ(xal_mem_alloc(devices_[r], kBytes, &recv_[r]), XAL_SUCCESS);
  }
  ASSERT_EQ(xal_comm_create(devices_.data(), n, nullptr, comms_.data()), XAL_SUCCESS)
      << last_message();
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_comm_get_info(comms_[0], &info), XAL_SUCCESS);
  ASSERT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_NATIVE)) << info.description;
}

void NativePointToPoint::TearDown() {
  for (xal_comm_t c : comms_) {
    if (c != nullptr) {
      EXPECT_EQ(xal_comm_destroy(c), XAL_SUCCESS);
    }
  }
  for (size_t r = 0; r < streams_.size(); ++r) {
    if (send_[r] != 0) {
      EXPECT_EQ(xal_mem_free(devices_[r], send_[r]), XAL_SUCCESS);
    }
    if (recv_[r] != 0) {
      EXPECT_EQ(xal_mem_free(devices_[r], recv_[r]), XAL_SUCCESS);
    }
    if (streams_[r] != nullptr) {
      EXPECT_EQ(xal_stream_destroy(streams_[r]), XAL_SUCCESS);
    }
  }
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

int NativePointToPoint::calls(const char* function) const {
  return call_count_ != nullptr ? call_count_(function) : -1;
}

std::vector<unsigned char> NativePointToPoint::fill(uint32_t r, size_t bytes) {
  std::vector<unsigned char> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 13 + r * 101 + 7);
  EXPECT_EQ(xal_memcpy_htod(streams_[r], send_[r], data.data(), bytes), XAL_SUCCESS);
  EXPECT_EQ(xal_memset(streams_[r], recv_[r], 0, kBytes), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_synchronize(streams_[r]), XAL_SUCCESS);
  return data;
}

std::vector<unsigned char> NativePointToPoint::received(uint32_t r, size_t bytes) {
  std::vector<unsigned char> data(bytes);
  EXPECT_EQ(xal_memcpy_dtoh(streams_[r], data.data(), recv_[r], bytes), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_synchronize(streams_[r]), XAL_SUCCESS);
  return data;
}

// One message each way, outside a group (each call queued at once) and
// inside one: the bytes arrive, through the library's ncclSend/ncclRecv.
TEST_P(NativePointToPoint, PairBothDirections) {
  ASSERT_GE(calls("ncclSend"), 0) << "the simulated library has no call counts";
  const int sends = calls("ncclSend");
  const int recvs = calls("ncclRecv");
  const size_t count = 1000;
  const size_t bytes = count * sizeof(float);
  for (int grouped = 0; grouped < 2; ++grouped) {
    const std::vector<unsigned char> a = fill(0, bytes);
    const std::vector<unsigned char> b = fill(1, bytes);
    if (grouped) {
      ASSERT_EQ(xal_group_start(), XAL_SUCCESS);
    }
    ASSERT_EQ(xal_send(comms_[0], send_[0], count, XAL_DTYPE_F32, 1, streams_[0]), XAL_SUCCESS)
        << last_message();
    ASSERT_EQ(xal_recv(comms_[1], recv_[1], count, XAL_DTYPE_F32, 0, streams_[1]), XAL_SUCCESS)
        << last_message();
    ASSERT_EQ(xal_send(comms_[1], send_[1], count, XAL_DTYPE_F32, 0, streams_[1]), XAL_SUCCESS);
    ASSERT_EQ(xal_recv(comms_[0], recv_[0], count, XAL_DTYPE_F32, 1, streams_[0]), XAL_SUCCESS);
    if (grouped) {
      ASSERT_EQ(xal_group_end(), XAL_SUCCESS) << last_message();
    }
    EXPECT_EQ(received(1, bytes), a);
    EXPECT_EQ(received(0, bytes), b);
  }
  EXPECT_EQ(calls("ncclSend"), sends + 4);
  EXPECT_EQ(calls("ncclRecv"), recvs + 4);
}

// Every rank sends to the next and receives from the previous, and to and
// from itself, in one group, for every dtype: no deadlock, bytes equal.
TEST_P(NativePointToPoint, RingInAGroupEveryDtype) {
  const uint32_t n = static_cast<uint32_t>(comms_.size());
  const int sends = calls("ncclSend");
  for (int d = 0; d < XAL_DTYPE_COUNT; ++d) {
    const auto dtype = static_cast<xal_dtype_t>(d);
    const size_t count = 777 + static_cast<size_t>(d);
    const size_t bytes = count * size_of(dtype);
    ASSERT_LE(2 * bytes, kBytes);
    std::vector<std::vector<unsigned char>> sent(n);
    for (uint32_t r = 0; r < n; ++r) sent[r] = fill(r, 2 * bytes);
    ASSERT_EQ(xal_group_start(), XAL_SUCCESS);
    for (uint32_t r = 0; r < n; ++r) {
      ASSERT_EQ(xal_send(comms_[r], send_[r], count, dtype, (r + 1) % n, streams_[r]),
                XAL_SUCCESS);
      ASSERT_EQ(xal_recv(comms_[r], recv_[r], count, dtype, (r + n - 1) % n, streams_[r]),
                XAL_SUCCESS);
      ASSERT_EQ(xal_send(comms_[r], send_[r] + bytes, count, dtype, r, streams_[r]), XAL_SUCCESS);
      ASSERT_EQ(xal_recv(comms_[r], recv_[r] + bytes, count, dtype, r, streams_[r]), XAL_SUCCESS);
    }
    ASSERT_EQ(xal_group_end(), XAL_SUCCESS) << last_message();
    for (uint32_t r = 0; r < n; ++r) {
      const std::vector<unsigned char> got = received(r, 2 * bytes);
      const std::vector<unsigned char>& from = sent[(r + n - 1) % n];
      EXPECT_TRUE(std::equal(got.begin(), got.begin() + bytes, from.begin()))
          << "rank " << r << ", dtype " << d;
      EXPECT_TRUE(std::equal(got.begin() + bytes, got.end(), sent[r].begin() + bytes))
          << "rank " << r << " from itself, dtype " << d;
    }
  }
  EXPECT_EQ(calls("ncclSend"), sends + 2 * static_cast<int>(n) * XAL_DTYPE_COUNT);
}

// A send and its receive that disagree on the count: both streams fail
// their next synchronize with COLLECTIVE_MISMATCH and a message, nothing
// hangs, and the communicator's next messages pair as before.
TEST_P(NativePointToPoint, MismatchedCountFailsBothStreams) {
  ASSERT_EQ(xal_group_start(), XAL_SUCCESS);
  ASSERT_EQ(xal_send(comms_[0], send_[0], 10, XAL_DTYPE_U8, 1, streams_[0]), XAL_SUCCESS);
  ASSERT_EQ(xal_recv(comms_[1], recv_[1], 11, XAL_DTYPE_U8, 0, streams_[1]), XAL_SUCCESS);
  ASSERT_EQ(xal_group_end(), XAL_SUCCESS) << last_message();
  for (uint32_t r = 0; r < 2; ++r) {
    EXPECT_EQ(xal_stream_synchronize(streams_[r]), XAL_ERROR_COLLECTIVE_MISMATCH) << "rank " << r;
    const std::string m = last_message();
    EXPECT_NE(m.find("10 x u8"), std::string::npos) << m;
    EXPECT_NE(m.find("11 x u8"), std::string::npos) << m;
    EXPECT_EQ(xal_stream_synchronize(streams_[r]), XAL_SUCCESS) << "reported once";
  }
  const std::vector<unsigned char> a = fill(0, 64);
  ASSERT_EQ(xal_group_start(), XAL_SUCCESS);
  ASSERT_EQ(xal_send(comms_[0], send_[0], 16, XAL_DTYPE_I32, 1, streams_[0]), XAL_SUCCESS);
  ASSERT_EQ(xal_recv(comms_[1], recv_[1], 16, XAL_DTYPE_I32, 0, streams_[1]), XAL_SUCCESS);
  ASSERT_EQ(xal_group_end(), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_synchronize(streams_[0]), XAL_SUCCESS);
  EXPECT_EQ(received(1, 64), a);
}

// Arguments xal refuses before anything is queued.
TEST_P(NativePointToPoint, PeerOutOfRangeIsRefused) {
  const int sends = calls("ncclSend");
  EXPECT_EQ(xal_send(comms_[0], send_[0], 4, XAL_DTYPE_F32, 2, streams_[0]),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("peer 2"), std::string::npos) << last_message();
  EXPECT_EQ(calls("ncclSend"), sends);
}

}  // namespace xaltest

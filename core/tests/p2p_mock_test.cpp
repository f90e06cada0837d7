// Point-to-point (xal_send, xal_recv) on one process: the mock's native
// path (host-addressable memory, read in place) and a mixed set of mock
// cards and the test plugins testdev/testdev2 (the hierarchical path;
// testdev's memory has no host view and is staged). Exact results, grouped
// calls from one thread, and the errors: bad arguments, mismatched counts
// and dtypes, a peer that never posts, abort.
#include <string>
#include <vector>

#include "p2p_fixture.hpp"

using namespace xal_test;

namespace {

TEST_P(P2p, TakesTheExpectedPath) {
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_XAL_OK(xal_comm_get_info(comm[0], &info));
  EXPECT_EQ(info.path, GetParam().path) << info.description;
}

// Each rank sends to the next and receives from the previous, in one group
// from one thread, and to itself.
TEST_P(P2p, RingAndSelfInOneGroup) {
  ASSERT_NO_FATAL_FAILURE(fill_all());
  const uint32_t n = size();
  const size_t count = 1000;  // f32
  grouped([&](uint32_t r) {
    xal_status_t s = xal_send(comm[r], send[r], count, XAL_DTYPE_F32, (r + 1) % n, stream[r]);
    if (s == XAL_SUCCESS)
      s = xal_recv(comm[r], recv[r], count, XAL_DTYPE_F32, (r + n - 1) % n, stream[r]);
    if (s == XAL_SUCCESS)
      s = xal_send(comm[r], send[r] + 8000, 10, XAL_DTYPE_I64, r, stream[r]);
    if (s == XAL_SUCCESS) s = xal_recv(comm[r], recv[r] + 8000, 10, XAL_DTYPE_I64, r, stream[r]);
    return s;
  });
  ASSERT_NO_FATAL_FAILURE(sync_all());
  for (uint32_t r = 0; r < n; ++r) {
    const auto got = read(r, recv[r], 8080);
    const uint32_t from = (r + n - 1) % n;
    for (size_t i = 0; i < 4000; ++i) ASSERT_EQ(got[i], pattern(from, i)) << r << " at " << i;
    for (size_t i = 4000; i < 8000; ++i) ASSERT_EQ(got[i], 0xee) << r << " at " << i;
    for (size_t i = 8000; i < 8080; ++i) ASSERT_EQ(got[i], pattern(r, i)) << r << " at " << i;
  }
}

// The sends of every rank first, then the receives of every rank, in one
// group: each rank's messages still form one unit (another rank's calls
// in between do not split it).
TEST_P(P2p, RingInSeparateLoops) {
  ASSERT_NO_FATAL_FAILURE(fill_all());
  const uint32_t n = size();
  ASSERT_XAL_OK(xal_group_start());
  for (uint32_t r = 0; r < n; ++r)
    ASSERT_XAL_OK(xal_send(comm[r], send[r], 777, XAL_DTYPE_U8, (r + 1) % n, stream[r]));
  for (uint32_t r = 0; r < n; ++r)
    ASSERT_XAL_OK(xal_recv(comm[r], recv[r], 777, XAL_DTYPE_U8, (r + n - 1) % n, stream[r]));
  ASSERT_XAL_OK(xal_group_end());
  ASSERT_NO_FATAL_FAILURE(sync_all());
  for (uint32_t r = 0; r < n; ++r) {
    const auto got = read(r, recv[r], 777);
    for (size_t i = 0; i < 777; ++i) ASSERT_EQ(got[i], pattern((r + n - 1) % n, i)) << r;
  }
}

// Every rank sends to every rank and receives from every rank, receives
// posted first: one group never waits for itself.
TEST_P(P2p, AllPairsReceivesFirstDoNotDeadlock) {
  ASSERT_NO_FATAL_FAILURE(fill_all());
  const uint32_t n = size();
  const size_t count = 512;
  grouped([&](uint32_t r) {
    for (uint32_t p = 0; p < n; ++p)
      if (xal_status_t s = xal_recv(comm[r], recv[r] + p * count, count, XAL_DTYPE_U8, p, stream[r]); s)
        return s;
    for (uint32_t p = 0; p < n; ++p)
      if (xal_status_t s = xal_send(comm[r], send[r] + p * count, count, XAL_DTYPE_U8, p, stream[r]); s)
        return s;
    return XAL_SUCCESS;
  });
  ASSERT_NO_FATAL_FAILURE(sync_all());
  for (uint32_t r = 0; r < n; ++r) {
    const auto got = read(r, recv[r], n * count);
    for (uint32_t p = 0; p < n; ++p)
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(got[p * count + i], pattern(p, r * count + i)) << r << " from " << p;
  }
}

// Outside a group, one thread: the sends and receives are queued, not
// waited for, so the thread can drive every rank.
TEST_P(P2p, UngroupedPairFromOneThread) {
  ASSERT_NO_FATAL_FAILURE(fill_all());
  ASSERT_XAL_OK(xal_send(comm[0], send[0], 300, XAL_DTYPE_I32, 1, stream[0]));
  ASSERT_XAL_OK(xal_recv(comm[1], recv[1], 300, XAL_DTYPE_I32, 0, stream[1]));
  ASSERT_NO_FATAL_FAILURE(sync_all());
  const auto got = read(1, recv[1], 1200);
  for (size_t i = 0; i < 1200; ++i) ASSERT_EQ(got[i], pattern(0, i)) << i;
}

TEST_P(P2p, ZeroCountMessagesPair) {
  grouped([&](uint32_t r) {
    xal_status_t s = xal_send(comm[r], send[r], 0, XAL_DTYPE_F64, (r + 1) % size(), stream[r]);
    return s ? s : xal_recv(comm[r], recv[r], 0, XAL_DTYPE_F64, (r + size() - 1) % size(), stream[r]);
  });
  for (uint32_t r = 0; r < size(); ++r) EXPECT_XAL_OK(xal_stream_synchronize(stream[r]));
}

TEST_P(P2p, BadArgumentsAreRefusedWithAMessage) {
  const uint32_t n = size();
  std::vector<size_t> c(n, 1), d(n, 0);
  expect_error(xal_send(comm[0], send[0], 1, XAL_DTYPE_F32, n, stream[0]), XAL_ERROR_INVALID_ARGUMENT, "peer");
  expect_error(xal_recv(comm[0], recv[0], 1, XAL_DTYPE_F32, n + 5, stream[0]), XAL_ERROR_INVALID_ARGUMENT, "peer");
  expect_error(xal_send(nullptr, send[0], 1, XAL_DTYPE_F32, 0, stream[0]), XAL_ERROR_INVALID_HANDLE, "comm");
  expect_error(xal_send(comm[0], send[0], 1, static_cast<xal_dtype_t>(99), 0, stream[0]), XAL_ERROR_INVALID_ARGUMENT, "dtype");
  expect_error(xal_send(comm[0], send[0], kBytes, XAL_DTYPE_F32, 0, stream[0]), XAL_ERROR_OUT_OF_BOUNDS, "send");
  expect_error(xal_send(comm[0], send[0], 1, XAL_DTYPE_F32, 0, stream[1]), XAL_ERROR_INVALID_ARGUMENT, "stream");
  expect_error(xal_allgatherv(comm[0], send[0], 2, recv[0], c.data(), d.data(), XAL_DTYPE_U8, stream[0]),
               XAL_ERROR_INVALID_ARGUMENT, "recv_counts[0]");
  expect_error(xal_allgatherv(comm[0], send[0], 1, recv[0], nullptr, d.data(), XAL_DTYPE_U8, stream[0]),
               XAL_ERROR_INVALID_ARGUMENT, "recv_counts");
  expect_error(xal_alltoallv(comm[0], send[0], c.data(), nullptr, recv[0], c.data(), d.data(), XAL_DTYPE_U8, stream[0]),
               XAL_ERROR_INVALID_ARGUMENT, "send_displs");
  d[1] = kBytes;
  expect_error(xal_alltoallv(comm[0], send[0], c.data(), d.data(), recv[0], c.data(), c.data(), XAL_DTYPE_U8, stream[0]),
               XAL_ERROR_OUT_OF_BOUNDS, "send");
  expect_error(xal_reduce_scatterv(comm[0], send[0], recv[0], c.data(), XAL_DTYPE_I32, XAL_OP_AVG, stream[0]),
               XAL_ERROR_NOT_SUPPORTED, "avg");
  expect_error(xal_gather(comm[0], send[0], recv[0], 1, XAL_DTYPE_U8, n, stream[0]), XAL_ERROR_INVALID_ARGUMENT, "root");
  expect_error(xal_scatter(comm[0], send[0], recv[0], 1, XAL_DTYPE_U8, n, stream[0]), XAL_ERROR_INVALID_ARGUMENT, "root");
  expect_error(xal_comm_split(comm[0], 0, 0, nullptr, nullptr), XAL_ERROR_INVALID_ARGUMENT, "out_comm");
  expect_error(xal_comm_dup(nullptr, nullptr), XAL_ERROR_INVALID_HANDLE, "comm");
}

// A receive expecting another count or dtype than its send: both streams
// report COLLECTIVE_MISMATCH, and the communicator stays usable.
TEST_P(P2p, MismatchedCountOrDtypeFailsBothSides) {
  ASSERT_NO_FATAL_FAILURE(fill_all());
  for (xal_dtype_t recv_dtype : {XAL_DTYPE_F32, XAL_DTYPE_I32}) {
    const size_t recv_count = recv_dtype == XAL_DTYPE_F32 ? 11 : 10;
    ASSERT_XAL_OK(xal_send(comm[0], send[0], 10, XAL_DTYPE_F32, 1, stream[0]));
    ASSERT_XAL_OK(xal_recv(comm[1], recv[1], recv_count, recv_dtype, 0, stream[1]));
    EXPECT_EQ(xal_stream_synchronize(stream[0]), XAL_ERROR_COLLECTIVE_MISMATCH);
    EXPECT_EQ(xal_stream_synchronize(stream[1]), XAL_ERROR_COLLECTIVE_MISMATCH);
    EXPECT_NE(std::string(last_error().message).find("expects"), std::string::npos)
        << last_error().message;
  }
  EXPECT_EQ(async_error(0), XAL_ERROR_COLLECTIVE_MISMATCH);
  ASSERT_XAL_OK(xal_send(comm[0], send[0], 10, XAL_DTYPE_F32, 1, stream[0]));
  ASSERT_XAL_OK(xal_recv(comm[1], recv[1], 10, XAL_DTYPE_F32, 0, stream[1]));
  EXPECT_XAL_OK(xal_stream_synchronize(stream[0]));
  EXPECT_XAL_OK(xal_stream_synchronize(stream[1]));
  const auto got = read(1, recv[1], 40);
  for (size_t i = 0; i < 40; ++i) ASSERT_EQ(got[i], pattern(0, i));
}

INSTANTIATE_TEST_SUITE_P(
    Paths, P2p,
    ::testing::Values(Layout{"NativeMock", 4, "mmmm", XAL_COMM_PATH_NATIVE},
                      Layout{"MixedStaged", 2, "mtmu", XAL_COMM_PATH_HIERARCHICAL}),
    [](const auto& info) { return std::string(info.param.name); });

// A peer that never posts: the receive fails with TIMEOUT within the
// communicator's timeout, and the point-to-point stays broken.
TEST_F(P2pOnce, APeerThatNeverSendsTimesOut) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mt", 0}, 200));
  ASSERT_XAL_OK(xal_recv(comm[1], recv[1], 4, XAL_DTYPE_U8, 0, stream[1]));
  EXPECT_EQ(xal_stream_synchronize(stream[1]), XAL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(last_error().message).find("did not reach it"), std::string::npos)
      << last_error().message;
  expect_error(xal_send(comm[0], send[0], 4, XAL_DTYPE_U8, 1, stream[0]), XAL_ERROR_TIMEOUT,
               "point-to-point");
}

TEST_F(P2pOnce, AbortEndsAWaitingReceive) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mm", 0}, 60000));
  ASSERT_XAL_OK(xal_recv(comm[1], recv[1], 4, XAL_DTYPE_U8, 0, stream[1]));
  ASSERT_XAL_OK(xal_comm_abort(comm[1]));
  EXPECT_EQ(xal_stream_synchronize(stream[1]), XAL_ERROR_ABORTED);
}

}  // namespace

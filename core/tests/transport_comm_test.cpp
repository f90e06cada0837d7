// Communicators across processes (xal_comm_create_transport) over a fake
// in-process transport (transport_fake.hpp): two "processes" are two sets
// of testdev devices in this process, linked by a Hub (threads meeting in
// memory).
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "transport_fake.hpp"

using namespace transport_fake;

TEST_F(TransportComm, InfoReportsGlobalRanks) {
  ASSERT_NO_FATAL_FAILURE(open(64));
  for (size_t r = 0; r < 3; ++r) {
    auto [side, i] = at(r);
    xal_comm_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_XAL_OK(xal_comm_get_info(side->comm[i], &info));
    EXPECT_EQ(info.rank, r);
    EXPECT_EQ(info.size, 3u);
    EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_MPI));
    EXPECT_NE(std::string(info.description).find("2 processes"), std::string::npos);
  }
  // Each process's transport is released with the last of its comms.
  EXPECT_EQ(xal_comm_destroy(a.comm[0]), XAL_SUCCESS);
  EXPECT_EQ(a.proc.released, 0);
  EXPECT_EQ(xal_comm_destroy(a.comm[1]), XAL_SUCCESS);
  a.comm.clear();
  EXPECT_EQ(a.proc.released, 1);
  EXPECT_EQ(b.proc.released, 0);
  b.destroy();
  EXPECT_EQ(b.proc.released, 1);
}

TEST_F(TransportComm, EveryCollectiveMatchesTheReference) {
  constexpr size_t n = 301;
  ASSERT_NO_FATAL_FAILURE(open(n * 3 * 4));
  for (size_t r = 0; r < 3; ++r) {
    auto [side, i] = at(r);
    side->put(i, values(r, n * 3));
  }
  auto run = [&](auto call) {
    each([&](Side& s, size_t i, size_t g) {
      EXPECT_EQ(call(s, i, g), XAL_SUCCESS) << last_error().message;
    });
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(at(r).first->async_error(at(r).second), XAL_SUCCESS);
  };
  // allreduce sum
  run([](Side& s, size_t i, size_t) {
    return xal_allreduce(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_SUM, s.stream[i]);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, n);
    for (size_t k = 0; k < n; ++k) ASSERT_EQ(got[k], 3000 + 3 * static_cast<int32_t>(k % 97));
  }
  // max
  run([](Side& s, size_t i, size_t) {
    return xal_allreduce(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_MAX, s.stream[i]);
  });
  EXPECT_EQ(a.get(0, n)[5], 2005);
  // broadcast from rank 2 (process 1) and from rank 1 (process 0)
  for (uint32_t root : {2u, 1u}) {
    run([root](Side& s, size_t i, size_t) {
      return xal_broadcast(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, root, s.stream[i]);
    });
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(at(r).first->get(at(r).second, n), values(root, n));
  }
  // reduce to rank 2
  run([](Side& s, size_t i, size_t) {
    return xal_reduce(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_SUM, 2, s.stream[i]);
  });
  EXPECT_EQ(b.get(0, n)[10], 3030);
  // allgather
  run([](Side& s, size_t i, size_t) {
    return xal_allgather(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, s.stream[i]);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, 3 * n);
    for (size_t j = 0; j < 3; ++j)
      EXPECT_EQ(std::vector<int32_t>(got.begin() + j * n, got.begin() + (j + 1) * n), values(j, n));
  }
  // reduce_scatter: rank r gets the sum of block r
  run([](Side& s, size_t i, size_t) {
    return xal_reduce_scatter(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_SUM,
                              s.stream[i]);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, n);
    for (size_t k = 0; k < n; ++k)
      ASSERT_EQ(got[k], 3000 + 3 * static_cast<int32_t>((r * n + k) % 97)) << r << " " << k;
  }
  // alltoall: rank r's block j is rank j's send block r
  run([](Side& s, size_t i, size_t) {
    return xal_alltoall(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, s.stream[i]);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, 3 * n);
    for (size_t j = 0; j < 3; ++j) {
      auto src = values(j, 3 * n);
      EXPECT_EQ(std::vector<int32_t>(got.begin() + j * n, got.begin() + (j + 1) * n),
                std::vector<int32_t>(src.begin() + r * n, src.begin() + (r + 1) * n));
    }
  }
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, AverageOfFloatsInPlace) {
  constexpr size_t n = 100;
  ASSERT_NO_FATAL_FAILURE(open(n * 4));
  for (size_t r = 0; r < 3; ++r) {
    std::vector<float> v(n, static_cast<float>(r + 1));
    auto [side, i] = at(r);
    ASSERT_XAL_OK(xal_memcpy_htod(side->stream[i], side->send[i], v.data(), n * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
  }
  each([](Side& s, size_t i, size_t) {
    EXPECT_EQ(xal_allreduce(s.comm[i], s.send[i], s.send[i], n, XAL_DTYPE_F32, XAL_OP_AVG,
                            s.stream[i]), XAL_SUCCESS);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto [side, i] = at(r);
    std::vector<float> v(n);
    ASSERT_XAL_OK(xal_memcpy_dtoh(side->stream[i], v.data(), side->send[i], n * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
    EXPECT_FLOAT_EQ(v[0], 2.0f);
    EXPECT_FLOAT_EQ(v[n - 1], 2.0f);
  }
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, ProcessesThatDisagreeGetMismatchAndStayUsable) {
  ASSERT_NO_FATAL_FAILURE(open(64 * 4));
  each(
      [](Side& s, size_t i, size_t g) {
        const size_t count = g == 2 ? 12 : 10;
        EXPECT_EQ(xal_allreduce(s.comm[i], s.send[i], s.recv[i], count, XAL_DTYPE_I32,
                                XAL_OP_SUM, s.stream[i]), XAL_SUCCESS);
      },
      XAL_ERROR_COLLECTIVE_MISMATCH);
  for (size_t r = 0; r < 3; ++r)
    EXPECT_EQ(at(r).first->async_error(at(r).second), XAL_ERROR_COLLECTIVE_MISMATCH);
  for (size_t r = 0; r < 3; ++r) at(r).first->put(at(r).second, values(r, 10));
  each([](Side& s, size_t i, size_t) {
    EXPECT_EQ(xal_allreduce(s.comm[i], s.send[i], s.recv[i], 10, XAL_DTYPE_I32, XAL_OP_SUM,
                            s.stream[i]), XAL_SUCCESS);
  });
  EXPECT_EQ(b.get(0, 10)[3], 3009);
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, AProcessThatNeverArrivesTimesOut) {
  ASSERT_NO_FATAL_FAILURE(open(64, 300));
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(xal_allreduce(a.comm[i], a.send[i], a.recv[i], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                            a.stream[i]), XAL_SUCCESS);
  a.sync(XAL_ERROR_TIMEOUT);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_EQ(a.async_error(0), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(a.async_error(1), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(xal_allreduce(a.comm[0], a.send[0], a.recv[0], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                          a.stream[0]), XAL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(last_error().message).find("between processes"), std::string::npos)
      << last_error().message;
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, AbortUnblocksAPendingCall) {
  ASSERT_NO_FATAL_FAILURE(open(64, 600000));
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(xal_allreduce(a.comm[i], a.send[i], a.recv[i], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                            a.stream[i]), XAL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(xal_comm_abort(a.comm[1]), XAL_SUCCESS);
  a.sync(XAL_ERROR_ABORTED);
  EXPECT_EQ(a.async_error(0), XAL_ERROR_ABORTED);
  EXPECT_EQ(xal_allreduce(a.comm[1], a.send[1], a.recv[1], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                          a.stream[1]), XAL_ERROR_ABORTED);
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, BadInputGivesAClearStatus) {
  a.open({0, 1}, 64);
  std::vector<xal_comm_t> out(2);
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 2, nullptr, nullptr, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("transport"), std::string::npos);
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 0, nullptr, &a.proc.t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_comm_create_transport(nullptr, 2, nullptr, &a.proc.t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 1, nullptr, &a.proc.t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);  // ranks_per_process[0] is 2
  EXPECT_NE(std::string(last_error().message).find("ranks_per_process"), std::string::npos);
  xal_device_t twice[] = {a.dev[0], a.dev[0]};
  EXPECT_EQ(xal_comm_create_transport(twice, 2, nullptr, &a.proc.t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("twice"), std::string::npos);
  xal_comm_transport_t t = a.proc.t;
  t.process_rank = 2;
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 2, nullptr, &t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  t = a.proc.t;
  t.allgatherv = nullptr;
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 2, nullptr, &t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  t = a.proc.t;
  t.struct_size = 4;
  EXPECT_NE(xal_comm_create_transport(a.dev.data(), 2, nullptr, &t, out.data()), XAL_SUCCESS);
  EXPECT_EQ(a.proc.released, 0);  // the caller keeps a transport that was refused
}

TEST_F(TransportComm, ATransportLibraryReportsThroughLastError) {
  EXPECT_EQ(xal_transport_set_error("xal_comm_create_other", XAL_ERROR_TIMEOUT, "peer 3 is gone"),
            XAL_ERROR_TIMEOUT);
  const xal_error_info_t e = last_error();
  EXPECT_EQ(e.status, XAL_ERROR_TIMEOUT);
  EXPECT_STREQ(e.operation, "xal_comm_create_other");
  EXPECT_STREQ(e.message, "peer 3 is gone");
  EXPECT_EQ(xal_transport_set_error(nullptr, XAL_SUCCESS, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("not an error"), std::string::npos);
}

// A transport call that fails (here: the transport's allreduce returns
// TIMEOUT at once on both processes) fails every rank's stream, once, with
// its message, as on the other paths; the communicator is broken.
TEST_F(TransportComm, ATransportFailureReachesEveryStream) {
  ASSERT_NO_FATAL_FAILURE(open(64, 60000));
  a.proc.fail_with = XAL_ERROR_TIMEOUT;
  b.proc.fail_with = XAL_ERROR_TIMEOUT;
  each(
      [](Side& s, size_t i, size_t) {
        EXPECT_EQ(xal_allreduce(s.comm[i], s.send[i], s.recv[i], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                                s.stream[i]), XAL_SUCCESS);
      },
      XAL_ERROR_TIMEOUT);
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(at(r).first->async_error(at(r).second), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(xal_allreduce(a.comm[0], a.send[0], a.recv[0], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                          a.stream[0]), XAL_ERROR_TIMEOUT);
  a.destroy();
  b.destroy();
}

// The message of a failed transport call reaches xal_last_error through
// the stream's synchronize.
TEST_F(TransportComm, ATransportFailureNamesItsCause) {
  ASSERT_NO_FATAL_FAILURE(open(64, 60000));
  a.proc.fail_with = XAL_ERROR_BACKEND;
  b.proc.fail_with = XAL_ERROR_BACKEND;
  std::thread other([&] {
    EXPECT_EQ(xal_allgather(b.comm[0], b.send[0], b.recv[0], 4, XAL_DTYPE_I32, b.stream[0]),
              XAL_SUCCESS);
  });
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(xal_allgather(a.comm[i], a.send[i], a.recv[i], 4, XAL_DTYPE_I32, a.stream[i]),
              XAL_SUCCESS);
  other.join();
  // The first step is the agreement check (an allreduce), which fails.
  EXPECT_EQ(xal_stream_synchronize(a.stream[1]), XAL_ERROR_BACKEND);
  const std::string m = last_error().message;
  EXPECT_NE(m.find("allgather"), std::string::npos) << m;
  EXPECT_NE(m.find("fake: injected failure"), std::string::npos) << m;
  EXPECT_EQ(xal_stream_synchronize(a.stream[0]), XAL_ERROR_BACKEND);
  EXPECT_EQ(xal_stream_synchronize(b.stream[0]), XAL_ERROR_BACKEND);
  a.destroy();
  b.destroy();
}

namespace {

// Global rank 0 issues an allreduce on its stream and an allgather on a
// second stream of its device; the other ranks issue both 200 ms later.
// The rank's calls run in issue order (its slot in the local meeting and
// its staging buffers serve one call at a time).
class TransportTwoStreams : public TransportComm {
 protected:
  void run_two_streams_of_one_rank() {
    constexpr size_t n = 64;
    ASSERT_NO_FATAL_FAILURE(open(3 * n * 4));
    for (size_t r = 0; r < 3; ++r) at(r).first->put(at(r).second, values(r, 3 * n));
    xal_stream_t second = nullptr;
    ASSERT_XAL_OK(xal_stream_create(a.dev[0], 0, &second));
    xal_devptr_t gathered = 0;
    ASSERT_XAL_OK(xal_mem_alloc(a.dev[0], 3 * n * 4, &gathered));
    ASSERT_XAL_OK(xal_allreduce(a.comm[0], a.send[0], a.recv[0], n, XAL_DTYPE_I32, XAL_OP_SUM, a.stream[0]));
    ASSERT_XAL_OK(xal_allgather(a.comm[0], a.send[0], gathered, n, XAL_DTYPE_I32, second));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::thread other([&] {
      EXPECT_EQ(xal_allreduce(b.comm[0], b.send[0], b.recv[0], n, XAL_DTYPE_I32, XAL_OP_SUM, b.stream[0]),
                XAL_SUCCESS);
      EXPECT_EQ(xal_allgather(b.comm[0], b.send[0], b.recv[0], n, XAL_DTYPE_I32, b.stream[0]), XAL_SUCCESS);
    });
    ASSERT_XAL_OK(xal_allreduce(a.comm[1], a.send[1], a.recv[1], n, XAL_DTYPE_I32, XAL_OP_SUM, a.stream[1]));
    ASSERT_XAL_OK(xal_allgather(a.comm[1], a.send[1], a.recv[1], n, XAL_DTYPE_I32, a.stream[1]));
    other.join();
    ASSERT_XAL_OK(xal_stream_synchronize(second));
    a.sync();
    b.sync();
    const auto sum = a.get(0, n);
    for (size_t k = 0; k < n; ++k) ASSERT_EQ(sum[k], 3000 + 3 * static_cast<int32_t>(k % 97)) << k;
    std::vector<int32_t> all(3 * n);
    ASSERT_XAL_OK(xal_memcpy_dtoh(second, all.data(), gathered, all.size() * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(second));
    for (size_t j = 0; j < 3; ++j)
      EXPECT_EQ(std::vector<int32_t>(all.begin() + j * n, all.begin() + (j + 1) * n), values(j, n)) << j;
    EXPECT_EQ(b.get(0, 3 * n), all);
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(at(r).first->async_error(at(r).second), XAL_SUCCESS);
    ASSERT_XAL_OK(xal_stream_destroy(second));
    a.destroy();
    b.destroy();
  }
};

// Ranks whose memory has no host view: staged through page-locked buffers.
class TransportTwoStreamsStaged : public TransportTwoStreams {
  ScopedEnv nohost_{"XAL_TESTDEV_NO_HOST_PTR", "1"};
};

}  // namespace

TEST_F(TransportTwoStreams, OneRankRunsItsCallsInIssueOrder) { run_two_streams_of_one_rank(); }
TEST_F(TransportTwoStreamsStaged, OneRankRunsItsCallsInIssueOrder) { run_two_streams_of_one_rank(); }

// Local rank 1 gives up waiting for its leader's step (the leader's
// exchange returns 2 s late, past 3 x 100 + 1000 ms); its next call, queued
// behind, then fails at once without taking its place in the local meeting:
// the leader, still in its step, writes the first call's result only where
// that call asked, never into the next call's buffer.
TEST_F(TransportComm, ARankThatGaveUpLeavesTheLeadersStepAlone) {
  ASSERT_NO_FATAL_FAILURE(open(64 * 4, 100));
  a.proc.slow_call = 2;  // the first call's exchange (after the agreement check)
  a.proc.slow_ms = 2000;
  const std::vector<int32_t> sentinel(64, -7);
  xal_devptr_t next_recv = 0;
  ASSERT_XAL_OK(xal_mem_alloc(a.dev[1], 64 * 4, &next_recv));
  ASSERT_XAL_OK(xal_memcpy_htod(a.stream[1], next_recv, sentinel.data(), 64 * 4));
  ASSERT_XAL_OK(xal_stream_synchronize(a.stream[1]));
  std::thread other([&] {
    EXPECT_EQ(xal_allreduce(b.comm[0], b.send[0], b.recv[0], 64, XAL_DTYPE_I32, XAL_OP_SUM, b.stream[0]),
              XAL_SUCCESS);
  });
  for (size_t i = 0; i < 2; ++i)
    ASSERT_XAL_OK(xal_allreduce(a.comm[i], a.send[i], a.recv[i], 64, XAL_DTYPE_I32, XAL_OP_SUM, a.stream[i]));
  ASSERT_XAL_OK(xal_allreduce(a.comm[1], a.send[1], next_recv, 64, XAL_DTYPE_I32, XAL_OP_SUM, a.stream[1]));
  other.join();
  EXPECT_EQ(xal_stream_synchronize(a.stream[1]), XAL_ERROR_TIMEOUT);
  static_cast<void>(xal_stream_synchronize(a.stream[0]));  // the leader's step ends (2 s)
  static_cast<void>(xal_stream_synchronize(b.stream[0]));
  std::vector<int32_t> got(64);
  ASSERT_XAL_OK(xal_memcpy_dtoh(a.stream[1], got.data(), next_recv, 64 * 4));
  ASSERT_XAL_OK(xal_stream_synchronize(a.stream[1]));
  EXPECT_EQ(got, sentinel);
  EXPECT_EQ(a.async_error(1), XAL_ERROR_TIMEOUT);
  a.destroy();
  b.destroy();
}

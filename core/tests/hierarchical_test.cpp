// The core's collective path: communicators across backends (testdev and
// testdev2, host-addressable with host functions), and over a backend with
// neither host functions nor host-addressable memory ("minimal": staged,
// run on the calling threads).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "xal_common/host_collective.hpp"

using namespace xal_test;

namespace {

struct Ranks : RankSet {
  void open(const std::vector<uint32_t>& indices, size_t bytes, uint32_t timeout_ms = 0) {
    for (uint32_t i : indices) ASSERT_NO_FATAL_FAILURE(add_rank(i, bytes));
    comm.resize(dev.size());
    xal_comm_options_t o{};
    o.struct_size = sizeof o;
    o.timeout_ms = timeout_ms;
    ASSERT_XAL_OK(xal_comm_create(dev.data(), static_cast<uint32_t>(dev.size()), &o, comm.data()));
  }
};

class Hierarchical : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(xal_shutdown(), XAL_SUCCESS); }
};

}  // namespace

// testdev: devices 0-1; testdev2: devices 2-3; minimal: 4-5. One device of
// each backend: no group runs natively (testdev's native collectives finish
// when the last rank calls them, not in stream order, so they cannot feed
// the leaders' exchange), every rank meets at the flat exchange; minimal's
// rank is staged.
TEST_F(Hierarchical, AllreduceAndAlltoallAcrossBackends) {
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2") + "," + plugin("minimal")));
  Ranks k;
  constexpr size_t n = 1000;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2, 4}, n * 4 * 3));
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_XAL_OK(xal_comm_get_info(k.comm[1], &info));
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_HIERARCHICAL));
  EXPECT_EQ(info.rank, 1u);
  EXPECT_EQ(info.size, 3u);
  EXPECT_NE(std::string(info.description).find("testdev2"), std::string::npos) << info.description;
  for (size_t r = 0; r < 3; ++r) {
    std::vector<int32_t> v(n * 3);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(r * 10000 + i);
    k.put(r, v);
  }
  ASSERT_XAL_OK(xal_group_start());
  for (size_t r = 0; r < 3; ++r)
    ASSERT_XAL_OK(xal_allreduce(k.comm[r], k.send[r], k.recv[r], n, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[r]));
  ASSERT_XAL_OK(xal_group_end());
  for (size_t r = 0; r < 3; ++r) {
    const auto got = k.get(r, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], static_cast<int32_t>(30000 + 3 * i)) << r << " " << i;
    EXPECT_EQ(k.async_error(r), XAL_SUCCESS);
  }
  ASSERT_XAL_OK(xal_group_start());
  for (size_t r = 0; r < 3; ++r)
    ASSERT_XAL_OK(xal_alltoall(k.comm[r], k.send[r], k.recv[r], n, XAL_DTYPE_I32, k.stream[r]));
  ASSERT_XAL_OK(xal_group_end());
  for (size_t r = 0; r < 3; ++r) {
    const auto got = k.get(r, 3 * n);
    for (size_t j = 0; j < 3; ++j)
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(got[j * n + i], static_cast<int32_t>(j * 10000 + r * n + i));
  }
}

TEST_F(Hierarchical, MissingRankTimesOutAndAbortIsReported) {
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2}, 64, 100));
  // Only rank 0 calls: its host function waits 100 ms, then times out.
  ASSERT_XAL_OK(xal_allreduce(k.comm[0], k.send[0], k.recv[0], 4, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[0]));
  EXPECT_XAL_ERROR(xal_stream_synchronize(k.stream[0]), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(k.async_error(0), XAL_ERROR_TIMEOUT);
  // The communicator is broken: later calls fail at once with a message.
  EXPECT_XAL_ERROR(xal_allreduce(k.comm[1], k.send[1], k.recv[1], 4, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[1]),
                   XAL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(last_error().message).find("rank(s) 1"), std::string::npos) << last_error().message;
}

TEST_F(Hierarchical, AbortUnblocksAPendingCall) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");  // streams run on workers
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({1, 3}, 64, 60000));
  ASSERT_XAL_OK(xal_allreduce(k.comm[0], k.send[0], k.recv[0], 4, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[0]));
  EXPECT_EQ(xal_stream_query(k.stream[0]), XAL_NOT_READY);
  ASSERT_XAL_OK(xal_comm_abort(k.comm[1]));
  EXPECT_XAL_ERROR(xal_stream_synchronize(k.stream[0]), XAL_ERROR_ABORTED);
  EXPECT_EQ(k.async_error(0), XAL_ERROR_ABORTED);
  EXPECT_XAL_ERROR(xal_broadcast(k.comm[0], k.send[0], k.recv[0], 4, XAL_DTYPE_I32, 0, k.stream[0]),
                   XAL_ERROR_ABORTED);
}

TEST_F(Hierarchical, MismatchAndBadDtypeOp) {
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2}, 64));
  ASSERT_XAL_OK(xal_group_start());
  ASSERT_XAL_OK(xal_allreduce(k.comm[0], k.send[0], k.recv[0], 4, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[0]));
  ASSERT_XAL_OK(xal_allreduce(k.comm[1], k.send[1], k.recv[1], 4, XAL_DTYPE_I32, XAL_OP_MAX, k.stream[1]));
  ASSERT_XAL_OK(xal_group_end());
  EXPECT_XAL_ERROR(xal_stream_synchronize(k.stream[0]), XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_XAL_ERROR(xal_stream_synchronize(k.stream[1]), XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_EQ(k.async_error(0), XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_XAL_ERROR(xal_allreduce(k.comm[0], k.send[0], k.recv[0], 4, XAL_DTYPE_I32, XAL_OP_AVG, k.stream[0]),
                   XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(last_error().message).find("avg"), std::string::npos);
}

TEST_F(Hierarchical, OneThreadDrivesSynchronousRanksThroughAGroup) {
  // Synchronous testdev streams run the host step on the calling thread:
  // the group runs each rank on its own thread at xal_group_end. (One
  // testdev device only: two would form a native group, whose collectives
  // finish when the last rank calls them, not in stream order.)
  ASSERT_XAL_OK(init(plugin("minimal") + "," + plugin("testdev")));
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 1, 2}, 400));
  for (size_t r = 0; r < 3; ++r) k.put(r, std::vector<int32_t>(100, static_cast<int32_t>(r)));
  ASSERT_XAL_OK(xal_group_start());
  for (size_t r = 0; r < 3; ++r)
    ASSERT_XAL_OK(xal_broadcast(k.comm[r], k.send[r], k.recv[r], 100, XAL_DTYPE_I32, 2, k.stream[r]));
  ASSERT_XAL_OK(xal_group_end());
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(k.get(r, 100), std::vector<int32_t>(100, 2)) << r;
}

// minimal: devices 0-1 (no host funcs, no host view); testdev: 2-3.
TEST_F(Hierarchical, StagedRanksWithoutHostFunctionsRunOnTheirThreads) {
  ASSERT_XAL_OK(init(plugin("minimal") + "," + plugin("testdev")));
  Ranks k;
  constexpr size_t n = 3000;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 1, 2}, n * 4));
  for (size_t r = 0; r < 3; ++r) k.put(r, std::vector<int32_t>(n, static_cast<int32_t>(r + 1)));
  std::vector<xal_status_t> st(3, XAL_ERROR_INTERNAL);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      st[r] = xal_allreduce(k.comm[r], k.send[r], k.recv[r], n, XAL_DTYPE_I32, XAL_OP_PROD, k.stream[r]);
    });
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < 3; ++r) {
    ASSERT_EQ(st[r], XAL_SUCCESS) << r;
    const auto got = k.get(r, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 6) << r << " " << i;
  }
}

TEST_F(Hierarchical, BadChunkSizeIsRejected) {
  ScopedEnv chunk("XAL_COMM_CHUNK_BYTES", "4 parsecs");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  xal_device_t d[2];
  ASSERT_XAL_OK(xal_device_get(0, &d[0]));
  ASSERT_XAL_OK(xal_device_get(2, &d[1]));
  xal_comm_t c[2];
  EXPECT_XAL_ERROR(xal_comm_create(d, 2, nullptr, c), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("XAL_COMM_CHUNK_BYTES"), std::string::npos)
      << last_error().message;
}

TEST_F(Hierarchical, BadForcedPathIsRejected) {
  ScopedEnv force("XAL_COMM_FORCE_PATH", "sideways");
  ASSERT_XAL_OK(init(plugin("testdev")));
  xal_device_t d[2];
  ASSERT_XAL_OK(xal_device_get(0, &d[0]));
  ASSERT_XAL_OK(xal_device_get(1, &d[1]));
  xal_comm_t c[2];
  EXPECT_XAL_ERROR(xal_comm_create(d, 2, nullptr, c), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("sideways"), std::string::npos);
}

// Staged ranks (no host view, asynchronous streams) with many small chunks:
// copies run on the rank's copy streams, overlapped with the host runs;
// minimal's rank (no host functions) runs its chunks on its thread.
TEST_F(Hierarchical, StagedRanksArePipelinedInChunks) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ScopedEnv nohost("XAL_TESTDEV_NO_HOST_PTR", "1");
  ScopedEnv chunk("XAL_COMM_CHUNK_BYTES", "1000");  // 250 i32 per chunk
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2") + "," + plugin("minimal")));
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2, 4}, 5000 * 4));
  for (size_t n : {size_t{0}, size_t{1}, size_t{250}, size_t{4999}}) {
    SCOPED_TRACE(n);
    for (size_t r = 0; r < 3; ++r) {
      std::vector<int32_t> v(5000);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(r * 7 + i);
      k.put(r, v);
    }
    // minimal (no host functions) runs its chunks on the calling thread:
    // a group gives each rank a thread.
    ASSERT_XAL_OK(xal_group_start());
    for (size_t r = 0; r < 3; ++r)
      ASSERT_XAL_OK(xal_allreduce(k.comm[r], k.send[r], k.recv[r], n, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[r]));
    ASSERT_XAL_OK(xal_group_end());
    for (size_t r = 0; r < 3; ++r) {
      const auto got = k.get(r, n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], static_cast<int32_t>(21 + 3 * i)) << r << " " << i;
    }
    ASSERT_XAL_OK(xal_group_start());
    for (size_t r = 0; r < 3; ++r)
      ASSERT_XAL_OK(xal_broadcast(k.comm[r], k.send[r], k.recv[r], n, XAL_DTYPE_I32, 2, k.stream[r]));
    ASSERT_XAL_OK(xal_group_end());
    for (size_t r = 0; r < 3; ++r) {
      const auto got = k.get(r, n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], static_cast<int32_t>(14 + i)) << r << " " << i;
    }
  }
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(k.async_error(r), XAL_SUCCESS);
}

// Ranks that disagree on the count meet the mismatch at the same chunk and
// all stop there: the next call pairs correctly.
TEST_F(Hierarchical, ChunkedCountMismatchKeepsRanksInStep) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ScopedEnv nohost("XAL_TESTDEV_NO_HOST_PTR", "1");
  ScopedEnv chunk("XAL_COMM_CHUNK_BYTES", "1024");  // 256 i32 per chunk
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2}, 3000 * 4));
  k.put(0, std::vector<int32_t>(3000, 1));
  k.put(1, std::vector<int32_t>(3000, 2));
  // 2048 = 8 full chunks (+ an empty last) against 3000 = 11 full + 184.
  ASSERT_XAL_OK(xal_allreduce(k.comm[0], k.send[0], k.recv[0], 2048, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[0]));
  ASSERT_XAL_OK(xal_allreduce(k.comm[1], k.send[1], k.recv[1], 3000, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[1]));
  ASSERT_XAL_OK(xal_allreduce(k.comm[0], k.send[0], k.recv[0], 3000, XAL_DTYPE_I32, XAL_OP_MAX, k.stream[0]));
  ASSERT_XAL_OK(xal_allreduce(k.comm[1], k.send[1], k.recv[1], 3000, XAL_DTYPE_I32, XAL_OP_MAX, k.stream[1]));
  for (size_t r = 0; r < 2; ++r)  // the first call's mismatch, reported once
    EXPECT_XAL_ERROR(xal_stream_synchronize(k.stream[r]), XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_EQ(k.get(0, 3000), std::vector<int32_t>(3000, 2));
  EXPECT_EQ(k.get(1, 3000), std::vector<int32_t>(3000, 2));
  EXPECT_EQ(k.async_error(0), XAL_ERROR_COLLECTIVE_MISMATCH);
}

// A staged, chunked call whose peer never comes: abort releases its copy
// streams and its stream; a timeout does the same on its own.
TEST_F(Hierarchical, AbortAndTimeoutReleaseAPipelinedCall) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ScopedEnv nohost("XAL_TESTDEV_NO_HOST_PTR", "1");
  ScopedEnv chunk("XAL_COMM_CHUNK_BYTES", "256");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2}, 4000, 60000));
  ASSERT_XAL_OK(xal_allreduce(k.comm[0], k.send[0], k.recv[0], 1000, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[0]));
  EXPECT_EQ(xal_stream_query(k.stream[0]), XAL_NOT_READY);
  ASSERT_XAL_OK(xal_comm_abort(k.comm[1]));
  EXPECT_XAL_ERROR(xal_stream_synchronize(k.stream[0]), XAL_ERROR_ABORTED);
  EXPECT_EQ(k.async_error(0), XAL_ERROR_ABORTED);

  Ranks t;
  ASSERT_NO_FATAL_FAILURE(t.open({1, 3}, 4000, 100));
  ASSERT_XAL_OK(xal_broadcast(t.comm[1], t.send[1], t.recv[1], 1000, XAL_DTYPE_I32, 1, t.stream[1]));
  EXPECT_XAL_ERROR(xal_stream_synchronize(t.stream[1]), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(t.async_error(1), XAL_ERROR_TIMEOUT);
  EXPECT_XAL_ERROR(xal_broadcast(t.comm[0], t.send[0], t.recv[0], 1000, XAL_DTYPE_I32, 1, t.stream[0]),
                   XAL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(last_error().message).find("rank(s) 0"), std::string::npos) << last_error().message;
}

namespace {

// The layout collectives of 3 ranks (testdev, testdev2, minimal) cut into
// chunks of 64 bytes: 5 i32 of every rank block per chunk. Parameter: the
// testdev ranks are staged (no host view) or host addressable (their runs
// read and write the whole buffers in place, block by block); minimal's
// rank is always staged and runs on its own thread (a group call).
class HierarchicalLayouts : public Hierarchical, public ::testing::WithParamInterface<bool> {
 protected:
  static constexpr size_t kRanks = 3, kMax = 1023, kElems = kRanks * kMax + 16;

  static int32_t value(size_t r, size_t i) { return static_cast<int32_t>(r * 100000 + i); }

  void write(size_t r, xal_devptr_t p, const std::vector<int32_t>& v) {
    ASSERT_XAL_OK(xal_memcpy_htod(k.stream[r], p, v.data(), v.size() * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(k.stream[r]));
  }
  std::vector<int32_t> read(size_t r, xal_devptr_t p) {
    std::vector<int32_t> v(kElems);
    EXPECT_EQ(xal_memcpy_dtoh(k.stream[r], v.data(), p, v.size() * 4), XAL_SUCCESS);
    EXPECT_EQ(xal_stream_synchronize(k.stream[r]), XAL_SUCCESS);
    return v;
  }
  // Runs call(r) for every rank in one group.
  void each(const std::function<xal_status_t(size_t)>& call) {
    ASSERT_XAL_OK(xal_group_start());
    for (size_t r = 0; r < kRanks; ++r) EXPECT_EQ(call(r), XAL_SUCCESS) << r << ": " << last_error().message;
    ASSERT_XAL_OK(xal_group_end());
  }
  // Element i of `got` is want(i) below `count`, the guard value -1 above.
  static void expect(const std::vector<int32_t>& got, size_t count,
                     const std::function<int32_t(size_t)>& want, const std::string& what) {
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], i < count ? want(i) : -1) << what << " element " << i;
  }

  Ranks k;
};

}  // namespace

TEST_P(HierarchicalLayouts, ChunkedInAndOutOfPlace) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ScopedEnv nohost("XAL_TESTDEV_NO_HOST_PTR", GetParam() ? "1" : "0");
  ScopedEnv chunk("XAL_COMM_CHUNK_BYTES", "64");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2") + "," + plugin("minimal")));
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2, 4}, kElems * 4));
  const std::vector<int32_t> guard(kElems, -1);
  for (size_t c : {size_t{0}, size_t{1}, size_t{7}, kMax}) {
    for (bool in_place : {false, true}) {
      SCOPED_TRACE(std::string(in_place ? "in place" : "out of place") + ", count " + std::to_string(c));
      auto rank_values = [&](size_t r, size_t count) {
        std::vector<int32_t> v(guard);
        for (size_t i = 0; i < count; ++i) v[i] = value(r, i);
        return v;
      };
      auto at = [&](xal_devptr_t p, size_t elems) { return p + elems * 4; };

      // allgather: in place, each rank's input is its own block of recv.
      for (size_t r = 0; r < kRanks; ++r) {
        std::vector<int32_t> v(guard);
        if (in_place)
          for (size_t i = 0; i < c; ++i) v[r * c + i] = value(r, i);
        ASSERT_NO_FATAL_FAILURE(write(r, k.recv[r], v));
        ASSERT_NO_FATAL_FAILURE(write(r, k.send[r], rank_values(r, c)));
      }
      each([&](size_t r) {
        const xal_devptr_t in = in_place ? at(k.recv[r], r * c) : k.send[r];
        return xal_allgather(k.comm[r], in, k.recv[r], c, XAL_DTYPE_I32, k.stream[r]);
      });
      for (size_t r = 0; r < kRanks; ++r)
        ASSERT_NO_FATAL_FAILURE(expect(read(r, k.recv[r]), kRanks * c,
                                       [&](size_t i) { return value(i / c, i % c); },
                                       "allgather rank " + std::to_string(r)));

      // reduce_scatter (sum): in place, the output is the rank's block of
      // its input.
      for (size_t r = 0; r < kRanks; ++r) {
        ASSERT_NO_FATAL_FAILURE(write(r, k.send[r], rank_values(r, kRanks * c)));
        ASSERT_NO_FATAL_FAILURE(write(r, k.recv[r], in_place ? rank_values(r, kRanks * c) : guard));
      }
      each([&](size_t r) {
        const xal_devptr_t in = in_place ? k.recv[r] : k.send[r];
        const xal_devptr_t out = in_place ? at(k.recv[r], r * c) : k.recv[r];
        return xal_reduce_scatter(k.comm[r], in, out, c, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[r]);
      });
      for (size_t r = 0; r < kRanks; ++r) {
        auto sum = [&](size_t i) {
          int32_t s = 0;
          for (size_t j = 0; j < kRanks; ++j) s += value(j, r * c + i);
          return s;
        };
        const auto got = read(r, k.recv[r]);
        if (!in_place) {
          ASSERT_NO_FATAL_FAILURE(expect(got, c, sum, "reduce_scatter rank " + std::to_string(r)));
          continue;
        }
        for (size_t i = 0; i < c; ++i) ASSERT_EQ(got[r * c + i], sum(i)) << "reduce_scatter rank " << r << " at " << i;
        for (size_t i = kRanks * c; i < kElems; ++i) ASSERT_EQ(got[i], -1) << "reduce_scatter rank " << r;
      }

      // alltoall: in place, send == recv.
      for (size_t r = 0; r < kRanks; ++r) {
        ASSERT_NO_FATAL_FAILURE(write(r, k.send[r], rank_values(r, kRanks * c)));
        ASSERT_NO_FATAL_FAILURE(write(r, k.recv[r], in_place ? rank_values(r, kRanks * c) : guard));
      }
      each([&](size_t r) {
        const xal_devptr_t in = in_place ? k.recv[r] : k.send[r];
        return xal_alltoall(k.comm[r], in, k.recv[r], c, XAL_DTYPE_I32, k.stream[r]);
      });
      for (size_t r = 0; r < kRanks; ++r)
        ASSERT_NO_FATAL_FAILURE(expect(read(r, k.recv[r]), kRanks * c,
                                       [&](size_t i) { return value(i / c, r * c + i % c); },
                                       "alltoall rank " + std::to_string(r)));
    }
  }
  for (size_t r = 0; r < kRanks; ++r) EXPECT_EQ(k.async_error(r), XAL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Ranks, HierarchicalLayouts, ::testing::Values(true, false),
                         [](const auto& info) { return std::string(info.param ? "Staged" : "HostView"); });

// An allgather whose ranks disagree on the count (8 i32 per block and
// chunk: 40 = 5 full chunks and an empty last, 60 = 7 full and 4) meets the
// mismatch at the same chunk on both ranks, which stop there; the next call
// pairs correctly.
TEST_F(Hierarchical, ChunkedLayoutCountMismatchKeepsRanksInStep) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ScopedEnv nohost("XAL_TESTDEV_NO_HOST_PTR", "1");
  ScopedEnv chunk("XAL_COMM_CHUNK_BYTES", "64");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2}, 128 * 4));
  k.put(0, std::vector<int32_t>(60, 1));
  k.put(1, std::vector<int32_t>(60, 2));
  ASSERT_XAL_OK(xal_allgather(k.comm[0], k.send[0], k.recv[0], 40, XAL_DTYPE_I32, k.stream[0]));
  ASSERT_XAL_OK(xal_allgather(k.comm[1], k.send[1], k.recv[1], 60, XAL_DTYPE_I32, k.stream[1]));
  for (size_t r = 0; r < 2; ++r)
    ASSERT_XAL_OK(xal_allgather(k.comm[r], k.send[r], k.recv[r], 60, XAL_DTYPE_I32, k.stream[r]));
  for (size_t r = 0; r < 2; ++r)  // the first call's mismatch, reported once
    EXPECT_XAL_ERROR(xal_stream_synchronize(k.stream[r]), XAL_ERROR_COLLECTIVE_MISMATCH);
  for (size_t r = 0; r < 2; ++r) {
    const auto got = k.get(r, 120);
    for (size_t i = 0; i < 120; ++i) ASSERT_EQ(got[i], i < 60 ? 1 : 2) << r << " " << i;
    EXPECT_EQ(k.async_error(r), XAL_ERROR_COLLECTIVE_MISMATCH);
  }
}

namespace {

// Rank 0 issues an allreduce on one stream and an allgather on another
// stream of its device; rank 1 issues both on its one stream 200 ms later.
// Parameter: staged ranks (no host view: chunked through staging buffers
// and copy streams) or host-addressable ones.
class TwoStreamsOfOneRank : public Hierarchical, public ::testing::WithParamInterface<bool> {};

}  // namespace

TEST_P(TwoStreamsOfOneRank, CallsRunInIssueOrder) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ScopedEnv nohost("XAL_TESTDEV_NO_HOST_PTR", GetParam() ? "1" : "0");
  ScopedEnv chunk("XAL_COMM_CHUNK_BYTES", "256");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  Ranks k;
  constexpr size_t n = 600;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2}, 2 * n * 4, 10000));
  xal_stream_t second = nullptr;
  ASSERT_XAL_OK(xal_stream_create(k.dev[0], 0, &second));
  xal_devptr_t gathered = 0;
  ASSERT_XAL_OK(xal_mem_alloc(k.dev[0], 2 * n * 4, &gathered));
  for (size_t r = 0; r < 2; ++r) {
    std::vector<int32_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(r * 10000 + i);
    k.put(r, v);
  }
  ASSERT_XAL_OK(xal_allreduce(k.comm[0], k.send[0], k.recv[0], n, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[0]));
  ASSERT_XAL_OK(xal_allgather(k.comm[0], k.send[0], gathered, n, XAL_DTYPE_I32, second));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_XAL_OK(xal_allreduce(k.comm[1], k.send[1], k.recv[1], n, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[1]));
  ASSERT_XAL_OK(xal_allgather(k.comm[1], k.send[1], k.recv[1], n, XAL_DTYPE_I32, k.stream[1]));
  ASSERT_XAL_OK(xal_stream_synchronize(second));
  ASSERT_XAL_OK(xal_stream_synchronize(k.stream[0]));
  ASSERT_XAL_OK(xal_stream_synchronize(k.stream[1]));
  const auto sum = k.get(0, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], static_cast<int32_t>(10000 + 2 * i)) << i;
  std::vector<int32_t> all(2 * n);
  ASSERT_XAL_OK(xal_memcpy_dtoh(second, all.data(), gathered, all.size() * 4));
  ASSERT_XAL_OK(xal_stream_synchronize(second));
  EXPECT_EQ(all, k.get(1, 2 * n));
  for (size_t i = 0; i < 2 * n; ++i) ASSERT_EQ(all[i], static_cast<int32_t>((i / n) * 10000 + i % n)) << i;
  for (size_t r = 0; r < 2; ++r) EXPECT_EQ(k.async_error(r), XAL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Ranks, TwoStreamsOfOneRank, ::testing::Values(true, false),
                         [](const auto& info) { return std::string(info.param ? "Staged" : "HostView"); });

// The core's rendezvous itself: a rank that runs twice at once (two host
// functions of one rank) waits for its first run instead of being counted
// twice; every run pairs with one run of the other rank.
TEST(RendezvousGuard, ARankRunsOneCallAtATime) {
  using namespace xal::common;
  Rendezvous rv(2, 10000);
  constexpr size_t n = 256;
  std::vector<int32_t> in0a(n, 1), in0b(n, 2), in1a(n, 10), in1b(n, 20);
  std::vector<int32_t> out0a(n), out0b(n), out1a(n), out1b(n);
  auto part = [](const std::vector<int32_t>& in, std::vector<int32_t>& out) {
    HostPart p;
    p.desc = coll_desc(CollKind::kAllreduce, n, XAL_DTYPE_I32, XAL_OP_SUM, 0);
    p.in = in.data();
    p.out = out.data();
    return p;
  };
  std::thread a([&] { rv.run(0, part(in0a, out0a)); });
  std::thread b([&] { rv.run(0, part(in0b, out0b)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  rv.run(1, part(in1a, out1a));
  rv.run(1, part(in1b, out1b));
  a.join();
  b.join();
  EXPECT_EQ(rv.first_error(), XAL_SUCCESS);
  // Rank 0's runs paired with rank 1's in some order: {1,2} + {10,20}.
  EXPECT_TRUE((out0a[0] == 11 && out0b[0] == 22) || (out0a[0] == 21 && out0b[0] == 12))
      << out0a[0] << " " << out0b[0];
  EXPECT_EQ(out1a[0] + out1b[0], 33);
  EXPECT_EQ(out0a[n - 1], out0a[0]);
  EXPECT_EQ(out1b[n - 1], out1b[0]);
}

// A staged call queued behind long work on its rank's stream (here another
// communicator's allreduce that waits 1.6 s for its peer) waits for the
// stream to reach it without a limit: its staging copies time out only
// once it has started, so the call succeeds (every rank arrives within the
// 200 ms timeout of each other), though it was queued 1.6 s before it ran,
// longer than its copy streams' 2 x 200 + 1000 ms limit.
TEST_F(Hierarchical, StagingWaitsCountFromTheCallsStart) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ScopedEnv nohost("XAL_TESTDEV_NO_HOST_PTR", "1");
  ScopedEnv chunk("XAL_COMM_CHUNK_BYTES", "256");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  constexpr size_t n = 600;
  Ranks k;
  ASSERT_NO_FATAL_FAILURE(k.open({0, 2}, n * 4, 200));
  Ranks before;  // on device 0 (k's rank 0 stream) and device 3
  ASSERT_NO_FATAL_FAILURE(before.add_rank(0, n * 4));
  ASSERT_NO_FATAL_FAILURE(before.add_rank(3, n * 4));
  before.stream[0] = k.stream[0];
  before.comm.resize(2);
  xal_comm_options_t o{};
  o.struct_size = sizeof o;
  o.timeout_ms = 20000;
  ASSERT_XAL_OK(xal_comm_create(before.dev.data(), 2, &o, before.comm.data()));
  for (size_t r = 0; r < 2; ++r) k.put(r, std::vector<int32_t>(n, static_cast<int32_t>(r + 1)));
  ASSERT_XAL_OK(xal_allreduce(before.comm[0], before.send[0], before.recv[0], n, XAL_DTYPE_I32, XAL_OP_SUM,
                              k.stream[0]));
  ASSERT_XAL_OK(xal_allreduce(k.comm[0], k.send[0], k.recv[0], n, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[0]));
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  ASSERT_XAL_OK(xal_allreduce(before.comm[1], before.send[1], before.recv[1], n, XAL_DTYPE_I32, XAL_OP_SUM,
                              before.stream[1]));
  ASSERT_XAL_OK(xal_allreduce(k.comm[1], k.send[1], k.recv[1], n, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[1]));
  ASSERT_XAL_OK(xal_stream_synchronize(k.stream[0]));
  ASSERT_XAL_OK(xal_stream_synchronize(k.stream[1]));
  ASSERT_XAL_OK(xal_stream_synchronize(before.stream[1]));
  EXPECT_EQ(k.get(0, n), std::vector<int32_t>(n, 3));
  EXPECT_EQ(k.get(1, n), std::vector<int32_t>(n, 3));
  for (size_t r = 0; r < 2; ++r) EXPECT_EQ(k.async_error(r), XAL_SUCCESS);
}

// Two communicators over the same two devices, driven from one thread in
// groups: each stream gets the group's collectives in issue order (A's then
// B's on both streams), never one communicator's first on one stream and
// the other's first on the other, which would wait for each other until
// the timeout. Many groups, so that an order left to threads shows.
TEST_F(Hierarchical, AGroupKeepsIssueOrderOnEachStream) {
  ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  Ranks a;
  ASSERT_NO_FATAL_FAILURE(a.open({0, 2}, 64, 2000));
  Ranks b;  // the same devices and streams
  b.dev = a.dev;
  b.stream = a.stream;
  b.send = a.send;
  b.recv = a.recv;
  b.comm.resize(2);
  xal_comm_options_t o{};
  o.struct_size = sizeof o;
  o.timeout_ms = 2000;
  ASSERT_XAL_OK(xal_comm_create(b.dev.data(), 2, &o, b.comm.data()));
  for (size_t r = 0; r < 2; ++r) a.put(r, std::vector<int32_t>(16, static_cast<int32_t>(r + 1)));
  for (int i = 0; i < 100; ++i) {
    SCOPED_TRACE(i);
    ASSERT_XAL_OK(xal_group_start());
    for (size_t r = 0; r < 2; ++r) {
      ASSERT_XAL_OK(xal_allreduce(a.comm[r], a.send[r], a.recv[r], 16, XAL_DTYPE_I32, XAL_OP_SUM, a.stream[r]));
      ASSERT_XAL_OK(xal_allgather(b.comm[r], a.send[r], a.recv[r], 8, XAL_DTYPE_I32, a.stream[r]));
    }
    ASSERT_XAL_OK(xal_group_end());
    for (size_t r = 0; r < 2; ++r) ASSERT_XAL_OK(xal_stream_synchronize(a.stream[r]));
  }
  EXPECT_EQ(a.get(0, 16), (std::vector<int32_t>{1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}));
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(a.async_error(r), XAL_SUCCESS);
    EXPECT_EQ(b.async_error(r), XAL_SUCCESS);
  }
}

// xal_group_end cannot start the threads of its chains (the address space
// is limited so that one thread stack fits, not two): it returns an error
// and none of the group's collectives runs, instead of ending the process.
// In a child process of its own (the limit is process-wide).
TEST(GroupThreads, AThreadThatCannotStartFailsTheGroupCleanly) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer maps memory of its own under the limit";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ScopedEnv async("XAL_TESTDEV_ASYNC", "1");
        if (init(plugin("testdev") + "," + plugin("testdev2") + "," + plugin("minimal"))) std::exit(10);
        Ranks k;
        k.open({0, 2, 4}, 64);  // three ranks, three streams: three chains
        if (k.comm.size() != 3 || !k.comm[2]) std::exit(11);
        if (xal_group_start()) std::exit(12);
        for (size_t r = 0; r < 3; ++r)
          if (xal_allreduce(k.comm[r], k.send[r], k.recv[r], 4, XAL_DTYPE_I32, XAL_OP_SUM, k.stream[r]))
            std::exit(13);
        rlimit old{};
        getrlimit(RLIMIT_AS, &old);
        long pages = 0;
        if (FILE* f = std::fopen("/proc/self/statm", "r")) {
          if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
          std::fclose(f);
        }
        if (pages <= 0) std::exit(14);
        rlimit tight = old;
        tight.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                         (rlim_t{12} << 20);
        setrlimit(RLIMIT_AS, &tight);
        const xal_status_t s = xal_group_end();
        setrlimit(RLIMIT_AS, &old);
        if (s != XAL_ERROR_OUT_OF_HOST_MEMORY) std::exit(15);
        if (std::string(last_error().message).find("none of the group's") == std::string::npos)
          std::exit(16);
        for (size_t r = 0; r < 3; ++r)  // nothing was queued
          if (xal_stream_query(k.stream[r]) != XAL_SUCCESS) std::exit(17);
        std::exit(xal_shutdown() == XAL_SUCCESS ? 0 : 18);
      },
      ::testing::ExitedWithCode(0), "");
}

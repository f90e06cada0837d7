// What every native collective path of the CUDA plugin must do, through its
// table on the simulated driver (SIMULATION ONLY): built twice, with the
// collectives on peer copies (cuda_simulation_peer_comm_test) and on the
// simulated NCCL (cuda_simulation_nccl_comm_test). Results in stream
// order, in place, destroy with calls in flight, abort, bad input. Every
// op and dtype against a host reference is the conformance suite's
// collectives group, which runs on both paths too.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "comm_fixture.h"
#include "watchdog.h"

namespace xal::cuda::test {
namespace {

#if XAL_CUDA_TEST_COMM

// The values written before the call on each rank's stream go in; the
// result is there for the work queued after it on each stream.
TEST_F(CudaComm, AllreduceInPlaceFollowsEachStreamsOrder) {
  constexpr size_t kCount = 1000;
  xal_devptr_t a = alloc(dev0_, kCount * sizeof(float));
  xal_devptr_t b = alloc(dev1_, kCount * sizeof(float));
  put(stream0_, a, std::vector<float>(kCount, 1.5f));
  put(stream1_, b, std::vector<float>(kCount, 2.0f));
  ASSERT_EQ(table_->group_start(backend_), XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->group_end(backend_), XAL_SUCCESS);
  EXPECT_EQ(get(stream0_, a, kCount), std::vector<float>(kCount, 3.5f));
  EXPECT_EQ(get(stream1_, b, kCount), std::vector<float>(kCount, 3.5f));
  // Avg and max on the same buffers, queued back to back.
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_AVG, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_AVG, stream1_),
            XAL_SUCCESS);
  put(stream1_, b, std::vector<float>(kCount, -4.0f));
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_MAX, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_MAX, stream1_),
            XAL_SUCCESS);
  EXPECT_EQ(get(stream0_, a, kCount), std::vector<float>(kCount, 3.5f));
  EXPECT_EQ(get(stream1_, b, kCount), std::vector<float>(kCount, 3.5f));
  EXPECT_EQ(async_error(0), XAL_SUCCESS);
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// Destroying the communicators right after queuing calls: destroy waits
// for them (they hold the communicator), and they complete.
TEST_F(CudaComm, DestroyWithCallsInFlightLetsThemFinish) {
  constexpr size_t kCount = 4096;
  xal_devptr_t a = alloc(dev0_, kCount * sizeof(float));
  xal_devptr_t b = alloc(dev1_, kCount * sizeof(float));
  put(stream0_, a, std::vector<float>(kCount, 1.0f));
  put(stream1_, b, std::vector<float>(kCount, 2.0f));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
              XAL_SUCCESS);
    ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
              XAL_SUCCESS);
  }
  EXPECT_EQ(table_->comm_destroy(comms_[0]), XAL_SUCCESS);
  EXPECT_EQ(table_->comm_destroy(comms_[1]), XAL_SUCCESS);
  comms_[0] = comms_[1] = nullptr;
  EXPECT_EQ(get(stream0_, a, kCount), std::vector<float>(kCount, 12.0f));  // 3, 6, 12
  EXPECT_EQ(get(stream1_, b, kCount), std::vector<float>(kCount, 12.0f));
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// In place with a value per element: every slice of the allreduce (rank 0
// reduces elements [0, 512), rank 1 the rest) lands in the right place on
// both ranks; reduce_scatter and allgather in place as NCCL defines them
// (recv inside send at rank * count, send inside recv at rank * count).
TEST_F(CudaComm, InPlaceCallsKeepEveryElementInItsPlace) {
  constexpr size_t kCount = 1001;
  std::vector<float> va(kCount), vb(kCount), sum(kCount), avg(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    va[i] = static_cast<float>(i);
    vb[i] = static_cast<float>(2 * i + 1);
    sum[i] = static_cast<float>(3 * i + 1);
    avg[i] = sum[i] / 2;
  }
  xal_devptr_t a = alloc(dev0_, 2 * kCount * sizeof(float));
  xal_devptr_t b = alloc(dev1_, 2 * kCount * sizeof(float));
  put(stream0_, a, va);
  put(stream1_, b, vb);
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  EXPECT_EQ(get(stream0_, a, kCount), sum);
  EXPECT_EQ(get(stream1_, b, kCount), sum);
  put(stream0_, a, va);
  put(stream1_, b, vb);
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_AVG, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_AVG, stream1_),
            XAL_SUCCESS);
  EXPECT_EQ(get(stream0_, a, kCount), avg);
  EXPECT_EQ(get(stream1_, b, kCount), avg);

  // reduce_scatter of 2 x 500 elements: rank r's result is at a + r * 500.
  constexpr size_t kHalf = 500;
  put(stream0_, a, va);
  put(stream1_, b, vb);
  ASSERT_EQ(table_->reduce_scatter(comms_[0], a, a, kHalf, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->reduce_scatter(comms_[1], b, b + kHalf * sizeof(float), kHalf,
                                   XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  EXPECT_EQ(get(stream0_, a, kHalf), std::vector<float>(sum.begin(), sum.begin() + kHalf));
  EXPECT_EQ(get(stream1_, b + kHalf * sizeof(float), kHalf),
            std::vector<float>(sum.begin() + kHalf, sum.begin() + 2 * kHalf));

  // allgather of kCount each: rank r's part sits at recv + r * kCount.
  put(stream0_, a, va);
  put(stream1_, b + kCount * sizeof(float), vb);
  ASSERT_EQ(table_->allgather(comms_[0], a, a, kCount, XAL_DTYPE_F32, stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->allgather(comms_[1], b + kCount * sizeof(float), b, kCount, XAL_DTYPE_F32,
                              stream1_),
            XAL_SUCCESS);
  std::vector<float> both = va;
  both.insert(both.end(), vb.begin(), vb.end());
  EXPECT_EQ(get(stream0_, a, 2 * kCount), both);
  EXPECT_EQ(get(stream1_, b, 2 * kCount), both);
  EXPECT_EQ(async_error(0), XAL_SUCCESS);
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

TEST_F(CudaComm, AlltoallInPlaceExchangesTheBlocks) {
  xal_devptr_t a = alloc(dev0_, 4 * sizeof(float));
  xal_devptr_t b = alloc(dev1_, 4 * sizeof(float));
  put(stream0_, a, {1, 2, 3, 4});
  put(stream1_, b, {5, 6, 7, 8});
  ASSERT_EQ(table_->alltoall(comms_[0], a, a, 2, XAL_DTYPE_F32, stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->alltoall(comms_[1], b, b, 2, XAL_DTYPE_F32, stream1_), XAL_SUCCESS);
  EXPECT_EQ(get(stream0_, a, 4), (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(get(stream1_, b, 4), (std::vector<float>{3, 4, 7, 8}));

  // Bigger, twice back to back, rank 0 on a second stream for the second:
  // any memory the first staged through is not reused before it is read.
  constexpr size_t kCount = 3000;
  xal_bstream_t* other = nullptr;
  ASSERT_EQ(table_->stream_create(dev0_, 0, &other), XAL_SUCCESS);
  xal_devptr_t a2 = alloc(dev0_, 2 * kCount * sizeof(float));
  xal_devptr_t b2 = alloc(dev1_, 2 * kCount * sizeof(float));
  std::vector<float> va(2 * kCount), vb(2 * kCount);
  for (size_t i = 0; i < 2 * kCount; ++i) {
    va[i] = static_cast<float>(i);
    vb[i] = static_cast<float>(100000 + i);
  }
  put(stream0_, a2, va);
  put(stream1_, b2, vb);
  for (xal_bstream_t* s0 : {stream0_, other}) {
    if (s0 == other) {  // the second call's stream starts after the first's
      ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    }
    ASSERT_EQ(table_->alltoall(comms_[0], a2, a2, kCount, XAL_DTYPE_F32, s0), XAL_SUCCESS)
        << last_error().message;
    ASSERT_EQ(table_->alltoall(comms_[1], b2, b2, kCount, XAL_DTYPE_F32, stream1_),
              XAL_SUCCESS);
  }
  // Twice is the identity: each block went there and back.
  EXPECT_EQ(get(other, a2, 2 * kCount), va);
  EXPECT_EQ(get(stream1_, b2, 2 * kCount), vb);
  EXPECT_EQ(table_->stream_destroy(other), XAL_SUCCESS);
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
  table_->mem_free(dev0_, a2);
  table_->mem_free(dev1_, b2);
}

// Two in-place all-to-alls of the same communicators in one group: each
// reads its own send buffer, though the calls run only at the group's end.
TEST_F(CudaComm, TwoInPlaceAlltoallsInOneGroupKeepTheirOwnData) {
  xal_devptr_t a1 = alloc(dev0_, 4 * sizeof(float)), a2 = alloc(dev0_, 4 * sizeof(float));
  xal_devptr_t b1 = alloc(dev1_, 4 * sizeof(float)), b2 = alloc(dev1_, 4 * sizeof(float));
  put(stream0_, a1, {1, 2, 3, 4});
  put(stream1_, b1, {5, 6, 7, 8});
  put(stream0_, a2, {10, 20, 30, 40});
  put(stream1_, b2, {50, 60, 70, 80});
  ASSERT_EQ(table_->group_start(backend_), XAL_SUCCESS);
  for (auto [a, b] : {std::pair{a1, b1}, std::pair{a2, b2}}) {
    ASSERT_EQ(table_->alltoall(comms_[0], a, a, 2, XAL_DTYPE_F32, stream0_), XAL_SUCCESS);
    ASSERT_EQ(table_->alltoall(comms_[1], b, b, 2, XAL_DTYPE_F32, stream1_), XAL_SUCCESS);
  }
  ASSERT_EQ(table_->group_end(backend_), XAL_SUCCESS);
  EXPECT_EQ(get(stream0_, a1, 4), (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(get(stream1_, b1, 4), (std::vector<float>{3, 4, 7, 8}));
  EXPECT_EQ(get(stream0_, a2, 4), (std::vector<float>{10, 20, 50, 60}));
  EXPECT_EQ(get(stream1_, b2, 4), (std::vector<float>{30, 40, 70, 80}));
  for (xal_devptr_t p : {a1, a2}) table_->mem_free(dev0_, p);
  for (xal_devptr_t p : {b1, b2}) table_->mem_free(dev1_, p);
}

// Abort of one rank wakes another rank that waits for one that never comes
// (no timeout), and every rank's communicator is aborted: xal's abort ends
// every rank's calls. Through NCCL, whose ncclCommAbort aborts one rank
// only (as the simulated NCCL does under CTest, XALSIM_NCCL_ABORT=rank),
// the plugin aborts each rank's. Under a watchdog: rank 0 waiting for ever
// is the failure.
TEST_F(CudaComm, AbortWakesAWaitingRank) {
  make_comms(0);
  xal_devptr_t a = alloc(dev0_, 64);
  ASSERT_EQ(table_->broadcast(comms_[0], a, a, 16, XAL_DTYPE_F32, 0, stream0_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_query(stream0_), XAL_NOT_READY);  // waiting for rank 1
  ASSERT_EQ(table_->comm_abort(comms_[1]), XAL_SUCCESS);
  {
    const Watchdog watchdog("the aborted rank 0's stream", std::chrono::seconds(30));
    EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  }
  // (Not aborted, a call would wait for rank 1 for ever.)
  ASSERT_EQ(async_error(0), XAL_ERROR_ABORTED);
  EXPECT_EQ(async_error(1), XAL_ERROR_ABORTED);
  EXPECT_EQ(table_->broadcast(comms_[0], a, a, 16, XAL_DTYPE_F32, 0, stream0_),
            XAL_ERROR_ABORTED);
  EXPECT_EQ(table_->broadcast(comms_[1], a, a, 16, XAL_DTYPE_F32, 0, stream1_),
            XAL_ERROR_ABORTED);
  table_->mem_free(dev0_, a);
}

TEST_F(CudaComm, BadInputIsRefusedWithAMessage) {
  xal_devptr_t a = alloc(dev0_, 64);
  EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("the stream is not on rank 0's device"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_I32, XAL_OP_AVG, stream0_),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(last_error().message.find("avg"), std::string::npos) << last_error().message;
  EXPECT_EQ(table_->broadcast(comms_[0], a, a, 16, XAL_DTYPE_F32, 2, stream0_),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("root 2 is out of range"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(table_->allreduce(nullptr, a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_ERROR_INVALID_ARGUMENT);
  xal_bdevice_t* none[1] = {nullptr};
  xal_bcomm_t* out[1] = {nullptr};
  EXPECT_EQ(table_->comm_create(none, 1, nullptr, out), XAL_ERROR_INVALID_ARGUMENT);
  // Nothing was queued: the communicator still works.
  EXPECT_EQ(async_error(0), XAL_SUCCESS);
  table_->mem_free(dev0_, a);
}

#else
TEST(CudaComm, NeedsNativeCollectives) {
  GTEST_SKIP() << "this build has no such native collectives";
}
#endif

}  // namespace
}  // namespace xal::cuda::test

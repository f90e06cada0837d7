// The collectives the plugin runs without NCCL (peer copies and xal's
// embedded reductions, peer_comm.cpp), through its table on the simulated
// driver (SIMULATION ONLY): results, stream order, and the failure
// semantics (timeout, abort, mismatch, bad input). Every op and dtype
// against a host reference is the conformance suite's collectives group,
// which runs on this path too (cuda_simulation_conformance_test).
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "plugin_fixture.h"

namespace xal::cuda::test {
namespace {

#if XAL_CUDA_TEST_HAVE_KERNELS

class CudaPeerComm : public CudaSim {
 protected:
  void SetUp() override {
    CudaSim::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_NE(table_->comm_create, nullptr) << "the table has no peer collectives";
    make_comms(2000);
  }
  void TearDown() override {
    for (xal_bcomm_t* c : comms_) {
      if (c != nullptr) {
        EXPECT_EQ(table_->comm_destroy(c), XAL_SUCCESS);
      }
    }
    CudaSim::TearDown();
  }

  void make_comms(uint32_t timeout_ms) {
    for (xal_bcomm_t*& c : comms_) {
      if (c != nullptr) table_->comm_destroy(c);
      c = nullptr;
    }
    xal_bdevice_t* devices[2] = {dev0_, dev1_};
    xal_bcomm_options_t options{};
    options.struct_size = sizeof options;
    options.timeout_ms = timeout_ms;
    ASSERT_EQ(table_->comm_create(devices, 2, &options, comms_), XAL_SUCCESS)
        << last_error().message;
  }

  // Queues a copy of `values` to dst; the host copy lives as long as the test
  // (the copy is asynchronous).
  void put(xal_bstream_t* stream, xal_devptr_t dst, std::vector<float> values) {
    const std::vector<float>& kept = kept_.emplace_back(std::move(values));
    ASSERT_EQ(table_->memcpy_htod(stream, dst, kept.data(), kept.size() * sizeof(float)),
              XAL_SUCCESS);
  }
  std::vector<float> get(xal_bstream_t* stream, xal_devptr_t src, size_t count) {
    std::vector<float> out(count);
    EXPECT_EQ(table_->memcpy_dtoh(stream, out.data(), src, count * sizeof(float)), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream), XAL_SUCCESS);
    return out;
  }
  xal_status_t async_error(int rank) {
    xal_status_t e = XAL_ERROR_INTERNAL;
    EXPECT_EQ(table_->comm_get_async_error(comms_[rank], &e), XAL_SUCCESS);
    return e;
  }

  xal_bcomm_t* comms_[2] = {nullptr, nullptr};
  std::deque<std::vector<float>> kept_;
};

// The values written before the call on each rank's stream go in; the
// result is there for the work queued after it on each stream.
TEST_F(CudaPeerComm, AllreduceInPlaceFollowsEachStreamsOrder) {
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
TEST_F(CudaPeerComm, DestroyWithCallsInFlightLetsThemFinish) {
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
TEST_F(CudaPeerComm, InPlaceCallsKeepEveryElementInItsPlace) {
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

TEST_F(CudaPeerComm, AlltoallInPlaceExchangesTheBlocks) {
  xal_devptr_t a = alloc(dev0_, 4 * sizeof(float));
  xal_devptr_t b = alloc(dev1_, 4 * sizeof(float));
  put(stream0_, a, {1, 2, 3, 4});
  put(stream1_, b, {5, 6, 7, 8});
  ASSERT_EQ(table_->alltoall(comms_[0], a, a, 2, XAL_DTYPE_F32, stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->alltoall(comms_[1], b, b, 2, XAL_DTYPE_F32, stream1_), XAL_SUCCESS);
  EXPECT_EQ(get(stream0_, a, 4), (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(get(stream1_, b, 4), (std::vector<float>{3, 4, 7, 8}));
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// A rank that never comes: the waiting rank gives up after the timeout,
// its stream goes on, and the communicator stays broken with TIMEOUT.
TEST_F(CudaPeerComm, MissingRankTimesOutAndBreaksTheCommunicator) {
  make_comms(200);
  xal_devptr_t a = alloc(dev0_, 64);
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(async_error(0), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(async_error(1), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_ERROR_TIMEOUT);
  EXPECT_NE(last_error().message.find("timed out after 200 ms waiting for rank(s) 1"), std::string::npos)
      << last_error().message;
  table_->mem_free(dev0_, a);
}

// The timeout is for the ranks to come, not for the collective to run: one
// that takes longer than the timeout (slow kernels) still ends right.
TEST_F(CudaPeerComm, CollectiveLongerThanTheTimeoutIsNotCut) {
  make_comms(50);
  constexpr size_t kCount = 1000;
  xal_devptr_t a = alloc(dev0_, kCount * sizeof(float));
  xal_devptr_t b = alloc(dev1_, kCount * sizeof(float));
  put(stream0_, a, std::vector<float>(kCount, 1.0f));
  put(stream1_, b, std::vector<float>(kCount, 2.0f));
  {
    ScopedEnv slow("XALSIM_CUDA_KERNEL_MS", "300");
    ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
              XAL_SUCCESS);
    ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
              XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  }
  EXPECT_EQ(async_error(0), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(get(stream0_, a, kCount), std::vector<float>(kCount, 3.0f));
  EXPECT_EQ(get(stream1_, b, kCount), std::vector<float>(kCount, 3.0f));
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// Abort wakes a rank that waits for one that never comes (no timeout).
TEST_F(CudaPeerComm, AbortWakesAWaitingRank) {
  make_comms(0);
  xal_devptr_t a = alloc(dev0_, 64);
  ASSERT_EQ(table_->broadcast(comms_[0], a, a, 16, XAL_DTYPE_F32, 0, stream0_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_query(stream0_), XAL_NOT_READY);  // waiting for rank 1
  ASSERT_EQ(table_->comm_abort(comms_[1]), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(async_error(0), XAL_ERROR_ABORTED);
  EXPECT_EQ(table_->broadcast(comms_[1], a, a, 16, XAL_DTYPE_F32, 0, stream1_),
            XAL_ERROR_ABORTED);
  table_->mem_free(dev0_, a);
}

TEST_F(CudaPeerComm, RanksThatDisagreeGetCollectiveMismatch) {
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, 8, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  EXPECT_EQ(async_error(0), XAL_ERROR_COLLECTIVE_MISMATCH);
  // The next call says how they differed (which rank came first varies).
  EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_NE(last_error().message.find("the ranks disagree on call 0: rank "), std::string::npos)
      << last_error().message;
  EXPECT_NE(last_error().message.find(" called with count "), std::string::npos)
      << last_error().message;
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// A rank whose part cannot be queued breaks the communicator: the others
// do not wait for it, and later calls fail at once with its error.
TEST_F(CudaPeerComm, PartThatCannotBeQueuedBreaksTheCommunicator) {
  make_comms(0);  // no timeout: only the failure can wake rank 1
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  xal_status_t failed = XAL_SUCCESS;
  {
    ScopedEnv fail("XALSIM_CUDA_FAIL", "cuLaunchHostFunc=1");
    failed = table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_);
  }
  ASSERT_NE(failed, XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);  // rank 1 is not left waiting
  EXPECT_EQ(async_error(1), failed);
  EXPECT_EQ(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_), failed);
  EXPECT_NE(last_error().message.find("rank 0 could not queue its part"), std::string::npos)
      << last_error().message;
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// A device reset takes the communicator's streams and scratch memory with
// the old context: the next call breaks the communicator with an error
// (as NCCL's must be made again after a reset), without a crash or a hang,
// and it is destroyed cleanly.
TEST_F(CudaPeerComm, DeviceResetBreaksTheCommunicatorCleanly) {
  make_comms(2000);
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS) << last_error().message;
  xal_bstream_t* s0 = nullptr;
  ASSERT_EQ(table_->stream_create(dev0_, 0, &s0), XAL_SUCCESS) << last_error().message;
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  const xal_status_t q0 =
      table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, s0);
  const xal_status_t q1 =
      table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_);
  EXPECT_EQ(q0, XAL_SUCCESS);
  EXPECT_EQ(q1, XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(s0), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  EXPECT_NE(async_error(0), XAL_SUCCESS);
  EXPECT_NE(async_error(1), XAL_SUCCESS);
  EXPECT_NE(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  // The cause, found in a host function, is in the message.
  EXPECT_NE(last_error().message.find("failed on the device: cuda: the stream was invalidated "
                                      "by xal_device_reset"),
            std::string::npos)
      << last_error().message;
  EXPECT_EQ(table_->comm_destroy(comms_[0]), XAL_SUCCESS);
  EXPECT_EQ(table_->comm_destroy(comms_[1]), XAL_SUCCESS);
  comms_[0] = comms_[1] = nullptr;
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
  EXPECT_EQ(table_->stream_destroy(s0), XAL_SUCCESS);
}

TEST_F(CudaPeerComm, BadInputIsRefusedWithAMessage) {
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
TEST(CudaPeerComm, NeedsTheEmbeddedKernels) {
  GTEST_SKIP() << "built without nvcc: no embedded kernels, no peer collectives";
}
#endif

}  // namespace
}  // namespace xal::cuda::test

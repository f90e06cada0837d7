// What only the collectives without NCCL (peer copies and xal's embedded
// reductions, peer_comm.cpp) do, through the plugin's table on the
// simulated driver (SIMULATION ONLY): the timeout for ranks to come, a
// mismatch named, a part that cannot be queued, a device reset. What every
// native path does is in sim_comm_test.cpp, built into this test too.
#include <string>
#include <vector>

#include "comm_fixture.h"

namespace xal::cuda::test {
namespace {

#if XAL_CUDA_TEST_HAVE_KERNELS

using CudaPeerComm = CudaComm;

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

TEST_F(CudaPeerComm, RanksThatDisagreeGetCollectiveMismatch) {
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  allreduce_disagreeing(a, b);
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

#else
TEST(CudaPeerComm, NeedsTheEmbeddedKernels) {
  GTEST_SKIP() << "built without nvcc: no embedded kernels, no peer collectives";
}
#endif

}  // namespace
}  // namespace xal::cuda::test
